"""The twenty-ninth session: what the last runs left or found, checked in the lab's words."""

from __future__ import annotations

from collections.abc import Iterator

from flask import Flask
from flask.testing import FlaskClient

from demo.lessons import LESSONS
from demo.lessons.engine import Progress
from demo.registry import LabRegistry

EN = {"Accept-Language": "en"}


def test_the_simulator_sits_under_the_answer_in_its_lesson(app: Flask, client: FlaskClient) -> None:
    """Queue lesson 5 is played on the simulator, which sat 1,900 px below the card at
    1280×720, under the queue, mailbox, tables, timeline, code and diagram."""
    registry: LabRegistry = app.extensions["labs"]
    registry.get("nu29-sim").open_lesson("delivery-semantics")
    html = client.get("/lab/nu29-sim/queue", headers=EN).get_data(as_text=True)
    assert html.index('id="explain"') < html.index('id="simulator"') < html.index('id="queue"')
    registry.get("nu29-crash").open_lesson("redelivery")
    html = client.get("/lab/nu29-crash/queue", headers=EN).get_data(as_text=True)
    assert html.index('id="sequence"') < html.index('id="simulator"')


def test_the_pixel_window_set_by_hand_predicts_its_own_count(
    app: Flask, client: FlaskClient
) -> None:
    """Operations lesson 4, the window chosen by hand halfway: the achieved card read
    "expected with the fix 6 · with the fix 3 · actual 5 MISMATCH". The views before the
    window stay counted; the window's own rule predicts the rest."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu29-pixel")
    lab.open_lesson("tracking-pixel")
    nat = lab.natural
    reader = nat.view_pixel("42", None, prefetch=False).viewer  # the page's own load
    nat.view_pixel("42", reader, prefetch=False)  # Reload the article
    nat.view_pixel("42", reader, prefetch=True)  # Prefetch it
    nat.view_pixel("42", None, prefetch=False)  # Unfurl in a chat app
    nat.update_settings({"pixel_dedup_window_s": 1800})  # by hand, not Apply the fix
    nat.view_pixel("42", reader, prefetch=False)  # within the window: not counted
    nat.view_pixel("42", None, prefetch=False)  # a new viewer: counted
    assert nat.pixel.counts()["42"] == 5
    html = client.get("/lab/nu29-pixel/natural", headers=EN).get_data(as_text=True)
    card = html[html.index('id="natural-lesson"') :]
    assert 'expected with the fix <strong class="n-expected">5</strong>' in card
    assert 'actual <strong class="n-actual">5</strong>' in card
    assert "n-intended" not in card
    assert "MISMATCH" not in card


def _badge(html: str) -> str:
    start = html.index('<span class="fix-state')
    return html[html.index(">", start) + 1 : html.index("</span>", start)]


def test_every_labs_badge_follows_a_fix_set_or_changed_by_hand(
    app: Flask, client: FlaskClient
) -> None:
    """Lessons achieved with the fix set by hand (Dedup, the window, the codes to retry,
    the outbox) kept "fix OFF: …" over "expected with the fix"; the queue's lessons 1, 2
    and 6 alone said "fix ON (set by hand)", without what the fix was."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu29-badges")
    lab.open_lesson("retry-policy")
    url = "/lab/nu29-badges/retries"
    assert _badge(client.get(url, headers=EN).get_data(as_text=True)) == "fix OFF: retries a 400"
    # 400 unticked alone: the case's 400 is no longer retried, and its check is met.
    policy = lab.retries.scenario.policy["retry_on"]
    lab.retries.set_policy({"retry_on": [code for code in policy if code != 400]})
    assert _badge(client.get(url, headers=EN).get_data(as_text=True)) == (
        "fix ON: a 400 not retried (set by hand)"
    )
    lab.open_lesson("outbox")
    lab.queue.update_settings({"outbox": True, "provider_dedup": True})
    html = client.get("/lab/nu29-badges/queue", headers=EN).get_data(as_text=True)
    assert _badge(html) == "fix ON: an outbox (set by hand)"
    lab.open_lesson("tracking-pixel")
    # A 1 min window set by hand is a window, not the fix's 30 min (run K).
    lab.natural.update_settings({"pixel_dedup_window_s": 60})
    html = client.get("/lab/nu29-badges/natural", headers=EN).get_data(as_text=True)
    assert _badge(html) == "fix ON: a dedup window (set by hand)"
    lab.apply_scenario("tracking-pixel", fixed=True, lab="natural")
    lab.natural.update_settings({"pixel_dedup_window_s": 0})
    html = client.get("/lab/nu29-badges/natural", headers=EN).get_data(as_text=True)
    assert _badge(html) == "fix OFF: every GET counts (changed by hand)"


