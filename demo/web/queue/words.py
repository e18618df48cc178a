"""The queue lab's words for its states, outcomes, steps and modes (marked for
translation; the page translates them as it renders)."""

from __future__ import annotations

from ...engine.text import N_

OUTCOMES: dict[str, str] = {
    "processed": N_("PROCESSED"),
    "duplicate_skipped": N_("DUPLICATE SKIPPED"),
    "crashed": N_("CRASHED, NOT ACKED"),
    "lost": N_("LOST"),
    "idle": N_("IDLE"),
    "published": N_("ENQUEUED"),
}
"""A work call's outcome as its badge says it (see :func:`outcome_word`)."""


def outcome_word(
    outcome: str | None, error: str | None, again: bool = False, dead: bool = False
) -> str:
    """The badge's word for one call: a handler's error is no crash of the worker (a
    poison message), a redelivery done again without dedup says so, and a receive that
    dead-lettered a message instead of delivering it is no idle call."""
    if outcome == "idle" and dead:
        return N_("DEAD-LETTERED")
    if outcome == "crashed" and error:
        return N_("HANDLER FAILED, NOT ACKED")
    if outcome == "processed" and again:
        return N_("PROCESSED AGAIN")
    return OUTCOMES.get(outcome or "", N_("RUNNING"))


CRASH_POINTS: dict[str, str] = {
    "after_receive": N_("after receive"),
    "after_effect": N_("after the side effect"),
    "after_record": N_("after the record, before the ack"),
    "relay_after_send": N_("relay: sent, not yet marked sent"),
}
"""Each crash point in the settings select's words (the armed banner uses them too)."""

MESSAGE_STATES: dict[str, str] = {
    "ready": N_("ready"),
    "in_flight": N_("in flight"),
    "acked": N_("acked"),
    "dead": N_("dead letter"),
}
STEP_NAMES: dict[str, str] = {
    "publish": N_("publish"),
    "receive": N_("receive"),
    "dedup check": N_("dedup check"),
    "side effect": N_("side effect"),
    "record": N_("record"),
    "ack": N_("ack"),
    "relay send": N_("relay send"),
    "relay mark": N_("relay mark"),
    "crash": N_("crash"),
    "handler error": N_("handler error"),
}
BROKERS: dict[str, str] = {"memory": N_("in memory"), "redis": "Redis"}
"""Each broker the lab can run on, as the queue's heading names it."""
MODES: dict[str, str] = {
    "at_most_once": N_("at-most-once"),
    "at_least_once": N_("at-least-once"),
    "idempotent": N_("at-least-once + idempotent consumer"),
}
MEASURES: dict[str, str] = {
    "emails_per_key": N_("E-mails for one key"),
    "lost": N_("Jobs lost"),
    "dead": N_("Dead letters"),
    "duplicate_effects": N_("Duplicate side effects"),
}
"""What a scenario counts (``Scenario.measure``), as its expected-vs-actual line says it."""
