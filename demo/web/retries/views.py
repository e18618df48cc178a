"""The retry lab's page, ``GET /lab/<id>/retries``, and the form posts its buttons send
(htmx swaps the panels they answer with; without a script, 303 back to the page).

Each post reads its form into the request the lab's JSON API takes
(:mod:`.forms`) and calls the lab: the same checks, the same 422 problem+json for a bad
value, and the run's attempts are real requests to the payment lab (:mod:`.transport`).
"""

from __future__ import annotations

from flask import Blueprint, Response, current_app, redirect, render_template, request
from werkzeug.wrappers import Response as BaseResponse

from ...workspace import Workspace
from .. import is_htmx, lab_to_read, lab_to_write
from ..links import check_link, offer
from ..nav import PAGES
from .context import LAB, page_context, retries_of
from .forms import faults_from, policy_from, storm_from
from .transport import to_payments

bp = Blueprint("retries_page", __name__)


@bp.get("/lab/<lab_id>/retries")
def page(lab_id: str) -> BaseResponse | str:
    """The retry lab: the policy and fault plan editors, Run, the attempts, the storm and
    its chart, the client's code. A GET changes nothing (RFC 9110 §9.2.1): a link's
    ``?lesson=``, ``?scenario=`` or ``?present=`` is offered as a button that POSTs it
    (a link without ``lab=retries`` is sent on to the same address with it, so its
    scenario is this lab's and it lands back here).

    :raises Problem: 404 for a bad lab id, or an unknown scenario or lesson; 422 for a
        ``present`` other than 0 or 1.
    """
    workspace = lab_to_read(lab_id)
    check_link(request.args, LAB)  # before the redirect keeps only the first values
    if {"scenario", "present"} & set(request.args) and "lab" not in request.args:
        return redirect(PAGES[LAB].url(lab_id, **request.args.to_dict(), lab=LAB), 303)
    change = offer(workspace)
    context = page_context(workspace)
    autorun = change is None and request.args.get("run") == "1" and context["scenario"] is not None
    return render_template("retries/lab.html", offer=change, autorun=autorun, **context)


@bp.post("/lab/<lab_id>/retries/run")
def run(lab_id: str) -> BaseResponse:
    """Run one charge through the retrying client, with the form's policy and fault plan
    (both kept for the next runs). The panels (htmx), else 303 to the page.

    :raises Problem: 422 for a bad policy or fault plan (nothing changes); 409 in a
        read-only replay; 503 when no lab slot is free.
    """
    workspace = lab_to_write(lab_id)
    body = {"policy": policy_from(request.form), "faults": faults_from(request.form)}
    retries_of(workspace).run(body, transport=to_payments(current_app, workspace.id))
    return _answer(workspace)


@bp.post("/lab/<lab_id>/retries/storm")
def storm(lab_id: str) -> BaseResponse:
    """Simulate the storm the form describes. The panels (htmx), else 303 to the page.

    :raises Problem: 422 for a bad storm (nothing changes); 409 in a read-only replay.
    """
    workspace = lab_to_write(lab_id)
    retries_of(workspace).storm(storm_from(request.form))
    return _answer(workspace)


@bp.post("/lab/<lab_id>/retries/reset")
def reset(lab_id: str) -> BaseResponse:
    """Start the retry lab afresh: its runs and storm forgotten, the policy and the fault
    plan kept (the payment lab and the lesson progress untouched). The panels (htmx),
    else 303 to the page.

    :raises Problem: 409 in a read-only replay.
    """
    workspace = lab_to_write(lab_id)
    retries_of(workspace).reset()
    return _answer(workspace)


@bp.post("/lab/<lab_id>/retries/lessons/<name>/hint")
def hint(lab_id: str, name: str) -> BaseResponse:
    """Reveal the next hint of lesson ``name``: the panels (htmx), else 303 to the page.

    :raises Problem: 404 for an unknown lesson; 409 in a read-only replay.
    """
    workspace = lab_to_write(lab_id)
    workspace.show_hint(name)
    return _answer(workspace)


@bp.post("/lab/<lab_id>/retries/lessons/<name>/reset")
def reset_lesson(lab_id: str, name: str) -> BaseResponse:
    """Forget lesson ``name``'s progress and open it afresh; 303 to the page.

    :raises Problem: 404 for an unknown lesson; 409 in a read-only replay.
    """
    workspace = lab_to_write(lab_id)
    workspace.reset_lesson(name)
    return redirect(PAGES[LAB].url(workspace.id), 303)


@bp.get("/lab/<lab_id>/retries/panels")
def panels(lab_id: str) -> BaseResponse:
    """The panels, for polling: 204 (nothing to swap) while ``since`` is current."""
    workspace = lab_to_read(lab_id)
    if request.args.get("since") == str(workspace.version):
        return Response(status=204)
    return _panels(workspace)


def _answer(workspace: Workspace) -> BaseResponse:
    if not is_htmx():
        return redirect(PAGES[LAB].url(workspace.id), 303)
    return _panels(workspace)


def _panels(workspace: Workspace) -> Response:
    html = render_template("retries/_partials/panels.html", **page_context(workspace))
    response = Response(html, 200, mimetype="text/html")
    response.vary.add("HX-Request")
    return response
