"""The twenty-eighth session: what runs 30 to 34 left or found, checked in the lab's words."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from demo.registry import LabRegistry

EN = {"Accept-Language": "en"}
VI = {"Accept-Language": "vi"}


def test_a_receive_that_dead_letters_is_not_called_idle(app: Flask, client: FlaskClient) -> None:
    """Queue lesson 6 with the fix: the fourth Work moved the poison message to the
    dead-letter queue, and its badge and headline read "IDLE", as if nothing had happened."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-dead")
    lab.open_lesson("poison-message")
    lab.queue.play("poison-message", fixed=True)
    assert lab.queue.measure("dead") == 1
    html = client.get("/lab/nu28-dead/queue", headers=EN).get_data(as_text=True)
    assert '<p class="headline">worker-1: DEAD-LETTERED</p>' in html
    lanes = html[html.index('id="lanes"') :]
    assert '<b class="badge">DEAD-LETTERED</b>' in lanes
    vi = client.get("/lab/nu28-dead/queue", headers=VI).get_data(as_text=True)
    assert "worker-1: VÀO DEAD-LETTER QUEUE" in vi
    lab.queue.work()  # nothing left at all: that one is idle
    html = client.get("/lab/nu28-dead/queue", headers=EN).get_data(as_text=True)
    assert '<p class="headline">worker-1: IDLE</p>' in html


def test_the_code_view_says_the_broker_dead_lettered(app: Flask, client: FlaskClient) -> None:
    """The same call in the consumer's code: "worker-1 found no visible message: it returned
    idle before its first step", though the broker had just moved the message away."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-deadcode")
    lab.queue.play("poison-message", fixed=True)
    html = client.get("/lab/nu28-deadcode/queue", headers=EN).get_data(as_text=True)
    code = html[html.index('id="code"') :]
    assert "the broker moved m-1 to the dead-letter queue instead of delivering it" in code
    assert "returned idle" not in code


def test_the_fixs_steps_are_shown_before_next_step_runs_them(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 4, after its first run: Next step read "The fix, step 1 of 7", and the
    card listed only the four steps just done; the relay crash and job 43 appeared only once
    Apply the fix had run them."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-fixsteps")
    lab.open_lesson("outbox")
    card = client.get("/lab/nu28-fixsteps/queue", headers=EN).get_data(as_text=True)
    assert "The steps with the fix" not in card  # nothing run yet: the steps are the case's
    lab.queue.play("outbox")
    card = client.get("/lab/nu28-fixsteps/queue", headers=EN).get_data(as_text=True)
    folded = card[card.index('<details class="fix-steps">') :]
    folded = folded[: folded.index("</details>")]
    assert "The steps with the fix (Next step does them one at a time)" in folded
    assert "choose the job send-invoice-43" in folded.lower()
    assert "relay: sent, not yet marked sent" in folded
    lab.queue.play("outbox", fixed=True)
    card = client.get("/lab/nu28-fixsteps/queue", headers=EN).get_data(as_text=True)
    assert "The steps with the fix" not in card  # the fix's steps are the list now


def test_the_simulators_counts_are_grouped_in_the_pages_language(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 5 in Vietnamese: "Trình mô phỏng, …, 10000 message" beside amounts
    written "100.000 VND"; and a Delivered below Sent went unexplained (only "it can exceed
    Sent" was said)."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-sim")
    lab.open_lesson("delivery-semantics")
    lab.queue.play("delivery-semantics")
    sim = lab.queue.simulation
    assert sim is not None and sim.effects >= 1000
    vi = client.get("/lab/nu28-sim/queue", headers=VI).get_data(as_text=True)
    assert "10.000 message" in vi and " 10000 " not in vi
    assert f"{sim.effects:,}".replace(",", ".") in vi
    en = client.get("/lab/nu28-sim/queue", headers=EN).get_data(as_text=True)
    table = en[en.index('id="sim-result"') : en.index("</table>", en.index('id="sim-result"'))]
    assert f'<td class="num">{sim.sent:,}</td>' in table
    # Sent counts the broker's resends too: Delivered is never above it (the 35th run).
    assert sim.delivered <= sim.sent
    assert "So Delivered is never above Sent, yet above the 10,000 messages produced" in en


def test_the_operations_sections_carry_no_numbers_that_a_lesson_reorders(
    app: Flask, client: FlaskClient
) -> None:
    """Operations lesson 3 brings its section first, beside its card: "2. A late duplicate"
    then stood above "1. Operations, retried"."""
    import re

    registry: LabRegistry = app.extensions["labs"]
    registry.get("nu28-ops3").open_lesson("lost-update")
    html = client.get("/lab/nu28-ops3/natural", headers=EN).get_data(as_text=True)
    assert 'class="natural-main focus-conditional"' in html
    headings = re.findall(r'<h2 id="(?:ops|lost|pixel)-title">([^<]*)</h2>', html)
    assert headings == [
        "Operations, retried",
        "A late duplicate: the lost update",
        "The GET that counts twice: a tracking pixel",
    ]


def test_the_retry_card_folds_its_why_and_resets_only_what_was_done(
    app: Flask, client: FlaskClient
) -> None:
    """Retry lessons 1 and 2 showed "Why: A 400 says the request itself is wrong…" before
    Run was pressed (the payment lab folds it until the first check), and "Reset this
    lesson" while the card still said "Not run yet"."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-rwhy")
    lab.open_lesson("retry-policy")
    card = client.get("/lab/nu28-rwhy/retries", headers=EN).get_data(as_text=True)
    card = card[card.index('id="lesson"') : card.index("</section>", card.index('id="lesson"'))]
    assert '<details class="why"><summary><b>Why:</b> the answer, once you have tried' in card
    assert 'form="lesson-reset"' not in card and "Not run yet" in card
    from test_retries_page import POLICY, preset

    plan = {**POLICY, "retry_on": [*POLICY["retry_on"], "400"], "faults_choice": preset(400)}
    assert client.post("/lab/nu28-rwhy/retries/run", data=plan).status_code == 303
    card = client.get("/lab/nu28-rwhy/retries", headers=EN).get_data(as_text=True)
    card = card[card.index('id="lesson"') : card.index("</section>", card.index('id="lesson"'))]
    assert '<p class="why"><b>Why:</b> A 400 says the request itself is wrong' in card
    assert 'form="lesson-reset"' in card


