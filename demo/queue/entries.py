"""What the queue lab logs on the shared timeline: one entry per producer send and per
work call, with the steps it passed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.timeline import Entry

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


@dataclass
class WorkEntry(Entry):
    """One producer send (``action`` ``"enqueue"`` or ``"producer_retry"``) or one work
    call (``"work"``) on the timeline.

    ``outcome`` is ``None`` while a work call runs; ``emails`` lists the e-mails this call
    sent (the worker's and the relay's).
    """

    worker: str | None = None
    message_id: str | None = None
    job_id: str | None = None
    receive_count: int | None = None
    outcome: str | None = None
    crashed_at: str | None = None
    error: str | None = None
    relay_crashed: bool = False
    dead_lettered: list[str] = field(default_factory=list)
    emails: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)

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
            "emails": list(self.emails),
            "at": self.at,
            "duration_ms": None if self.duration_ms is None else round(self.duration_ms, 1),
            "steps": [
                {"name": s.name, "at_ms": round(s.at_ms, 1), "detail": dict(s.detail)}
                for s in self.steps
            ],
        }
