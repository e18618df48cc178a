"""The OpenAPI 3.1 document of the lab's HTTP API, served at ``/openapi.json``.

The schemas come from the objects that check requests (:mod:`demo.web.openapi_schemas`), so
the document cannot drift from them silently; ``tests/test_openapi.py`` checks it against
the app's real routes and runs schemathesis against it."""

from __future__ import annotations

import functools
from typing import Any

from ..registry import LAB_ID as LAB_ID_RULE
from . import openapi_schemas as schemas

PROBLEM = {"$ref": "#/components/responses/Problem"}
REPLAYED = {
    "description": "`true` on a replay of the stored response (Stripe's header)",
    "schema": {"enum": ["true"]},
}
RETRY_AFTER = {
    "description": "Seconds to wait before trying again (RFC 9110 §10.2.3)",
    "schema": {"type": "string", "pattern": "^[0-9]+$"},
}
LAB_ID = {
    "name": "lab_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": f"^{LAB_ID_RULE.pattern}(?!\\n)$"},
    "description": "The lab: 1-64 characters of letters, digits, '-' and '_'.",
}
LESSON = {
    "name": "name",
    "in": "path",
    "required": True,
    "schema": {"enum": schemas.LESSON_NAMES},
    "description": "A lesson of the path; another name is 404.",
}
TOKEN = {
    "name": "token",
    "in": "query",
    "required": True,
    "schema": {"type": "string"},
    "description": "The instructor token the server printed at start-up (else 403)",
}
DESCRIPTION = (
    "An interactive lab that teaches idempotency keys. Every error is "
    "application/problem+json (RFC 9457); a 405 lists the allowed methods in `Allow` "
    "(RFC 9110 §15.5.6). Header values are read without the spaces and tabs around them "
    "(RFC 9110 §5.5). Order ids are compared exactly, with no Unicode normalisation: "
    "`Café` in NFC and in NFD are two orders, so one key with both answers 409. Integers "
    "are JSON integers: 24.0 is refused with 422 wherever an integer is expected."
)


@functools.cache
def document(languages: tuple[str, ...]) -> dict[str, Any]:
    """The OpenAPI 3.1 document as a dict (built once per list of ``languages``, the codes
    ``POST /lab/{lab_id}/language`` accepts)."""
    paths = schemas.with_labs(_pages(), _forms(languages), _workshop(), _room(), _api())
    for item in paths.values():
        for method, operation in item.items():
            if method != "parameters":
                operation["responses"].setdefault("405", _ref("MethodNotAllowed"))
            if method not in ("parameters", "get"):
                operation["responses"].setdefault("403", PROBLEM)  # a cross-site write
    return {
        "openapi": "3.1.0",
        "info": {"title": "idempotency-demo", "version": "0.1.0", "description": DESCRIPTION},
        "paths": paths,
        "components": {"responses": _responses(), "schemas": schemas.schemas()},
    }


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/responses/{name}"}


def _op(summary: str, responses: dict[str, Any], **more: Any) -> dict[str, Any]:
    """An operation: 404 for a bad lab id and 503 for a full room come with every lab."""
    return {"summary": summary, **more, "responses": responses}


def _lab(summary: str, responses: dict[str, Any], **more: Any) -> dict[str, Any]:
    return _op(summary, {**responses, "404": PROBLEM, "503": _ref("LabsFull")}, **more)


def _problems(*codes: str) -> dict[str, Any]:
    return {code: PROBLEM for code in codes}