def test_an_empty_key_is_named_in_the_timeline(app: Flask, client: FlaskClient) -> None:
    """A request with an empty Idempotency-Key header: the timeline read "invalid key:" with
    nothing after the colon."""
    answer = client.post(
        "/lab/nu28-empty/api/charges",
        json={"order_id": "42", "amount": 100000},
        headers={"Idempotency-Key": "  ", **EN},
    )
    assert answer.status_code == 400
    html = client.get("/lab/nu28-empty", headers=EN).get_data(as_text=True)
    assert "invalid key: (empty)" in html
    vi = client.get("/lab/nu28-empty", headers=VI).get_data(as_text=True)
    assert "key không hợp lệ: (trống)" in vi


def test_a_form_moved_to_an_order_already_paid_is_not_called_a_new_intent(
    app: Flask, client: FlaskClient
) -> None:
    """Two tabs: tab 1 pressed New order (46) and Pay while tab 2 paid order 45 again. Tab 1
    then read "The form now holds order 45: a new intent with its own key, so Pay charges it
    once", though 45 had been charged already."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-tabs")
    payments = lab.payments
    body = b'{"order_id": "%s", "amount": 100000}'
    payments.create_charge(["t1:u7:pay:order-42:v1"], body % b"42")
    assert payments.new_order_id() == "43"
    payments.create_charge(["t1:u7:pay:order-43:v1"], body % b"43")
    html = client.get("/lab/nu28-tabs", headers=EN).get_data(as_text=True)
    assert "A Retry from here sends the same key and body" in html  # the form is on 43
    payments.current_order = "42"  # a later request from the other tab moved the form
    html = client.get("/lab/nu28-tabs", headers=EN).get_data(as_text=True)
    assert "a new intent with its own key, so Pay charges it once" not in html
    assert "The form now holds order 42, moved there by a later request" in html


def test_the_operations_that_survived_are_not_called_the_failure(
    app: Flask, client: FlaskClient
) -> None:
    """Operations lesson 2: "Operations whose retries left the state alone: … actual 4 —
    the failure you caused, kept as evidence" called the four that survived the failure."""
    from demo.natural.operations import OPERATIONS

    registry: LabRegistry = app.extensions["labs"]
    registry.get("nu28-ops2").open_lesson("which-are-natural")
    for name in OPERATIONS:
        answer = client.post(
            "/lab/nu28-ops2/natural/api/apply", json={"operation": name, "times": 3}
        )
        assert answer.status_code == 200, answer.get_data(as_text=True)
    html = client.get("/lab/nu28-ops2/natural", headers=EN).get_data(as_text=True)
    survived = int(html.split('class="n-actual">')[1].split("<")[0])
    assert 0 < survived < len(OPERATIONS)
    others = len(OPERATIONS) - survived
    said = f"the other {others} changed the state again: the failure you caused, kept as"
    assert said in html
    vi = client.get("/lab/nu28-ops2/natural", headers=VI).get_data(as_text=True)
    assert f"{others} thao tác còn lại đã đổi trạng thái thêm lần nữa" in vi


