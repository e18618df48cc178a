"""The queue lab's switches: the delivery semantics, and the consumer's defences."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ..engine.problems import Problem
from ..engine.settings import setting_errors
from ..engine.text import N_, Reasons, Text

CRASH_POINTS = ("after_receive", "after_effect", "after_record", "relay_after_send")
"""Where a crash can be armed: three in the worker, one in the outbox relay."""

CHOICES: dict[str, tuple[str, ...]] = {
    "delivery": ("at_least_once", "at_most_once"),
    "crash_at": ("none", *CRASH_POINTS),
}
RANGES: dict[str, tuple[int, int]] = {
    "visibility_timeout_s": (1, 12 * 3600),
    "max_attempts": (1, 10),
    "workers": (1, 3),
}


@dataclass(frozen=True)
class Settings:
    """The queue lab's switches.

    :param delivery: ``"at_least_once"`` (ack after the work: a crash means a
        redelivery) or ``"at_most_once"`` (acked on receive, before the work: a crash
        loses the job, silently).
    :param dedup: the consumer's dedup table keyed by the job's idempotency key.
    :param outbox: the e-mail is written to an outbox in the same atomic step as the dedup
        record, and a relay sends it.
    :param crash_at: a crash armed for the next work call that reaches the point, which
        then returns to ``"none"`` (one shot): ``after_receive``, ``after_effect``,
        ``after_record`` (all before the ack) or ``relay_after_send`` (the relay sent an
        outbox row and dies before marking it sent).
    :param provider_dedup: the relay passes the outbox row id as a stable message id, and
        the mail provider drops a repeat of it.
    :param visibility_timeout_s: how long a received message stays hidden, s (1 s to 12 h;
        SQS's default is 30 s).
    :param max_attempts: receives before a message goes to the dead-letter queue (1-10;
        SQS ``maxReceiveCount``).
    :param workers: workers that take messages at once (1-3).
    :param step_mode: every work call pauses at each step of the worker until stepped.
    """

    delivery: str = "at_least_once"
    dedup: bool = False
    outbox: bool = False
    crash_at: str = "none"
    provider_dedup: bool = False
    visibility_timeout_s: int = 30
    max_attempts: int = 5
    workers: int = 1
    step_mode: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The settings as JSON-ready values."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def patched(self, changes: object) -> Settings:
        """A copy with ``changes`` applied, e.g. ``{"dedup": true}``.

        :raises Problem: 422 ``invalid-settings`` when ``changes`` is not an object, names
            an unknown setting, or gives a value of the wrong type or out of range;
            nothing changes then.
        """
        if not isinstance(changes, Mapping):
            raise _bad_settings({"body": N_("must be a JSON object of settings")})
        errors = setting_errors(self, changes, RANGES, CHOICES)
        if errors:
            raise _bad_settings(errors)
        return replace(self, **changes)


def _bad_settings(errors: dict[str, str | Text]) -> Problem:
    reasons = Reasons(errors)
    return Problem(
        422,
        "invalid-settings",
        N_("Invalid settings"),
        Text("Fix the settings: %(fields)s.", fields=reasons),
        errors=reasons.english(),
    )
