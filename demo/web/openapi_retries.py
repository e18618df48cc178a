"""The retry lab's part of the OpenAPI document: its paths under
``/lab/{lab_id}/retries`` and their schemas, built from the rules that check its requests
(:mod:`demo.retries.policy`, :mod:`demo.retries.faults`, :mod:`demo.retries.storm_input`).

Self-contained (it names the document's shared responses by ``$ref`` only), so
:mod:`demo.web.openapi_schemas` adds it to the document without an import cycle.
"""

from __future__ import annotations

from typing import Any

from ..registry import LAB_ID as LAB_ID_RULE
from ..retries.client import OUTCOMES
from ..retries.faults import FAULT_NAMES, FAULT_STATUSES, MAX_FAULTS
from ..retries.policy import RANGES, RETRY_ON_CHOICES, STRATEGIES, Policy
from ..retries.scenarios import SCENARIOS
from ..retries.storm import MODELS
from ..retries.storm_input import BUDGET_RANGES, DEFAULTS
from ..retries.storm_input import RANGES as STORM_RANGES

PROBLEM = {"$ref": "#/components/responses/Problem"}
LAB_ID = {
    "name": "lab_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": f"^{LAB_ID_RULE.pattern}(?!\\n)$"},
    "description": "The lab: 1-64 characters of letters, digits, '-' and '_'.",
}
BAD_BODY = {code: PROBLEM for code in ("400", "413", "415", "422")}
INTEGERS = "Integers are JSON integers: 24.0 is refused with 422."


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _int(low: int, high: int, description: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "minimum": low, "maximum": high}
    return {**schema, "description": description} if description else schema


def _lab(summary: str, responses: dict[str, Any], **more: Any) -> dict[str, Any]:
    """An operation on a lab: 404 for a bad lab id, 503 when no lab slot is free."""
    every = {"404": PROBLEM, "503": {"$ref": "#/components/responses/LabsFull"}}
    return {"summary": summary, **more, "responses": {**responses, **every}}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _body(name: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": _ref(name)}}}


def paths() -> dict[str, Any]:
    """The retry lab's API paths."""
    prefix = "/lab/{lab_id}/retries/api"
    return {
        f"{prefix}/run": {
            "parameters": [LAB_ID],
            "post": _lab(
                "Charge once through the retry lab's client, against the payment lab of the "
                "same workspace (its ledger, store and timeline show every attempt)",
                {
                    "200": _json(_ref("RetryRun"), "The attempts and the outcome"),
                    **BAD_BODY,
                    "409": PROBLEM,
                    "502": PROBLEM,
                },
                description="Each attempt is a real request to `POST "
                "/lab/{lab_id}/api/charges`, behind the fault plan: a planned status is "
                "answered in front of the payment lab, `lose_response` reaches it and loses "
                "the answer. Waits pass on the workspace's virtual clock, never in real "
                "time. 409: the payment lab is in step mode (each attempt would wait until "
                "stepped), or `run-in-flight`: this lab already runs one (one click, one "
                "charge), with `Retry-After`. The payment page's current order does not "
                "follow the retry client's orders. 502: the payment lab's state could not be "
                "read to count the charges.",
                requestBody=_body("RetryRunRequest"),
            ),
        },
        f"{prefix}/storm": {
            "parameters": [LAB_ID],
            "post": _lab(
                "Simulate a retry storm (deterministic for a seed)",
                {
                    "200": _json(_ref("StormAnswer"), "Calls, completion and load"),
                    **BAD_BODY,
                    "409": PROBLEM,
                    "429": PROBLEM,
                },
                description="One storm per lab at a time (409 `storm-in-flight`) and a few "
                "across the server (429 `storms-busy`), both with `Retry-After`. A reset "
                "during a storm wins: the storm's answer is returned, not kept.",
                requestBody=_body("StormRequest"),
            ),
        },
        f"{prefix}/state": {
            "parameters": [LAB_ID],
            "get": _lab(
                "The retry lab: policy, fault plan, last run and storm, the runs",
                {"200": _json(_ref("RetriesState"), "The retry lab's state")},
            ),
        },
    }


def schemas() -> dict[str, Any]:
    """The retry lab's ``components.schemas``."""
    return {
        "RetryPolicy": policy(),
        "FaultPlan": {
            "type": "array",
            "maxItems": MAX_FAULTS,
            "items": {"enum": [*FAULT_NAMES, *FAULT_STATUSES]},
            "description": "What happens to each attempt in order; past the end, `ok`. A "
            "planned 429 carries `Retry-After: 3`, and an attempt before those 3 s (virtual "
            "time) is answered 429 again without moving on in the plan.",
        },
        "RetryRunRequest": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"policy": _ref("RetryPolicy"), "faults": _ref("FaultPlan")},
            "description": "Both optional: left out, the lab's own policy and plan.",
        },
        "RetryRun": run(),
        "StormRequest": storm_request(),
        "StormResult": storm_result(),
        "StormAnswer": {
            "type": "object",
            "required": ["model", "clients", "seed", "bucket_s"],
            "properties": {
                "model": {"enum": list(MODELS)},
                "clients": {"type": "integer"},
                "seed": {"type": "integer"},
                "bucket_s": {"type": "number", "description": "One bucket of `series`, s"},
                "results": {"type": "array", "items": _ref("StormResult")},
            },
            "anyOf": [{"required": ["results"]}, _ref("StormResult")],
        },
        "RetriesState": state(),
    }


