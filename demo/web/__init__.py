"""The thin web layer: HTTP in, core call, HTTP out."""

from __future__ import annotations

from flask import current_app, request

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
