"""The operations lab's page, ``GET /lab/<lab_id>/natural``, and the fragments htmx swaps
into it (``GET …/natural/_partials/<part>``). Both are GETs: they change nothing (the
pixel the article embeds is the one GET that does, on purpose: :mod:`.api`)."""

from __future__ import annotations

import itertools
from typing import Any

from flask import Response, g, redirect, render_template, request, url_for
from werkzeug.exceptions import NotFound
from werkzeug.wrappers import Response as BaseResponse

from ...lessons import chapter_of
from ...natural.lab import NaturalLab
from ...natural.operations import OPERATIONS, START, TRANSFER_AMOUNT
from ...natural.pixel import MAX_WINDOW_S
from ...natural.scenarios import FIX_WINDOW_S, SCENARIOS
from ...workspace import Workspace
from .. import lab_to_read, lab_to_write
from ..payments.panels import poll_s
from . import bp
from .card import changes, numbers, start_text, verdicts

PARTS = ("operations", "lost_update", "pixel", "article", "timeline", "lesson")
"""The fragments the page swaps, each a template ``natural/_partials/<part>.html``."""

POST = "42"
"""The article's post id: what its pixel counts."""

TIMELINE_SHOWN = 10
"""The timeline shows the newest requests, this many."""

_loads = itertools.count(1)


def context(workspace: Workspace) -> dict[str, Any]:
    """What the page and every fragment render from."""
    version = workspace.version  # first: a change after it makes the next poll redraw
    lab: NaturalLab = workspace.natural
    lesson = workspace.lesson if workspace.lesson and workspace.lesson.lab == lab.name else None
    delayed = lab.last("delayed-duplicate")
    runs = lab.latest_runs()
    last = lab.last("apply")
    return {
        "lab": workspace,
        "nat": lab,
        "operations": OPERATIONS,
        "runs": runs,
        "last_operation": last.result["operation"] if last else None,
        "times": last.result["times"] if last else 3,
        "dedup": last.result["dedup"] if last else lab.fix_on("dedup"),
        "verdicts": verdicts(lab),
        "changes": changes,
        "start_text": start_text(),
        "numbers": numbers(lab, POST),
        "start": START,
        "amount": TRANSFER_AMOUNT,
        "delayed": delayed.result if delayed else None,
        "views": lab.pixel.counts(),
        "post": POST,
        "window_s": lab.pixel.window_s,
        "fix_window_s": FIX_WINDOW_S,
        "max_window_s": MAX_WINDOW_S,
        "timeline": list(reversed(lab.requests()[-TIMELINE_SHOWN:])),
        "scenario": lab.scenario,
        "scenarios": SCENARIOS.values(),
        "fixed": lab.fixed,
        "lesson": lesson,
        "progress": workspace.progress.get(lesson.name) if lesson else None,
        "next_lesson": _next(lesson.name) if lesson else None,
        "load": next(_loads),
        "version": version,
        "poll_s": poll_s(),
        "current_lab": lab.name,
    }


def _next(name: str) -> Any:
    chapter = [lesson.name for lesson in chapter_of(name)]
    at = chapter.index(name)
    return chapter_of(name)[at + 1] if at + 1 < len(chapter) else None


OOB = {"operations": ("lesson", "timeline", "poll"), "lost_update": ("lesson", "timeline", "poll"),
       "pixel": ("lesson", "timeline", "poll")}  # fmt: skip
"""What else changes with a fragment: swapped out of band beside it."""


def fragment(workspace: Workspace, part: str) -> Response:
    """The fragment ``part`` of the page, as an HTML response, with the fragments that
    change with it out of band (the card's checks and numbers, the timeline)."""
    values = context(workspace)
    html = render_template(f"natural/_partials/{part}.html", **values) + "".join(
        render_template(f"natural/_partials/{more}.html", oob=True, **values)
        for more in OOB.get(part, ())
    )
    response = Response(html, 200, mimetype="text/html")
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("")
def page() -> str:
    """The operations lab: the operations table, the lost-update strip, the tracking
    pixel's article and the timeline. A lab that does not exist shows blank."""
    g.lab = lab_to_read(g.lab_id)
    return render_template("natural/page.html", **context(g.lab))


@bp.get("/_partials/<part>")
def partial(part: str) -> Response:
    """One fragment of the page (``operations``, ``lost_update``, ``pixel``, ``article``,
    ``timeline``, ``lesson``); 404 for another name. With ``?since=<version>`` (the
    page's poll), 204 while the lab has not changed since."""
    if part not in PARTS:
        raise NotFound()
    g.lab = lab_to_read(g.lab_id)
    if request.args.get("since") == str(g.lab.version):
        return Response(status=204)
    return fragment(g.lab, part)


@bp.post("/lessons/<name>/hint")
def hint(name: str) -> BaseResponse:
    """Reveal the next hint of lesson ``name``; 303 back to the page.

    :raises Problem: 404 for an unknown lesson; 409 in a read-only replay.
    """
    workspace = lab_to_write(g.lab_id)
    workspace.show_hint(name)
    return redirect(url_for("natural.page", lab_id=workspace.id), 303)
