"""The workshop around the lab: lesson hints and resets, export and replay of a lab's
history, and the instructor's anonymous view of the room."""

from __future__ import annotations

import json
import secrets
from typing import Any

from flask import Blueprint, Response, current_app, render_template, request, url_for
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Response as BaseResponse

from .. import history
from ..engine.problems import Problem
from ..engine.text import N_
from ..lessons import CHAPTERS
from ..payments.charges import parse_json
from ..payments.gateway import summarise
from ..workspace import Workspace
from . import is_htmx, json_body, lab_to_read, lab_to_write, labs
from .nav import LAB_PAGES
from .payments.panels import panels_response
from .shell import redirect_to_lab

bp = Blueprint("workshop", __name__)

ACTIVE_S = 10 * 60
"""A lab used in the last 10 minutes counts as active on the instructor's view."""


# -- lessons -------------------------------------------------------------------------


@bp.post("/lab/<lab_id>/lessons/<name>/hint")
def hint(lab_id: str, name: str) -> BaseResponse:
    """Reveal the next hint of lesson ``name``: the panels (htmx), else 303 to the lab.

    :raises Problem: 404 for an unknown lesson; 409 in a read-only replay.
    """
    lab = lab_to_write(lab_id)
    lab.show_hint(name)
    return _back(lab)


@bp.post("/lab/<lab_id>/lessons/<name>/reset")
def reset_lesson(lab_id: str, name: str) -> BaseResponse:
    """Forget lesson ``name``'s progress (the other lessons keep theirs); 303 to the lab.

    :raises Problem: 404 for an unknown lesson; 409 in a read-only replay.
    """
    lab = lab_to_write(lab_id)
    lab.reset_lesson(name)
    return redirect_to_lab(lab)


def _back(lab: Workspace) -> BaseResponse:
    return panels_response(lab) if is_htmx() else redirect_to_lab(lab)


# -- export and replay ---------------------------------------------------------------


@bp.get("/lab/<lab_id>/history.json")
def export(lab_id: str) -> Response:
    """The lab's history as a JSON download (settings, requests with steps, charges)."""
    lab = lab_to_read(lab_id)
    body = json.dumps(history.export(lab), ensure_ascii=False, indent=1)
    response = Response(body, 200, mimetype="application/json")
    response.headers["Content-Disposition"] = 'attachment; filename="idempotency-lab.json"'
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.post("/replay")
def replay() -> BaseResponse:
    """Open an exported history (multipart field ``history``, or a JSON body) as a new,
    read-only replay lab; 303 to it.

    :raises Problem: 400 for a missing file or bad JSON, 413 past 1 MiB, 415 for a body
        that is neither multipart nor JSON, 422 for a file that is not a lab history.
    """
    request.max_content_length = history.MAX_BYTES
    try:
        if request.mimetype == "multipart/form-data":
            upload = request.files.get("history")
            raw = upload.read(history.MAX_BYTES + 1) if upload else b""
        else:
            raw = json_body()
    except RequestEntityTooLarge:
        raise _too_large() from None
    if len(raw) > history.MAX_BYTES:
        raise _too_large()
    if not raw.strip():
        raise Problem(400, "no-history", N_("No history"), N_("Choose a lab history file."))
    try:
        data = parse_json(raw)  # the API's strict rules: no repeated members, no NaN
    except RecursionError:
        raise Problem(
            400, "malformed-json", N_("Malformed JSON"), N_("The file is not valid JSON.")
        ) from None
    # Validate first: a file that is not a history must not take a lab slot.
    replayed = history.read(data, max_requests=current_app.config["LAB_MAX_LOG"])
    lab = labs().create_replay()  # the replays' own quota: never an attendee's slot
    replayed.load_into(lab)
    return redirect_to_lab(lab)


def _too_large() -> Problem:
    return Problem(
        413, "body-too-large", N_("History too large"), N_("A lab history is at most 1 MiB.")
    )


# -- the instructor's view ---------------------------------------------------------


def instructor_token() -> str:
    """The token of the instructor link (``INSTRUCTOR_TOKEN``, random at start-up)."""
    token: str = current_app.config["INSTRUCTOR_TOKEN"]
    return token


def _authorised() -> None:
    given = request.args.get("token", "")
    if not secrets.compare_digest(given.encode(), instructor_token().encode()):
        raise Problem(
            403,
            "instructor-only",
            N_("Instructors only"),
            N_("Open the instructor link the server printed at start-up."),
        )


@bp.get("/instructor")
def instructor() -> Response:
    """The room at a glance, live and anonymous: 403 without the start-up token."""
    _authorised()
    html = render_template("instructor.html", token=request.args["token"], **room())
    return _no_store(html)


@bp.get("/instructor/stats")
def instructor_stats() -> Response:
    """The numbers of :func:`instructor`, for polling."""
    _authorised()
    html = render_template("_partials/room.html", token=request.args["token"], **room())
    return _no_store(html)


def _no_store(html: str) -> Response:
    """The instructor's pages carry the token in their links: no cache may keep them."""
    response = Response(html, 200, mimetype="text/html")
    response.headers["Cache-Control"] = "no-store"
    return response


def room() -> dict[str, Any]:
    """Counts over the active labs (labs in use: not the blank or unproven ones a flood
    makes, see :meth:`LabRegistry.active`); never a lab's id."""
    active = [lab for lab in labs().active(ACTIVE_S, in_use=True) if not lab.read_only]
    achieved = [lab.achieved() for lab in active]
    charged = intended = 0
    for lab in active:
        summary = summarise(lab.payments.gateway.ledger())
        charged += summary.charged
        intended += summary.intended
    return {
        "active": len(active),
        # One table per lab's chapter, in the switcher's order.
        "chapters": [
            {
                "page": page,
                "rows": [
                    {
                        "lesson": lesson,
                        "title": page.scenarios[lesson.name].title,
                        "achieved": sum(lesson.name in a for a in achieved),
                    }
                    for lesson in CHAPTERS[page.lab]
                ],
            }
            for page in LAB_PAGES
        ],
        "charged": charged,
        "intended": intended,
        "poll_s": current_app.config["POLL_S"],
        "stats_url": url_for("workshop.instructor_stats", token=request.args.get("token")),
    }
