"""The retry lab's JSON API: ``/lab/<lab_id>/retries/api/…``.

``POST run`` charges once through the lab's retrying client (against the payment lab of
the same workspace), ``POST storm`` runs the storm simulator, ``GET state`` reads the
lab. Bad input is a 422 ``application/problem+json`` that changes nothing.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, g, jsonify, request

from ...payments.charges import parse_json
from .. import json_body, lab_to_read, lab_to_write
from .transport import to_payments

bp = Blueprint("retries_api", __name__, url_prefix="/lab/<lab_id>/retries/api")


@bp.url_value_preprocessor
def _take_lab_id(endpoint: str | None, values: dict[str, Any] | None) -> None:
    g.lab_id = (values or {}).pop("lab_id", "")


@bp.before_request
def _load_lab() -> None:
    # Reading a lab that does not exist shows a blank one; only a write makes a lab.
    lab_id = g.lab_id
    g.lab = lab_to_read(lab_id) if request.method in ("GET", "HEAD") else lab_to_write(lab_id)


@bp.post("/run")
def run() -> Response:
    """One charge through the retrying client: 200 with ``attempts``, ``outcome`` and
    ``charges``; 400/413/415/422 for bad input; 409 while the payment lab is in step
    mode; 502 when the payment lab cannot be read."""
    body = parse_json(json_body(("application/json",)))
    result = g.lab.retries.run(body, transport=to_payments(current_app, g.lab.id))
    return jsonify(result)


@bp.post("/storm")
def storm() -> Response:
    """The storm simulator: 200 with ``calls``, ``completion_s``, ``peak_load`` and
    ``series`` (per strategy for ``"all"``); 400/413/415/422 for bad input."""
    return jsonify(g.lab.retries.storm(parse_json(json_body(("application/json",)))))


@bp.get("/state")
def state() -> Response:
    """The lab's policy, fault plan, last run, last storm and runs; changes nothing."""
    return jsonify(g.lab.retries.state())
