"""The eighth new-user run through the ten payment lessons: the failure lab's words after
a crash and a lost response, and lesson 5's dead end (both languages where shown)."""

from __future__ import annotations

from test_failures import BODY, KEY, make
from test_sixth_run_texts import VI

from demo.lessons import LESSONS
from demo.payments.explain import explain
from demo.payments.gateway import summarise


def _said(lab) -> str:  # type: ignore[no-untyped-def]
    summary = summarise(lab.payments.gateway.ledger())
    said = explain(lab.payments.requests(), summary, None, lab.payments.settings)
    return " ".join(map(str, (said.headline, *said.sentences)))


def test_recovery_switched_on_after_the_crash_is_told_as_too_late_for_that_order() -> None:
    """Finding 3: crash, then Crash recovery "key to gateway", then Retry: a double charge
    whose explanation proposed the very setting just chosen."""
    lab = make(fault="crash_after_charge")
    lab.payments.create_charge(KEY, BODY)
    lab.payments.update_settings({"recovery": "downstream_key"})
    lab.payments.create_charge(KEY, BODY)
    said = _said(lab)
    assert "DOUBLE CHARGE" in said
    assert "#1 had charged without it" in said and "New order" in said
    assert "The fix: pass the idempotency key" not in said
    # Without the late switch, the fix is proposed as before.
    lab = make(fault="crash_after_charge")
    lab.payments.create_charge(KEY, BODY)
    lab.payments.create_charge(KEY, BODY)
    assert "The fix: pass the idempotency key on to the gateway (Crash recovery: key to " \
        "gateway)." in _said(lab)  # fmt: skip


def test_an_armed_lost_response_says_a_replay_answers_as_usual() -> None:
    """Finding 2: armed "Lose the response", a Pay that replayed answered normally while the
    page still said "the next response will be lost"."""
    lab = make(fault="lose_response")
    lab.payments.update_settings({"fault": "none"})
    lab.payments.create_charge(KEY, BODY)  # the key's record: the next Pay replays
    lab.payments.update_settings({"fault": "lose_response"})
    _, replay = lab.payments.create_charge(KEY, BODY)
    assert replay.outcome == "replayed" and replay.delivered
    assert lab.payments.settings.fault == "lose_response"  # still armed: no charge yet
    words = "the next charge's response will be lost (a replay answers as usual)"
    assert VI.gettext(words) != words


def test_lesson_5_names_the_dead_end_of_running_a_to_its_end_first() -> None:
    """Finding 4: after the fix, Run A to the end then step B: B replayed, all green, the
    check unticked, and no hint said why."""
    hint = LESSONS["slow-motion"].hints[-1]
    assert "If A ran to its end before B reached the lock" in hint and "New order" in hint
    assert "Đơn hàng mới" in VI.gettext(hint)
