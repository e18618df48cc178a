"""The JSON API of a lab: ``/lab/<lab_id>/api/…``. Views translate HTTP to and from the
core; an htmx request gets the page's fragments instead of JSON (``Vary: HX-Request``)."""

from __future__ import annotations

import contextlib
import socket
from typing import Any

from flask import Blueprint, Response, g, jsonify, request

from ...engine.problems import Problem
from ...engine.text import N_
from ...payments.charges import parse_json
from ...payments.faults import no_response
from ...payments.idempotency import Response as CoreResponse
from ...server import client_socket
from .. import is_htmx, json_body, lab_to_read, lab_to_write, no_body
from .panels import panels_response, settings_response

bp = Blueprint("api", __name__, url_prefix="/lab/<lab_id>/api")


@bp.url_value_preprocessor
def _take_lab_id(endpoint: str | None, values: dict[str, Any] | None) -> None:
    g.lab_id = (values or {}).pop("lab_id", "")


@bp.before_request
def _load_lab() -> None:
    # After the app's own checks (a cross-site write is refused before it makes a lab).
    # Reading a lab that does not exist shows a blank one; only a write makes a lab.
    lab_id = g.lab_id
    g.lab = lab_to_read(lab_id) if request.method in ("GET", "HEAD") else lab_to_write(lab_id)


@bp.after_request
def _vary(response: Response) -> Response:
    response.vary.add("HX-Request")
    return response


@bp.post("/charges")
def create_charge() -> Response:
    """Charge once per ``Idempotency-Key``: 201, replay, 400/409/413/415/422, 502 or 504."""
    body = json_body()
    result, entry = g.lab.payments.create_charge(
        request.headers.getlist("Idempotency-Key"),
        body,
        action=request.headers.get("X-Lab-Action", "API"),
        # The page follows its own buttons (htmx) and plain API calls; another lab's client
        # (an X-Lab-Action without HX-Request, e.g. the retry lab's) does not move its order.
        follow=is_htmx() or "X-Lab-Action" not in request.headers,
    )
    if not entry.delivered:
        return _drop_connection()
    if is_htmx():
        # A request from before a reset explains nothing in the fresh lab.
        focus = entry if g.lab.payments.is_current(entry) else None
        return panels_response(g.lab, focus=focus, status=result.status)
    return _to_flask(result)


@bp.get("/state")
def state() -> Response:
    """The lab's settings, charges, records and request log as JSON."""
    return jsonify(g.lab.state())


@bp.patch("/settings")
def update_settings() -> Response:
    """Change settings, e.g. ``{"lock": false}``: 200 with the settings, or 4xx."""
    changes = parse_json(json_body())
    settings = g.lab.payments.update_settings(changes)
    if is_htmx():
        return settings_response(g.lab)
    return jsonify(settings.as_dict())


@bp.post("/clock")
def advance_clock() -> Response:
    """Move the lab's virtual clock, e.g. ``{"advance_s": 90000}``: 200, or 4xx."""
    changes = parse_json(json_body())
    if not isinstance(changes, dict) or set(changes) != {"advance_s"}:
        changes = {"advance_s": None}  # anything else is refused below, with the rule
    offset = g.lab.advance(changes["advance_s"])
    if is_htmx():
        return panels_response(g.lab)
    return jsonify({"offset_s": offset, "now": g.lab.now()})


@bp.post("/step")
def step() -> Response:
    """Step mode: ``{"request": 5}`` lets request 5 go on one step;
    ``{"request": 5, "to_end": true}`` runs it to its end; ``{"release_all": true}`` lets
    every paused request run to its end. 200 with the paused requests, or 4xx."""
    body = parse_json(json_body())
    if isinstance(body, dict) and body.keys() == {"release_all"} and body["release_all"] is True:
        g.lab.payments.stepper.release_all()
    elif isinstance(body, dict) and set(body) <= {"request", "to_end"} and "request" in body:
        parks = g.lab.payments.stepper.step(body["request"], to_end=body.get("to_end", False))
        g.lab.payments.stepper.settle(body["request"], parks)
    else:
        raise Problem(
            422,
            "invalid-step",
            N_("Invalid step"),
            N_(
                'Send {"request": <id>}, {"request": <id>, "to_end": true} '
                'or {"release_all": true}.'
            ),
        )
    if is_htmx():
        return panels_response(g.lab)
    return jsonify({"paused": g.lab.payments.stepper.paused()})


@bp.post("/reset")
def reset() -> Response:
    """Empty the store, ledger and log, and the workspace's other labs with them, the clock
    back to now (settings stay): 200 with the new state. It takes no body (none, or
    ``{}``): 422 ``invalid-reset`` for a member, 400 for a body that is not JSON, 415 for
    another media type, all before anything is emptied."""
    no_body(
        "invalid-reset", N_("Invalid reset"),
        N_("POST .../api/reset takes no body: send none, or {}. Settings go to PATCH "
           ".../api/settings."),
    )  # fmt: skip
    g.lab.reset()
    if is_htmx():
        return panels_response(g.lab)
    return jsonify(g.lab.state())


def _drop_connection() -> Response:
    """Close the connection without a response: what a lost response or a crashed
    instance looks like to the client (a browser reports ``ERR_EMPTY_RESPONSE``). Where
    the server gives the app no socket (the test client), a 502 ``/problems/no-response``
    stands in for the silence."""
    sock = client_socket(request.environ)
    if sock is None:
        return _to_flask(no_response())
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    return Response(status=204)  # never arrives: the socket is already shut


def _to_flask(result: CoreResponse) -> Response:
    response = Response(result.body, result.status)
    for name, value in result.headers:
        response.headers[name] = value
    return response
