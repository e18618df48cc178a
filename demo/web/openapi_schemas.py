"""The JSON Schemas of the OpenAPI document, built from the objects that check requests.

The charge body comes from :class:`~demo.payments.charges.ChargeRequest` and the patterns
and limits of :mod:`demo.payments.charges`, the settings from
:class:`~demo.payments.settings.Settings` (its fields, defaults, ``CHOICES``, ``RANGES`` and
the docstring's ``:param:`` lines), lesson and scenario names from
:data:`~demo.lessons.PATH` and :data:`~demo.payments.scenarios.SCENARIOS`. A
rule changed there changes the document; ``tests/test_openapi.py`` and
``tests/test_charges.py`` check that the patterns and the parsers agree.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from .. import history
from ..engine.clock import MAX_ADVANCE_S
from ..lessons import PATH
from ..payments.charges import (
    ALLOWED_FIELDS,
    BLANK_QUOTED_KEY_PATTERN,
    CURRENCY_PATTERN,
    KEY_FIELD_PATTERN,
    MAX_AMOUNT,
    MAX_KEY_FIELD_LENGTH,
    MAX_KEY_LENGTH,
    MAX_ORDER_ID_LENGTH,
    ORDER_ID_PATTERN,
    ChargeRequest,
)
from ..payments.scenarios import SCENARIOS
from ..payments.settings import CHOICES, RANGES, Settings
from . import (
    openapi_natural,
    openapi_queue,
    openapi_queue_page,
    openapi_retries,
    openapi_retries_page,
)

INTEGER_RULE = (
    "A JSON integer: a number written with a fraction or an exponent (24.0, 2.4e1) is "
    "refused with 422, the number rule of `amount`. JSON Schema counts 24.0 as an integer, "
    "so only this sentence can say it."
)

LESSON_NAMES = [lesson.name for lesson in PATH]
SCENARIO_NAMES = list(SCENARIOS)


def ref(name: str) -> dict[str, str]:
    """A ``$ref`` to ``#/components/schemas/<name>``."""
    return {"$ref": f"#/components/schemas/{name}"}


def key_header() -> dict[str, Any]:
    """The ``Idempotency-Key`` header: :func:`~demo.payments.charges.parse_idempotency_key`."""
    return {
        "name": "Idempotency-Key",
        "in": "header",
        "schema": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_KEY_FIELD_LENGTH,
            "pattern": KEY_FIELD_PATTERN,
            "not": {"pattern": BLANK_QUOTED_KEY_PATTERN},
        },
        "description": (
            f"1-{MAX_KEY_LENGTH} printable ASCII characters, sent bare (`abc`, Stripe) or as "
            'one structured-field string (`"abc"`, IETF draft, RFC 8941 §3.3.3): both name '
            "the key `abc`. Spaces and tabs around the value are no part of it (RFC 9110 "
            '§5.5): `abc   ` and `"abc" ` are `abc`; inside quotes spaces count. No comma, '
            "quoted or not: a server joins repeated header lines with commas, so every "
            "repeated Idempotency-Key header is refused with 400. A key of spaces only is "
            f"refused. The value is at most {MAX_KEY_FIELD_LENGTH} characters: "
            f'a quoted key of {MAX_KEY_LENGTH} characters that are all `"` or `\\`, each '
            f"escaped as two, plus the two quotes ({MAX_KEY_LENGTH} × 2 + 2)."
        ),
    }


def charge_request() -> dict[str, Any]:
    """The charge body: the rules of :func:`demo.payments.charges.parse_charge`."""
    properties: dict[str, dict[str, Any]] = {
        "order_id": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_ORDER_ID_LENGTH,
            "pattern": ORDER_ID_PATTERN,
            "description": "Printable (no control, format or separator "
            "characters but the space), without a space at either end. Compared exactly, "
            "with no Unicode normalisation: `Café` in NFC and in NFD are two orders, and two "
            "bodies (409 under one key).",
        },
        "amount": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_AMOUNT,
            "description": f"Minor currency units. {INTEGER_RULE}",
        },
        "currency": {"type": "string", "pattern": f"^{CURRENCY_PATTERN}$"},
    }
    assert tuple(properties) == ALLOWED_FIELDS  # one list of fields, in charges.py
    required = []
    for field in dataclasses.fields(ChargeRequest):
        if field.default is dataclasses.MISSING:
            required.append(field.name)
        else:
            properties[field.name]["default"] = field.default
    return {
        "type": "object",
        "additionalProperties": False,
        "required": required,
        "properties": properties,
    }


def settings() -> dict[str, Any]:
    """The settings object: the rules and defaults of
    :meth:`~demo.payments.settings.Settings.patched`."""
    docs = _param_docs(Settings.__doc__ or "")
    properties: dict[str, Any] = {}
    for name, default in Settings().as_dict().items():
        if isinstance(default, bool):
            schema: dict[str, Any] = {"type": "boolean"}
        elif name in RANGES:
            low, high = RANGES[name]
            schema = {"type": "integer", "minimum": low, "maximum": high}
            docs[name] = f"{docs.get(name, '')} {INTEGER_RULE}".strip()
        else:
            schema = {"enum": list(CHOICES[name])}
        properties[name] = {**schema, "default": default, "description": docs.get(name, "")}
    return {"type": "object", "additionalProperties": False, "properties": properties}