def test_the_timelines_numbers_are_written_in_the_pages_language(
    app: Flask, client: FlaskClient
) -> None:
    """Vietnamese: amounts read "100.000 VND", while the timeline wrote "+14094 ms" and
    "bạn tạm dừng: 4.9 s" (Vietnamese writes 14.094 and 4,9)."""
    import re

    from demo.engine.text import Number, Text, translate

    with app.test_request_context(headers=VI):
        assert translate(Text("paused by you: %(s)s s", s=Number(4.93, 1))).endswith("4,9 s")
        assert translate(Text("+%(ms)s ms", ms=Number(14094.4))) == "+14.094 ms"
    assert str(Text("+%(ms)s ms", ms=Number(14094.4))) == "+14,094 ms"  # English, as stored
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-nums")
    lab.payments.update_settings({"gateway_latency_ms": 1200})
    lab.payments.create_charge(["k-slow"], b'{"order_id": "42", "amount": 100000}')
    en = client.get("/lab/nu28-nums", headers=EN).get_data(as_text=True)
    vi = client.get("/lab/nu28-nums", headers=VI).get_data(as_text=True)
    assert re.search(r"gateway charge, 1,2\d\d ms", en)
    assert re.search(r"\+1,2\d\d ms</span> → 201", en)
    assert re.search(r"\+1\.2\d\d ms</span> → 201", vi)


def test_every_labs_fix_badge_says_what_the_fix_is(app: Flask, client: FlaskClient) -> None:
    """Payments says "fix OFF: Lock off"; Operations, Retries and Queue said only "fix OFF"
    and "fix ON": the attendee had to read the fix's sentence to know what it was."""
    from demo.web.fix_badges import FIX_BADGES

    registry: LabRegistry = app.extensions["labs"]
    for lesson, page, off, on in (
        ("set-vs-add", "natural", "fix OFF: no dedup", "fix ON: dedup"),
        ("jitter", "retries", "fix OFF: no jitter", "fix ON: full jitter"),
        ("poison-message", "queue", "fix OFF: 10 attempts", "fix ON: 3 attempts"),
    ):
        lab = registry.get(f"nu28-badge-{page}")
        lab.open_lesson(lesson)
        html = client.get(f"/lab/{lab.id}/{page}", headers=EN).get_data(as_text=True)
        assert '<span class="fix-state off"' in html and off in html, lesson
        client.post(f"/lab/{lab.id}?lab={page}&scenario={lesson}&fixed=1")
        html = client.get(f"/lab/{lab.id}/{page}", headers=EN).get_data(as_text=True)
        assert on in html, lesson
        vi = client.get(f"/lab/{lab.id}/{page}", headers=VI).get_data(as_text=True)
        assert "cách sửa: BẬT, " in vi, lesson
    # One per scenario of those labs, and none left bare.
    from demo.natural.scenarios import SCENARIOS as OPERATIONS
    from demo.queue.scenarios import SCENARIOS as QUEUE
    from demo.retries.scenarios import SCENARIOS as RETRIES

    assert set(FIX_BADGES) == set(OPERATIONS) | set(RETRIES) | set(QUEUE)


