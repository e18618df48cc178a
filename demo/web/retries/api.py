"""The retry lab's JSON API: ``/lab/<lab_id>/retries/api/…``.

``POST run`` charges once through the lab's retrying client (against the payment lab of
the same workspace), ``POST storm`` runs the storm simulator, ``GET state`` reads the
lab. Bad input is a 422 ``application/problem+json`` that changes nothing.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, g, jsonify, request

from ...engine.problems import Problem
from ...engine.text import N_, Text
from ...payments.charges import parse_json
from .. import lab_to_read, lab_to_write, read_body
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
    body = _json_body()
    result = g.lab.retries.run(body, transport=to_payments(current_app, g.lab.id))
    return jsonify(result)


@bp.post("/storm")
def storm() -> Response:
    """The storm simulator: 200 with ``calls``, ``completion_s``, ``peak_load`` and
    ``series`` (per strategy for ``"all"``); 400/413/415/422 for bad input."""
    return jsonify(g.lab.retries.storm(_json_body()))


@bp.get("/state")
def state() -> Response:
    """The lab's policy, fault plan, last run, last storm and runs; changes nothing."""
    return jsonify(g.lab.retries.state())


def _json_body() -> Any:
    """The body parsed as strict JSON, once its media type is JSON.

    :raises Problem: 415 for another media type, 400 for malformed JSON; 413 past
        ``MAX_CONTENT_LENGTH``.
    """
    if request.mimetype != "application/json":
        detail: str | Text = (
            Text("Send the body as application/json, not %(type)s.", type=request.mimetype)
            if request.mimetype
            else N_("The request has no Content-Type header: send the body as application/json.")
        )
        raise Problem(415, "unsupported-media-type", N_("Unsupported Media Type"), detail)
    return parse_json(read_body(request.max_content_length))