def _param_docs(docstring: str) -> dict[str, str]:
    """``:param name: text`` lines of a docstring, as ``{name: text}`` on one line each."""
    found = re.findall(r":param (\w+): (.*?)(?=\n\s*:param |\Z)", docstring, re.S)
    docs = {}
    for name, text in found:
        text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text)  # Sphinx roles, e.g. :meth:`Lab.step`
        docs[name] = re.sub(r"``|\s+", lambda m: "`" if m[0] == "``" else " ", text).strip()
    return docs


def clock_request() -> dict[str, Any]:
    """``POST .../api/clock``'s body: :meth:`demo.workspace.Workspace.advance`'s rule."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["advance_s"],
        "properties": {
            "advance_s": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_ADVANCE_S,
                "description": f"Seconds. {INTEGER_RULE}",
            }
        },
    }


def step_request() -> dict[str, Any]:
    """``POST .../api/step``'s body: one request stepped or run to its end, or all."""
    return {
        "oneOf": [
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["request"],
                "properties": {"request": {"type": "integer"}, "to_end": {"type": "boolean"}},
            },
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["release_all"],
                "properties": {"release_all": {"const": True}},
            },
        ]
    }


def history_outline() -> dict[str, Any]:
    """A lab history, as ``GET /lab/{lab_id}/history.json`` writes it (outline only)."""
    return {
        "type": "object",
        "required": ["format", "version"],
        "properties": {
            "format": {"const": history.FORMAT},
            "version": {"const": history.VERSION},
            "settings": ref("Settings"),
            "scenario": {"description": "The scenario it showed; not read back"},
            "fixed": {"description": "Whether its fix was on; not read back"},
            "clock_offset_s": {"type": "number", "minimum": 0},
            "requests": {"type": "array", "items": {"type": "object"}},
            "charges": {"type": "array", "items": {"type": "object"}},
            "emails": {"type": "array", "items": {"type": "object"}},
        },
        "description": "What GET /lab/{lab_id}/history.json wrote, at most "
        f"{history.MAX_BYTES} bytes (1 MiB). Checked member by member, and as a whole (each "
        "request's steps, outcome and charge must agree), which this outline cannot say: a "
        "document that only fits the outline gets 422 naming what is wrong.",
    }


def problem() -> dict[str, Any]:
    """An RFC 9457 problem, as :meth:`demo.engine.problems.Problem.to_dict` writes it."""
    return {
        "type": "object",
        "required": ["type", "title", "status", "detail"],
        "properties": {
            "type": {"type": "string"},
            "title": {"type": "string"},
            "status": {"type": "integer", "minimum": 400, "maximum": 599},
            "detail": {"type": "string"},
            "errors": {"type": "object", "additionalProperties": {"type": "string"}},
            "code": {"type": "string"},
        },
    }


def charge() -> dict[str, Any]:
    """A charge, as the 201 answer carries it."""
    names = ["id", "object", "order_id", "amount", "currency", "status", "created"]
    return {
        "type": "object",
        "required": names,
        "properties": {
            "id": {"type": "string", "pattern": "^ch_[0-9]+$"},
            "object": {"const": "charge"},
            "order_id": {"type": "string"},
            "amount": {"type": "integer"},
            "currency": {"type": "string"},
            "status": {"const": "succeeded"},
            "created": {"type": "integer", "description": "Unix time, s"},
        },
    }


def state() -> dict[str, Any]:
    """``GET .../api/state``: everything the lab holds."""
    objects = {"type": "array", "items": {"type": "object"}}
    counts = ["charged", "intended", "emails"]
    return {
        "type": "object",
        "required": [
            "lab",
            "settings",
            "clock",
            "charges",
            "summary",
            "emails",
            "records",
            "requests",
            "paused",
        ],
        "properties": {
            "lab": {"type": "string"},
            "settings": ref("Settings"),
            "clock": {
                "type": "object",
                "properties": {"now": {"type": "number"}, "offset_s": {"type": "number"}},
            },
            "charges": objects,
            "summary": {
                "type": "object",
                "required": counts,
                "properties": {name: {"type": "integer"} for name in counts},
            },
            "emails": objects,
            "records": objects,
            "requests": objects,
            "paused": objects,
        },
    }


def schemas() -> dict[str, Any]:
    """``components.schemas``."""
    return {
        "Problem": problem(),
        "ChargeRequest": charge_request(),
        "Charge": charge(),
        "Settings": settings(),
        "State": state(),
        "ClockRequest": clock_request(),
        "StepRequest": step_request(),
        "History": history_outline(),
        **openapi_queue.schemas(),
        **openapi_retries.schemas(),
        **openapi_natural.schemas(),
    }


def with_labs(*parts: dict[str, Any]) -> dict[str, Any]:
    """The document's ``paths``: ``parts`` (the shell's and the payment lab's), then the
    paths of the labs beside the payment lab, each from its own module."""
    merged: dict[str, Any] = {}
    labs = (
        openapi_retries.paths(),
        openapi_retries_page.paths(),
        openapi_queue.paths(),
        openapi_queue_page.paths(),
        openapi_natural.paths(),
    )
    for part in (*parts, *labs):
        merged.update(part)
    return merged
