"""The retry lab's transport: its client's requests go to the payment lab of the same
workspace, through the payment lab's public HTTP API, inside this process.

Each request is a real request to the app (werkzeug's test client against
``current_app``): it passes the app's checks, the payment lab serves it as it serves the
browser, and it shows in that lab's ledger, store, timeline and explanation. The retry
lab never touches the payment lab's objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask

from ...retries.transport import NetworkError, Transport

ACTION = "Retry client"
"""How the payment lab's timeline names the retry client's requests (``X-Lab-Action``);
the payment lab knows it as ``RETRY_LAB_ACTION`` (a test keeps the two equal)."""

NO_RESPONSE = "/problems/no-response"
"""What the payment lab answers in place of silence when it has no socket to close (its
own ``lose_response`` fault, a crashed instance): to a client, no answer at all."""


def to_payments(app: Flask, workspace_id: str) -> Transport:
    """A :class:`~demo.retries.transport.Transport` to the payment lab of workspace
    ``workspace_id``: ``path`` is under ``/lab/<id>`` (``"/api/charges"``)."""
    client = app.test_client()

    def send(
        method: str, path: str, headers: Mapping[str, str], body: Any, /
    ) -> tuple[int, Mapping[str, str], Any]:
        response = client.open(
            f"/lab/{workspace_id}{path}",
            method=method,
            headers={**headers, "X-Lab-Action": ACTION},
            json=body,
        )
        payload = response.get_json(silent=True)
        if isinstance(payload, dict) and payload.get("type") == NO_RESPONSE:
            raise NetworkError("the connection closed before any response")
        return response.status_code, dict(response.headers), payload

    return send
