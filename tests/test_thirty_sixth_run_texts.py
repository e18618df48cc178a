"""The thirty-sixth session: what the last runs left, checked in the lab's words."""

from __future__ import annotations

import html
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_newcomer_texts import EN, VI, lab, page, section
from test_pages import BODY, hx_pay
from test_retries_page import POLICY, preset, storm_form
from test_twenty_first_run_texts import queue_post

from demo.lessons import LESSONS, Progress
from demo.payments.scenarios import SCENARIOS


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", "(amount 100,000 → 101,000, currency 'VND' → 'EUR')"),
        ("vi", "(amount 100.000 → 101.000, currency 'VND' → 'EUR')"),
    ],
)
def test_the_409_writes_the_changed_amount_as_the_ledger_does(
    client: FlaskClient, language: str, said: str
) -> None:
    """Lesson 3's 409 read "amount 100000 → 101000" (a repr), while the ledger, the key's
    line and every other sentence write 100,000 (100.000 in Vietnamese)."""
    assert hx_pay(client).status_code == 201
    conflict = client.post(
        "/lab/p1/api/charges",
        json={**BODY, "amount": 101000, "currency": "EUR"},
        headers={
            "HX-Request": "true",
            "Idempotency-Key": "k1",
            "X-Lab-Action": "Change amount",
            "Accept-Language": language,
        },
    )
    assert conflict.status_code == 409
    assert said in html.unescape(conflict.get_data(as_text=True))


@pytest.mark.parametrize("name", [n for n, s in SCENARIOS.items() if not s.defence])
def test_every_fix_badge_names_what_it_switches(name: str) -> None:
    """Key-per-click, gateway-timeout and client-guard read a bare "fix OFF", while every
    other card's badge says what is off ("fix OFF: Lock off")."""
    scenario = SCENARIOS[name]
    assert scenario.badge_for(False).startswith("fix OFF: ")
    assert scenario.badge_for(True).startswith("fix ON: ")


@pytest.mark.parametrize(
    ("name", "en", "vi"),
    [
        ("client-guard", "fix OFF: Lock off", "cách sửa: TẮT, Lock tắt"),
        ("gateway-timeout", "fix OFF: the key is kept in doubt", "key bị giữ vì chưa rõ kết quả"),
        ("key-per-click", "fix OFF: a new key per click", "key mới mỗi lần bấm"),
    ],
)
def test_the_badge_names_its_switch_on_the_card(
    app: Flask, client: FlaskClient, name: str, en: str, vi: str
) -> None:
    the_lab = lab(app, f"badge-{name}")
    the_lab.apply_scenario(name)
    assert en in section(page(client, the_lab.id, EN), "lesson")
    assert vi in section(page(client, the_lab.id, VI), "lesson")


def test_the_fix_set_by_hand_says_whether_this_order_was_paid(client: FlaskClient) -> None:
    """Run R's helper: "if this order was paid already, press New order first" while the
    page knew it was (two charges for order 42 in the ledger beside it)."""
    lab_id = "nu36-paid"
    client.post(f"/lab/{lab_id}?lesson=race")
    labs = client.application.extensions["labs"]
    labs.get(lab_id).progress["race"] = Progress({LESSONS["race"].checks[0].id: 0.0})
    client.patch(f"/lab/{lab_id}/api/settings", json={"lock": True})
    assert "set by hand: follow these steps again (or Apply the fix" in section(
        page(client, lab_id, EN), "lesson"
    )
    paid = client.post(
        f"/lab/{lab_id}/api/charges", json=BODY, headers={"Idempotency-Key": "k-paid"}
    )
    assert paid.status_code == 201
    card = section(page(client, lab_id, EN), "lesson")
    assert "set by hand, and order 42 was paid already: press New order first" in card
    vi = section(page(client, lab_id, VI), "lesson")
    assert "do bạn tự đặt, và đơn 42 đã được thanh toán: hãy bấm Đơn hàng mới trước" in vi
    client.post(f"/lab/{lab_id}/new-order", data={"order_id": "42", "amount": "100000"})
    assert "set by hand: follow these steps again (or Apply the fix" in section(
        page(client, lab_id, EN), "lesson"
    )


