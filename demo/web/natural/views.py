"""The operations lab's page, ``GET /lab/<lab_id>/natural``, and the fragments htmx swaps
into it (``GET …/natural/_partials/<part>``). Both are GETs: they change nothing (the
pixel the article embeds is the one GET that does, on purpose: :mod:`.api`)."""

from __future__ import annotations

import itertools
from typing import Any

from flask import Response, g, redirect, render_template, request, url_for
from werkzeug.exceptions import NotFound
from werkzeug.wrappers import Response as BaseResponse

from ...lessons import CHAPTERS, chapter_of
from ...natural.lab import NaturalLab
from ...natural.operations import OPERATIONS, START, TRANSFER_AMOUNT
from ...natural.pixel import MAX_WINDOW_S
from ...natural.scenarios import FIX_WINDOW_S, SCENARIOS
from ...workspace import Workspace
from .. import is_htmx, lab_to_read, lab_to_write
from ..filters import duration
from ..links import check_link, offer
from ..nav import PAGES
from ..payments.panels import poll_s
from . import bp
from .card import changes, numbers, start_text, verdicts

PARTS = ("operations", "lost_update", "pixel", "article", "timeline", "lesson", "path")
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
    dedup = last.result["dedup"] if last else lab.fix_on("dedup")
    return {
        "lab": workspace,
        "nat": lab,
        "operations": OPERATIONS,
        "runs": runs,
        "last_operation": last.result["operation"] if last else None,
        "times": last.result["times"] if last else lab.attempts,
        "dedup": dedup,
        "fix_holds": (holds := _holds(lab, dedup, delayed.result if delayed else None)),
        "by_hand": lab.scenario is not None and holds != lab.fixed,
        "verdicts": verdicts(lab),
        "changes": changes,
        "start_text": start_text(),
        "numbers": numbers(lab, POST),
        # Something of the case has run (its numbers come once the whole case has): the
        # page's own load of the pixel is no step of the attendee's.
        "ran": bool(runs)
        or delayed is not None
        or sum(e.action == "pixel" for e in lab.requests()) >= 2,
        "start": START,
        "amount": TRANSFER_AMOUNT,
        "delayed": delayed.result if delayed else None,
        "views": lab.pixel.counts(),
        "post": POST,
        "window_s": lab.pixel.window_s,
        # "+10 min on the clock" changes no number by itself: the clock's line says it moved.
        "clock_offset": duration(workspace.clock_offset_s())
        if workspace.clock_offset_s()
        else None,
        "fix_window_s": FIX_WINDOW_S,
        "max_window_s": MAX_WINDOW_S,
        "timeline": list(reversed(lab.requests()[-TIMELINE_SHOWN:])),
        "scenario": lab.scenario,
        "scenarios": SCENARIOS.values(),
        "fixed": lab.fixed,
        "lesson": lesson,
        "progress": workspace.progress.get(lesson.name) if lesson else None,
        "next_lesson": _next(lesson.name) if lesson else None,
        **_path(workspace),
        "load": next(_loads),
        "version": version,
        "poll_s": poll_s(),
        "current_lab": lab.name,
    }


def _holds(lab: NaturalLab, dedup: bool, delayed: dict[str, Any] | None) -> bool:
    """Whether the lab holds the open scenario's fix now, applied or set by hand: the last
    run's Dedup, the last delayed duplicate's If-Match, the pixel's window (the card's
    badge follows it rather than contradict the page)."""
    if lab.scenario is None:
        return False
    fix = lab.scenario.fix
    if fix == "dedup":
        return dedup
    if fix == "conditional":
        return bool(delayed["conditional"]) if delayed is not None else lab.fixed
    return lab.pixel.window_s > 0


def _path(workspace: Workspace) -> dict[str, Any]:
    """The chapter's lessons strip: each lesson with its number and whether it is
    achieved, how many are, and the lesson Start/Continue opens."""
    chapter = CHAPTERS["natural"]
    achieved = workspace.achieved()
    return {
        "path": [(n, item, item.name in achieved) for n, item in enumerate(chapter, 1)],
        "achieved_count": sum(item.name in achieved for item in chapter),
        "first_left": next((item for item in chapter if item.name not in achieved), chapter[0]),
    }


