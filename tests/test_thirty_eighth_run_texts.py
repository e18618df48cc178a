"""The thirty-eighth session: what the last runs left, checked in the lab's words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_newcomer_texts import EN, VI, lab


def test_the_operations_chapter_end_leads_on_to_the_next_chapter(
    app: Flask, client: FlaskClient
) -> None:
    """Run Y: the operations chapter's end made "back to the payment lab" its primary
    button and the next chapter a quiet one, so the way on read as the way back."""
    from demo.lessons import LESSONS

    workspace = lab(app, "nu38-chapter")
    for name, lesson in LESSONS.items():
        if lesson.lab == "natural":
            workspace.open_lesson(name)
            for check in lesson.checks:
                workspace.progress.get(name).met_at[check.id] = 1.0
    html = client.get("/lab/nu38-chapter/natural", headers=EN).get_data(as_text=True)
    primary = re.findall(r'<a class="button primary[^"]*" href="([^"]+)"', html)
    assert primary == ["/lab/nu38-chapter/retries?lesson=retry-policy"]
    assert html.index("data-next-chapter") < html.index("data-chapter-done")


def test_the_simulator_says_its_mode_leaves_the_queue_settings(
    app: Flask, client: FlaskClient
) -> None:
    """Run Y: queue lesson 5, the idempotent consumer chosen in the simulator, then
    looked for the Dedup switch in Settings to be on: the simulator is its own model."""
    lab(app, "nu38-sim")
    en = client.get("/lab/nu38-sim/queue", headers=EN).get_data(as_text=True)
    assert "its Mode leaves the queue's Settings (Dedup included) as they are" in en
    vi = client.get("/lab/nu38-sim/queue", headers=VI).get_data(as_text=True)
    assert "Chế độ ở đây giữ nguyên Thiết lập của hàng đợi (cả Dedup)" in vi


def test_the_outbox_story_tells_the_first_case_only(app: Flask, client: FlaskClient) -> None:
    """Run Y: queue lesson 4's story, over the first case, told of the relay's crash that
    only the fix's run has; that crash is told with the fix now."""
    from demo.queue.scenarios import SCENARIOS

    outbox = SCENARIOS["outbox"]
    assert "relay" not in outbox.story
    assert "crashes the relay" in outbox.fix_text
    workspace = lab(app, "nu38-outbox")
    workspace.open_lesson("outbox")
    html = client.get("/lab/nu38-outbox/queue", headers=EN).get_data(as_text=True)
    story = html.split('<p class="story">', 1)[1].split("</p>", 1)[0]
    assert "sends again." in story and "relay" not in story


def test_a_read_only_replay_speaks_of_its_history_not_of_a_next_request(
    app: Flask, client: FlaskClient
) -> None:
    """Run Y: a read-only replay said "A Retry from here … would replay" and "Settings now,
    for the next request" where no request can be sent."""
    from test_advice_stays_true import pay
    from test_newcomer_texts import page, section

    workspace = lab(app, "nu38-export")
    assert pay(client, workspace.id).status_code == 201
    live = section(page(client, workspace.id, EN), "explain")
    assert "A Retry from here sends the same key and body" in live
    assert "Settings now, for the next request:" in live
    exported = client.get(f"/lab/{workspace.id}/history.json").data
    answer = client.post("/replay", data=exported, content_type="application/json")
    replay_id = answer.headers["Location"].rsplit("/", 1)[1]
    shown = section(page(client, replay_id, EN), "explain")
    assert "A Retry from here sends" not in shown and "for the next request" not in shown
    assert "a Retry from here would have replayed this response" in shown
    assert "Settings at the end of this history:" in shown
    assert "Thiết lập ở cuối lịch sử này:" in section(page(client, replay_id, VI), "explain")


