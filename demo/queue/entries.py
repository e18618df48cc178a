"""What the queue lab logs on the shared timeline: one entry per producer send and per
work call, with the steps it passed."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine.stepping import PAUSED_MS
from ..engine.text import N_
from ..engine.timeline import Detail, Entry, StepKind, is_ms

CRASH_STEPS = {
    "after_receive": "receive",
    "after_effect": "side effect",
    "after_record": "record",
    "relay_after_send": "relay send",
}
"""Each crash point, and the trace step it fires at."""

STEP_POINTS = frozenset(
    {"receive", "dedup check", "side effect", "record", "ack", "relay send", "relay mark"}
)
"""Where a work call stops in step mode: every step of :func:`~.worker.consume` and of
the relay."""


_BOOL = Detail(N_("must be true or false"), lambda v: isinstance(v, bool))
_TEXT = Detail(N_("must be a string"), lambda v: isinstance(v, str) and len(v) <= 300)
_ID = Detail(N_("must be a string"), lambda v: isinstance(v, str) and len(v) <= 255)
_COUNT = Detail(N_("must be an integer"), lambda v: type(v) is int and 0 <= v <= 10**6)


def _numbered(prefix: str) -> Callable[[object], bool]:
    return lambda v: isinstance(v, str) and re.fullmatch(prefix + r"-[0-9]{1,12}", v) is not None


_ROW = Detail(N_("must be an outbox row id"), _numbered("ob"))
_EMAIL = Detail(N_("must be an e-mail id"), _numbered("em"))

STEPS: Mapping[str, StepKind] = {
    "publish": StepKind({"message_id": _ID, "job_id": _ID}),
    "receive": StepKind({"message_id": _ID, "job_id": _ID, "key": _ID, "receive_count": _COUNT}),
    "dedup check": StepKind({"seen": _BOOL}, at_most=2),
    "side effect": StepKind({
        "via": Detail(N_('must be "mailbox" or "outbox"'), lambda v: v in ("mailbox", "outbox")),
        "email": _EMAIL, "row": _ROW, "subject": _TEXT,
    }),
    "record": StepKind({"dedup": _BOOL, "with_outbox": _BOOL}),
    "ack": StepKind({}),
    "handler error": StepKind({"error": _TEXT}),
    "relay send": StepKind({"row": _ROW, "email": _EMAIL, "dropped": _BOOL}, at_most=200),
    "relay mark": StepKind({"row": _ROW}, at_most=200),
    "crash": StepKind({"after": Detail(N_("must name a known step"),
                                       lambda v: v in ("receive", "side effect", "record",
                                                       "relay send"))}, at_most=2),
    "step timeout": StepKind({}),
}  # fmt: skip
"""Every step a queue-lab entry can hold, with the detail its ``trace``/``mark`` call
passes (a test reads the calls in the source against it); in step mode any step may also
carry the time it stood paused (``paused_ms``)."""
STEPS = {name: StepKind({**kind.detail, PAUSED_MS: Detail(N_("must be a number of ms"), is_ms)},
                        kind.at_most) for name, kind in STEPS.items()}  # fmt: skip


@dataclass
class WorkEntry(Entry):
    """One producer send (``action`` ``"enqueue"`` or ``"producer_retry"``) or one work
    call (``"work"``) on the timeline.

    ``outcome`` is ``None`` while a work call runs; ``emails`` lists the e-mails this call
    sent (the worker's and the relay's); ``trace_lines`` the line numbers, in
    ``demo/queue/worker.py``, of the ``trace`` calls it passed (the code view's marks).
    """

    worker: str | None = None
    message_id: str | None = None
    job_id: str | None = None
    receive_count: int | None = None
    outcome: str | None = None
    crashed_at: str | None = None
    error: str | None = None
    relay_crashed: bool = False
    in_flight: int = 0
    """An ``idle`` call's count of messages in flight then: what a later receive may get."""
    dead_lettered: list[str] = field(default_factory=list)
    repeats: bool = False
    """A redelivery whose message's side effect already ran in an earlier delivery (or
    whose earlier deliveries left the timeline): done again, it repeats that effect."""
    emails: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    trace_lines: list[int] = field(default_factory=list)

    @property
    def too_early(self) -> bool:
        """Nothing received while a message is still hidden (it comes back once its
        visibility timeout passes), none dead-lettered, no outbox row relayed: a press
        that is no step of a scenario yet (run T counted it as the redelivery's)."""
        return (
            self.outcome == "idle"
            and self.in_flight > 0
            and not self.dead_lettered
            and not any(step.name.startswith("relay") for step in self.steps)
        )

    def as_dict(self) -> dict[str, Any]:
        """The entry as JSON-ready values (``at`` in lab-clock s, times in ms)."""
        return {
            "id": self.id,
            "action": self.action,
            "worker": self.worker,
            "message_id": self.message_id,
            "job_id": self.job_id,
            "idempotency_key": self.key,
            "receive_count": self.receive_count,
            "outcome": self.outcome,
            "crashed_at": self.crashed_at,
            "error": self.error,
            "relay_crashed": self.relay_crashed,
            "dead_lettered": list(self.dead_lettered),
            "repeats": self.repeats,
            "emails": list(self.emails),
            "trace_lines": list(self.trace_lines),
            "at": self.at,
            "duration_ms": None if self.duration_ms is None else round(self.duration_ms, 1),
            "steps": [
                {"name": s.name, "at_ms": round(s.at_ms, 1), "detail": dict(s.detail)}
                for s in self.steps
            ],
        }
