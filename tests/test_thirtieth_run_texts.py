"""The thirtieth session: what the fortieth new-user run named, checked in the lab's words."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from demo.lessons import LESSONS
from demo.lessons.engine import Progress
from demo.registry import LabRegistry

EN = {"Accept-Language": "en"}
VI = {"Accept-Language": "vi"}


def _card(html: str, start: str) -> str:
    at = html.index(start)
    return html[at : html.index("</section>", at)]


def test_the_lock_ticked_by_hand_says_what_apply_the_fix_does(
    app: Flask, client: FlaskClient
) -> None:
    """Lesson 4 with the Lock ticked by hand: "Apply the fix" stood under the card with no
    word of what it would do to a fix already on (it starts the lab afresh)."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu30-race")
    lab.open_lesson("race")
    lab.progress["race"] = Progress(met_at={LESSONS["race"].checks[0].id: 0.0})  # the case
    lab.payments.update_settings({"lock": True})
    card = _card(client.get("/lab/nu30-race", headers=EN).get_data(as_text=True), 'id="lesson"')
    first = card[card.index('<ol class="lesson-steps">') :]
    first = first[: first.index("</li>")]
    assert "(or Apply the fix: it starts the lab afresh, the fix on)" in first
    vi = _card(client.get("/lab/nu30-race", headers=VI).get_data(as_text=True), 'id="lesson"')
    assert "Áp dụng cách sửa: lab bắt đầu lại từ đầu" in vi


def test_the_operations_table_says_what_a_dashed_answer_is(app: Flask, client: FlaskClient) -> None:
    """Operations: the dashed blue 200s (answers replayed from the dedup record) had no
    legend; a newcomer took them for three runs. The legend comes with the first replay."""
    registry: LabRegistry = app.extensions["labs"]
    nat = registry.get("nu30-legend").natural
    nat.apply({"operation": "add_balance", "times": 3, "dedup": False})
    html = client.get("/lab/nu30-legend/natural", headers=EN).get_data(as_text=True)
    assert "answers-legend" not in html  # no replay on screen: nothing to explain
    nat.apply({"operation": "add_balance", "times": 3, "dedup": True})
    html = client.get("/lab/nu30-legend/natural", headers=EN).get_data(as_text=True)
    legend = html[html.index('class="hint answers-legend"') :]
    legend = legend[: legend.index("</p>")]
    assert '<span class="status s2xx replayed">200</span>' in legend
    assert "replayed from the dedup record, the operation did not run again" in legend
    assert html.index("answers-legend") < html.index('<table class="ops">')
    vi = client.get("/lab/nu30-legend/natural", headers=VI).get_data(as_text=True)
    assert "replay từ record dedup, thao tác không chạy lại" in vi


