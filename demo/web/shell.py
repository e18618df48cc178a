"""The page shell: ``/`` (a fresh lab), the workspace's page ``/lab/<id>``, the link
changes it offers (:func:`open_link`), its language, and ``/openapi.json``.

The page *includes* the same partials that htmx later swaps in, so one template serves
both the first render and every update (the payment lab's: :mod:`demo.web.payments`).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from ..engine.problems import Problem
from ..engine.text import N_, Text
from ..payments.scenarios import SCENARIOS
from ..registry import LabRegistry
from ..workspace import Workspace
from . import lab_to_read, lab_to_write
from .i18n import LANGUAGES
from .links import LINK_ARGS, check_link, offer
from .nav import PAGES
from .openapi import document
from .payments.order import KEY_TEMPLATE, order_form
from .payments.panels import panels_context, poll_s

bp = Blueprint("shell", __name__)


@bp.get("/")
def index() -> BaseResponse:
    """Redirect (303) to a fresh lab with a random, unguessable id; a link's choices
    (``?lesson=race``, ``?present=1``…) go with it, for the lab page to offer.

    :raises Problem: the lab page's 404 and 422 for a link's choices, here, before a lab
        id is made for a link that cannot open.
    """
    check_link(request.args)
    choices: dict[str, Any] = {n: request.args[n] for n in LINK_ARGS if n in request.args}
    return redirect(url_for("shell.lab_page", lab_id=LabRegistry.new_id(), **choices), 303)


@bp.get("/openapi.json")
def openapi() -> BaseResponse:
    """The OpenAPI 3.1 document of the JSON API."""
    return jsonify(document(tuple(LANGUAGES)))


@bp.get("/lab/<lab_id>")
def lab_page(lab_id: str) -> BaseResponse | str:
    """The lab: order form, buttons, switches, and the panels. A lab that does not exist
    shows blank, and takes no slot until something is written to it.

    A link's ``?scenario=<name>`` (``fixed=1`` for its fix, ``scenario=none`` to leave it),
    ``?lesson=<name>`` or ``?present=1`` / ``0`` changes nothing here: a GET is safe
    (RFC 9110 §9.2.1), so a chat app's preview, a prefetch or a crawler cannot reset a lab.
    The page offers the change with one button that POSTs the same address
    (:func:`open_link`), and the page's script presses it once a person has the page on
    screen. ``?run=1`` (kept by :func:`open_link`) makes the page click the scenario's steps.

    :raises Problem: 404 for a bad lab id, or an unknown scenario or lesson; 422 for a
        ``present`` other than 0 or 1.
    """
    lab = lab_to_read(lab_id)
    change = offer(lab)
    last = lab.payments.latest_charge()
    order_id = lab.payments.current_order
    amount = last.amount if last and last.order_id == order_id else 100_000
    return render_template(
        "lab.html",
        form=order_form(order_id, amount),
        poll_s=poll_s(),
        scenarios=SCENARIOS.values(),
        client=lab.payments.client,
        key_template=KEY_TEMPLATE,
        offer=change,
        autorun=change is None
        and request.args.get("run") == "1"
        and lab.payments.scenario is not None,
        **panels_context(lab),
    )


@bp.post("/lab/<lab_id>")
def open_link(lab_id: str) -> BaseResponse:
    """Apply a link's change, given as query arguments or form fields (see
    :func:`lab_page`): presenter mode, then a lesson of any lab (its scenario afresh,
    progress kept), else a scenario of lab ``lab`` (the payment lab by default). 303 to
    that lab's page, keeping ``run=1``.

    :raises Problem: 404 for an unknown lab, scenario or lesson; 422 for ``present``
        other than 0 or 1, or an argument given twice differently; 409 in a read-only
        replay (presenter mode excepted); 503 when a new lab gets no slot.
    """
    params = request.values
    present = check_link(params)  # before anything changes
    changes = present is not None or "scenario" in params or "lesson" in params
    page = params.get("lab", "payments")
    if not changes:  # nothing to apply: no lab is made for it
        return redirect(PAGES[page].url(lab_id), 303)
    lab = lab_to_write(lab_id)
    run = params.get("run") == "1"
    if present is not None:
        lab.set_view(present=present == "1")
    lesson = params.get("lesson")
    if lesson is not None:
        opened = lab.open_lesson(lesson)
        return redirect_to_lab(lab, run=run, page=opened.lab)
    name = params.get("scenario")
    if name is not None:
        if name == "none":
            lab.leave_scenario(lab=page)
        else:
            lab.apply_scenario(name, fixed=params.get("fixed") == "1", lab=page)
        return redirect_to_lab(lab, run=run and name != "none", page=page)
    return redirect_to_lab(lab, page=page)


def redirect_to_lab(lab: Workspace, *, run: bool = False, page: str = "payments") -> BaseResponse:
    """303 to the page of lab ``page`` (``run=1`` makes the page click the steps itself)."""
    if run:
        return redirect(PAGES[page].url(lab.id, run="1"), 303)
    return redirect(PAGES[page].url(lab.id), 303)


@bp.post("/lab/<lab_id>/language")
def set_language(lab_id: str) -> BaseResponse:
    """Switch the lab's language (form field ``language``: ``en`` or ``vi``); 303 back to
    the page of lab ``lab`` (a form field; the payment lab by default).

    :raises Problem: 422 for another language.
    """
    lab = lab_to_write(lab_id)
    choice = request.form.get("language", "")
    if choice not in LANGUAGES:
        raise Problem(
            422,
            "unknown-language",
            N_("Unknown language"),
            Text("The lab speaks: %(languages)s.", languages=", ".join(LANGUAGES)),
        )
    lab.set_view(language=choice)
    page = PAGES.get(request.form.get("lab", "payments"), PAGES["payments"])
    return redirect(page.url(lab.id), 303)  # back to the page the switch was on