def _retry_card(client: FlaskClient, lab_id: str) -> str:
    html = client.get(f"/lab/{lab_id}/retries", headers=EN).get_data(as_text=True)
    return html[html.index('id="lesson"') : html.index("</section>", html.index('id="lesson"'))]


def test_a_storm_changed_by_hand_asks_for_one_thing_first(app: Flask, client: FlaskClient) -> None:
    """Run R's helper: retry lesson 4 stormed by hand with full jitter and 50 clients, the
    case not seen yet: the card said both "changed by hand … press Run the steps" and "The
    fix is on, set by hand … set that back first"; Run the steps does both."""
    app.extensions["labs"].get("nu36-storm").open_lesson("jitter")
    by_hand = storm_form(strategy="full_jitter", clients="50")
    assert client.post("/lab/nu36-storm/retries/storm", data=by_hand).status_code == 303
    card = _retry_card(client, "nu36-storm")
    assert 'class="case-changed"' in card and "undo-first" not in card
    fix_only = storm_form(strategy="full_jitter")  # the case's clients: one thing to undo
    assert client.post("/lab/nu36-storm/retries/storm", data=fix_only).status_code == 303
    card = _retry_card(client, "nu36-storm")
    assert 'class="case-changed"' not in card and 'class="undo-first"' in card


@pytest.mark.parametrize("max_attempts", ["1", "2"])
def test_a_run_that_retried_nothing_puts_run_first(
    app: Flask, client: FlaskClient, max_attempts: str
) -> None:
    """Run R's helper: retry lesson 1 with max_attempts 1 said "Set max_attempts to 2 or
    more and press Run again", while Apply the fix was the primary button."""
    lab_id = f"nu36-one-{max_attempts}"
    app.extensions["labs"].get(lab_id).open_lesson("retry-policy")
    plan = {
        **POLICY,
        "max_attempts": max_attempts,
        "strategy": "exponential",
        "retry_on": [*POLICY["retry_on"], "400"],
        "faults_choice": preset(400),
    }
    assert client.post(f"/lab/{lab_id}/retries/run", data=plan).status_code == 303
    card = _retry_card(client, lab_id)
    run_first = re.search(r'data-card-action="run" class="primary"', card) is not None
    fix_first = re.search(r'form="lesson-apply-fix"[^>]*class="primary"', card) is not None
    assert (run_first, fix_first) == ((True, False) if max_attempts == "1" else (False, True))


@pytest.mark.parametrize(
    ("first", "said"),
    [
        ("Retry with a new key", True),
        ("Pay", False),
        (None, False),  # a request from outside the page: no button to name
    ],
)
def test_a_first_request_off_the_steps_is_named(
    client: FlaskClient, first: str | None, said: bool
) -> None:
    """Run R: lesson 2 with Retry with a new key pressed before Pay: the lost response fell
    on it, Pay sent the random key left in the field and replayed, and the card said only
    "Charges expected 1 actual 1: as expected" under two open checks."""
    lab_id = f"nu36-order-{said}-{first is None}"
    client.post(f"/lab/{lab_id}?lesson=lost-response")
    action = {"X-Lab-Action": first} if first else {}
    client.post(
        f"/lab/{lab_id}/api/charges", json=BODY, headers={"Idempotency-Key": "k1", **action}
    )
    card = section(page(client, lab_id, EN), "lesson")
    words = (
        "The steps begin with Pay, and this lab's first request came from Retry with a new "
        "key, so the case may not show as they say: press Run the steps"
    )
    assert (words in html.unescape(card)) is said
    vi = html.unescape(section(page(client, lab_id, VI), "lesson"))
    assert ("Các bước bắt đầu bằng Thanh toán, còn yêu cầu đầu tiên" in vi) is said


def test_the_retry_badge_names_the_box_that_holds_its_fix() -> None:
    """The badge's switch, for the one listener every lab's badge shares (js/fix-badge.js):
    a selector of the policy form's box, and whether ticked or cleared holds the fix."""
    from demo.retries.scenarios import SCENARIOS as RETRY

    controls = {name: s.switch_control() for name, s in RETRY.items()}
    assert ("#policy-form input[name='retry_on'][value='400']", "unchecked") in controls.values()
    assert ("#policy-form input[name='same_key']", "checked") in controls.values()
    assert all((c is None) == (not RETRY[n].switch()) for n, c in controls.items())