def test_the_outbox_note_on_a_fix_ticked_by_hand_goes_once_achieved_or_reset(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 4 achieved by hand: "The settings hold the fix, but the lab still holds
    the first case: press Apply the fix…" stayed under "as expected", also after Reset
    the queue lab had emptied it."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu29-outbox")
    lab.open_lesson("outbox")
    lab.queue.play("outbox")
    lab.queue.update_settings({"outbox": True, "provider_dedup": True})
    url = "/lab/nu29-outbox/queue"
    note = "The settings hold the fix, but the lab still holds the first case"
    assert note in client.get(url, headers=EN).get_data(as_text=True)
    lab.queue.reset()
    assert note not in client.get(url, headers=EN).get_data(as_text=True)


def test_lesson_10s_crash_says_the_e_mail_went_out_inside_the_charge_step(
    app: Flask, client: FlaskClient
) -> None:
    """Lesson 10: "died after the gateway charged (at the step boundary after 'gateway
    charge')" while the timeline showed "receipt e-mail em_0001 sent" before the crash."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu29-mail")
    lab.open_lesson("email-once")
    lab.apply_scenario("email-once")
    lab.payments.create_charge(["k-mail-1"], b'{"order_id": "42", "amount": 100000}')
    html = client.get("/lab/nu29-mail", headers=EN).get_data(as_text=True)
    explain = html[html.index('id="explain"') :]
    assert "CRASHED" in explain
    assert "The receipt e-mail is sent inside the charge step: it went out before the crash." in (
        explain
    )
    lab.apply_scenario("crash-window")  # no e-mail inline there: no such sentence
    lab.payments.create_charge(["k-mail-2"], b'{"order_id": "42", "amount": 100000}')
    html = client.get("/lab/nu29-mail", headers=EN).get_data(as_text=True)
    explain = html[html.index('id="explain"') :]
    assert "CRASHED" in explain and "inside the charge step" not in explain


def test_a_long_lock_wait_is_written_as_the_lane_writes_it() -> None:
    """Lesson 5: "waited 6655 ms" in What just happened beside "6,655 ms" on the lane."""
    from demo.engine.text import translate
    from demo.engine.timeline import Step
    from demo.payments.explain.replayed import _waited
    from demo.payments.requests import RequestEntry

    focus = RequestEntry(2, "Double-submit B", started=10.0, key="k")
    focus.steps += [Step("lock acquire", 6655.4, {"waited_ms": 6655.4})]
    said = _waited(focus, [focus])
    assert said is not None
    assert "It waited 6,655 ms for the per-key lock" in translate(said)


def test_retry_lesson_4_says_which_strategy_menu_the_storm_reads(
    app: Flask, client: FlaskClient
) -> None:
    """Retry lesson 4 spoke of exponential backoff while the first screen's policy read
    "full_jitter": the storm's own Strategy sits under the policy, below the fold."""
    registry: LabRegistry = app.extensions["labs"]
    registry.get("nu29-jitter").open_lesson("jitter")
    html = client.get("/lab/nu29-jitter/retries", headers=EN).get_data(as_text=True)
    card = html[html.index('id="lesson"') : html.index("</section>", html.index('id="lesson"'))]
    assert "the storm form&#39;s own Strategy, under the policy" in card


