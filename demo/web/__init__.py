"""The thin web layer: HTTP in, core call, HTTP out."""

from __future__ import annotations

from flask import current_app, request
from werkzeug.exceptions import RequestEntityTooLarge

from ..lab import LabRegistry
from ..problems import Problem
from ..text import N_


def labs() -> LabRegistry:
    """The app's registry of labs."""
    registry: LabRegistry = current_app.extensions["labs"]
    return registry


def is_htmx() -> bool:
    """True when htmx sent the request (``HX-Request: true``): answer with fragments."""
    return request.headers.get("HX-Request") == "true"


def read_only_problem() -> Problem:
    """409: a replay of an exported history shows what happened and runs nothing."""
    return Problem(
        409,
        "read-only-replay",
        N_("Read-only replay"),
        N_("This lab replays an exported history: it shows what happened and runs nothing. "
           "Open a new lab to try things."),
    )  # fmt: skip


def read_body(limit: int | None) -> bytes:
    """The raw request body, at most ``limit`` bytes.

    :raises RequestEntityTooLarge: 413 past ``limit``, chunked bodies too.
    """
    if request.content_length is not None or limit is None:
        return request.get_data(cache=False)  # Content-Length was checked against the limit
    # A chunked body has no length up front: read one byte past the limit ourselves, so
    # a body over it is refused rather than silently cut short.
    stream, parts, size = request.environ["wsgi.input"], [], 0
    while size <= limit:
        part = stream.read(limit + 1 - size)
        if not part:
            break
        parts.append(part)
        size += len(part)
    if size > limit:
        raise RequestEntityTooLarge()
    return b"".join(parts)