def test_a_work_that_received_nothing_is_no_step_of_the_case(
    app: Flask, client: FlaskClient
) -> None:
    """Run T: queue lesson 1, Enqueue, Work (it crashes), Work again at once (IDLE: the
    message still hidden): that Work counted as the redelivery's, so the card read "E-mails
    for one key … as expected" in green under a case not over yet."""
    app.extensions["labs"].get("nu36-idle").open_lesson("redelivery")
    lab = "/lab/nu36-idle/queue"
    client.post(f"{lab}/enqueue", data={"job": "42"}, headers=EN)
    client.post(f"{lab}/work", headers=EN)
    client.post(f"{lab}/work", headers=EN)  # idle: nothing visible yet
    html = client.get(lab, headers=EN).get_data(as_text=True)
    card = html[html.index('id="lesson"') : html.index("</section>", html.index('id="lesson"'))]
    assert "not over yet: more of the steps above to run" in card and "as expected" not in card
    assert client.post(f"{lab}/clock", data={"advance_s": "31"}, headers=EN).status_code < 400
    client.post(f"{lab}/work", headers=EN)  # the redelivery: the case's last step
    html = client.get(lab, headers=EN).get_data(as_text=True)
    card = html[html.index('id="lesson"') : html.index("</section>", html.index('id="lesson"'))]
    assert "not over yet" not in card and 'class="met"' in card


def test_the_fix_set_by_hand_mid_case_waits_for_the_next_work(
    app: Flask, client: FlaskClient
) -> None:
    """Run T: queue lesson 6, four Works, then Max attempts 3 set by hand: the card said
    "Dead letters expected 1 actual 0: the failure you caused, kept as evidence" while the
    message sat in the queue for the Work that dead-letters it; its row then read "4 / 3".
    Run U: that Work, pressed before the clock, found the message still hidden."""
    app.extensions["labs"].get("nu36-poison").open_lesson("poison-message")
    lab = "/lab/nu36-poison/queue"
    client.post(f"{lab}/enqueue", data={"job": "poison"}, headers=EN)
    for first in (True, False, False, False):
        if not first:
            client.post(f"{lab}/clock", data={"advance_s": "31"}, headers=EN)
        client.post(f"{lab}/work", headers=EN)
    client.post(f"{lab}/settings", data={"setting": "max_attempts", "max_attempts": "3"})
    html = client.get(lab, headers=EN).get_data(as_text=True)
    card = html[html.index('id="lesson"') : html.index("</section>", html.index('id="lesson"'))]
    assert "not over yet: a message is still in flight: move the lab clock past the" in card
    assert "the failure you caused" not in card
    client.post(f"{lab}/clock", data={"advance_s": "31"}, headers=EN)
    card = _queue_lesson(client, lab)
    assert "not over yet" not in card  # past its timeout, over Max attempts: dead-lettered
    client.post(f"{lab}/work", headers=EN)
    html = client.get(lab, headers=EN).get_data(as_text=True)
    assert re.search(r'<td class="num">4</td>', html) and "4 / 3" not in html
    card = html[html.index('id="lesson"') : html.index("</section>", html.index('id="lesson"'))]
    assert "not over yet" not in card


def _queue_lesson(client: FlaskClient, lab: str) -> str:
    html = client.get(lab, headers=EN).get_data(as_text=True)
    return html[html.index('id="lesson"') : html.index("</section>", html.index('id="lesson"'))]