def test_the_mailbox_and_outbox_break_a_key_at_its_colons(app: Flask, client: FlaskClient) -> None:
    """Presenter mode cut the mailbox's key mid-word ("invoice:43:ema" / "il"), as the
    payment lab's ledger and store do not: a key breaks after its colons first."""
    workspace = lab(app, "nu38-keys")
    workspace.open_lesson("outbox")
    workspace.apply_scenario("outbox", fixed=True, lab="queue")
    workspace.queue.play("outbox", fixed=True)
    html = client.get("/lab/nu38-keys/queue", headers=EN).get_data(as_text=True)
    mailbox = html.split('id="mailbox"', 1)[1].split("</section>", 1)[0]
    outbox = html.split('id="outbox-title"', 1)[1].split("</section>", 1)[0]
    for table in (mailbox, outbox):
        assert '<code title="invoice:42:email">invoice:<wbr>42:<wbr>email</code>' in table


def test_lesson_5_by_hand_waits_for_the_paused_requests_before_new_order(
    app: Flask, client: FlaskClient
) -> None:
    """Run Z: lesson 5, the Lock ticked by hand, A run to its end while B was still paused:
    step 1 said "order 43 was paid already: press New order first", which would have left
    B behind mid-run."""
    from test_newcomer_texts import page, section
    from test_step_mode import KEY, quiet, requests

    from demo.lessons import LESSONS, Progress

    workspace = lab(app, "nu38-slow")
    workspace.open_lesson("slow-motion")
    first = LESSONS["slow-motion"].checks[0].id
    workspace.progress["slow-motion"] = Progress({first: 0.0})
    with requests(workspace, 2):  # sent with the Lock off, as the case has it
        patched = client.patch(f"/lab/{workspace.id}/api/settings", json={"lock": True})
        assert patched.status_code == 200
        a = next(p for p in quiet(workspace) if p["label"] == "A")
        workspace.payments.stepper.step(a["request"], to_end=True)
        quiet(workspace)
        assert any(c.idempotency_key == KEY[0] for c in workspace.payments.gateway.ledger())
        card = section(page(client, workspace.id, EN), "lesson")
        assert "first let the paused requests finish" in card
        assert "was paid already" not in card
        assert "trước hết hãy để các yêu cầu đang tạm dừng chạy xong" in section(
            page(client, workspace.id, VI), "lesson"
        )
    card = section(page(client, workspace.id, EN), "lesson")
    assert "order 42 was paid already: press New order first" in card


def test_lesson_5_by_hand_says_nothing_first_while_the_fixs_run_is_paused(
    app: Flask, client: FlaskClient
) -> None:
    """Run AB: the Lock ticked by hand, New order, Double-submit: step 1 said "first let the
    paused requests finish … then press New order" of the very run the fix's steps need."""
    from test_newcomer_texts import page, section
    from test_step_mode import quiet, requests

    from demo.lessons import LESSONS, Progress

    workspace = lab(app, "nu38-slow-on")
    workspace.open_lesson("slow-motion")
    first = LESSONS["slow-motion"].checks[0].id
    workspace.progress["slow-motion"] = Progress({first: 0.0})
    assert client.patch(f"/lab/{workspace.id}/api/settings", json={"lock": True}).status_code == 200
    with requests(workspace, 2):  # sent with the Lock on, for an order not charged yet
        a = next(p for p in quiet(workspace) if p["label"] == "A")
        workspace.payments.stepper.step(a["request"], to_end=True)
        quiet(workspace)
        card = section(page(client, workspace.id, EN), "lesson")
        assert "The fix is on, set by hand" not in card
        assert "Run A to its end: B takes the lock the moment A lets go" in card


@pytest.mark.parametrize(
    ("lesson", "en", "vi"),
    [
        ("double-click", "(Key strategy: stable key per intent)", "(Cách tạo key: key ổn định"),
        (
            "decline",
            "By hand: untick Gateway declines cards, press New order, then Gateway error in "
            "the Failure lab.",
            "Tự tay: bỏ chọn Gateway từ chối thẻ, bấm Đơn hàng mới, rồi bấm Lỗi gateway",
        ),
    ],
)
def test_a_fix_set_by_hand_names_its_controls(
    app: Flask, client: FlaskClient, lesson: str, en: str, vi: str
) -> None:
    """Run Z: lesson 1's fix said "Send a stable key per intent" and lesson 9's second case
    "Switch to a transport failure", naming none of the controls that do it by hand."""
    from test_newcomer_texts import page, section

    workspace = lab(app, f"nu38-hand-{lesson}")
    workspace.open_lesson(lesson)
    assert en in section(page(client, workspace.id, EN), "lesson")
    assert vi in section(page(client, workspace.id, VI), "lesson")


