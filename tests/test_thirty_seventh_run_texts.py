"""The thirty-seventh session: what the last runs left, checked in the lab's words."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_advice_stays_true import pay
from test_newcomer_texts import EN, VI, lab, page, section

CLOCK_EARLY = "The lab's clock was already 25h 00m ahead when this case's first request came"


@pytest.mark.parametrize("fixed", [False, True])
def test_lesson_7_says_when_the_clock_moved_before_pay(
    app: Flask, client: FlaskClient, fixed: bool
) -> None:
    """Run V: +25 h pressed before Pay, then Pay and Retry: the Retry replayed a day
    ahead, and the card said nothing of why its case did not show."""
    workspace = lab(app, "nu37-early")
    workspace.open_lesson("ttl-expiry")
    if fixed:
        workspace.apply_scenario("ttl-expiry", fixed=True)
    workspace.advance(25 * 3600)
    assert pay(client, workspace.id).status_code == 201
    assert pay(client, workspace.id, action="Retry").status_code == 201
    assert workspace.payments.requests()[-1].outcome == "replayed"
    assert CLOCK_EARLY in section(page(client, workspace.id, EN), "lesson")
    assert "+25 h phải nằm giữa Thanh toán và Thử lại" in page(client, workspace.id, VI)


def test_lesson_7_in_order_says_nothing_of_the_clock(app: Flask, client: FlaskClient) -> None:
    """Pay, then +25 h, then Retry: the case as its steps say, no such sentence."""
    workspace = lab(app, "nu37-order")
    workspace.open_lesson("ttl-expiry")
    assert pay(client, workspace.id).status_code == 201
    workspace.advance(25 * 3600)
    assert pay(client, workspace.id, action="Retry").status_code == 201
    assert workspace.payments.requests()[-1].outcome == "charged"
    assert "The lab's clock was already" not in page(client, workspace.id, EN)


def test_the_payment_labs_clock_says_it_is_every_labs(app: Flask, client: FlaskClient) -> None:
    """Run V: "lab clock +2m 04s" on the payment lab after the retry lab's run, with no
    word that the four labs share the one clock."""
    lab(app, "nu37-clock").advance(124)
    explain = section(page(client, "nu37-clock", EN), "explain")
    assert "lab clock +2m 04s (one clock for all four labs)" in explain
    assert "một đồng hồ chung cho cả bốn phòng lab" in page(client, "nu37-clock", VI)


QUEUE_APPLY = "Then press Apply the fix and run again: the lab starts afresh with the fix"


@pytest.mark.parametrize("name", ["redelivery", "outbox", "poison-message"])
def test_the_queue_card_names_its_next_press_as_the_others_do(
    app: Flask, client: FlaskClient, name: str
) -> None:
    """Run V: the payment and retry cards end their steps with "Then press Apply the fix";
    the queue card's way to the fix was folded under the numbers."""
    from test_thirty_first_run_texts import _queue_card

    _queue, card = _queue_card(app, client, f"nu37-q-{name}", name)
    steps = card()[card().index('<ol class="lesson-steps">') :]
    assert QUEUE_APPLY in steps[: steps.index("</ol>")]
    vi = client.get(f"/lab/nu37-q-{name}/queue", headers=VI).get_data(as_text=True)
    assert "Áp dụng cách sửa và chạy lại: lab bắt đầu lại" in vi
    lab(app, f"nu37-q-{name}").apply_scenario(name, fixed=True, lab="queue")
    assert QUEUE_APPLY not in card()


def test_dedup_ticked_on_the_first_case_starts_the_numbered_steps(
    app: Flask, client: FlaskClient
) -> None:
    """Run W: queue lesson 1, Dedup ticked after the first case: "The steps, with the fix:"
    read as a list to follow (a third e-mail, the check unmet), the way to start afresh a
    grey note beside the numbers, and the fix's steps folded under it a second time."""
    from test_thirty_first_run_texts import _queue_card

    queue, card = _queue_card(app, client, "nu37-afresh", "redelivery")
    queue.play("redelivery")
    queue.update_settings({"dedup": True})
    html = card()
    steps = html[html.index('<ol class="lesson-steps">') :]
    first = steps[: steps.index("</li>")]
    assert "The lab still holds the first case's e-mails, sent before the fix" in first
    assert steps.count("Set Crash (once) to") == 1
    # Run X: which settings a Reset keeps, said (Dedup did; the crash had fired).
    assert "Reset the queue lab (it keeps the settings, Dedup too; a crash fires once" in first
    assert 'class="fix-steps"' not in html


