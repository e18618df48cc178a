"""The queue lab's JSON API: ``/lab/<lab_id>/queue/api/…`` (the page uses it too).

Every bad input answers ``application/problem+json``: 400 for malformed JSON, 413 for a
body over the limit, 415 for a body that is not JSON, 422 for a value the lab refuses;
503 ``broker-unavailable`` when the Redis broker does not answer.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, g, jsonify, request

from ...engine.problems import Problem
from ...engine.text import N_, translate
from ...payments.charges import parse_json
from ...queue.entries import WorkEntry
from ...queue.explain import explain
from .. import json_body, lab_to_read, lab_to_write, no_body

bp = Blueprint("queue_api", __name__, url_prefix="/lab/<lab_id>/queue/api")


@bp.url_value_preprocessor
def _take_lab_id(endpoint: str | None, values: dict[str, Any] | None) -> None:
    g.lab_id = (values or {}).pop("lab_id", "")


@bp.before_request
def _load_lab() -> None:
    # A GET never makes a lab (a blank one is shown); only a write makes one.
    lab_id = g.lab_id
    g.lab = lab_to_read(lab_id) if request.method in ("GET", "HEAD") else lab_to_write(lab_id)


@bp.get("/state")
def state() -> Response:
    """The queue lab's state (:func:`demo.queue.reading.lab_state`), with ``explanation``:
    what the last work call did, in the request's language."""
    lab = g.lab.queue
    body = lab.state()
    last = next((e for e in reversed(lab.entries()) if e.action == "work"), None)
    body["explanation"] = _explained(last) if last is not None and last.finished else []
    return jsonify(body)


@bp.patch("/settings")
def update_settings() -> Response:
    """Change settings, e.g. ``{"dedup": true}``: 200 with the settings; 422 for a bad
    name or value (nothing changes then)."""
    changes = parse_json(json_body())
    settings = g.lab.queue.update_settings(changes)
    g.lab.queue.by_hand("settings", changes)  # an open lesson's steps count it, as a press
    return jsonify(settings.as_dict())


@bp.post("/jobs")
def enqueue() -> Response:
    """The producer enqueues a job ``{"id", "idempotency_key", "payload"}``: 201 with its
    new ``message_id`` (a job sent twice is two messages); 422 for a bad job; 503 when
    the queue is full or its broker does not answer."""
    job = parse_json(json_body())
    message_id = g.lab.queue.enqueue(job)
    g.lab.queue.by_hand("enqueue", job)
    return jsonify({"message_id": message_id}), 201  # type: ignore[return-value]


@bp.post("/work")
def work() -> Response:
    """One worker receives and processes one visible message, then the relay runs: 200
    with the outcome (``processed``, ``duplicate_skipped``, ``crashed``, ``lost`` or
    ``idle``). A crash is an answer: the lab survives it, the message stays unacked.
    429 when every worker is busy; 503 when the broker does not answer. It takes no
    body: none, or ``{}`` as JSON; anything else is refused as for ``/jobs`` (415 for a
    body that is not JSON, 400 for malformed JSON, 422 ``invalid-work`` for a member),
    before any work is done."""
    no_body(
        "invalid-work", N_("Invalid work request"),
        N_("POST .../work takes no body: send none, or {}. Settings go to PATCH .../settings."),
    )  # fmt: skip
    entry = g.lab.queue.work()
    g.lab.queue.by_hand("work", received=not entry.too_early)
    return jsonify(work_result(entry))


@bp.post("/simulate")
def simulate() -> Response:
    """The delivery-semantics simulator: ``{"mode", "messages", "loss", "ack_loss",
    "seed"}`` → 200 ``{"sent", "delivered", "lost", "effects", "duplicate_effects", …}``;
    422 for a bad value."""
    body = parse_json(json_body())
    result = g.lab.queue.simulate(body)
    g.lab.queue.by_hand("simulate", body)
    return jsonify(result.as_dict())


@bp.post("/step")
def step() -> Response:
    """Step mode: ``{"request": 5}`` lets paused work call 5 go on one step;
    ``{"request": 5, "to_end": true}`` runs it to its end; ``{"release_all": true}`` lets
    every paused work call run to its end. 200 with the paused work calls; 404 when the
    call is not paused, 409 when it is not at a step, 422 for another body."""
    lab = g.lab.queue
    body = parse_json(json_body())
    if isinstance(body, dict) and body.keys() == {"release_all"} and body["release_all"] is True:
        lab.release_all()
    elif isinstance(body, dict) and set(body) <= {"request", "to_end"} and "request" in body:
        parks = lab.step(body["request"], to_end=body.get("to_end", False))
        lab.stepper.settle(body["request"], parks)
    else:
        raise Problem(
            422, "invalid-step", N_("Invalid step"),
            N_('Send {"request": <id>}, {"request": <id>, "to_end": true} '
               'or {"release_all": true}.'),
        )  # fmt: skip
    return jsonify({"paused": lab.stepper.paused()})


def work_result(entry: WorkEntry) -> dict[str, Any]:
    """The answer to ``POST .../work``: the entry, and what happened in words."""
    shown = entry.as_dict()
    return {
        "outcome": shown["outcome"],
        "message_id": shown["message_id"],
        "job_id": shown["job_id"],
        "idempotency_key": shown["idempotency_key"],
        "receive_count": shown["receive_count"],
        "worker": shown["worker"],
        "crashed_at": shown["crashed_at"],
        "error": shown["error"],
        "relay_crashed": shown["relay_crashed"],
        "dead_lettered": shown["dead_lettered"],
        "emails": shown["emails"],
        "entry": shown["id"],
        "explanation": _explained(entry),
    }


def _explained(entry: WorkEntry) -> list[str]:
    return [translate(sentence) for sentence in explain(entry)]