def test_queue_lesson_6_by_hand_starts_afresh_first(app: Flask, client: FlaskClient) -> None:
    """Run Z: queue lesson 6, Max attempts set to 3 by hand after the case: the steps began
    again at Enqueue, which would have added a second poison message to the first (still
    in the queue, no e-mail sent, so the e-mails' note stayed away)."""
    workspace = lab(app, "nu38-poison")
    workspace.open_lesson("poison-message")
    workspace.queue.play("poison-message")
    url = "/lab/nu38-poison/queue"
    note = "The lab still holds the first case's message, sent before the fix: go on with it"
    assert note not in client.get(url, headers=EN).get_data(as_text=True)
    workspace.queue.update_settings({"max_attempts": 3})
    html = client.get(url, headers=EN).get_data(as_text=True)
    steps = html.split('<ol class="lesson-steps">', 1)[1]
    assert steps.startswith(f'<li class="by-hand-note">{note}')
    vi = client.get(url, headers=VI).get_data(as_text=True)
    assert "Lab vẫn giữ message của trường hợp thứ nhất" in vi
    workspace.queue.reset()  # afresh: nothing from before the fix
    assert note not in client.get(url, headers=EN).get_data(as_text=True)


def test_the_pixel_fix_step_counts_views_on_top_of_the_first_case(
    app: Flask, client: FlaskClient
) -> None:
    """Run Z: operations lesson 4, the window set by hand after the case: the step said
    "two views" while the counter read 5, the first case's three kept. Run AA: "two more
    views" then, where one came: the window covers the reader's views of the first case."""
    workspace = lab(app, "nu38-pixel")
    workspace.open_lesson("tracking-pixel")
    workspace.apply_scenario("tracking-pixel", fixed=True, lab="natural")
    en = client.get("/lab/nu38-pixel/natural", headers=EN).get_data(as_text=True)
    assert "count once, or not at all when the reader was counted in the last 30" in en
    assert "two more views" not in en and "two views" not in en
    vi = client.get("/lab/nu38-pixel/natural", headers=VI).get_data(as_text=True)
    assert "hoặc không được đếm nếu người đọc đã được đếm trong 30 phút vừa qua" in vi


@pytest.mark.parametrize(
    ("msgid", "said"),
    [
        (  # Run AA: B's lane said 3,041 ms, A had held the lock for about 5 s.
            "Run A to its end: B takes the lock",
            "its lane's wait counts from B's first wait until then",
        ),
        (  # Run AA: "receive 4 of 10 … then goes to the dead-letter queue" read as next.
            "The handler failed on this job (%(error)s), receive %(n)s of %(max)s. No ack",
            "until receive %(max)s, then goes to the dead-letter queue",
        ),
    ],
)
def test_texts_say_what_the_lab_counts(msgid: str, said: str) -> None:
    """The lane's wait and a poison message's receives, as the lab counts them."""
    from babel.messages.pofile import read_po

    with (Path(__file__).parents[1] / "demo/translations/vi/LC_MESSAGES/messages.po").open(
        "rb"
    ) as po:
        ids = [m.id for m in read_po(po) if isinstance(m.id, str) and m.id.startswith(msgid)]
    assert len(ids) == 1 and said in ids[0]


def test_the_ledger_marks_the_retry_clients_charges(app: Flask, client: FlaskClient) -> None:
    """Run Z: free play on the payment lab after the retry lab: "DOUBLE CHARGE: 1 extra"
    for an order it never charged here (retry-3-…, the retry client's new-key run)."""
    from test_advice_stays_true import pay
    from test_newcomer_texts import page, section

    workspace = lab(app, "nu38-ledger")
    assert pay(client, workspace.id).status_code == 201
    ledger = section(page(client, workspace.id, EN), "ledger")
    assert "retry lab" not in ledger
    workspace.apply_scenario("lost-response-retry", lab="retries")
    assert client.post("/lab/nu38-ledger/retries/api/run", json={}).status_code == 200
    ledger = section(page(client, workspace.id, EN), "ledger")
    rows = re.findall(r'<td class="order">([^<]*)(.*?)</td>', ledger)
    marked = {order for order, tag in rows if 'class="from-lab">retry lab<' in tag}
    assert marked and all(order.startswith("retry-") for order in marked)
    assert "42" not in marked and any(order == "42" for order, _ in rows)
    assert "Orders marked “retry lab” were charged by the retry lab's client" in ledger
    vi = section(page(client, workspace.id, VI), "ledger")
    assert "phòng lab thử lại" in vi


