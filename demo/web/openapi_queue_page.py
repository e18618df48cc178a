"""The queue lab's page in the OpenAPI document: ``GET /lab/{lab_id}/queue``, its
panels, and the form posts its buttons send (:mod:`demo.web.queue.views`). Each form
field's pattern is exactly what the view accepts: a value outside it is a 422 problem.

A button answers htmx (``HX-Request: true``) with the panels (200, HTML), and a form
sent without script with 303 back to the page."""

from __future__ import annotations

from typing import Any

from ..queue.scenarios import SCENARIOS
from ..queue.settings import CHOICES, Settings
from .openapi_params import chapter_lesson
from .openapi_queue import LAB_ID, LABS_FULL, PROBLEM
from .queue.panels import JOBS
from .queue.views import PAGE_SETTINGS

INTEGER_PATTERNS = {
    "visibility_timeout_s": "^([1-9][0-9]{0,3}|[1-3][0-9]{4}|4[0-2][0-9]{3}|43[01][0-9]{2}|43200)$",
    "max_attempts": "^([1-9]|10)$",
    "workers": "^[1-3]$",
}
"""Each number setting's range (:data:`demo.queue.settings.RANGES`) in plain digits."""
ADVANCE_S = "^([1-9][0-9]{0,5}|1[0-9]{6}|2[0-4][0-9]{5}|25[0-8][0-9]{4}|259[01][0-9]{3}|2592000)$"
"""1 s to 30 days (:data:`demo.engine.clock.MAX_ADVANCE_S`), in plain digits."""
PROBABILITY = "^0(\\.([0-8][0-9]{0,5}|90{0,5}))?$"
"""0 to 0.9, at most six digits after the point."""


LESSON = chapter_lesson("queue", "queue lab's")


def _page(summary: str, responses: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"summary": summary, **more, "responses": {**responses, "404": PROBLEM,
                                                       "503": LABS_FULL}}  # fmt: skip