def test_a_record_says_the_ttl_it_was_saved_under(app: Flask, client: FlaskClient) -> None:
    """Run W: Key TTL set to 72 h after Pay: the store's line said "kept for 72h 00m" above
    a record that "Expires 23h 59m", and nothing said why."""
    workspace = lab(app, "nu37-ttl")
    assert pay(client, workspace.id).status_code == 201
    store = section(page(client, workspace.id, EN), "store")
    assert "saved under TTL" not in store and "A record keeps the TTL" not in store
    workspace.payments.update_settings({"ttl_s": 72 * 3600})
    store = section(page(client, workspace.id, EN), "store")
    assert "kept for 72h 00m" in store
    assert "saved under TTL 24h 00m" in store
    assert "A record keeps the TTL it was saved under" in store
    assert "lưu với TTL 24h 00m" in section(page(client, workspace.id, VI), "store")


def test_paused_requests_say_they_keep_the_lock_they_arrived_with(
    app: Flask, client: FlaskClient
) -> None:
    """Run W: lesson 5, A and B paused with the Lock off, then Lock ticked: the card's steps
    turned to the lock's at once, and both lanes went on to charge, unexplained."""
    import threading
    import time

    from test_fourth_run_texts import BODY, KEY

    workspace = lab(app, "nu37-kept")
    workspace.payments.update_settings({"step_mode": True, "lock": False, "gateway_latency_ms": 0})
    thread = threading.Thread(target=lambda: workspace.payments.create_charge(KEY, BODY))
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not workspace.payments.stepper.paused():
            assert time.monotonic() < deadline
            time.sleep(0.002)
        words = "The paused requests keep the settings they arrived with (the Lock OFF)"
        assert words not in section(page(client, workspace.id, EN), "step")
        workspace.payments.update_settings({"lock": True})
        assert words in section(page(client, workspace.id, EN), "step")
        assert "(Lock TẮT)" in section(page(client, workspace.id, VI), "step")
    finally:
        workspace.payments.stepper.release_all()
        thread.join(10)


def test_a_step_that_names_retry_with_a_new_key_sets_the_button_apart() -> None:
    """Run W: lesson 2's "Press Retry with a new key, as …" sits beside two buttons,
    Retry and Retry with a new key, and read as either."""
    from demo.payments.scenarios import SCENARIOS

    steps = [step for s in SCENARIOS.values() for step in (*s.steps, *(s.fix_steps or ()))]
    named = [step for step in steps if "Retry with a new key" in step]
    assert named
    assert all("“Retry with a new key”" in step for step in named), named


def test_the_decline_lessons_second_case_has_its_own_goal(app: Flask, client: FlaskClient) -> None:
    """Run W: lesson 9's second case (the 502) kept the first case's goal, while lesson 3's
    second case has its own."""
    workspace = lab(app, "nu37-goal")
    workspace.open_lesson("decline")
    goal = "See a transport failure (502) release the key: the retry charges once."
    assert goal not in section(page(client, workspace.id, EN), "lesson")
    workspace.apply_scenario("decline", fixed=True)
    assert goal in section(page(client, workspace.id, EN), "lesson")
    assert "nhả key ra: lần thử lại" in section(page(client, workspace.id, VI), "lesson")


