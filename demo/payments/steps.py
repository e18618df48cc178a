"""The payment handler's steps: what each ``trace(step, **detail)`` call of a charge
request carries, and where step mode stops."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from ..engine.stepping import PAUSED_MS
from ..engine.text import N_
from ..engine.timeline import Detail, StepKind, is_ms

STEP_POINTS = frozenset(
    {"no key", "lookup", "fingerprint check", "lock wait", "lock acquire", "reclaim", "reserve",
     "charging", "gateway replay", "gateway charge", "gateway timeout", "in doubt", "release",
     "outbox enqueue", "email send", "record save", "response lost", "respond"}
)  # fmt: skip
"""The step boundaries where step mode pauses: every ``trace`` point of a charge request
but ``validate`` (the request stops first after its lookup, or, with no key, after ``no
key``), so one Step never runs past a point unseen; ``charging`` is the stop right before
the gateway is called, so the Step that moves the money is a Step of its own. What happens
inside the gateway call (its replayed answer, an inline e-mail) is told right after the
call's own stop, and the outbox message right after ``record save``, which writes it."""


_BOOL = Detail(N_("must be true or false"), lambda v: isinstance(v, bool))
_MS = Detail(N_("must be a number of ms"), is_ms)


STEPS: Mapping[str, StepKind] = {
    "validate": StepKind({"ok": _BOOL}),
    "no key": StepKind({}),
    "lookup": StepKind(
        {
            "hit": _BOOL,
            "state": Detail(
                N_('must be null, "in_progress", "completed" or "in_doubt"'),
                lambda v: v in (None, "in_progress", "completed", "in_doubt"),
            ),
            "again": _BOOL,
        },
        at_most=2,
    ),
    "fingerprint check": StepKind({"match": _BOOL}, at_most=2),
    "lock wait": StepKind({}),
    "lock acquire": StepKind({"waited_ms": _MS}),
    "reclaim": StepKind({}),
    "reserve": StepKind({}),
    "charging": StepKind({}),
    "gateway replay": StepKind(
        {"charge_id": Detail(N_("must be a charge id"), lambda v: _is_charge_id(v))}
    ),
    "gateway charge": StepKind({"ms": _MS}),
    "gateway timeout": StepKind({"ms": _MS}),
    "in doubt": StepKind({}),
    "release": StepKind({}),
    "outbox enqueue": StepKind(
        {"charge_id": Detail(N_("must be a charge id"), lambda v: _is_charge_id(v))}
    ),
    "email send": StepKind(
        {
            "email": Detail(
                N_("must be an e-mail id"),
                lambda v: isinstance(v, str) and re.fullmatch(r"em_[0-9]{4,12}", v) is not None,
            ),
            "via": Detail(N_('must be "inline" or "outbox"'), lambda v: v in ("inline", "outbox")),
            "key": Detail(
                N_("must be an idempotency key or null"),
                lambda v: v is None or (isinstance(v, str) and _is_shown_key(v)),
            ),
        },
        at_most=2,
    ),
    "record save": StepKind({}),
    "response lost": StepKind({}),
    "respond": StepKind(
        {
            "status": Detail(
                N_("must be an HTTP status code"),
                lambda v: type(v) is int and 100 <= v <= 599,
            )
        }
    ),
    "crash": StepKind(
        {"after": Detail(N_("must name a known step"), lambda v: isinstance(v, str) and v in STEPS)}
    ),
    "step timeout": StepKind({}),
}
"""Every step a request's log can hold, with the detail its ``trace(step, **detail)`` call
passes: the one table the lab's trace calls follow (a test reads them in the source) and
an imported history is checked against, so the two cannot drift apart."""

# In step mode any step may carry the time the attendee left the request paused there.
STEPS = {
    name: replace(kind, detail={**kind.detail, PAUSED_MS: _MS}) for name, kind in STEPS.items()
}

STEP_NAMES = frozenset(STEPS)
"""Every step a request's log can hold (an imported history may name no other)."""


def _is_shown_key(value: str) -> bool:
    return 0 < len(value) <= 255 and value.isprintable()


def _is_charge_id(value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(r"ch_[0-9]{4,12}", value) is not None
