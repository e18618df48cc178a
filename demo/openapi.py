"""The OpenAPI 3.1 document of the lab's HTTP API, served at ``/openapi.json``.

Built from the same constants the code validates with (settings' choices and ranges,
the key and amount limits, the problem types), so the document cannot drift from them
silently; a test checks it against the app's real routes.
"""

from __future__ import annotations

import functools
from typing import Any

from .charges import MAX_AMOUNT, MAX_KEY_LENGTH
from .lab import CHOICES, MAX_ADVANCE_S, RANGES, Settings

PROBLEM = {"$ref": "#/components/responses/Problem"}
LESSON = {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
TOKEN = {
    "name": "token",
    "in": "query",
    "required": True,
    "schema": {"type": "string"},
    "description": "The instructor token the server printed at start-up",
}
LAB_ID = {
    "name": "lab_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
    "description": "The lab: 1-64 characters of letters, digits, '-' and '_'.",
}


def _json(ref: str) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}}


def _html(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


def _settings_schema() -> dict[str, Any]:
    defaults = Settings()
    properties: dict[str, Any] = {}
    for name, default in defaults.as_dict().items():
        if isinstance(default, bool):
            properties[name] = {"type": "boolean"}
        elif name in RANGES:
            low, high = RANGES[name]
            properties[name] = {"type": "integer", "minimum": low, "maximum": high}
        else:
            properties[name] = {"enum": list(CHOICES[name])}
        properties[name]["default"] = default
    return {"type": "object", "additionalProperties": False, "properties": properties}


@functools.cache
def document() -> dict[str, Any]:
    """The OpenAPI 3.1 document as a dict (built once)."""
    doc = _document()
    for item in doc["paths"].values():
        for method, operation in item.items():
            if method != "parameters":
                operation["responses"].setdefault("405", PROBLEM)  # any other method
            if method not in ("parameters", "get"):
                operation["responses"].setdefault("403", PROBLEM)  # a cross-site request
    return doc


LINK_PARAMETERS = [
    {"name": "scenario", "in": "query", "schema": {"type": "string"}},
    {"name": "fixed", "in": "query", "schema": {"enum": ["0", "1"]}},
    {"name": "run", "in": "query", "schema": {"enum": ["0", "1"]}},
    {"name": "lesson", "in": "query", "schema": {"type": "string"}},
    {"name": "present", "in": "query", "schema": {"enum": ["0", "1"]}},
]
"""The query of a shareable lab link (see ``demo.web.pages.lab_page``)."""


def _document() -> dict[str, Any]:
    settings = _settings_schema()
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "idempotency-demo",
            "version": "0.1.0",
            "description": "An interactive lab that teaches idempotency keys. Every error is "
            "application/problem+json (RFC 9457).",
        },
        "paths": {
            "/": {
                "get": {
                    "summary": "Redirect to a fresh lab with an unguessable id",
                    "responses": {"303": {"description": "See Other: the new lab's page"}},
                }
            },
            "/openapi.json": {
                "get": {
                    "summary": "This document",
                    "responses": {
                        "200": {
                            "description": "OpenAPI 3.1",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        }
                    },
                }
            },
            "/lab/{lab_id}": {
                "parameters": [LAB_ID],
                "get": {
                    "summary": "The lab page (blank for a lab not yet written to). A link's "
                    "?scenario=, ?lesson= or ?present= changes nothing: the page offers it "
                    "with one button, a POST of the same address",
                    "parameters": LINK_PARAMETERS,
                    "responses": {"200": _html("The lab page"), "404": PROBLEM, "409": PROBLEM},
                },
                "post": {
                    "summary": "Apply a link: ?present=1/0, ?lesson=<name>, or "
                    "?scenario=<name> (fixed=1 with its fix, none to leave it); query "
                    "arguments or form fields",
                    "parameters": LINK_PARAMETERS,
                    "responses": {
                        "303": {"description": "Applied; see the plain lab address (run=1 kept)"},
                        "404": PROBLEM,
                        "409": PROBLEM,
                        "503": PROBLEM,
                    },
                },
            },
            "/lab/{lab_id}/panels": {
                "parameters": [LAB_ID],
                "get": {
                    "summary": "The panels fragment the page polls",
                    "parameters": [
                        {"name": "since", "in": "query", "schema": {"type": "string"}},
                        {"name": "settings_version", "in": "query", "schema": {"type": "string"}},
                    ],
                    "responses": {
                        "200": _html("The panels"),
                        "204": {"description": "Nothing changed since `since`"},
                        "404": PROBLEM,
                        "503": PROBLEM,
                    },
                },
            },
            "/lab/{lab_id}/sequence.svg": {
                "parameters": [LAB_ID],
                "get": {
                    "summary": "The sequence diagram of the last requests (SVG)",
                    "parameters": [{"name": "download", "in": "query", "schema": {"enum": ["1"]}}],
                    "responses": {
                        "200": {
                            "description": "SVG",
                            "content": {"image/svg+xml": {"schema": {"type": "string"}}},
                        },
                        "404": PROBLEM,
                        "503": PROBLEM,
                    },
                },
            },
            "/lab/{lab_id}/language": {
                "parameters": [LAB_ID],
                "post": {
                    "summary": "Switch the lab's language (form field language: en or vi)",
                    "requestBody": {
                        "content": {
                            "application/x-www-form-urlencoded": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"language": {"enum": ["en", "vi"]}},
                                }
                            }
                        }
                    },
                    "responses": {
                        "303": {"description": "Back to the lab page, in that language"},
                        "404": PROBLEM,
                        "422": PROBLEM,
                        "503": PROBLEM,
                    },
                },
            },
            "/lab/{lab_id}/lessons/{name}/hint": {
                "parameters": [LAB_ID, LESSON],
                "post": {
                    "summary": "Reveal the lesson's next hint",
                    "responses": {
                        "200": _html("The panels (htmx)"),
                        "303": {"description": "Back to the lab page"},
                        "404": PROBLEM,
                        "503": PROBLEM,
                    },
                },
            },
            "/lab/{lab_id}/lessons/{name}/reset": {
                "parameters": [LAB_ID, LESSON],
                "post": {
                    "summary": "Forget this lesson's progress (the others keep theirs)",
                    "responses": {
                        "303": {"description": "Back to the lab page"},
                        "404": PROBLEM,
                        "409": PROBLEM,
                        "503": PROBLEM,
                    },
                },
            },
            "/lab/{lab_id}/history.json": {
                "parameters": [LAB_ID],
                "get": {
                    "summary": "The lab's history as JSON: settings, requests with steps, charges",
                    "responses": {
                        "200": {
                            "description": "A history, to open again with POST /replay",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        },
                        "404": PROBLEM,
                        "503": PROBLEM,
                    },
                },
            },
            "/replay": {
                "post": {
                    "summary": "Open an exported history as a new, read-only replay lab",
                    "requestBody": {
                        "content": {
                            "multipart/form-data": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"history": {"type": "string"}},
                                }
                            },
                            "application/json": {"schema": {"type": "object"}},
                        }
                    },
                    "responses": {
                        "303": {"description": "To the replay lab"},
                        "400": PROBLEM,
                        "413": PROBLEM,
                        "422": PROBLEM,
                        "503": PROBLEM,
                    },
                },
            },
            "/instructor": {
                "get": {
                    "summary": "The instructor's live, anonymous view of the room",
                    "parameters": [TOKEN],
                    "responses": {"200": _html("The instructor view"), "403": PROBLEM},
                },
            },
            "/instructor/stats": {
                "get": {
                    "summary": "The instructor view's numbers, for polling",
                    "parameters": [TOKEN],
                    "responses": {"200": _html("The numbers"), "403": PROBLEM},
                },
            },
            "/lab/{lab_id}/new-order": {
                "parameters": [LAB_ID],
                "post": {
                    "summary": "The order form for a new intent (a new order id, so a new key)",
                    "responses": {"200": _html("The order form"), "404": PROBLEM, "503": PROBLEM},
                },
            },
            "/lab/{lab_id}/api/charges": {
                "parameters": [LAB_ID],
                "post": {
                    "summary": "Charge once per Idempotency-Key",
                    "description": "Same key and body: the stored response, byte-identical, with "
                    "Idempotent-Replayed: true. Same key, other body: 409 (422 or 400 under the "
                    "ietf and stripe profiles). No key: unprotected, every call charges.",
                    "parameters": [
                        {
                            "name": "Idempotency-Key",
                            "in": "header",
                            "schema": {
                                "type": "string",
                                "minLength": 1,
                                "maxLength": MAX_KEY_LENGTH + 2,
                            },
                            "description": f"1-{MAX_KEY_LENGTH} printable ASCII characters; a "
                            'quoted structured-field string ("abc") names the same key as abc.',
                        }
                    ],
                    "requestBody": {"required": True, "content": _json("ChargeRequest")},
                    "responses": {
                        "201": {
                            "description": "Charged, or a replay of the stored charge",
                            "headers": {
                                "Idempotent-Replayed": {"schema": {"enum": ["true"]}},
                            },
                            "content": _json("Charge"),
                        },
                        **{
                            code: PROBLEM
                            for code in (
                                "400",
                                "402",
                                "404",
                                "409",
                                "413",
                                "415",
                                "422",
                                "502",
                                "503",
                            )
                        },
                    },
                },
            },
            "/lab/{lab_id}/api/state": {
                "parameters": [LAB_ID],
                "get": {
                    "summary": "Settings, charges, e-mails, records and the request log",
                    "responses": {
                        "200": {"description": "The lab's state", "content": _json("State")},
                        "404": PROBLEM,
                        "503": PROBLEM,
                    },
                },
            },
            "/lab/{lab_id}/api/settings": {
                "parameters": [LAB_ID],
                "patch": {
                    "summary": "Change settings",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {"schema": {**settings, "minProperties": 1}}
                        },
                    },
                    "responses": {
                        "200": {"description": "The settings", "content": _json("Settings")},
                        **{code: PROBLEM for code in ("400", "404", "413", "415", "422", "503")},
                    },
                },
            },
            "/lab/{lab_id}/api/clock": {
                "parameters": [LAB_ID],
                "post": {
                    "summary": "Move the lab's virtual clock forward",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "additionalProperties": False,
                                    "required": ["advance_s"],
                                    "properties": {
                                        "advance_s": {
                                            "type": "integer",
                                            "minimum": 1,
                                            "maximum": MAX_ADVANCE_S,
                                        }
                                    },
                                }
                            }
                        },
                    },
                    "responses": {
                        "200": {
                            "description": "The clock's offset",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": ["offset_s", "now"],
                                        "properties": {
                                            "offset_s": {"type": "number"},
                                            "now": {"type": "number"},
                                        },
                                    }
                                }
                            },
                        },
                        **{code: PROBLEM for code in ("400", "404", "413", "415", "422", "503")},
                    },
                },
            },
            "/lab/{lab_id}/api/step": {
                "parameters": [LAB_ID],
                "post": {
                    "summary": "Step mode: step a paused request, or run it (or all) to the end",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "oneOf": [
                                        {
                                            "type": "object",
                                            "additionalProperties": False,
                                            "required": ["request"],
                                            "properties": {
                                                "request": {"type": "integer"},
                                                "to_end": {"type": "boolean"},
                                            },
                                        },
                                        {
                                            "type": "object",
                                            "additionalProperties": False,
                                            "required": ["release_all"],
                                            "properties": {"release_all": {"const": True}},
                                        },
                                    ]
                                }
                            }
                        },
                    },
                    "responses": {
                        "200": {
                            "description": "The requests still paused",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": ["paused"],
                                        "properties": {"paused": {"type": "array"}},
                                    }
                                }
                            },
                        },
                        **{
                            code: PROBLEM
                            for code in ("400", "404", "409", "413", "415", "422", "503")
                        },
                    },
                },
            },
            "/lab/{lab_id}/api/reset": {
                "parameters": [LAB_ID],
                "post": {
                    "summary": "Empty the store, ledger, mailbox and log; keep the settings",
                    "responses": {
                        "200": {"description": "The lab's state", "content": _json("State")},
                        "404": PROBLEM,
                        "503": PROBLEM,
                    },
                },
            },
        },
        "components": {
            "responses": {
                "Problem": {
                    "description": "A problem (RFC 9457)",
                    "content": {
                        "application/problem+json": {
                            "schema": {"$ref": "#/components/schemas/Problem"}
                        }
                    },
                }
            },
            "schemas": {
                "Problem": {
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
                },
                "ChargeRequest": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["order_id", "amount"],
                    "properties": {
                        "order_id": {"type": "string", "minLength": 1, "maxLength": 64},
                        "amount": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": MAX_AMOUNT,
                            "description": "Minor currency units; 100000.0 is refused (422)",
                        },
                        "currency": {"type": "string", "pattern": "^[A-Z]{3}$", "default": "VND"},
                    },
                },
                "Charge": {
                    "type": "object",
                    "required": [
                        "id",
                        "object",
                        "order_id",
                        "amount",
                        "currency",
                        "status",
                        "created",
                    ],
                    "properties": {
                        "id": {"type": "string", "pattern": "^ch_[0-9]+$"},
                        "object": {"const": "charge"},
                        "order_id": {"type": "string"},
                        "amount": {"type": "integer"},
                        "currency": {"type": "string"},
                        "status": {"const": "succeeded"},
                        "created": {"type": "integer", "description": "Unix time, s"},
                    },
                },
                "Settings": settings,
                "State": {
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
                    ],  # fmt: skip
                    "properties": {
                        "lab": {"type": "string"},
                        "settings": {"$ref": "#/components/schemas/Settings"},
                        "clock": {
                            "type": "object",
                            "properties": {
                                "now": {"type": "number"},
                                "offset_s": {"type": "number"},
                            },
                        },
                        "charges": {"type": "array", "items": {"type": "object"}},
                        "summary": {
                            "type": "object",
                            "required": ["charged", "intended", "emails"],
                            "properties": {
                                "charged": {"type": "integer"},
                                "intended": {"type": "integer"},
                                "emails": {"type": "integer"},
                            },
                        },
                        "emails": {"type": "array", "items": {"type": "object"}},
                        "records": {"type": "array", "items": {"type": "object"}},
                        "requests": {"type": "array", "items": {"type": "object"}},
                        "paused": {"type": "array", "items": {"type": "object"}},
                    },
                },
            },
        },
    }