def test_a_chapters_end_points_to_the_next_chapter(app: Flask, client: FlaskClient) -> None:
    """Run W: the operations chapter ended with "back to the payment lab" and the retry
    chapter with "All done", neither pointing to the next lab's chapter."""
    from test_retries_lessons import LAB
    from test_twenty_ninth_run_texts import achieve_retry_lessons

    from demo.web.nav import next_chapter

    assert [getattr(next_chapter(n), "lab", None) for n in ("payments", "natural", "retries")] == [
        "natural",
        "retries",
        "queue",
    ]
    assert next_chapter("queue") is None
    assert len(list(achieve_retry_lessons(client))) == 5
    html = client.get(f"{LAB}/retries", headers=EN).get_data(as_text=True)
    done = html[html.index('class="all-done"') :]
    done = done[: done.index("</p>")]
    assert f'href="{LAB}/queue?lesson=redelivery"' in done and "Next chapter: Queue" in done
    vi = client.get(f"{LAB}/retries", headers=VI).get_data(as_text=True)
    assert "Chương tiếp theo: Hàng đợi" in vi


def test_the_operations_chapters_end_points_to_the_retry_lab(
    app: Flask, client: FlaskClient
) -> None:
    """The operations chapter's last lesson, achieved: its way back to the payment lab, and
    the next chapter's."""
    from demo.lessons import LESSONS

    workspace = lab(app, "nu37-chapter")
    names = [name for name, lesson in LESSONS.items() if lesson.lab == "natural"]
    for name in names:
        workspace.open_lesson(name)
        for check in LESSONS[name].checks:
            workspace.progress.get(name).met_at[check.id] = 1.0
    html = client.get("/lab/nu37-chapter/natural", headers=EN).get_data(as_text=True)
    assert 'href="/lab/nu37-chapter/retries?lesson=retry-policy" data-next-chapter>' in html
    assert "Chapter done: back to the payment lab" in html


def test_the_simulator_lesson_run_with_the_fix_by_hand_shows_the_fixs_run(
    app: Flask, client: FlaskClient
) -> None:
    """Run X: queue lesson 5 achieved with the idempotent consumer chosen in the simulator:
    its steps still the case's, and its button "Apply the fix and run again"."""
    from test_thirty_first_run_texts import _queue_card

    queue, card = _queue_card(app, client, "nu37-sim", "delivery-semantics")
    run = {"messages": 10000, "loss": 0.2, "ack_loss": 0.2, "seed": 42}
    queue.simulate({"mode": "at_least_once", **run})
    queue.simulate({"mode": "idempotent", **run})
    html = card()
    assert "Lesson achieved" in html
    steps = html[html.index('<ol class="lesson-steps">') :]
    steps = steps[: steps.index("</ol>")]
    assert "In the simulator: at-least-once + idempotent consumer" in steps
    assert "In the simulator: at-least-once, 10,000" not in steps
    assert "Run again without the fix" in html and "Apply the fix and run again" not in html


def test_an_order_the_retry_client_charged_is_not_the_left_lessons(
    app: Flask, client: FlaskClient
) -> None:
    """Run X: after the payment lessons, a retry lab run: the payment page said "the ledger
    keeps order retry-6-… from “Send the receipt e-mail once”", a lesson that never made it."""
    workspace = lab(app, "nu37-left")
    workspace.open_lesson("email-once")
    assert pay(client, workspace.id).status_code in (201, 502)
    workspace.apply_scenario("lost-response-retry", lab="retries")
    assert client.post("/lab/nu37-left/retries/api/run", json={}).status_code == 200
    assert workspace.payments.requests()[-1].action == "Retry client"
    path = section(page(client, workspace.id, EN), "path")
    assert "from the retry lab's client" in path
    assert "from “Send the receipt e-mail once”" not in path


def test_the_decline_card_changed_by_hand_names_its_second_case(
    app: Flask, client: FlaskClient
) -> None:
    """Run Y: lesson 9, the 402 replayed, then Gateway declines unticked by hand: the card
    said only that its settings were changed, with no word of the second case's button."""
    workspace = lab(app, "nu37-decline")
    workspace.open_lesson("decline")
    workspace.payments.update_settings({"gateway_decline": False})
    card = section(page(client, workspace.id, EN), "lesson")
    assert "were changed by hand since this case set them" in card
    assert "For the second case, press Try the second case" in card
    assert "Thử trường hợp thứ hai: nó đặt thiết lập" in page(client, workspace.id, VI)