def test_new_order_after_two_replays_names_the_order_the_form_holds(
    app: Flask, client: FlaskClient
) -> None:
    """Lesson 4, the Lock ticked by hand on the order already charged: both lanes replay,
    and the panel said "press New order first", still after New order was pressed."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu30-new")
    lab.open_lesson("race")
    key = "t1:u7:pay:order-42:v1"
    body = {"order_id": "42", "amount": 100000}
    for action in ("Pay", "Double-submit A", "Double-submit B"):
        headers = {"Idempotency-Key": key, "X-Lab-Action": action, "HX-Request": "true"}
        assert (
            client.post("/lab/nu30-new/api/charges", json=body, headers=headers).status_code < 300
        )
    explain = _card(client.get("/lab/nu30-new", headers=EN).get_data(as_text=True), 'id="explain"')
    assert "press New order first: a new key, with no record yet" in explain
    answer = client.post("/lab/nu30-new/new-order", data={"order_id": "42", "amount": "100000"})
    assert answer.status_code == 200
    explain = _card(client.get("/lab/nu30-new", headers=EN).get_data(as_text=True), 'id="explain"')
    assert "press New order first" not in explain
    assert "The form now holds order 43, a new key with no record yet: press" in explain
    vi = _card(client.get("/lab/nu30-new", headers=VI).get_data(as_text=True), 'id="explain"')
    assert "Form giờ giữ đơn 43" in vi


def test_an_order_id_with_a_comma_gets_a_key_the_server_takes(client: FlaskClient) -> None:
    """Order id "a,b": the page built "t1:u7:pay:order-a,b:v1", and its own server
    refused it (400: a comma cannot be told from a second header). The comma is
    percent-encoded now, as a space or "é" is."""
    from demo.web.payments.order import intent_key

    key = intent_key("a,b")
    assert key == "t1:u7:pay:order-a%2Cb:v1"
    answer = client.post(
        "/lab/nu30-comma/api/charges",
        json={"order_id": "a,b", "amount": 100},
        headers={"Idempotency-Key": key},
    )
    assert answer.status_code == 201, answer.get_data(as_text=True)


def test_a_queue_fix_ticked_by_hand_on_a_reset_lab_sets_the_crash_first(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 1, Dedup ticked by hand, then Reset the queue lab: the card's steps
    had no word of the crash (it fires once, and had fired), so the run ended "expected 1
    actual 1 as expected" with nothing redelivered and the check unmet."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu30-queue")
    lab.open_lesson("redelivery")
    queue = lab.queue
    queue.play("redelivery")
    queue.update_settings({"dedup": True})
    queue.reset()
    card = _card(
        client.get("/lab/nu30-queue/queue", headers=EN).get_data(as_text=True), 'id="lesson"'
    )
    steps = card[card.index('<ol class="lesson-steps">') :]
    assert steps.index('class="arm-first"') < steps.index("press Enqueue")
    assert "Set Crash (once) to “after the record, before the ack”" in steps[: steps.index("</li>")]
    assert queue.scenario is not None
    for click, arg in queue.scenario.clicks:  # the steps as listed, the crash left unset
        queue.by_hand(click, arg)
        queue._click(click, arg)
    card = _card(
        client.get("/lab/nu30-queue/queue", headers=EN).get_data(as_text=True), 'id="lesson"'
    )
    assert "not the case yet: no crash happened, so nothing was redelivered" in card
    assert "as expected" not in card
    queue.reset()
    queue.update_settings({"crash_at": "after_record"})  # step 1, done
    card = _card(
        client.get("/lab/nu30-queue/queue", headers=EN).get_data(as_text=True), 'id="lesson"'
    )
    assert "arm-first" not in card


def test_every_lab_keeps_the_vietnamese_crash_one_word() -> None:
    """One term, one rendering: the payment lab said "sập", the queue lab "crash" (its
    setting "Crash (một lần)", its outcomes "crash tại đây")."""
    from babel.messages.pofile import read_po

    with open("demo/translations/vi/LC_MESSAGES/messages.po", "rb") as po:
        catalog = read_po(po)
    mixed = [
        m.id for m in catalog if m.id and isinstance(m.string, str) and "crash" in m.string.lower()
    ]
    assert mixed == []


def test_the_retry_badge_holds_full_jitter_chosen_by_hand() -> None:
    """Retries lesson 4 achieved with Full jitter chosen by hand in the storm form: its
    badge kept "fix OFF: no jitter" (the fix storms every strategy, full jitter among them)."""
    from demo.retries.scenarios import SCENARIOS

    jitter = SCENARIOS["jitter"]
    assert jitter.holds_fix({}, {"strategy": "full_jitter"})
    assert jitter.holds_fix({}, {"strategy": "all"})
    assert not jitter.holds_fix({}, {"strategy": "exponential"})


def test_the_queue_simulator_badge_follows_the_mode_chosen_by_hand(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 5 achieved with the idempotent consumer chosen in the simulator: the
    badge read "fix OFF"."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu30-sim")
    lab.open_lesson("delivery-semantics")
    run = {"messages": 1000, "loss": 0.2, "ack_loss": 0.2, "seed": 42}
    lab.queue.simulate({"mode": "at_least_once", **run})
    card = _card(
        client.get("/lab/nu30-sim/queue", headers=EN).get_data(as_text=True), 'id="lesson"'
    )
    assert '<span class="fix-state off"' in card
    lab.queue.simulate({"mode": "idempotent", **run})
    card = _card(
        client.get("/lab/nu30-sim/queue", headers=EN).get_data(as_text=True), 'id="lesson"'
    )
    assert '<span class="fix-state on"' in card and "(set by hand)" in card


def test_a_fix_ticked_before_the_failure_says_to_undo_it_and_drops_apply_once_achieved(
    app: Flask, client: FlaskClient
) -> None:
    """Operations 1 with Dedup ticked before the failure: the badge said "fix ON (set by
    hand)" over steps promising "the balance ends at 300". Retries 1 kept "Then press Apply
    the fix" under "Lesson achieved"."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu30-undo")
    lab.open_lesson("set-vs-add")
    lab.natural.apply({"operation": "add_balance", "times": 3, "dedup": True})
    card = _card(
        client.get("/lab/nu30-undo/natural", headers=EN).get_data(as_text=True),
        'id="natural-lesson"',
    )
    steps = card[card.index('<ol class="lesson-steps">') :]
    assert steps.index(
        "The fix is on, set by hand: the first check asks for the case without it"
    ) < steps.index("(3 attempts: 300)")
    lab.open_lesson("retry-policy")
    for fixed in (False, True):
        lab.apply_scenario("retry-policy", fixed=fixed, lab="retries")
        assert client.post("/lab/nu30-undo/retries/api/run", json={}).status_code == 200
    assert "retry-policy" in lab.achieved()
    card = _card(
        client.get("/lab/nu30-undo/retries", headers=EN).get_data(as_text=True), 'id="lesson"'
    )
    assert "Lesson achieved" in card
    assert "Then press Apply the fix" not in card


