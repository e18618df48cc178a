"""The thin web layer: HTTP in, core call, HTTP out."""

from __future__ import annotations

from flask import current_app, g, request
from werkzeug.exceptions import RequestEntityTooLarge

from ..lab import Lab, LabRegistry
from ..problems import Problem
from ..text import N_


def labs() -> LabRegistry:
    """The app's registry of labs."""
    registry: LabRegistry = current_app.extensions["labs"]
    return registry


def current_lab() -> Lab | None:
    """The existing lab this request addresses, if any; never creates one."""
    lab: Lab | None = g.get("lab")  # the API's views have it already
    lab_id = (request.view_args or {}).get("lab_id")
    if lab is None and isinstance(lab_id, str):
        lab = labs().peek(lab_id)
    return lab


READ_ONLY_SAFE = frozenset({"pages.set_language", "workshop.hint"})
"""What a replay still accepts: the language switch and hints change nothing it shows."""


def refuse_writes_to_replays() -> None:
    """``before_request``: a read-only replay answers 409 to anything that would run or
    change it (any write, and ``?scenario=`` or ``?lesson=`` links).

    :raises Problem: 409 ``read-only-replay``.
    """
    lab = current_lab()
    if lab is None or not lab.read_only or request.endpoint in READ_ONLY_SAFE:
        return
    if request.method not in ("GET", "HEAD", "OPTIONS") or {"scenario", "lesson"} & set(
        request.args
    ):
        raise read_only_problem()


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