def test_each_retry_run_orders_a_number_of_its_own(app: Flask, client: FlaskClient) -> None:
    """The payment ledger listed retry-1-ce398a, retry-1-bb0a45, retry-1-3b85d2…: every
    lesson started the runs' count afresh, so every order read as run 1."""
    from test_retries_page import LOST_THEN_OK, POLICY

    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-orders")
    orders = []
    for lesson in ("retry-policy", "lost-response-retry"):
        lab.open_lesson(lesson)
        form = {**POLICY, "faults_choice": LOST_THEN_OK}
        assert client.post("/lab/nu28-orders/retries/run", data=form).status_code == 303
        orders.append(lab.retries.runs()[-1].order_id)
    assert [order.split("-")[1] for order in orders] == ["1", "2"], orders


def test_the_charts_ticks_are_written_in_the_pages_language(
    app: Flask, client: FlaskClient
) -> None:
    """The queue chart's loss axis read "0.3 0.6 0.9" beside "10.000 message" in
    Vietnamese; the storm's log axis "10000"."""
    import re

    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-ticks")
    lab.queue.play("delivery-semantics")
    vi = client.get("/lab/nu28-ticks/queue", headers=VI).get_data(as_text=True)
    ticks = re.findall(r'fill="#55606b">([^<]*)<', vi)
    assert "0,3" in ticks and "0.3" not in ticks
    from test_retries_page import storm_form

    htmx = {"HX-Request": "true", **VI}
    storm = client.post("/lab/nu28-ticks/retries/storm", data=storm_form(), headers=htmx)
    assert storm.status_code == 200
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]*)<', storm.get_data(as_text=True))
    assert "10.000" in ticks and "10000" not in ticks, ticks


def test_steps_done_by_hand_count_for_next_step(app: Flask, client: FlaskClient) -> None:
    """Queue lesson 3 with the fix: Next step applied it and enqueued, the rest was done by
    hand. "Lesson achieved" stood beside "not over yet: Next step has more of the steps to
    run", and Next step pressed Work once more (IDLE) instead of going on."""
    hx = {"HX-Request": "true", **EN}
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-hand")
    lab.open_lesson("at-most-once")
    lab.queue.play("at-most-once")  # the first case, its check met
    step = {"scenario": "at-most-once", "fixed": "1"}
    assert client.post("/lab/nu28-hand/queue/next", data=step, headers=hx).status_code == 200
    assert lab.queue.fixed and lab.queue.played == 1  # the fix on, the job enqueued
    for what, form in (("work", {}), ("clock", {"advance_s": "60"}), ("work", {})):
        answer = client.post(f"/lab/nu28-hand/queue/{what}", data=form, headers=hx)
        assert answer.status_code == 200, what
    assert lab.queue.played == 4  # the fix's clicks, all done: by hand
    card = client.get("/lab/nu28-hand/queue", headers=EN).get_data(as_text=True)
    card = card[card.index('id="lesson"') : card.index("</section>", card.index('id="lesson"'))]
    assert "Lesson achieved" in card
    assert "not over yet" not in card and "as expected" in card
    assert 'form="queue-lesson-next" class="next-step"' in card  # Next step goes on
    # A press that is no step leaves them: Next step starts afresh rather than go on.
    lab.queue.by_hand("producer_retry")
    assert lab.queue.next_click("at-most-once", fixed=True) == 0


