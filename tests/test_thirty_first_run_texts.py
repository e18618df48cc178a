"""The thirty-first new-user run: what the cards and the explanation say once a setting
changes after the request they speak of."""

from __future__ import annotations

import re
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from test_advice_stays_true import VI, lab, page, pay, section
from test_eighth_run_texts import _said
from test_failures import BODY, KEY, make
from test_thirtieth_run_texts import EN, _card

from demo.registry import LabRegistry


def test_a_double_charge_keeps_the_cause_it_ran_under_after_the_ttl_changes() -> None:
    """Lesson 7: Pay, +25 h, Retry ("after the key expired … (TTL 24 h)"); then Key TTL set
    to 72 h turned the same request's cause into "a new key per click", 1 h into "TTL 1 h"."""
    lab = make(ttl_s=24 * 3600)
    lab.payments.create_charge(KEY, BODY)
    lab.advance(25 * 3600)
    assert lab.payments.create_charge(KEY, BODY)[1].outcome == "charged"
    before = _said(lab)
    assert "after the key expired" in before and "(TTL 24 h)" in before
    for ttl_s in (72 * 3600, 3600):
        lab.payments.update_settings({"ttl_s": ttl_s})
        assert _said(lab) == before


def test_a_double_charge_on_another_instance_keeps_its_cause_once_the_store_is_shared() -> None:
    """Lesson 8: the retry on another instance's store, then Store set to shared: the same
    request's cause became "never per click"."""
    lab = make(instances=2, store_scope="per_instance")
    lab.payments.create_charge(KEY, BODY)
    lab.payments.create_charge(KEY, BODY)
    before = _said(lab)
    assert "on another instance" in before
    lab.payments.update_settings({"store_scope": "shared"})
    assert _said(lab) == before


def _queue_card(app: Flask, client: FlaskClient, lab_id: str, lesson: str) -> tuple[Any, Any]:
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get(lab_id)
    lab.open_lesson(lesson)
    return lab.queue, lambda: _card(
        client.get(f"/lab/{lab_id}/queue", headers=EN).get_data(as_text=True), 'id="lesson"'
    )


def _first_step(card: str) -> str:
    """The first step shown (a hidden one waits for a page switch: js/fix-badge.js)."""
    steps = card[card.index('<ol class="lesson-steps">') :]
    shown = re.search(r"<li(?![^>]*\bhidden\b)[^>]*>.*?</li>", steps, re.S)
    assert shown
    return shown.group(0)


