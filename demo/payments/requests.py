"""What the payment lab logs: one entry per charge request, and the e-mails that left."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from ..engine.timeline import Entry
from .charges import ChargeRequest
from .settings import Settings

Outcome = Literal[
    "charged",
    "recovered",
    "replayed",
    "conflict",
    "in_use",
    "in_doubt",
    "declined",
    "error",
    "invalid",
    "crashed",
    "in_flight",
]

RETRY_LAB_ACTION = "Retry client"
"""The ``X-Lab-Action`` the retry lab's client sends (``demo/web/retries/transport.py``):
its charges go through this lab's gateway, and its answers show on this lab's page."""


@dataclass
class RequestEntry(Entry):
    """One HTTP request to the charge endpoint, as the timeline shows it.

    ``status`` is ``None`` while in flight, and when the response never reached the
    client (``delivered`` is ``False``).
    """

    instance: str = "i1"
    charge: ChargeRequest | None = None
    fingerprint: str | None = None
    status: int | None = None
    outcome: Outcome = "in_flight"
    charge_id: str | None = None
    problem: str | None = None
    problem_detail: str | None = None
    raw_key: str | None = None
    lock: bool = True
    delivered: bool = True
    settings: Settings | None = None
    """The lab's settings when the request arrived (what the lessons' checks look at)."""
    clock_s: float = 0.0
    """How far the lab's clock had been moved when the request arrived, in s (lesson 7's
    card tells +25 h pressed before Pay from +25 h between Pay and Retry)."""

    @property
    def from_retry_lab(self) -> bool:
        """Sent by the retry lab's client, not from this lab's page (:data:`RETRY_LAB_ACTION`)."""
        return self.action == RETRY_LAB_ACTION

    def as_dict(self) -> dict[str, Any]:
        """The entry as JSON-ready values (times in ms)."""
        return {
            "id": self.id,
            "action": self.action,
            "instance": self.instance,
            "idempotency_key": self.key,
            "body": self.charge.as_dict() if self.charge else None,
            "fingerprint": self.fingerprint,
            "lock": self.lock,
            "status": self.status,
            "outcome": self.outcome,
            "delivered": self.delivered,
            "charge_id": self.charge_id,
            "problem": self.problem,
            "duration_ms": None if self.duration_ms is None else round(self.duration_ms, 1),
            "steps": [{"step": s.name, "at_ms": round(s.at_ms, 1), **s.detail} for s in self.steps],
        }


@dataclass(frozen=True)
class Email:
    """A receipt e-mail that left: one more in the customer's inbox."""

    id: str
    idempotency_key: str | None
    order_id: str
    charge_id: str
    sent_at: float = 0.0
    """When it left, in seconds on the lab's clock (0.0 when an old history did not say)."""
    via: str = "inline"
    """``"inline"`` (the handler sent it itself) or ``"outbox"`` (the relay sent it once)."""

    def as_dict(self) -> dict[str, Any]:
        """The e-mail as JSON-ready values."""
        return asdict(self)
