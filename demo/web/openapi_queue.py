"""The queue lab's part of the OpenAPI document: ``/lab/{lab_id}/queue/api/…``, with
schemas built from the objects that check the requests (:mod:`demo.queue.settings`,
:mod:`demo.queue.jobs`, :mod:`demo.queue.simulator`)."""

from __future__ import annotations

import re
from typing import Any

from ..queue import simulator
from ..queue.jobs import MAX_PAYLOAD_BYTES, NAME_PATTERN
from ..queue.settings import CHOICES, RANGES, Settings
from ..registry import LAB_ID as LAB_ID_RULE

PROBLEM = {"$ref": "#/components/responses/Problem"}
LABS_FULL = {"$ref": "#/components/responses/LabsFull"}
LAB_ID = {
    "name": "lab_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": f"^{LAB_ID_RULE.pattern}(?!\\n)$"},
    "description": "The lab: 1-64 characters of letters, digits, '-' and '_'.",
}
NAME = {"type": "string", "pattern": f"^{NAME_PATTERN}$"}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _op(summary: str, responses: dict[str, Any], **more: Any) -> dict[str, Any]:
    """An operation under a lab: 404 for a bad lab id; 503 for a full room, and for a
    Redis broker that does not answer (``/problems/broker-unavailable``)."""
    return {"summary": summary, **more, "responses": {**responses, "404": PROBLEM,
                                                       "503": LABS_FULL}}  # fmt: skip


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def paths() -> dict[str, Any]:
    """The queue lab's operations."""
    bad_body = {code: PROBLEM for code in ("400", "413", "415", "422")}
    base = "/lab/{lab_id}/queue/api"
    return {
        f"{base}/state": {
            "parameters": [LAB_ID],
            "get": _op("The queue lab: messages, dedup table, outbox, e-mails, deliveries",
                       {"200": _json(_ref("QueueState"), "The queue lab's state")}),
        },
        f"{base}/settings": {
            "parameters": [LAB_ID],
            "patch": _op("Change the queue lab's settings (an empty object changes nothing)",
                         {"200": _json(_ref("QueueSettings"), "The settings"), **bad_body},
                         requestBody=_body(_ref("QueueSettings"))),
        },
        f"{base}/jobs": {
            "parameters": [LAB_ID],
            "post": _op("The producer enqueues a job: a new message, even for a job sent before",
                        {"201": _json(_ref("Enqueued"), "The new message"), **bad_body},
                        requestBody=_body(_ref("Job"))),
        },
        f"{base}/work": {
            "parameters": [LAB_ID],
            "post": _op("One worker receives and processes one visible message; then the relay",
                        {"200": _json(_ref("WorkResult"), "What the work call did"),
                         **bad_body, "429": PROBLEM},
                        description="A crash is an answer (200, outcome `crashed` or `lost`): "
                        "the lab survives it and the message stays unacked. It takes no body "
                        "(or `{}`); a body with members is 422 `invalid-work`."),
        },
        f"{base}/step": {
            "parameters": [LAB_ID],
            "post": _op("Step mode: step a paused work call, or run it (or all) to the end",
                        {"200": _json({"type": "object", "required": ["paused"],
                                       "properties": {"paused": {"type": "array"}}},
                                      "The work calls still paused"),
                         **bad_body, "409": PROBLEM},
                        requestBody=_body({"$ref": "#/components/schemas/StepRequest"})),
        },
        f"{base}/simulate": {
            "parameters": [LAB_ID],
            "post": _op("The delivery-semantics simulator (deterministic for a seed)",
                        {"200": _json(_ref("Simulation"), "The counts"), **bad_body},
                        requestBody=_body(_ref("SimulateRequest"))),
        },
    }  # fmt: skip