def test_the_outbox_fix_by_hand_shows_all_its_steps_and_waits_for_them(
    client: FlaskClient,
) -> None:
    """Run T: queue lesson 4, the case seen, then Reset the queue lab, Outbox and Provider
    dedup ticked by hand and the four steps done: the card read "as expected" with the
    relay's steps (5 to 8) still folded, and "the lab still holds the first case"."""
    lab = "/lab/nu36-outbox/queue"
    assert client.post("/lab/nu36-outbox?lesson=outbox").status_code in (302, 303)
    queue_post(client, "nu36-outbox", "run", scenario="outbox", fixed="0")  # the case
    assert 'class="met" data-check' in _queue_lesson(client, lab)
    queue_post(client, "nu36-outbox", "reset")
    for name in ("outbox", "provider_dedup"):
        queue_post(client, "nu36-outbox", "settings", setting=name, **{name: "on"})
    queue_post(client, "nu36-outbox", "settings", setting="crash_at", crash_at="after_effect")
    queue_post(client, "nu36-outbox", "enqueue", job="42")
    queue_post(client, "nu36-outbox", "work")
    queue_post(client, "nu36-outbox", "clock", advance_s="31")
    queue_post(client, "nu36-outbox", "work")
    card = _queue_lesson(client, lab)
    assert 'class="fix-steps"' not in card  # run AE: the list itself, not folded
    assert "The steps, with the fix:" in card
    assert "not over yet: the steps with the fix go on, all of them" in card
    assert "as expected" not in card and "still holds the first case" not in card
    assert "do every one of the steps with the fix, the relay" in html.unescape(card)
    queue_post(client, "nu36-outbox", "settings", setting="crash_at", crash_at="relay_after_send")
    queue_post(client, "nu36-outbox", "enqueue", job="43")
    queue_post(client, "nu36-outbox", "work")
    queue_post(client, "nu36-outbox", "work")
    card = _queue_lesson(client, lab)
    assert "Lesson achieved" in card and "not over yet" not in card


def test_the_lost_update_card_names_its_100_the_failure(client: FlaskClient) -> None:
    """Run T: operations lesson 3, the card's "expected without the fix 100" beside the
    panel's "Final balance should be 50": two "expected" numbers for one balance."""
    lab = "/lab/nu36-lost/natural"
    client.post("/lab/nu36-lost", data={"lab": "natural", "scenario": "lost-update"})
    client.post(f"{lab}/api/delayed-duplicate", json={"conditional": False})
    card = client.get(f"{lab}/_partials/lesson", headers=EN).get_data(as_text=True)
    assert re.search(r'failure without the fix <strong class="n-expected">100<', card)
    assert "expected without the fix" not in card
    vi = client.get(f"{lab}/_partials/lesson", headers=VI).get_data(as_text=True)
    assert re.search(r'lỗi khi chưa có cách sửa <strong class="n-expected">100<', vi)


def test_the_operations_steps_hold_for_any_attempts() -> None:
    """Run T: Attempts set to 10 in free play, then the lessons: the steps said "(3 unless
    you change it) … so 3 attempts end at 300" beside a field holding 10."""
    from demo.natural.scenarios import SCENARIOS as NATURAL

    steps = [step for s in NATURAL.values() for step in (*s.steps, *s.fix_steps)]
    assert not [step for step in steps if "3 unless" in step or "3 attempts end" in step]
    assert any("each attempt adds 100 (3 attempts: 300)" in step for step in steps)


def test_a_clock_moved_under_a_second_is_no_offset(app: Flask, client: FlaskClient) -> None:
    """Run R's helper: after a retry lab's run (its backoffs move the shared clock by a
    fraction of a second), the payment lab's settings line read "lab clock +0s"."""
    workspace = app.extensions["labs"].get("nu36-clock")
    workspace.clock.sleep(0.4)  # as a retry run's backoff moves it
    assert 0 < workspace.clock_offset_s() < 1
    assert "lab clock +" not in page(client, "nu36-clock", EN)
    workspace.clock.advance(2)
    assert "lab clock +2s" in page(client, "nu36-clock", EN)


def test_the_settings_line_names_the_outbox(app: Flask, client: FlaskClient) -> None:
    """Run T: payment lesson 10's "Settings now, for the next request" line never named the
    receipt e-mail's outbox, the one setting the lesson's fix changes (the badge names the
    case's: "fix OFF: e-mail sent inline")."""
    the_lab = lab(app, "nu36-mail")
    for fixed in (False, True):
        the_lab.apply_scenario("email-once", fixed=fixed)
        html = page(client, the_lab.id, EN)
        start = html.index('<p class="mode">')
        line = html[start : html.index("</p>", start)]
        assert (", receipt e-mail through an outbox." in line) is fixed
    assert ", email biên lai qua outbox" in page(client, the_lab.id, VI)