def test_the_queue_card_says_whose_steps_and_whose_expectation(
    app: Flask, client: FlaskClient
) -> None:
    """Queue 4 with the fix: "The first case, without the fix:" sat over a list whose last
    steps are the fix's. Queue 3 without it: "Jobs lost expected 0 actual 1", where the
    other cards say "expected with the fix"."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu30-lead")
    lab.open_lesson("at-most-once")
    lab.queue.play("at-most-once")
    card = _card(
        client.get("/lab/nu30-lead/queue", headers=EN).get_data(as_text=True), 'id="lesson"'
    )
    assert 'with the fix <strong class="expected-value">0</strong>' in card
    assert "The steps, with the fix:" not in card
    lab.apply_scenario("at-most-once", fixed=True, lab="queue")
    lab.queue.play("at-most-once", fixed=True)
    card = _card(
        client.get("/lab/nu30-lead/queue", headers=EN).get_data(as_text=True), 'id="lesson"'
    )
    assert card.index("The steps, with the fix:") < card.index('<ol class="lesson-steps">')
    assert 'expected <strong class="expected-value">0</strong>' in card


def test_e_mails_off_is_no_green_check(app: Flask, client: FlaskClient) -> None:
    """Payments lesson 2 showed "E-mails off in this scenario" in green, like a check
    passed."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu30-off")
    lab.open_lesson("double-click")
    headers = {"X-Lab-Action": "Pay", "HX-Request": "true"}
    client.post(
        "/lab/nu30-off/api/charges", json={"order_id": "42", "amount": 100}, headers=headers
    )
    card = _card(client.get("/lab/nu30-off", headers=EN).get_data(as_text=True), 'id="lesson"')
    assert '<p class="numbers off emails-off">' in card


def test_a_simulator_seed_too_large_says_its_range(client: FlaskClient) -> None:
    """Seed 99999999999999999999 was answered "must be a non-negative integer"."""
    body = {"mode": "at_least_once", "messages": 10, "loss": 0, "ack_loss": 0, "seed": 10**20}
    answer = client.post("/lab/nu30-seed/queue/api/simulate", json=body)
    assert answer.status_code == 422
    assert "must be an integer from 0 to" in answer.get_data(as_text=True)


def test_a_dead_letter_says_max_attempts_not_a_count_it_may_not_match() -> None:
    """Queue 6 with Max attempts lowered to 3 by hand after four failures: "m-1 had been
    received 3 times without an ack", where its receive count was 4."""
    from demo.queue.entries import WorkEntry
    from demo.queue.explain import explain

    entry = WorkEntry(id=1, action="work", started=0.0, at=0.0, dead_lettered=["m-1"],
                      settings={"max_attempts": 3}, outcome="idle")  # fmt: skip
    said = " ".join(str(s) for s in explain(entry))
    assert "m-1 had reached Max attempts (3) without an ack" in said


def test_full_jitter_by_hand_keeps_the_steps_it_ran(app: Flask, client: FlaskClient) -> None:
    """Retries lesson 4 achieved with Full jitter chosen by hand: the steps then described
    the fix's storm ("every strategy side by side, on the same scales"), a chart not there."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu30-jit")
    lab.open_lesson("jitter")
    storm = {"model": "contention", "clients": 100, "seed": 1}
    for strategy in ("exponential", "full_jitter"):
        answer = client.post(
            "/lab/nu30-jit/retries/api/storm", json={**storm, "strategy": strategy}
        )
        assert answer.status_code == 200
    assert "jitter" in lab.achieved()
    card = _card(
        client.get("/lab/nu30-jit/retries", headers=EN).get_data(as_text=True), 'id="lesson"'
    )
    assert "fix ON: " in card and "(set by hand)" in card
    assert "every strategy side by side" not in card
    assert "The fix is on, set by hand" not in card


def test_the_buttons_legend_says_change_amount_goes_down_at_the_most(
    client: FlaskClient,
) -> None:
    """At the most a charge may be, Change amount & resend takes 1,000 off (a 422 would
    hide its 409), and the legend said only "amount + 1,000"."""
    html = client.get("/lab/nu30-legend-amount", headers=EN).get_data(as_text=True)
    assert "same key, amount + 1,000 (− 1,000 at the most a charge may be)." in html
    html = client.get("/lab/nu30-legend-amount", headers=VI).get_data(as_text=True)
    assert "khi đã ở mức tối đa một lần trừ tiền" in html