def settings() -> dict[str, Any]:
    """The settings object: the rules and defaults of :meth:`Settings.patched`."""
    docs = {n: " ".join(t.split()) for n, t in re.findall(
        r":param (\w+): (.*?)(?=\n\s*:param |\Z)", Settings.__doc__ or "", re.S)}  # fmt: skip
    properties: dict[str, Any] = {}
    for name, default in Settings().as_dict().items():
        if isinstance(default, bool):
            schema: dict[str, Any] = {"type": "boolean"}
        elif name in RANGES:
            low, high = RANGES[name]
            schema = {"type": "integer", "minimum": low, "maximum": high}
        else:
            schema = {"enum": list(CHOICES[name])}
        properties[name] = {**schema, "default": default, "description": docs.get(name, "")}
    return {"type": "object", "additionalProperties": False, "properties": properties}


def schemas() -> dict[str, Any]:
    """The queue lab's ``components.schemas``."""
    return {
        "QueueSettings": settings(),
        **_requests(),
        **_answers(),
        "QueueState": _state(),
    }


def _requests() -> dict[str, Any]:
    probability = {"type": "number", "minimum": 0, "maximum": simulator.MAX_LOSS}
    return {
        "Job": {
            "type": "object",
            "required": ["id", "idempotency_key", "payload"],
            "additionalProperties": False,
            "properties": {
                "id": NAME,
                "idempotency_key": NAME,
                "payload": {
                    "type": "object",
                    "description": f"At most {MAX_PAYLOAD_BYTES} "
                    "bytes as canonical JSON, whole numbers as JSON integers (42, not "
                    "42.0: 422); required",
                },  # fmt: skip
            },
        },
        "SimulateRequest": {
            "type": "object",
            "required": ["mode", "messages"],
            "additionalProperties": False,
            "properties": {
                "mode": {"enum": list(simulator.MODES)},
                "messages": {"type": "integer", "minimum": 1, "maximum": simulator.MAX_MESSAGES},
                "loss": probability,
                "ack_loss": probability,
                "seed": {"type": "integer", "minimum": 0, "maximum": simulator.MAX_SEED},
            },
        },
    }


def _answers() -> dict[str, Any]:
    text = {"type": ["string", "null"]}
    count = {"type": ["integer", "null"]}
    return {
        "Enqueued": {"type": "object", "required": ["message_id"],
                     "properties": {"message_id": {"type": "string"}}},
        "WorkResult": {
            "type": "object",
            "required": ["outcome", "message_id", "explanation"],
            "properties": {
                "outcome": {"enum": ["processed", "duplicate_skipped", "crashed", "lost", "idle"]},
                "message_id": text, "job_id": text, "idempotency_key": text,
                "receive_count": count, "worker": text, "crashed_at": text, "error": text,
                "relay_crashed": {"type": "boolean"}, "entry": {"type": "integer"},
                "dead_lettered": {"type": "array", "items": {"type": "string"}},
                "emails": {"type": "array", "items": {"type": "string"}},
                "explanation": {"type": "array", "items": {"type": "string"}},
            },
        },
        "Simulation": {
            "type": "object",
            "required": ["sent", "delivered", "lost", "effects", "duplicate_effects"],
            "properties": {name: {"type": "integer", "minimum": 0} for name in
                           ("sent", "delivered", "lost", "effects", "duplicate_effects")},
        },
    }  # fmt: skip


def _state() -> dict[str, Any]:
    objects = {"type": "array", "items": {"type": "object"}}
    return {
        "type": "object",
        "required": ["settings", "messages", "dedup", "outbox", "emails", "deliveries"],
        "properties": {
            "settings": _ref("QueueSettings"),
            "broker": {"enum": ["memory", "redis"]},
            "messages": {"type": "array", "items": {
                "type": "object",
                "required": ["message_id", "job_id", "idempotency_key", "state", "receive_count"],
                "properties": {"state": {"enum": ["ready", "in_flight", "acked", "dead"]},
                               "receive_count": {"type": "integer", "minimum": 0}},
            }},
            "dedup": {"type": "array", "items": {
                "type": "object", "required": ["key", "state"],
                "properties": {"key": {"type": "string"}, "state": {"type": "string"}},
            }},
            "outbox": objects,
            "emails": {"type": "array", "items": {
                "type": "object", "required": ["idempotency_key", "message_id", "job_id"],
            }},
            "deliveries": objects,
            "explanation": {"type": "array", "items": {"type": "string"}},
        },
    }  # fmt: skip
