"""A job, as the producer enqueues it: ``{"id", "idempotency_key", "payload"}``, and the
rules a job must follow to enter the queue (else 422)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..engine.problems import Problem, canonical_json
from ..engine.text import N_, Reasons, Text

MAX_PAYLOAD_BYTES = 2048
"""The largest payload a job may carry, as canonical JSON, in bytes."""

NAME_PATTERN = r"[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?"
"""A job id or idempotency key: 1-255 printable ASCII characters, no space at either end
and no control character: the payment lab's rule for a key (Stripe bounds keys to 255),
a comma allowed, as no header carries it. The OpenAPI document carries this pattern."""
_NAME = re.compile(NAME_PATTERN)

EXAMPLE: Mapping[str, Any] = {
    "id": "send-invoice-42",
    "idempotency_key": "invoice:42:email",
    "payload": {"invoice_id": 42},
}
"""The article's job: the producer button enqueues it."""


@dataclass(frozen=True)
class Job:
    """One job: a stable ``id``, the ``idempotency_key`` of its side effect, and its
    ``payload`` (a JSON object, stored as canonical JSON text so it is hashable)."""

    id: str
    idempotency_key: str
    payload_json: str

    @property
    def payload(self) -> dict[str, Any]:
        """The payload as a dict."""
        value: dict[str, Any] = json.loads(self.payload_json)
        return value

    def as_dict(self) -> dict[str, Any]:
        """The job as the API spells it."""
        return {"id": self.id, "idempotency_key": self.idempotency_key, "payload": self.payload}


def parse_job(body: object) -> Job:
    """Check a job sent by the producer and return it.

    :param body: the decoded JSON body: an object with ``id`` and ``idempotency_key``
        (strings of 1-255 printable ASCII characters, :data:`NAME_PATTERN`) and
        ``payload`` (a JSON object of at most 2,048 bytes as canonical JSON, whole numbers
        written as integers: ``42``, not ``42.0``; every number finite: ``1e400`` is out
        of range). No other member.
    :raises Problem: 422 ``invalid-job`` naming every bad member; nothing is enqueued.
    """
    if not isinstance(body, Mapping):
        raise _invalid({"body": N_("must be a JSON object with id and idempotency_key")})
    errors: dict[str, str | Text] = {}
    for name in body:
        if name not in ("id", "idempotency_key", "payload"):
            errors[str(name)] = N_("unknown member")
    for name in ("id", "idempotency_key"):
        value = body.get(name)
        if not isinstance(value, str) or _NAME.fullmatch(value) is None:
            errors[name] = N_(
                "must be 1-255 printable ASCII characters, with no space at either end"
            )
    payload = body.get("payload")
    payload_json = ""
    if "payload" not in body:
        errors["payload"] = N_('is required (a JSON object, e.g. {"invoice_id": 42})')
    elif not isinstance(payload, Mapping):
        errors["payload"] = N_("must be a JSON object")
    elif _non_finite(payload):
        # 1e400 parses as infinity: no JSON text can carry it back, so say what is wrong.
        errors["payload"] = N_("holds a number out of range (past about 1.8e308)")
    elif _integral_float(payload):
        # 42 and 42.0 would be two payloads for one job: one rule, as for every number.
        errors["payload"] = N_("must write whole numbers as JSON integers (42, not 42.0)")
    else:
        try:
            payload_json = canonical_json(payload).decode()
        except (TypeError, ValueError):
            errors["payload"] = N_("must be a JSON object")
        else:
            if len(payload_json.encode()) > MAX_PAYLOAD_BYTES:
                errors["payload"] = Text(
                    "must be at most %(limit)s bytes of JSON", limit=MAX_PAYLOAD_BYTES
                )
    if errors:
        raise _invalid(errors)
    return Job(str(body["id"]), str(body["idempotency_key"]), payload_json)


def _non_finite(value: object) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, Mapping):
        return any(_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_non_finite(v) for v in value)
    return False


def _integral_float(value: object) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, Mapping):
        return any(_integral_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_integral_float(v) for v in value)
    return False


def _invalid(errors: dict[str, str | Text]) -> Problem:
    reasons = Reasons(errors)
    return Problem(
        422,
        "invalid-job",
        N_("Invalid job"),
        Text("Fix the job: %(fields)s.", fields=reasons),
        errors=reasons.english(),
    )
