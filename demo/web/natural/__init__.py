"""The operations lab's web side: its page and fragments (:mod:`.views`), its JSON API
and the tracking pixel (:mod:`.api`), all under ``/lab/<lab_id>/natural``."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, g

bp = Blueprint("natural", __name__, url_prefix="/lab/<lab_id>/natural")


@bp.url_value_preprocessor
def _take_lab_id(endpoint: str | None, values: dict[str, Any] | None) -> None:
    g.lab_id = (values or {}).pop("lab_id", "")


@bp.url_defaults
def _give_lab_id(endpoint: str, values: dict[str, Any]) -> None:
    if "lab_id" not in values and "lab_id" in g:
        values["lab_id"] = g.lab_id


from . import api, views  # noqa: E402,F401  (the routes register on bp)