def test_a_lane_stopped_after_reserve_or_record_save_says_what_that_means(
    app: Flask, client: FlaskClient
) -> None:
    """Run T: "stopped after record save" was the one lane text with no words on what it
    meant (a lookup's says what it found, a gateway charge's that the money moved)."""
    import threading
    import time

    from test_fourth_run_texts import BODY as RAW
    from test_fourth_run_texts import KEY, lanes

    the_lab = app.extensions["labs"].get("nu36-lanes")
    the_lab.payments.update_settings({"step_mode": True, "lock": True, "gateway_latency_ms": 0})
    thread = threading.Thread(target=lambda: the_lab.payments.create_charge(KEY, RAW))
    thread.start()

    last: list[tuple[str, int]] = []  # the point stepped last: never stepped twice

    def step_to(step: str) -> None:
        deadline = time.monotonic() + 30
        while True:
            lane = next(iter(the_lab.payments.stepper.paused()), None)
            if lane is not None and lane["waiting"] and lane["step"] == step:
                return
            point = (lane["step"], lane["occurrence"]) if lane is not None else None
            if lane is not None and lane["waiting"] and point not in last[-1:]:
                last.append((lane["step"], lane["occurrence"]))
                the_lab.payments.stepper.step(lane["request"])
            assert time.monotonic() < deadline, repr(the_lab.payments.stepper.paused())
            time.sleep(0.005)

    try:
        step_to("reserve")
        assert lanes(client, "nu36-lanes", EN)["A"] == (
            "stopped after reserve: the key is held, in flight"
        )
        step_to("record save")
        assert lanes(client, "nu36-lanes", EN)["A"] == (
            "stopped after record save: completed, its response stored for replay"
        )
        assert "phản hồi đã được lưu để replay" in lanes(client, "nu36-lanes", VI)["A"]
    finally:
        the_lab.payments.stepper.release_all()
        thread.join(10)


def test_run_us_words_name_what_is_on_the_page(client: FlaskClient) -> None:
    """Run U: the Vietnamese step said "Bấm Unfurl" beside a button reading "Xem trước link
    trong app chat (unfurl)"; the fix's steps afresh said "the fix stays on" under a badge
    reading "fix OFF: no dedup (changed by hand)" (the press turns it back on)."""
    vi = client.get("/lab/nu36-words/natural", headers=VI).get_data(as_text=True)
    button = "Xem trước link trong app chat (unfurl)"
    assert button in vi
    from demo.natural.scenarios import SCENARIOS as NATURAL

    with client.application.test_request_context(headers=VI):
        from flask_babel import gettext

        steps = [gettext(step) for s in NATURAL.values() for step in (*s.steps, *s.fix_steps)]
    assert any(f"Bấm {button}" in step for step in steps)
    assert not any("Bấm Unfurl" in step for step in steps)
    en = client.get("/lab/nu36-words", headers=EN).get_data(as_text=True)
    assert "the lab empties, with the fix on." in en and "the fix stays on" not in en


def test_a_store_emptied_by_a_redeploy_does_not_say_no_key_was_seen(
    app: Flask, client: FlaskClient
) -> None:
    """Run U: payment lesson 8, the double charge made, then Store set to shared (a
    redeploy): the panel said "Empty: no key has been seen yet." beside two charges under
    that key in the ledger."""
    from test_fourth_run_texts import store_panel

    app.extensions["labs"].get("nu36-store")  # a lab of its own, made here
    panel = store_panel(page(client, "nu36-store", EN))
    assert "Empty: no key has been seen yet." in panel
    refused = client.post(
        "/lab/nu36-store/api/charges", json={"amount": 1}, headers={"Idempotency-Key": "k0"}
    )
    assert refused.status_code == 422  # a refused key never entered the store
    assert "Empty: no key has been seen yet." in store_panel(page(client, "nu36-store", EN))
    paid = client.post("/lab/nu36-store/api/charges", json=BODY, headers={"Idempotency-Key": "k1"})
    assert paid.status_code == 201
    changed = client.patch(
        "/lab/nu36-store/api/settings", json={"instances": 2, "store_scope": "per_instance"}
    )
    assert changed.status_code == 200  # a redeploy: new instances, new stores
    panel = store_panel(page(client, "nu36-store", EN))
    assert "no key has been seen yet" not in panel
    assert "Empty now: the keys sent before are gone from it" in panel