def test_the_last_lesson_of_a_chapter_not_done_is_no_chapter_done(
    app: Flask, client: FlaskClient
) -> None:
    """Operations lesson 4 achieved with 2 of 4: the card said "Chapter done: back to the
    payment lab" while the strip above said "2 of 4 achieved"."""
    from demo.lessons import CHAPTERS, Progress

    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-chapter")
    chapter = CHAPTERS["natural"]
    last = chapter[-1]
    lab.open_lesson(last.name)
    lab.progress[last.name] = Progress(met_at={c.id: 0.0 for c in last.checks})
    html = client.get("/lab/nu28-chapter/natural", headers=EN).get_data(as_text=True)
    assert "Last operations lesson: back to the payment lab" in html
    assert "Chapter done: back to the payment lab" not in html
    for item in chapter:
        lab.progress[item.name] = Progress(met_at={c.id: 0.0 for c in item.checks})
    html = client.get("/lab/nu28-chapter/natural", headers=EN).get_data(as_text=True)
    assert "Chapter done: back to the payment lab" in html


def test_a_reset_of_the_queue_lab_leaves_no_step_not_over(app: Flask) -> None:
    """After "Reset the queue lab" mid-lesson the card read "Dead letters expected 1 actual
    0 — not over yet: Next step has more of the steps to run"."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-qreset")
    lab.open_lesson("poison-message")
    lab.queue.play_next()
    lab.queue.play_next()
    assert lab.queue.played == 2
    lab.queue.reset()
    assert lab.queue.played == 0
    assert lab.queue.next_click("poison-message", fixed=False) == 0  # starts afresh


def test_the_retry_cards_expected_value_says_it_is_the_fixs(
    app: Flask, client: FlaskClient
) -> None:
    """Retry lesson 3, fix off: "Outcome expected CHARGED actual GAVE UP — the failure you
    caused, kept as evidence": the expected value was the fix's, unsaid."""
    from test_retries_page import POLICY, preset

    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-rexp")
    lab.open_lesson("retry-policy")
    plan = {**POLICY, "retry_on": [*POLICY["retry_on"], "400"], "faults_choice": preset(400)}
    assert client.post("/lab/nu28-rexp/retries/run", data=plan).status_code == 303
    card = client.get("/lab/nu28-rexp/retries", headers=EN).get_data(as_text=True)
    card = card[card.index('id="lesson"') : card.index("</section>", card.index('id="lesson"'))]
    assert '<span>expected with the fix <strong class="expected-value">' in card
    client.post("/lab/nu28-rexp?lab=retries&scenario=retry-policy&fixed=1")
    assert client.post("/lab/nu28-rexp/retries/run", data=plan).status_code == 303
    card = client.get("/lab/nu28-rexp/retries", headers=EN).get_data(as_text=True)
    card = card[card.index('id="lesson"') : card.index("</section>", card.index('id="lesson"'))]
    assert '<span>expected <strong class="expected-value">' in card


def test_the_job_menu_keeps_the_job_sent_last(app: Flask, client: FlaskClient) -> None:
    """The queue's Job menu went back to send-invoice-42 after every Enqueue: a second
    Enqueue sent another job than the one chosen."""
    hx = {"HX-Request": "true", **EN}
    for job, value in (("poison", "poison"), ("43", "43")):
        answer = client.post("/lab/nu28-job/queue/enqueue", data={"job": job}, headers=hx)
        assert answer.status_code == 200
        html = client.get("/lab/nu28-job/queue", headers=EN).get_data(as_text=True)
        assert f'<option value="{value}" selected>' in html
        assert html.count(" selected>send-invoice") == 1