def _next(name: str) -> Any:
    chapter = [lesson.name for lesson in chapter_of(name)]
    at = chapter.index(name)
    return chapter_of(name)[at + 1] if at + 1 < len(chapter) else None


OOB = {"operations": ("lesson", "path", "timeline", "poll"),
       "lost_update": ("lesson", "path", "timeline", "poll"),
       "pixel": ("lesson", "path", "timeline", "poll"),
       "lesson": ("path",)}  # fmt: skip
"""What else changes with a fragment: swapped out of band beside it."""


POLLED = ("operations", "lost_update")
"""What the page's poll swaps besides the pixel's own (another tab's runs)."""


def fragment(workspace: Workspace, part: str, also: tuple[str, ...] = ()) -> Response:
    """The fragment ``part`` of the page, as an HTML response, with the fragments that
    change with it out of band (the card's checks and numbers, the timeline) and
    ``also`` these."""
    values = context(workspace)
    html = render_template(f"natural/_partials/{part}.html", **values) + "".join(
        render_template(f"natural/_partials/{more}.html", oob=True, **values)
        for more in OOB.get(part, ()) + also
    )
    response = Response(html, 200, mimetype="text/html")
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("")
def page() -> BaseResponse | str:
    """The operations lab: the lessons strip, the operations table, the lost-update strip,
    the tracking pixel's article and the timeline. A lab that does not exist shows blank.
    A GET changes nothing (RFC 9110 §9.2.1): a link's ``?lesson=``, ``?scenario=`` or
    ``?present=`` is offered as a button that POSTs it (a link without ``lab=natural``
    is sent on to the same address with it, so it lands back here).

    :raises Problem: 404 for an unknown scenario or lesson; 422 for a ``present`` other than
        0 or 1.
    """
    g.lab = lab_to_read(g.lab_id)
    check_link(request.args, "natural")  # before the redirect keeps only the first values
    if {"scenario", "present"} & set(request.args) and "lab" not in request.args:
        link = PAGES["natural"].url(g.lab_id, **request.args.to_dict(), lab="natural")
        return redirect(link, 303)
    return render_template("natural/page.html", offer=offer(g.lab), **context(g.lab))


@bp.get("/_partials/<part>")
def partial(part: str) -> Response:
    """One fragment of the page (``operations``, ``lost_update``, ``pixel``, ``article``,
    ``timeline``, ``lesson``); 404 for another name. With ``?since=<version>`` (the
    page's poll), 204 while the lab has not changed since."""
    if part not in PARTS:
        raise NotFound()
    g.lab = lab_to_read(g.lab_id)
    since = request.args.get("since")
    if since == str(g.lab.version):
        return Response(status=204)
    # The poll (``since``): another tab may have run anything, so every panel follows.
    return fragment(g.lab, part, POLLED if since is not None else ())


@bp.post("/lessons/<name>/hint")
def hint(name: str) -> BaseResponse:
    """Reveal the next hint of lesson ``name``; 303 back to the page.

    :raises Problem: 404 for an unknown lesson; 409 in a read-only replay.
    """
    workspace = lab_to_write(g.lab_id)
    workspace.show_hint(name)
    if is_htmx():  # no full reload: a reload would load the article's pixel again
        return fragment(workspace, "lesson")
    return redirect(url_for("natural.page", lab_id=workspace.id), 303)


@bp.post("/lessons/<name>/reset")
def reset_lesson(name: str) -> BaseResponse:
    """Forget lesson ``name``'s progress and open it afresh; 303 to the page.

    :raises Problem: 404 for an unknown lesson; 409 in a read-only replay.
    """
    workspace = lab_to_write(g.lab_id)
    workspace.reset_lesson(name)
    return redirect(url_for("natural.page", lab_id=workspace.id), 303)
