"""The operations lab's part of the OpenAPI document: its paths under
``/lab/{lab_id}/natural`` and their schemas, built from the rules that check its requests
(:mod:`demo.natural.operations`, :mod:`demo.natural.conditional`, :mod:`demo.natural.pixel`).

Self-contained (it only names the document's shared responses by ``$ref``), so
:mod:`demo.web.openapi_schemas` can add it to the document without an import cycle.
"""

from __future__ import annotations

from typing import Any

from ..lessons.natural import CHAPTER
from ..natural.operations import KEY_PATTERN, MAX_TIMES, OPERATIONS, START
from ..natural.pixel import MAX_WINDOW_S, POST_PATTERN
from ..registry import LAB_ID as LAB_ID_RULE

PROBLEM = {"$ref": "#/components/responses/Problem"}
LAB_ID = {
    "name": "lab_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": f"^{LAB_ID_RULE.pattern}(?!\\n)$"},
    "description": "The lab: 1-64 characters of letters, digits, '-' and '_'.",
}
INTEGER = "A JSON integer: 24.0 is refused with 422."
PARTS = ["operations", "lost_update", "pixel", "article", "timeline", "lesson", "path"]


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _lab(summary: str, responses: dict[str, Any], **more: Any) -> dict[str, Any]:
    every = {"404": PROBLEM, "503": {"$ref": "#/components/responses/LabsFull"}}
    return {"summary": summary, **more, "responses": {**responses, **every}}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _html(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


def _body(name: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": _ref(name)}}}


BAD_BODY = {code: PROBLEM for code in ("400", "413", "415", "422")}


def paths() -> dict[str, Any]:
    """The operations lab's paths."""
    base = "/lab/{lab_id}/natural"
    return {
        base: {"parameters": [LAB_ID],
               "get": _lab("The operations lab's page; a link's change is only offered",
                           {"200": _html("The page"),
                            "303": {"description": "A link without lab=natural, sent on"},
                            "422": PROBLEM},
                           parameters=_links())},
        f"{base}/_partials/{{part}}": {
            "parameters": [LAB_ID, {"name": "part", "in": "path", "required": True,
                                    "schema": {"enum": PARTS}}],
            "get": _lab("One fragment of the page (what htmx swaps)",
                        {"200": _html("HTML"), "204": {"description": "Not changed since"}},
                        parameters=[{"name": "since", "in": "query", "schema": {"type": "string"},
                                     "description": "The lab's version the page shows: 204 "
                                                    "while it is current (the page's poll)"}]),
        },
        **_lesson_paths(base),
        f"{base}/api/apply": {"parameters": [LAB_ID], "post": _lab(
            "Apply an operation once, then retry it times - 1 times, from the fixed start",
            {"200": _json(_ref("NaturalRun"), "Every attempt, the final state, the verdict"),
             **BAD_BODY},
            requestBody=_body("NaturalApplyRequest"),
        )},
        f"{base}/api/delayed-duplicate": {"parameters": [LAB_ID], "post": _lab(
            "A sets 100, B sets 50, A's retry arrives late: a lost update, or 412 with If-Match",
            {"200": _json(_ref("NaturalDelayed"), "The three writes"), **BAD_BODY},
            requestBody=_body("NaturalDelayedRequest"),
        )},
        f"{base}/api/state": {"parameters": [LAB_ID], "get": _lab(
            "Views per post, the settings, the scenario and the request log",
            {"200": _json(_ref("NaturalState"), "The operations lab's state")},
        )},
        f"{base}/api/settings": {"parameters": [LAB_ID], "patch": _lab(
            "Set the pixel's dedup window",
            {"200": _json(_ref("NaturalSettings"), "The settings"), **BAD_BODY},
            requestBody=_body("NaturalSettings"),
        )},
        f"{base}/pixel.gif": {"parameters": [LAB_ID], "get": _lab(
            "The tracking pixel: counts a view (this GET changes state, on purpose)",
            {"200": {
                "description": "A 1×1 GIF; a new viewer gets the `natural_viewer` cookie",
                "headers": {"Cache-Control": {"required": True, "schema": {"enum": ["no-store"]}}},
                "content": {"image/gif": {"schema": {"type": "string"}}},
            }, "409": PROBLEM, "422": PROBLEM},
            parameters=[{"name": "post", "in": "query", "required": True,
                         "schema": {"type": "string", "pattern": POST_PATTERN},
                         "description": "The post whose view is counted: one positive "
                                        "integer, no leading zero (1-9 digits)"}],
        )},
    }  # fmt: skip


def _lesson_paths(base: str) -> dict[str, Any]:
    """The lesson card's posts: a hint, and a reset."""
    return {
        f"{base}/lessons/{{name}}/hint": {
            "parameters": [LAB_ID, {"name": "name", "in": "path", "required": True,
                                    "schema": {"enum": [lesson.name for lesson in CHAPTER]}}],
            "post": _lab("Reveal the lesson's next hint: the card (htmx), else 303 to the page",
                         {"200": _html("The lesson card (htmx)"),
                          "303": {"description": "To the page"}, "409": PROBLEM}),
        },
        f"{base}/lessons/{{name}}/reset": {
            "parameters": [LAB_ID, {"name": "name", "in": "path", "required": True,
                                    "schema": {"enum": [lesson.name for lesson in CHAPTER]}}],
            "post": _lab("Forget this lesson's progress and open it afresh; 303 to the page",
                         {"303": {"description": "To the page"}, "409": PROBLEM}),
        },
    }  # fmt: skip


def _links() -> list[dict[str, Any]]:
    """The page's link parameters: each only offers its change, which a POST makes."""
    flag = {"enum": ["0", "1"]}

    def query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
        return {"name": name, "in": "query", "schema": schema, "description": description}

    return [
        query("scenario", {"enum": [lesson.name for lesson in CHAPTER] + ["none"]},
              "Offers this scenario"),
        query("lab", {"enum": ["natural"]}, "The lab a link's scenario belongs to"),
        query("fixed", flag, "With `scenario`: offers it with its fix on (`1`)."),
        query("lesson", {"type": "string"}, "Offers this lesson of the path"),
        query("present", flag,
              "Offers presenter mode on (`1`) or off (`0`); another value is 422."),
    ]  # fmt: skip


def _state() -> dict[str, Any]:
    """The account's state, from :data:`~demo.natural.operations.START`."""

    def kind(value: object) -> str:
        if isinstance(value, bool):
            return "boolean"
        if isinstance(value, int):
            return "integer"
        return "array" if isinstance(value, list) else "object"

    return {
        "type": "object",
        "required": ["balance", "invoices"],
        "properties": {name: {"type": kind(value)} for name, value in START.items()},
    }


WINDOW = {"type": "integer", "minimum": 0, "maximum": MAX_WINDOW_S,
          "description": f"Seconds (0: count every GET). {INTEGER}"}  # fmt: skip


def _requests() -> dict[str, Any]:
    """The request bodies."""
    return {
        "NaturalApplyRequest": {
            "type": "object",
            "required": ["operation"],
            "additionalProperties": False,
            "properties": {
                "operation": {"enum": list(OPERATIONS)},
                "times": {"type": "integer", "minimum": 1, "maximum": MAX_TIMES, "default": 3,
                          "description": f"Attempts: the first, then retries. {INTEGER}"},
                "dedup": {"type": "boolean", "default": False},
                "key": {"type": "string", "pattern": KEY_PATTERN,
                        "description": "The dedup record's key (default `<operation>:1`)"},
            },
        },
        "NaturalDelayedRequest": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"conditional": {"type": "boolean", "default": False}},
        },
        "NaturalSettings": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"pixel_dedup_window_s": WINDOW},
        },
    }  # fmt: skip


