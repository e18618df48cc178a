"""The gateway did not simply charge: it declined, failed before charging, or charged and
timed out, leaving the key in doubt."""

from __future__ import annotations

from ...engine.text import N_, Text
from ..requests import RequestEntry
from .explanation import Explanation


def gateway_failure(focus: RequestEntry) -> Explanation:
    """A ``declined``, ``error`` or ``in_doubt`` outcome; a timeout is an ``error`` whose
    steps hold ``gateway timeout``."""
    if focus.outcome == "declined":
        return _declined()
    if focus.outcome == "in_doubt":
        return _in_doubt(focus)
    if focus.step("gateway timeout") is not None:
        return _timed_out(focus)
    return Explanation(
        "error",
        Text("%(status)s — the gateway failed", status=focus.status),
        (
            N_(
                "The gateway failed before charging. The server released the key instead of "
                "leaving it in progress, so a retry with the same key runs again."
            ),
        ),
    )


def _declined() -> Explanation:
    return Explanation(
        "conflict",
        N_("402 — card declined"),
        (
            N_(
                "The gateway declined: a business answer, not a failure. The server stored "
                "it, so every retry with this key replays the same 402 and charges nothing."
            ),
        ),
    )


def _timed_out(focus: RequestEntry) -> Explanation:
    if focus.key is None:
        then: str | Text = N_(
            "No key was sent: a retry would charge again, and nobody could tell it from a "
            "second payment."
        )
    elif focus.step("release") is not None:
        then = N_(
            "The key went on to the gateway (Crash recovery: key to gateway), so the server "
            "released it: a retry runs again, and the gateway returns the first charge "
            "instead of a second one."
        )
    else:
        then = N_(
            "Releasing the key here would let a retry charge again, so the server kept it, "
            "marked in doubt: a retry with it charges nothing until the outcome is known."
        )
    sentences: tuple[str | Text, ...] = (
        N_(
            "The gateway took the money, but its answer never came back. A timeout (or a "
            "502) is ambiguous: the server cannot tell it from a failure before the charge."
        ),
        then,
    )
    if focus.step("reclaim") is not None:
        # It took over a key a crash had left in progress: that crash's charge stands too.
        sentences = (
            N_(
                "This request first took over a key that a crashed attempt had left in "
                "progress, and charged again: the crash's charge and this one are both in the "
                "ledger."
            ),
            *sentences,
        )
    return Explanation(
        "error",
        Text("%(status)s — the gateway timed out, after charging", status=focus.status),
        sentences,
    )


def _in_doubt(focus: RequestEntry) -> Explanation:
    return Explanation(
        "conflict",
        Text("%(status)s IN DOUBT — nothing charged again", status=focus.status),
        (
            N_(
                "An earlier attempt with this key timed out after the gateway took the "
                "charge. The server cannot tell whether it paid, so it kept the key in "
                "doubt instead of releasing it: this retry charged nothing."
            ),
            N_(
                "Had the key gone on to the gateway from the first attempt (Crash recovery: "
                "key to gateway), a re-run would be safe either way: the gateway returns "
                "the first charge, if there was one."
            ),
        ),
    )