def _html(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


def _post(summary: str, schema: dict[str, Any] | None, *problems: str) -> dict[str, Any]:
    """A button's form post: the panels for htmx, else 303 to the page."""
    answers = {
        "200": _html("The panels (htmx)"),
        "303": {"description": "See Other: back to the queue page (a form without script)"},
        **{code: PROBLEM for code in ("400", "409", "413", *problems)},
    }
    more: dict[str, Any] = {}
    if schema is not None:
        form = {"type": "object", **schema}
        required = bool(schema.get("required") or schema.get("oneOf"))
        more["requestBody"] = {
            "required": required,
            "content": {"application/x-www-form-urlencoded": {"schema": form}},
        }
    return {"parameters": [LAB_ID], "post": _page(summary, answers, **more)}


def _setting_forms() -> list[dict[str, Any]]:
    """One form per setting the page changes: ``setting`` names it."""
    forms = []
    for name in PAGE_SETTINGS:
        named: dict[str, Any] = {"setting": {"const": name}}
        if isinstance(getattr(Settings(), name), bool):
            forms.append({"properties": {**named, name: {"const": "on"}}, "required": ["setting"]})
        elif name in INTEGER_PATTERNS:
            value: dict[str, Any] = {"type": "string", "pattern": INTEGER_PATTERNS[name]}
            forms.append({"properties": {**named, name: value}, "required": ["setting", name]})
        else:
            value = {"enum": list(CHOICES[name])}
            forms.append({"properties": {**named, name: value}, "required": ["setting", name]})
    return forms


def _simulation() -> dict[str, Any]:
    """The simulator's form: ``loss``, ``ack_loss`` and ``seed`` default to 0."""
    return {
        "required": ["mode", "messages"],
        "properties": {
            "mode": {"enum": ["at_most_once", "at_least_once", "idempotent"]},
            "messages": {"type": "string", "pattern": "^([1-9][0-9]{0,4}|100000)$"},
            "loss": {"type": "string", "pattern": PROBABILITY},
            "ack_loss": {"type": "string", "pattern": PROBABILITY},
            "seed": {"type": "string", "pattern": "^(0|[1-9][0-9]{0,17})$"},
        },
    }


def _step_form() -> dict[str, Any]:
    """The step view's form: exactly one of a paused call's id, ``release_all`` or ``off``."""
    return {
        "oneOf": [
            {
                "properties": {
                    "request": {"type": "string", "pattern": "^(0|[1-9][0-9]{0,17})$"},
                    "to_end": {"enum": ["0", "1"]},
                },
                "required": ["request"],
            },
            {"properties": {"release_all": {"const": "1"}}, "required": ["release_all"]},
            {"properties": {"off": {"const": "1"}}, "required": ["off"]},
        ]
    }


def _links() -> list[dict[str, Any]]:
    """The page's link parameters: each only offers its change, which a POST makes."""
    flag = {"enum": ["0", "1"]}

    def query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
        return {"name": name, "in": "query", "schema": schema, "description": description}

    return [
        query("scenario", {"enum": [*SCENARIOS, "none"]}, "Offers this scenario"),
        query("lab", {"enum": ["queue"]}, "The lab a link's scenario belongs to"),
        query("fixed", flag, "With `scenario`: offers it with its fix on (`1`)."),
        query("lesson", {"type": "string"}, "Offers this lesson of the path"),
        query(
            "present", flag, "Offers presenter mode on (`1`) or off (`0`); another value is 422."
        ),
    ]


def _reads(base: str) -> dict[str, Any]:
    """The page, and the panels it polls."""
    since = {"name": "since", "in": "query", "schema": {"type": "string"},
             "description": "The version the page shows: 204 while it is current"}  # fmt: skip
    return {
        base: {
            "parameters": [LAB_ID],
            "get": _page(
                "The queue lab's page (a GET creates no lab); a link's change is only offered",
                {
                    "200": _html("The page"),
                    "303": {"description": "A link without lab=queue, sent on with it"},
                    "422": PROBLEM,
                },
                parameters=_links(),
            ),
        },
        f"{base}/panels": {
            "parameters": [LAB_ID],
            "get": _page(
                "The queue page's panels, for polling",
                {"200": _html("The panels"), "204": {"description": "Nothing new since `since`"}},
                parameters=[since],
            ),
        },
    }


SCENARIO_FORM: dict[str, Any] = {
    "properties": {"scenario": {"enum": list(SCENARIOS)}, "fixed": {"enum": ["0", "1"]}},
    "required": ["scenario"],
}
"""Run the steps' and Next step's form: a scenario, with its fix (``fixed=1``) or not."""


def _lesson_paths(base: str) -> dict[str, Any]:
    """The lesson card's own buttons: Next step and Show a hint."""
    return {
        f"{base}/next": _post(
            "Next step: one click of a scenario (`fixed=1`: with its fix), the first starting "
            "it afresh",
            SCENARIO_FORM,
            "404",
            "422",
        ),  # fmt: skip
        f"{base}/lessons/{{name}}/hint": {
            **_post("Reveal the lesson's next hint", None, "404"),
            "parameters": [LAB_ID, LESSON],
        },
    }


def paths() -> dict[str, Any]:
    """The queue page's operations."""
    base = "/lab/{lab_id}/queue"
    return {
        **_reads(base),
        f"{base}/enqueue": _post(
            "The producer enqueues a job (the article's by default)",
            {"properties": {"job": {"enum": list(JOBS)}}},
            "422",
        ),
        f"{base}/producer-retry": _post("The producer sends its last job again", None),
        f"{base}/work": _post(
            "One worker takes one message (`every=1`: every worker at once)",
            {"properties": {"every": {"const": "1"}}},
            "422",
            "429",
        ),
        f"{base}/clock": _post(
            "Move the workspace's clock (s)",
            {
                "properties": {"advance_s": {"type": "string", "pattern": ADVANCE_S}},
                "required": ["advance_s"],
            },
            "422",
        ),  # fmt: skip
        f"{base}/settings": _post("Change one setting", {"oneOf": _setting_forms()}, "422"),
        f"{base}/simulate": _post("Run the delivery-semantics simulator", _simulation(), "422"),
        f"{base}/run": _post(
            "Run a scenario afresh, clicks and all (`fixed=1`: with its fix)",
            SCENARIO_FORM,
            "404",
            "422",
        ),  # fmt: skip
        **_lesson_paths(base),
        f"{base}/step": _post(
            "Step mode (turned on through the API): step a paused work call (`to_end=1`: to "
            "its end), release them all (`release_all=1`) or turn step mode off (`off=1`)",
            _step_form(),
            "404",
            "409",
            "422",
        ),
        f"{base}/reset": _post("Start the queue lab afresh (settings kept)", None),
    }