def policy() -> dict[str, Any]:
    defaults = Policy().as_dict()
    return {
        "type": "object",
        "additionalProperties": False,
        "description": "Members on top of the defaults. " + INTEGERS,
        "properties": {
            "max_attempts": _int(*RANGES["max_attempts"], "Attempts in all, the first too"),
            "strategy": {"enum": list(STRATEGIES)},
            "base_ms": _int(*RANGES["base_ms"], "The first retry's wait (its ceiling)"),
            "cap_ms": _int(*RANGES["cap_ms"], "No wait longer than this"),
            "retry_on": {"type": "array", "items": {"enum": list(RETRY_ON_CHOICES)}},
            "respect_retry_after": {"type": "boolean"},
            "same_key": {"type": "boolean"},
        },
        "default": defaults,
    }


def run() -> dict[str, Any]:
    attempt = {
        "type": "object",
        "required": ["n", "key", "status", "error", "waited_ms", "retried", "reason"],
        "properties": {
            "n": {"type": "integer", "minimum": 1},
            "key": {"type": "string"},
            "status": {"type": ["integer", "null"]},
            "error": {"enum": ["network", None]},
            "waited_ms": {"type": "integer", "minimum": 0, "description": "Virtual ms"},
            "retried": {"type": "boolean"},
            "reason": {"type": "string"},
        },
    }
    return {
        "type": "object",
        "required": ["attempts", "outcome", "charges", "order_id"],
        "properties": {
            "attempts": {"type": "array", "items": attempt, "minItems": 1},
            "outcome": {"enum": list(OUTCOMES)},
            "charges": {
                "type": "integer",
                "minimum": 0,
                "description": "Charges this run caused in the payment lab's ledger",
            },
            "order_id": {"type": "string"},
        },
    }


def storm_request() -> dict[str, Any]:
    budget = {
        "type": "object",
        "additionalProperties": False,
        "required": list(BUDGET_RANGES),
        "properties": {name: _int(*r) for name, r in BUDGET_RANGES.items()},
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "description": f"Defaults per model for base_ms and cap_ms: {dict(DEFAULTS)}. " + INTEGERS,
        "properties": {
            "model": {"enum": list(MODELS)},
            "strategy": {"enum": ["all", *STRATEGIES]},
            **{name: _int(*r) for name, r in STORM_RANGES.items()},
            "budget": {"anyOf": [{"type": "null"}, budget]},
        },
    }


def storm_result() -> dict[str, Any]:
    point = {
        "type": "object",
        "required": ["t_s", "calls"],
        "properties": {"t_s": {"type": "number"}, "calls": {"type": "integer"}},
    }
    return {
        "type": "object",
        "required": [
            "strategy",
            "calls",
            "completion_s",
            "peak_load",
            "gave_up",
            "truncated",
            "series",
        ],
        "properties": {
            "strategy": {"enum": list(STRATEGIES)},
            "calls": {"type": "integer", "description": "Calls that reached the server"},
            "completion_s": {"type": "number", "description": "When the last client was done"},
            "peak_load": {"type": "number", "description": "The busiest 100 ms, calls/s"},
            "gave_up": {"type": "integer", "description": "Clients the budget stopped"},
            "truncated": {"type": "boolean", "description": "Stopped at its most calls"},
            "series": {"type": "array", "items": point},
        },
    }


def state() -> dict[str, Any]:
    nullable_object = {"type": ["object", "null"]}
    return {
        "type": "object",
        "required": [
            "policy",
            "faults",
            "storm_request",
            "scenario",
            "fixed",
            "last_run",
            "last_storm",
            "expected",
            "runs",
        ],
        "properties": {
            "policy": _ref("RetryPolicy"),
            "faults": _ref("FaultPlan"),
            "storm_request": {"type": "object"},
            "scenario": {"enum": [*SCENARIOS, None]},
            "fixed": {"type": "boolean"},
            "last_run": {"anyOf": [{"type": "null"}, _ref("RetryRun")]},
            "last_storm": nullable_object,
            "expected": {"type": "array"},
            "runs": {"type": "array"},
        },
    }
