"""The thin web layer: HTTP in, core call, HTTP out."""

from __future__ import annotations

from flask import current_app, request

from ..lab import LabRegistry


def labs() -> LabRegistry:
    """The app's registry of labs."""
    registry: LabRegistry = current_app.extensions["labs"]
    return registry


def is_htmx() -> bool:
    """True when htmx sent the request (``HX-Request: true``): answer with fragments."""
    return request.headers.get("HX-Request") == "true"
