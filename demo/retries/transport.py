"""How the retry lab's client reaches a server: one HTTP request at a time.

Whoever builds the lab injects a :data:`Transport`. The web layer's sends the request to
the payment lab of the same workspace, through its public API (``POST /api/charges``),
in the same process: the retry lab never imports the payment lab.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class NetworkError(Exception):
    """No answer came back: the connection failed or closed before any response. The
    request may or may not have reached the server; the client cannot tell."""


class Transport(Protocol):
    """Send one request; return ``(status, headers, body)``.

    :param method: ``"GET"`` or ``"POST"``.
    :param path: the path inside the workspace, e.g. ``"/api/charges"``.
    :param headers: request headers, e.g. ``{"Idempotency-Key": "…"}``.
    :param body: the JSON body (sent as ``application/json``), or ``None``.
    :returns: the status code, the response headers (names as sent; look them up
        case-insensitively) and the body parsed as JSON (``None`` when empty or not JSON).
    :raises NetworkError: when no response arrives.
    """

    def __call__(
        self, method: str, path: str, headers: Mapping[str, str], body: Any, /
    ) -> tuple[int, Mapping[str, str], Any]: ...


def header(headers: Mapping[str, str], name: str) -> str | None:
    """The value of header ``name`` (any case), or ``None`` (RFC 9110 §5.1: names are
    case-insensitive)."""
    wanted = name.lower()
    return next((v for k, v in headers.items() if k.lower() == wanted), None)