def _answers() -> dict[str, Any]:
    """The answers' bodies."""
    state = _state()
    attempt = {
        "type": "object",
        "required": ["n", "status", "state", "replayed"],
        "properties": {
            "n": {"type": "integer"},
            "status": {"type": "integer"},
            "state": state,
            "replayed": {"type": "boolean"},
        },
    }
    write = {
        "type": "object",
        "required": ["client", "balance", "status"],
        "properties": {
            "client": {"enum": ["A", "B"]},
            "balance": {"type": "integer"},
            "status": {"enum": [200, 412]},
        },
    }
    return {
        "NaturalRun": {
            "type": "object",
            "required": ["attempts", "final_state", "natural"],
            "properties": {"attempts": {"type": "array", "items": attempt}, "final_state": state,
                           "natural": {"type": "boolean"}, "same_state": {"type": "boolean"},
                           "same_response": {"type": "boolean"}},
        },
        "NaturalDelayed": {
            "type": "object",
            "required": ["writes", "final_balance"],
            "properties": {"writes": {"type": "array", "items": write, "minItems": 3,
                                      "maxItems": 3},
                           "final_balance": {"enum": [50, 100]}},
        },
        "NaturalState": {
            "type": "object",
            "required": ["views", "settings"],
            "properties": {
                "views": {"type": "object", "additionalProperties": {"type": "integer"}},
                "settings": {"type": "object", "required": ["pixel_dedup_window_s"],
                             "properties": {"pixel_dedup_window_s": WINDOW}},
                "scenario": {"type": ["string", "null"]},
                "fixed": {"type": "boolean"},
                "requests": {"type": "array"},
            },
        },
    }  # fmt: skip


def schemas() -> dict[str, Any]:
    """The operations lab's schemas (``components.schemas``)."""
    return {**_requests(), **_answers()}