def test_lesson_9s_second_case_set_by_hand_shows_its_steps_not_a_warning(
    app: Flask, client: FlaskClient
) -> None:
    """Run AA: lesson 9's second case by hand, as its "By hand" says: unticking Gateway
    declines set off "these steps may not do what they say: press Run the steps", over the
    first case's steps ("the gateway declines (402)")."""
    from test_advice_stays_true import pay
    from test_newcomer_texts import page, section

    workspace = lab(app, "nu38-second")
    workspace.open_lesson("decline")
    assert pay(client, workspace.id).status_code == 402
    assert pay(client, workspace.id, action="Retry").status_code == 402
    workspace.payments.update_settings({"gateway_decline": False})
    card = section(page(client, workspace.id, EN), "lesson")
    assert "You are setting up the second case by hand" in card
    assert "were changed by hand since this case set them" not in card
    assert "Press Pay: the gateway fails before charging (502)" in card
    assert "Press Pay: the gateway declines (402)." not in card
    vi = section(page(client, workspace.id, VI), "lesson")
    assert "Bạn đang tự tay dựng trường hợp thứ hai" in vi
    workspace.payments.update_settings({"gateway_latency_ms": 50})  # not the second case's
    assert "were changed by hand" not in section(page(client, workspace.id, EN), "lesson")
    workspace.payments.update_settings({"gateway_decline": True})  # the first case's again
    card = section(page(client, workspace.id, EN), "lesson")
    assert "You are setting up the second case by hand" not in card
    assert "Press Pay: the gateway declines (402)." in card


def test_lesson_9s_second_case_set_up_by_hand_stops_asking_to_finish(
    app: Flask, client: FlaskClient
) -> None:
    """Run AB: Gateway declines unticked, New order, Gateway error armed, then the 502 Pay:
    the card still said "finish as its By hand says", and the ledger still spoke of the
    402 decline beside the 502."""
    from test_advice_stays_true import pay
    from test_newcomer_texts import page, section

    workspace = lab(app, "nu38-second-set")
    workspace.open_lesson("decline")
    assert pay(client, workspace.id).status_code == 402
    assert pay(client, workspace.id, action="Retry").status_code == 402
    declined = "The gateway declined the card (402): nothing to charge"
    assert declined in section(page(client, workspace.id, EN), "ledger")
    workspace.payments.update_settings({"gateway_decline": False})
    assert "You are setting up the second case by hand" in page(client, workspace.id, EN)
    client.post(f"/lab/{workspace.id}/new-order", data={"order_id": "42", "amount": "100000"})
    workspace.payments.update_settings({"fault": "gateway_error"})
    card = section(page(client, workspace.id, EN), "lesson")
    assert "You are setting up the second case by hand" not in card
    assert "Press Pay: the gateway fails before charging (502)" in card
    assert pay(client, workspace.id, key="t1:u7:pay:order-43:v1", order_id="43").status_code == 502
    html = page(client, workspace.id, EN)
    assert "You are setting up the second case by hand" not in section(html, "lesson")
    assert declined not in section(html, "ledger")


def test_a_decimal_amount_is_told_in_the_forms_words(client: FlaskClient) -> None:
    """Run AB typed 1.5 under "VND, no decimals": the 422 spoke of "an integer in minor
    units", with no word of VND having none."""
    answer = client.post(
        "/lab/nu38-amount/api/charges",
        json={"order_id": "42", "amount": 1.5},
        headers={"Idempotency-Key": "k-decimal", **EN},
    )
    assert answer.status_code == 422
    said = answer.get_json()["errors"]["amount"]
    assert "whole number in minor units, such as 100000 (VND has no decimals)" in said
    assert "not 1.5" in said