def _html(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": schema, "description": description}


def _form(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/x-www-form-urlencoded": {"schema": schema}}}


def _page_links() -> list[dict[str, Any]]:
    """The lab page's link parameters: each only *offers* its change, which a POST makes."""
    flag = {"enum": ["0", "1"]}
    return [
        _query(
            "scenario",
            {"enum": [*schemas.SCENARIO_NAMES, "none"]},
            "Offers this failure-lab scenario (`none`: leaving it); another name is 404.",
        ),
        _query("fixed", flag, "With `scenario`: offers it with its fix on (`1`)."),
        _query("run", flag, "With `scenario` or `lesson`: the offer runs the steps (`1`)."),
        _query(
            "lesson",
            {"enum": schemas.LESSON_NAMES},
            "Offers this lesson of the path; another name is 404.",
        ),
        _query("present", flag, "Offers presenter mode on (`1`) or off (`0`); else 422."),
    ]


def _at(method: str, operation: dict[str, Any], *params: dict[str, Any]) -> dict[str, Any]:
    """A path item under a lab: ``lab_id`` (and ``params``) for its one ``method``."""
    return {"parameters": [LAB_ID, *params], method: operation}


def _pages() -> dict[str, Any]:
    """The HTML pages and their fragments. Query values a page does not use are ignored."""
    svg = {"description": "SVG", "content": {"image/svg+xml": {"schema": {"type": "string"}}}}
    since = [
        _query("since", {"type": "string"}, "The version the page shows"),
        _query("settings_version", {"type": "string"}, "The settings' version it shows"),
    ]
    lab_page = _lab(
        "The lab page. A link's scenario, lesson or presenter mode is only offered: the "
        "GET changes nothing, and one click (a POST) applies it",
        {"200": _html("The lab page"), "422": PROBLEM,
         "303": {"description": "To the plain lab address"}},
        parameters=_page_links(),
    )  # fmt: skip
    redirect = {"303": {"description": "To the new lab's page"}, **_problems("404", "422")}
    fresh = _op("Redirect to a fresh lab with an unguessable id", redirect)
    return {
        "/": {"get": fresh},
        "/openapi.json": {
            "get": _op("This document", {"200": _json({"type": "object"}, "OpenAPI 3.1")})
        },
        "/lab/{lab_id}": {
            **_at("get", lab_page),
            "post": _lab(
                "Apply a link's offer: presenter mode, a lesson or a scenario, as query "
                "arguments or form fields (the same names as the GET's)",
                {
                    "303": {"description": "Applied; to the plain lab address (`run=1` kept)"},
                    **_problems("409", "422"),
                },
                parameters=_page_links(),
            ),
        },
        "/lab/{lab_id}/panels": _at(
            "get",
            _lab(
                "The panels fragment the page polls",
                {"200": _html("The panels"), "204": {"description": "Nothing new since `since`"}},
                parameters=since,
            ),
        ),
        "/lab/{lab_id}/sequence.svg": _at(
            "get",
            _lab(
                "The sequence diagram of the last requests (SVG)",
                {"200": svg},
                parameters=[_query("download", {"enum": ["1"]}, "`1`: as a file to save")],
            ),
        ),
    }


def _forms(languages: tuple[str, ...]) -> dict[str, Any]:
    """The page's own form posts."""
    language = {
        "type": "object",
        "required": ["language"],
        "properties": {"language": {"enum": list(languages)}},
    }
    order = {
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "amount": {"type": "string"}},
        "description": "The form's current order id and amount (kept when 1-15 digits)",
    }
    back = {"303": {"description": "Back to the lab page, in that language"}}
    return {
        "/lab/{lab_id}/language": _at(
            "post",
            _lab(
                "Switch the lab's language; the lab keeps it",
                {**back, **_problems("409", "422")},
                requestBody=_form(language),
            ),
        ),
        "/lab/{lab_id}/new-order": _at(
            "post",
            _lab(
                "The order form for a new intent (the next order id, so a new key)",
                {"200": _html("The order form"), "409": PROBLEM},
                requestBody={"content": {"application/x-www-form-urlencoded": {"schema": order}}},
            ),
        ),
    }


def _workshop() -> dict[str, Any]:
    """Lessons and the history export."""
    back = {"303": {"description": "Back to the lab page"}}
    history = _json(schemas.ref("History"), "A history, to open with POST /replay")
    return {
        "/lab/{lab_id}/lessons/{name}/hint": _at(
            "post",
            _lab("Reveal the lesson's next hint", {"200": _html("The panels (htmx)"), **back}),
            LESSON,
        ),
        "/lab/{lab_id}/lessons/{name}/reset": _at(
            "post",
            _lab(
                "Forget this lesson's progress (the others keep theirs)", {**back, "409": PROBLEM}
            ),
            LESSON,
        ),
        "/lab/{lab_id}/history.json": _at(
            "get",
            _lab("The lab's history: settings, requests with steps, charges", {"200": history}),
        ),
    }


def _room() -> dict[str, Any]:
    """Replay and the instructor view: paths outside any lab."""
    upload = {
        "type": "object",
        "required": ["history"],
        "properties": {
            "history": {"type": "string", "minLength": 1, "contentMediaType": "application/json"},
        },
    }
    content = {
        "multipart/form-data": {"schema": upload},
        "application/json": {"schema": schemas.ref("History")},
    }
    replay = _op(
        "Open an exported history as a new, read-only replay lab",
        {
            "303": {"description": "To the replay lab"},
            **_problems("400", "413", "415", "422"),
            "503": _ref("LabsFull"),
        },
        requestBody={"required": True, "content": content},
        parameters=[{"name": "from", "in": "query", "schema": {"type": "string"}}],  # a way back
    )
    return {
        "/replay": {"post": replay},
        "/instructor": {
            "get": _op(
                "The instructor's live, anonymous view of the room",
                {"200": _html("The instructor view"), "403": PROBLEM},
                parameters=[TOKEN],
            )
        },
        "/instructor/stats": {
            "get": _op(
                "The instructor view's numbers, for polling",
                {"200": _html("The numbers"), "403": PROBLEM},
                parameters=[TOKEN],
            )
        },
    }


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _api() -> dict[str, Any]:
    """The JSON API of a lab: ``/lab/{lab_id}/api/…``."""
    bad_body = _problems("400", "413", "415", "422")
    state = _json(schemas.ref("State"), "The lab's state")
    clock = {
        "type": "object",
        "required": ["offset_s", "now"],
        "properties": {"offset_s": {"type": "number"}, "now": {"type": "number"}},
    }
    paused = {"type": "object", "required": ["paused"], "properties": {"paused": {"type": "array"}}}
    return {
        "/lab/{lab_id}/api/charges": {"parameters": [LAB_ID], "post": _charges()},
        "/lab/{lab_id}/api/state": {
            "parameters": [LAB_ID],
            "get": _lab("Settings, charges, e-mails, records and the request log", {"200": state}),
        },
        "/lab/{lab_id}/api/settings": {
            "parameters": [LAB_ID],
            "patch": _lab(
                "Change settings (an empty object changes nothing)",
                {"200": _json(schemas.ref("Settings"), "The settings"), **bad_body},
                requestBody=_body(schemas.ref("Settings")),
            ),
        },
        "/lab/{lab_id}/api/clock": {
            "parameters": [LAB_ID],
            "post": _lab(
                "Move the lab's virtual clock forward",
                {"200": _json(clock, "The clock's offset"), **bad_body},
                requestBody=_body(schemas.ref("ClockRequest")),
            ),
        },
        "/lab/{lab_id}/api/step": {
            "parameters": [LAB_ID],
            "post": _lab(
                "Step mode: step a paused request, or run it (or all) to the end",
                {"200": _json(paused, "The requests still paused"), **bad_body, "409": PROBLEM},
                requestBody=_body(schemas.ref("StepRequest")),
            ),
        },
        "/lab/{lab_id}/api/reset": {
            "parameters": [LAB_ID],
            "post": _lab(
                "Empty the workspace's labs, the clock back to now; keep the settings (no body, "
                "or {})",
                {"200": state, **bad_body},
            ),
        },
    }


def _charges() -> dict[str, Any]:
    """``POST /lab/{lab_id}/api/charges``, with the headers each answer carries."""
    return _lab(
        "Charge once per Idempotency-Key",
        {
            "201": {
                "description": "Charged, or a replay of the stored charge",
                "headers": {"Idempotent-Replayed": REPLAYED},
                "content": {"application/json": {"schema": schemas.ref("Charge")}},
            },
            "402": _ref("Declined"),
            "409": _ref("Conflict"),
            "429": _problem(
                "Step mode: the lab (8) or the server (half its threads) already has its most "
                "requests paused (`/problems/too-many-paused`); `Retry-After` for the server's",
                {"Retry-After": RETRY_AFTER},
            ),
            **_problems("400", "413", "415", "422", "502", "504"),
        },
        description="Same key and body: the stored response, byte-identical, with "
        "`Idempotent-Replayed: true`. Same key, other body: 409 (422 or 400 under the ietf "
        "and stripe profiles). No key: unprotected, every call charges. 504: the gateway "
        "timed out after charging; unless the key goes on to the gateway, the key is kept "
        "in doubt and a retry gets 409 `/problems/key-in-doubt`.",
        parameters=[schemas.key_header()],
        requestBody=_body(schemas.ref("ChargeRequest")),
    )


def _problem(description: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    content = {"application/problem+json": {"schema": schemas.ref("Problem")}}
    return {
        "description": description,
        **({"headers": headers} if headers else {}),
        "content": content,
    }


def _responses() -> dict[str, Any]:
    """``components.responses``: the problem, and the problems that carry headers."""
    allow = {
        "required": True,
        "description": "The methods the path allows (RFC 9110 §10.2.1)",
        "schema": {"type": "string"},
    }
    return {
        "Problem": _problem("A problem (RFC 9457)"),
        "MethodNotAllowed": _problem("Method Not Allowed", {"Allow": allow}),
        "Declined": _problem(
            "The gateway declined the card; stored, so a retry with the key replays it",
            {"Idempotent-Replayed": REPLAYED},
        ),
        "Conflict": _problem(
            "The key was used with another body, or its first request is "
            "still in flight (then `Retry-After`)",
            {"Retry-After": RETRY_AFTER},
        ),
        "LabsFull": _problem(
            "No lab slot may be freed for a new lab, or (`/problems/store-full`) the lab's "
            "store is full of requests still in progress",
            {"Retry-After": RETRY_AFTER},
        ),
    }