def test_dedup_ticked_on_top_of_the_first_case_says_to_start_afresh(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 1: Dedup ticked by hand after the first case, then its steps followed
    as written: a third e-mail ("expected 1 actual 3") and the check unmet, with nothing
    on the card saying the first case's e-mails were still there."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu29-afresh")
    lab.open_lesson("redelivery")
    lab.queue.play("redelivery")
    lab.queue.update_settings({"dedup": True})
    url = "/lab/nu29-afresh/queue"
    note = "The lab still holds the first case's e-mails, sent before the fix"
    html = client.get(url, headers=EN).get_data(as_text=True)
    assert note in html
    # The crash fired once and reads "none" now: the note names it.
    said = html[html.index(note) : html.index("</p>", html.index(note))]
    assert "Set Crash (once) to “after the record, before the ack”, in the settings." in said
    lab.queue.reset()  # afresh: nothing sent before the fix
    assert note not in client.get(url, headers=EN).get_data(as_text=True)


def achieve_retry_lessons(client: FlaskClient) -> Iterator[str]:
    """Each retry lesson in turn, done as its steps say, case then fix: yields its name
    once it is (the retry lab's page at ``test_retries_lessons.LAB`` shows it)."""
    from test_retries_lessons import apply_fix, open_lesson, press

    from demo.retries.scenarios import SCENARIOS as RETRY_SCENARIOS

    for name in RETRY_SCENARIOS:
        open_lesson(client, name)
        for fixed in (False, True):
            if fixed:
                apply_fix(client, name)
            for action in RETRY_SCENARIOS[name].script:
                press(client, action)
        yield name


def test_the_last_retry_lesson_says_the_chapter_is_done(app: Flask, client: FlaskClient) -> None:
    """The retry lab never said its chapter was done, as the operations and queue labs do."""
    from test_retries_lessons import LAB

    from demo.retries.scenarios import SCENARIOS as RETRY_SCENARIOS

    for name in achieve_retry_lessons(client):
        html = client.get(f"{LAB}/retries", headers=EN).get_data(as_text=True)
        last = name == list(RETRY_SCENARIOS)[-1]
        assert ("All done: every retry lesson achieved (5 of 5)." in html) == last


def test_the_operations_timeline_gives_a_deduplicated_add_the_tables_verdict(
    app: Flask, client: FlaskClient
) -> None:
    """Operations lesson 1 with Dedup: the table said "made safe by the dedup record", the
    timeline beside it "dedup on → … · needs a dedup record"."""
    client.post(
        "/lab/nu29-ops/natural/api/apply",
        json={"operation": "add_balance", "times": 3, "dedup": True},
    )
    html = client.get("/lab/nu29-ops/natural", headers=EN).get_data(as_text=True)
    timeline = html[html.index('id="natural-timeline"') :]
    assert "made safe by the dedup record" in timeline
    assert "needs a dedup record" not in timeline


def test_a_lane_stopped_after_lock_acquire_says_it_holds_the_lock(
    app: Flask, client: FlaskClient
) -> None:
    """Lesson 5's second case: every stop of a lane said something but "stopped after lock
    acquire", where A takes the key's lock without a wait."""
    from test_step_mode import quiet, requests, step

    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu29-lock")
    lab.payments.update_settings({"step_mode": True, "lock": True, "gateway_latency_ms": 0})
    with requests(lab, 2):
        step(lab, "A")
        step(lab, "A")  # A past lock acquire: it holds the lock
        quiet(lab)
        html = client.get("/lab/nu29-lock", headers=EN).get_data(as_text=True)
    lane = html[html.index("step-lane lane-A") :]
    lane = lane[: lane.index("</li>")]
    assert "it holds the key&#39;s lock" in lane or "it holds the key's lock" in lane


def test_a_queue_story_after_the_fix_says_it_tells_the_first_case(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 3 after Apply the fix: "The broker acks on receive… the message is
    gone" beside a lab at at-least-once that had just PROCESSED the job."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu29-story")
    lab.open_lesson("at-most-once")
    html = client.get("/lab/nu29-story/queue", headers=EN).get_data(as_text=True)
    assert "The first case, without the fix:" not in html
    lab.apply_scenario("at-most-once", fixed=True, lab="queue")
    html = client.get("/lab/nu29-story/queue", headers=EN).get_data(as_text=True)
    assert '<p class="story"><b>The first case, without the fix:</b> ' in html


def test_lesson_3s_second_case_says_why_a_new_order_matters() -> None:
    """Lesson 3's second case only asked to pay a new order: it read as busywork, with
    nothing tying it to the 409 of the first case."""
    from demo.payments.scenarios import SCENARIOS as PAYMENT_SCENARIOS

    last = PAYMENT_SCENARIOS["key-reuse"].steps_for(True)[-1]
    assert "Another amount is another intent too (the first case's 409)" in last


def test_cards_with_the_fix_set_by_hand_list_the_fixs_steps(
    app: Flask, client: FlaskClient
) -> None:
    """Lesson 5 with the Lock ticked by hand kept the lock-off story ("Step B again: it
    charges too") beside lanes at the lock; Operations lesson 1 with Dedup ticked and run
    kept "the balance ends at 300" and "Then press Apply the fix"."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu29-steps")
    lab.open_lesson("slow-motion")
    lab.progress["slow-motion"] = Progress({LESSONS["slow-motion"].checks[0].id: 0.0})
    lab.payments.update_settings({"lock": True})
    html = client.get("/lab/nu29-steps", headers=EN).get_data(as_text=True)
    steps = html[
        html.index('class="lesson-steps"') : html.index("</ol>", html.index('class="lesson-steps"'))
    ]
    assert "Step A twice, until it holds the lock" in steps
    assert "Step B again: it charges too" not in steps
    lab.open_lesson("set-vs-add")
    url = "/lab/nu29-steps/natural/api/apply"
    client.post(url, json={"operation": "set_balance", "times": 3, "dedup": False})
    client.post(url, json={"operation": "add_balance", "times": 3, "dedup": False})
    assert lab.progress["set-vs-add"].met  # the failure seen first
    client.post(url, json={"operation": "add_balance", "times": 3, "dedup": True})
    html = client.get("/lab/nu29-steps/natural", headers=EN).get_data(as_text=True)
    steps = html[
        html.index('class="lesson-steps"') : html.index("</ol>", html.index('class="lesson-steps"'))
    ]
    assert "Then press Apply the fix" not in steps
    assert "ends at 300" not in steps


def test_the_queue_cards_expected_line_says_it_is_the_fixs(app: Flask, client: FlaskClient) -> None:
    """Queue lesson 1: "Expected: One e-mail for invoice:42:email." under the steps that
    make two, read as the prediction for them."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu29-expected")
    lab.open_lesson("redelivery")
    html = client.get("/lab/nu29-expected/queue", headers=EN).get_data(as_text=True)
    assert "Expected with the fix: One e-mail for invoice:42:email." in html
    lab.apply_scenario("redelivery", fixed=True, lab="queue")
    html = client.get("/lab/nu29-expected/queue", headers=EN).get_data(as_text=True)
    assert "Expected: One e-mail for invoice:42:email." in html


def test_the_queue_fixs_steps_say_what_to_set_first_by_hand(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 1: "The steps with the fix" listed the same four clicks, and never said
    to turn Dedup on or set the crash again, so the fixed case could not be run by hand."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu29-fixsteps")
    lab.open_lesson("redelivery")
    lab.queue.play("redelivery")
    html = client.get("/lab/nu29-fixsteps/queue", headers=EN).get_data(as_text=True)
    steps = html[
        html.index('class="fix-steps"') : html.index("</details>", html.index('class="fix-steps"'))
    ]
    assert "By hand, first press Reset the queue lab and set in the settings what The fix" in steps
    assert "Set Crash (once) to “after the record, before the ack”, in the settings." in steps