def test_the_budget_step_says_the_bucket_is_shared(app: Flask, client: FlaskClient) -> None:
    """Retry lesson 5 with the fix said "each client with a retry budget of 10 tokens",
    while the storm keeps one bucket for all the clients (as the README says)."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-budget")
    lab.open_lesson("retry-budget")
    client.post("/lab/nu28-budget?lab=retries&scenario=retry-budget&fixed=1")
    card = client.get("/lab/nu28-budget/retries", headers=EN).get_data(as_text=True)
    assert "with one retry budget shared by all the clients" in card
    assert "each client with a retry budget" not in card


def test_a_fix_made_of_clicks_ticked_by_hand_says_how_to_apply_it(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 4: Outbox and Provider dedup ticked by hand, the crash armed again and
    the fix's steps followed: the second check never ticked (the first case's two e-mails
    stay), the badge stayed "fix OFF", and nothing said to press Apply the fix."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-outhand")
    lab.open_lesson("outbox")
    lab.queue.play("outbox")
    said = "The settings hold the fix, but the lab still holds the first case"
    card = client.get("/lab/nu28-outhand/queue", headers=EN).get_data(as_text=True)
    assert said not in card
    lab.queue.update_settings({"outbox": True, "provider_dedup": True})
    card = client.get("/lab/nu28-outhand/queue", headers=EN).get_data(as_text=True)
    assert said in card
    lab.queue.play("outbox", fixed=True)
    card = client.get("/lab/nu28-outhand/queue", headers=EN).get_data(as_text=True)
    assert said not in card


def test_next_step_goes_on_under_a_fix_ticked_by_hand(app: Flask, client: FlaskClient) -> None:
    """Queue lesson 2: Dedup ticked by hand ("fix ON (set by hand)"), Enqueue pressed; Next
    step then started the lesson afresh and enqueued again, throwing the press away."""
    hx = {"HX-Request": "true", **EN}
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-tick")
    lab.open_lesson("duplicate-job")
    tick = {"setting": "dedup", "dedup": "on"}
    assert client.post("/lab/nu28-tick/queue/settings", data=tick, headers=hx).status_code == 200
    assert (
        client.post("/lab/nu28-tick/queue/enqueue", data={"job": "42"}, headers=hx).status_code
        == 200
    )
    assert lab.queue.played == 1
    step = {"scenario": "duplicate-job", "fixed": "1"}  # what the card's Next step sends
    assert client.post("/lab/nu28-tick/queue/next", data=step, headers=hx).status_code == 200
    actions = [e.action for e in lab.queue.entries()]
    assert actions == ["enqueue", "producer_retry"], actions  # went on, started nothing afresh
    assert lab.queue.settings.dedup and lab.queue.played == 2


def test_the_storm_and_the_queue_cards_numbers_follow_the_language(
    app: Flask, client: FlaskClient
) -> None:
    """Vietnamese: the storm's Completion column read 2.01 and 60.05 (read as 201 and 6005)
    and "each bar is 1.0 s"; the queue card's "actual 2476" had no grouping."""
    import re

    from test_retries_page import storm_form

    htmx = {"HX-Request": "true", **VI}
    storm = client.post("/lab/nu28-dec/retries/storm", data=storm_form(), headers=htmx)
    html = storm.get_data(as_text=True)
    cells = re.findall(r'<td class="num">(\d+,\d\d)</td>', html)
    assert cells and not re.search(r'<td class="num">\d+\.\d\d</td>', html)
    assert re.search(r"\d+,\d s", html)  # each bar's width
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu28-dec")
    lab.open_lesson("delivery-semantics")
    lab.queue.play("delivery-semantics")
    actual = lab.queue.measure("duplicate_effects")
    vi = client.get("/lab/nu28-dec/queue", headers=VI).get_data(as_text=True)
    shown = re.search(r'class="actual-value">([^<]*)<', vi)
    assert shown and shown[1] == f"{actual:,}".replace(",", "."), shown


def test_an_order_paid_without_a_key_is_not_said_paid_under_another(
    app: Flask, client: FlaskClient
) -> None:
    """A keyless charge of order 77, then Retry with the order's stable key: "order 77 had
    already been paid under another key", while the ledger said "no key"."""
    registry: LabRegistry = app.extensions["labs"]
    payments = registry.get("nu28-nokey").payments
    body = b'{"order_id": "77", "amount": 5}'
    payments.create_charge([], body)
    payments.create_charge(["t1:u7:pay:order-77:v1"], body)
    html = client.get("/lab/nu28-nokey", headers=EN).get_data(as_text=True)
    assert "had already been paid under another key, or with none" in html
    assert "no key" in html  # the ledger's word for the first charge
