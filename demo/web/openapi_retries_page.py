"""The retry lab page's part of the OpenAPI document: the page at ``/lab/{lab_id}/retries``
and the form posts its buttons send (HTML answers, for htmx). The JSON API is
:mod:`demo.web.openapi_retries`.

Self-contained (it names the document's shared responses by ``$ref`` only), so
:mod:`demo.web.openapi_schemas` adds it to the document without an import cycle.
"""

from __future__ import annotations

from typing import Any

from ..retries.scenarios import SCENARIOS
from .openapi_params import chapter_lesson
from .openapi_retries import LAB_ID

PROBLEM = {"$ref": "#/components/responses/Problem"}
BACK = {"303": {"description": "Without htmx: back to the retry page"}}
LESSON = chapter_lesson("retries", "retry lab's")


def _lab(summary: str, responses: dict[str, Any], **more: Any) -> dict[str, Any]:
    """An operation on a lab: 404 for a bad lab id, 503 when no lab slot is free."""
    every = {"404": PROBLEM, "503": {"$ref": "#/components/responses/LabsFull"}}
    return {"summary": summary, **more, "responses": {**responses, **every}}


def _html(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": schema, "description": description}


def _form(properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties}
    return {"content": {"application/x-www-form-urlencoded": {"schema": schema}}}


TEXT = {"type": "string"}
POLICY_FORM = {
    **{name: TEXT for name in ("max_attempts", "strategy", "base_ms", "cap_ms")},
    "retry_on": {"type": "array", "items": TEXT},
    "respect_retry_after": {"type": "string", "description": "`on` when ticked"},
    "same_key": {"type": "string", "description": "`on` when ticked"},
    "faults_choice": {"type": "string", "description": "A preset's index, or `custom`"},
    "faults": {"type": "string", "description": "`lose_response, 503, ok` or a JSON list"},
}
STORM_FORM = {
    **{
        name: TEXT
        for name in ("model", "strategy", "clients", "seed", "base_ms", "cap_ms")
        + ("capacity_per_s", "outage_s", "budget_burst", "budget_per_s")
    },
    "budget": {"type": "string", "description": "`on` when ticked"},
}


def _links() -> list[dict[str, Any]]:
    """The page's link parameters: each only offers its change, which a POST makes."""
    flag = {"enum": ["0", "1"]}
    return [
        _query("scenario", {"enum": [*SCENARIOS, "none"]}, "Offers this scenario"),
        _query("lab", {"enum": ["retries"]}, "The lab a link's scenario belongs to"),
        _query("fixed", flag, "With `scenario`: offers it with its fix on (`1`)."),
        _query("run", flag, "With `scenario` or `lesson`: the offer runs the steps (`1`)."),
        _query("lesson", {"type": "string"}, "Offers this lesson of the path"),
        _query(
            "present", flag, "Offers presenter mode on (`1`) or off (`0`); another value is 422."
        ),
    ]


PAGE = "/lab/{lab_id}/retries"
BAD = {code: PROBLEM for code in ("409", "413", "422")}


def paths() -> dict[str, Any]:
    """The retry page's paths: the page and its panels, then its form posts."""
    page = PAGE
    return {
        page: {
            "parameters": [LAB_ID],
            "get": _lab(
                "The retry lab's page: the policy and fault plan, the attempts, the storm "
                "chart (SVG drawn on the server), the client's code. A link's change is "
                "only offered: the GET changes nothing",
                {
                    "200": _html("The page"),
                    "303": {"description": "The link with `lab=retries`"},
                    "422": PROBLEM,
                },
                parameters=_links(),
            ),
        },
        f"{page}/panels": {
            "parameters": [LAB_ID],
            "get": _lab(
                "The retry page's panels, for polling",
                {"200": _html("The panels"), "204": {"description": "Nothing new since `since`"}},
                parameters=[_query("since", TEXT, "The version the page shows")],
            ),
        },
        **_posts(),
    }


def _posts() -> dict[str, Any]:
    """The form posts the page's buttons send."""
    page, bad = PAGE, BAD
    return {
        f"{page}/run": {
            "parameters": [LAB_ID],
            "post": _lab(
                "Run: the policy and fault plan forms, read into the API's run request "
                "(POST retries/api/run), which checks them",
                {"200": _html("The panels (htmx)"), **BACK, **bad, "502": PROBLEM},
                requestBody=_form(POLICY_FORM),
            ),
        },
        f"{page}/storm": {
            "parameters": [LAB_ID],
            "post": _lab(
                "Storm: the storm form, read into the API's storm request",
                {"200": _html("The panels (htmx)"), **BACK, **bad},
                requestBody=_form(STORM_FORM),
            ),
        },
        f"{page}/reset": {
            "parameters": [LAB_ID],
            "post": _lab(
                "Start the retry lab afresh (runs and storm; the policy and plan stay)",
                {"200": _html("The panels (htmx)"), **BACK, "409": PROBLEM},
            ),
        },
        f"{page}/lessons/{{name}}/hint": {
            "parameters": [LAB_ID, LESSON],
            "post": _lab(
                "Reveal the lesson's next hint", {"200": _html("The panels (htmx)"), **BACK, **bad}
            ),
        },
        f"{page}/lessons/{{name}}/reset": {
            "parameters": [LAB_ID, LESSON],
            "post": _lab(
                "Forget this lesson's progress and open it afresh",
                {"303": {"description": "To the retry page"}, **bad},
            ),
        },
    }