def test_a_keyless_double_submit_in_step_mode_is_lesson_1s_case(
    app: Flask, client: FlaskClient
) -> None:
    """Run U: payment lesson 1 with Step mode ticked, Double-submit, Release all: both
    requests charged, overlapping, and the first check stayed open beside a red
    "MISMATCH" (no key: no lock holds either back, stepped or not)."""
    import threading
    import time

    from test_fourth_run_texts import BODY as RAW

    the_lab = app.extensions["labs"].get("nu36-stepped")
    the_lab.open_lesson("double-click")
    the_lab.payments.update_settings({"step_mode": True, "gateway_latency_ms": 0})
    threads = [
        threading.Thread(target=lambda: the_lab.payments.create_charge([], RAW)) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while len(the_lab.payments.stepper.paused()) < 2:  # both in flight at once
        assert time.monotonic() < deadline
        time.sleep(0.005)
    the_lab.payments.stepper.release_all()
    for thread in threads:
        thread.join(30)
    card = section(page(client, "nu36-stepped", EN), "lesson")
    assert re.search(r'<li class="met" data-check="keyless-double">', card)
    assert "MISMATCH" not in card


def test_an_in_progress_record_shows_its_lease(app: Flask, client: FlaskClient) -> None:
    """Run U: payment lesson 6 after the crash, the store's in-progress record read
    "expires 23h 59m" while the explanation spoke of "a lease, 30 s here"."""
    from test_fourth_run_texts import store_panel

    workspace = app.extensions["labs"].get("nu36-lease")
    workspace.payments.store.reserve("k-crashed", "f" * 64)  # as a crash leaves it
    panel = store_panel(page(client, "nu36-lease", EN))
    assert re.search(r"lease: \d+s left", panel)  # 30 s, less the time this took
    assert re.search(r"lease: còn \d+s", store_panel(page(client, "nu36-lease", VI)))
    workspace.clock.advance(31)
    panel = store_panel(page(client, "nu36-lease", EN))
    assert "lease over: a retry may reclaim it" in panel


def test_the_storm_chart_says_why_its_bars_read_lower_than_the_peak(
    client: FlaskClient,
) -> None:
    """Run U: the table's peak load read 1,990 calls/s, the tallest bar about 1,000: the bars
    average 1 s, the peak is the busiest 100 ms, said only in the table's header."""
    assert client.post("/lab/nu36-storm2/retries/storm", data=storm_form()).status_code == 303
    html = client.get("/lab/nu36-storm2/retries", headers=EN).get_data(as_text=True)
    assert "so the table's peak load (the busiest 100 ms) reads higher" in html


def test_run_vs_words(app: Flask, client: FlaskClient) -> None:
    """Run V: the poison lesson opened with invoice 42 chosen while its step 1 said to
    choose send-invoice-x; Conditional writes had no word that it is sent with each run
    (Dedup has); lesson 5's last step named no button ("Then run both to the end")."""
    assert client.post("/lab/nu36-v?lesson=poison-message").status_code in (302, 303)
    queue = client.get("/lab/nu36-v/queue", headers=EN).get_data(as_text=True)
    assert re.search(r'<option value="poison" selected>send-invoice-x', queue)
    ops = client.get("/lab/nu36-v/natural", headers=EN).get_data(as_text=True)
    label = ops[
        ops.index('id="lost-conditional"') : ops.index(
            "</label>", ops.index('id="lost-conditional"')
        )
    ]
    assert "(sent along with Run the three writes, not saved on its own)" in label
    steps = SCENARIOS["slow-motion"].steps[-1]
    assert steps.endswith("Then press Run A to the end, then Run B to the end.")


def test_a_double_charge_on_another_instance_calls_the_request_a_request() -> None:
    """Run V: lesson 8, Retry then Pay: "#1 was served by i1; this retry reached i2",
    though #2 was a Pay: any request, a retry or not, can land on the other instance."""
    from test_eighth_run_texts import _said
    from test_failures import BODY as FAIL_BODY
    from test_failures import KEY as FAIL_KEY
    from test_failures import make

    two = make(instances=2, store_scope="per_instance")
    two.payments.create_charge(FAIL_KEY, FAIL_BODY)
    two.payments.create_charge(FAIL_KEY, FAIL_BODY)
    said = _said(two)
    assert "was served by i1; this request reached i2" in said and "this retry" not in said
