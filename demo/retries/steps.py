"""The retry lab's steps on its timeline: what each one carries (see
:class:`~demo.engine.timeline.StepKind`). A run passes ``send`` then ``answer`` once per
attempt; :func:`~.client.charge_with_retries` writes them through its ``trace`` seam."""

from __future__ import annotations

from ..engine.text import Text
from ..engine.timeline import Detail, StepKind, is_ms
from .policy import MAX_ATTEMPTS


def _attempt(value: object) -> bool:
    return type(value) is int and 1 <= value <= MAX_ATTEMPTS


def _status(value: object) -> bool:
    return value is None or (type(value) is int and 100 <= value <= 599)


STEPS: dict[str, StepKind] = {
    "send": StepKind(
        {
            "n": Detail("must be the attempt's number, 1-10", _attempt),
            "key": Detail("must be a string", lambda v: isinstance(v, str)),
            "waited_ms": Detail("must be a number of ms", is_ms),
        },
        at_most=MAX_ATTEMPTS,
    ),
    "answer": StepKind(
        {
            "n": Detail("must be the attempt's number, 1-10", _attempt),
            "status": Detail("must be an HTTP status or null", _status),
            "error": Detail('must be "network" or null', lambda v: v in ("network", None)),
            "retried": Detail("must be true or false", lambda v: isinstance(v, bool)),
            "reason": Detail("must be a text", lambda v: isinstance(v, (str, Text))),
        },
        at_most=MAX_ATTEMPTS,
    ),
}
"""Every step a run writes, by name."""
