"""Test helpers for the retry lab: a transport straight onto a payment lab, no web layer."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from demo.engine.clock import VirtualClock
from demo.payments.lab import PaymentsLab
from demo.payments.settings import Settings
from demo.retries.transport import NetworkError


class PaymentsTransport:
    """Sends the retry client's requests to ``payments`` as its API would serve them."""

    def __init__(self, payments: PaymentsLab) -> None:
        self.payments = payments
        self.sent: list[tuple[str, str, dict[str, str]]] = []

    def __call__(
        self, method: str, path: str, headers: Mapping[str, str], body: Any, /
    ) -> tuple[int, Mapping[str, str], Any]:
        self.sent.append((method, path, dict(headers)))
        if (method, path) == ("GET", "/api/state"):
            return 200, {"Content-Type": "application/json"}, self.payments.state()
        assert (method, path) == ("POST", "/api/charges")
        key = headers.get("Idempotency-Key")
        response, entry = self.payments.create_charge(
            [key] if key else [], json.dumps(body).encode(), action="Retry client"
        )
        if not entry.delivered:
            raise NetworkError("no response")
        return response.status, dict(response.headers), json.loads(response.body)


def payments_lab(clock: VirtualClock | None = None) -> PaymentsLab:
    """A payment lab with no gateway latency (the tests never wait for real)."""
    return PaymentsLab(settings=Settings(gateway_latency_ms=0), clock=clock)