def test_queue_dedup_ticked_before_the_case_says_to_undo_it_then_to_set_the_crash(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 1, Dedup ticked by hand before the case: the steps ran, "DUPLICATE
    SKIPPED", both checks unmet and nothing said why. Unticked and reset, the crash had
    fired: "IDLE", and "with the fix 1, actual 1, as expected" under "fix OFF"."""
    queue, card = _queue_card(app, client, "nu31-q1", "redelivery")
    queue.update_settings({"dedup": True})
    assert "set that back first" in _first_step(card())
    # It names what to set back: the badge's words for the case (run K: "undo it" alone).
    assert "(“fix OFF: no dedup”)" in _first_step(card())
    assert queue.scenario is not None
    for click, arg in queue.scenario.clicks_for(True):
        queue.by_hand(click, arg)
        queue._click(click, arg)
    assert "set that back first" in _first_step(card())
    queue.update_settings({"dedup": False})
    queue.reset()
    now = card()
    assert "set that back first" not in now
    assert "Set Crash (once) to “after the record, before the ack”" in _first_step(now)
    for click, arg in queue.scenario.clicks:
        queue.by_hand(click, arg)
        queue._click(click, arg)
    assert "not the case yet: no crash happened" in card()


def test_queue_lesson_3_fix_ticked_after_the_case_sets_the_crash_again(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 3: the case (a job lost), then at-least-once and Dedup by hand: the
    run had no crash ("PROCESSED"), "Jobs lost expected 0 actual 0 as expected", the
    second check unmet, and the crash to set only in a closed section."""
    queue, card = _queue_card(app, client, "nu31-q3", "at-most-once")
    queue.play("at-most-once")
    assert "Set Crash" not in _first_step(card())
    queue.update_settings({"delivery": "at_least_once", "dedup": True})
    now = card()
    assert "Set Crash (once) to" in _first_step(now) and "set that back first" not in now
    queue.update_settings({"crash_at": "after_receive"})  # the step, done
    assert "Set Crash" not in _first_step(card())


def test_lesson_6_fix_set_by_hand_after_the_crash_says_to_arm_the_crash_again(
    app: Flask, client: FlaskClient
) -> None:
    """Payments lesson 6: Pay (the crash), Retry, then Crash recovery "key to gateway" by
    hand and New order: "Press Pay: the gateway charges, then the instance crashes", with
    no fault armed: Pay charged, Retry replayed, the second check never met."""
    the_lab = lab(app, "nu31-l6")
    the_lab.open_lesson("crash-window")
    assert pay(client, the_lab.id).status_code >= 500
    assert pay(client, the_lab.id, action="Retry").status_code == 201
    the_lab.payments.update_settings({"recovery": "downstream_key"})

    def first_steps() -> str:
        card = section(page(client, the_lab.id, EN), "lesson")
        steps = card[card.index('<ol class="lesson-steps">') :]
        return steps[: steps.index("</ol>")]

    assert "press “Crash after the charge” before the first step below" in first_steps()
    vi = section(page(client, the_lab.id, VI), "lesson")
    assert "“Sập sau khi trừ tiền”" in vi
    the_lab.payments.update_settings({"fault": "crash_after_charge"})  # armed: said no more
    assert "arm-first" not in first_steps()
    assert pay(client, the_lab.id, key="t1:u7:pay:order-43:v1", order_id="43").status_code >= 500
    assert "arm-first" not in first_steps()  # met with the fix: the Retry comes next


def test_full_jitter_by_hand_has_steps_of_full_jitter(app: Flask, client: FlaskClient) -> None:
    """Retries lesson 4, the storm run with Full jitter chosen by hand: "fix ON: full jitter
    (set by hand)" over a step still "retrying with exponential backoff"."""
    registry: LabRegistry = app.extensions["labs"]
    registry.get("nu31-jit").open_lesson("jitter")
    storm = {"model": "contention", "clients": 100, "seed": 1}
    for strategy in ("exponential", "full_jitter"):
        answer = client.post(
            "/lab/nu31-jit/retries/api/storm", json={**storm, "strategy": strategy}
        )
        assert answer.status_code == 200
        html = client.get("/lab/nu31-jit/retries", headers=EN).get_data(as_text=True)
        card = _card(html, 'id="lesson"')
        steps = card[card.index('<ol class="lesson-steps">') : card.index("</ol>")]
        jitter = "Press Storm: the same 100 clients with full jitter" in steps
        assert jitter == (strategy == "full_jitter")
        assert ("retrying with exponential backoff" in steps) == (not jitter)
        assert ("Then press Apply the fix" in steps) == (not jitter)  # achieved by then


def test_queue_lesson_5_points_to_the_simulator_with_numbers_in_the_readers_language(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 5: "In the simulator: … press Simulate" with no way to it, "Nothing yet:
    press Enqueue, then Work." beside it, and in Vietnamese "10,000 message, mất message
    0.2" (10,000 reads as ten there)."""
    _queue, card = _queue_card(app, client, "nu31-q5", "delivery-semantics")
    html = client.get("/lab/nu31-q5/queue", headers=EN).get_data(as_text=True)
    step = _first_step(card())
    assert "10,000 messages, loss 0.2, ack loss 0.2" in step and 'href="#simulator"' in step
    assert "Nothing yet: this case runs on the simulator, just below." in html
    assert "press Enqueue, then Work" not in html
    vi = _card(client.get("/lab/nu31-q5/queue", headers=VI).get_data(as_text=True), 'id="lesson"')
    assert "10.000 message, mất message 0,2, mất ack 0,2" in _first_step(vi)


def test_a_read_only_operations_tab_disables_every_button(app: Flask, client: FlaskClient) -> None:
    """A read-only replay, Operations tab: Reload the article, Prefetch it, Unfurl and
    +10 min stayed enabled, and a press got a silent 409 on pixel.gif."""
    registry: LabRegistry = app.extensions["labs"]
    registry.get("nu31-ro")
    registry.peek("nu31-ro").read_only = True
    html = client.get("/lab/nu31-ro/natural", headers=EN).get_data(as_text=True)
    buttons = re.findall(r"<button\b[^>]*>", html)
    actions = [b for b in buttons if "data-action=" in b]
    assert len(actions) > 5
    assert [b for b in actions if " disabled" not in b] == []


def test_the_queue_names_its_broker_in_the_readers_language(client: FlaskClient) -> None:
    """Vietnamese: "(messages: 0; broker: memory)" kept the English word."""
    assert "broker: in memory)" in client.get("/lab/nu31-b/queue", headers=EN).get_data(True)
    assert "trong bộ nhớ" in client.get("/lab/nu31-b/queue", headers=VI).get_data(True)


def test_two_poison_messages_in_the_dead_letter_queue_are_not_a_failure(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 6, the case, then Max attempts 3 by hand and the steps: "Dead letters
    expected 1 actual 2 — the failure you caused, kept as evidence"."""
    queue, card = _queue_card(app, client, "nu31-q6", "poison-message")
    queue.play("poison-message")
    queue.update_settings({"max_attempts": 3})
    assert queue.scenario is not None
    for click, arg in queue.scenario.clicks_for(True):
        queue.by_hand(click, arg)
        queue._click(click, arg)
    now = card()
    assert '<strong class="actual-value">2</strong>' in now
    assert "each poison message enqueued ended there, as it should" in now
    assert "kept as evidence" not in now and 'class="numbers ok"' in now


def test_lesson_9s_go_further_waits_for_its_502(app: Flask, client: FlaskClient) -> None:
    """Payments lesson 9, the second case before anything was sent: "Go further: This 502
    came before the charge …", of a 502 not there yet."""
    the_lab = lab(app, "nu31-further")
    the_lab.open_lesson("decline")
    the_lab.apply_scenario("decline", fixed=True)
    assert "fix-note" not in section(page(client, the_lab.id, EN), "lesson")
    assert pay(client, the_lab.id).status_code == 502
    assert "Go further:</b> This 502 came before" in section(page(client, the_lab.id, EN), "lesson")


def test_queue_lesson_4s_last_call_says_the_relay_sent_again(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 4 after Apply the fix and run again: the headline, and the button to
    it, read "worker-1: IDLE", not the relay's run that call made (the row sent again, the
    repeat dropped by the provider)."""
    queue, _card_now = _queue_card(app, client, "nu31-q4", "outbox")
    queue.play("outbox", fixed=True)
    html = client.get("/lab/nu31-q4/queue", headers=EN).get_data(as_text=True)
    said = _card(html, 'id="explain"')
    assert "worker-1: IDLE; the relay sent an outbox row again" in said
    assert "the provider dropped the repeat, so no second e-mail" in said
    vi = client.get("/lab/nu31-q4/queue", headers=VI).get_data(as_text=True)
    assert "RẢNH; relay đã gửi lại" in _card(vi, 'id="explain"')


def test_the_queue_cards_title_and_badge_are_two_words(app: Flask, client: FlaskClient) -> None:
    """Run I: "Redelivery after a crashfix OFF: no dedup", the badge glued to the title."""
    _queue, card = _queue_card(app, client, "nu31-gap", "redelivery")
    assert re.search(r'Redelivery after a crash\s+<span class="fix-state', card())
