"""The queue lab's page, ``GET /lab/<id>/queue``, and the fragments its buttons swap in.

Each button is a form POST to one view here that calls one method of the lab
(:class:`~demo.queue.lab.QueueLab`) and answers htmx with the panels (a browser without
script gets 303 back to the page). A GET never creates or changes a lab; bad input is a
422 problem (RFC 9457) from the core's own rules.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, Response, redirect, render_template, request
from werkzeug.wrappers import Response as BaseResponse

from ...engine.problems import Problem
from ...engine.text import N_, Text
from ...queue.scenarios import SCENARIOS
from ...queue.settings import Settings
from ...workspace import Workspace
from .. import is_htmx, lab_to_read, lab_to_write
from ..links import check_link, offer
from ..nav import PAGES
from .panels import JOBS, panels_context, poll_s

bp = Blueprint("queue_page", __name__)


ADVANCES_S = (31, 60)
"""The clock buttons, s: just past the default 30 s visibility timeout, and a minute."""


@bp.get("/lab/<lab_id>/queue")
def page(lab_id: str) -> BaseResponse | str:
    """The queue lab's page: the producer, the settings, the workers, and the panels.

    A GET changes nothing (RFC 9110 §9.2.1): a link's ``?lesson=``, ``?scenario=`` or
    ``?present=`` is offered as a button that POSTs it (a link without ``lab=queue`` is
    sent on to the same address with it, so its scenario is this lab's and it lands here).

    :raises Problem: 404 for a bad lab id, or an unknown scenario or lesson; 422 for a
        ``present`` other than 0 or 1; 503 ``broker-unavailable``.
    """
    lab = lab_to_read(lab_id)
    check_link(request.args, "queue")  # before the redirect keeps only the first values
    if {"scenario", "present"} & set(request.args) and "lab" not in request.args:
        return redirect(PAGES["queue"].url(lab_id, **request.args.to_dict(), lab="queue"), 303)
    return render_template(
        "queue/lab.html",
        current_lab="queue",
        offer=offer(lab),
        scenarios=SCENARIOS.values(),
        poll_s=poll_s(),
        **panels_context(lab),
    )


@bp.get("/lab/<lab_id>/queue/panels")
def panels(lab_id: str) -> BaseResponse:
    """The panels, for polling: 204 (nothing to swap) while ``since`` is current."""
    lab = lab_to_read(lab_id)
    if request.args.get("since") == str(lab.version):
        return Response(status=204)
    return _panels(lab)


@bp.post("/lab/<lab_id>/queue/enqueue")
def enqueue(lab_id: str) -> BaseResponse:
    """The producer enqueues one job (form field ``job``: ``42``, ``43`` or ``poison``).

    :raises Problem: 422 ``invalid-choice`` for another choice; 503 ``queue-full``.
    """
    lab = lab_to_write(lab_id)
    job = JOBS.get(request.form.get("job", "42"))
    if job is None:
        raise _bad_choice("job", JOBS)
    lab.queue.enqueue(dict(job))
    lab.queue.by_hand("enqueue", dict(job))
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/producer-retry")
def producer_retry(lab_id: str) -> BaseResponse:
    """The producer sends its last job again: a second message for one job id."""
    lab = lab_to_write(lab_id)
    lab.queue.producer_retry()
    lab.queue.by_hand("producer_retry")
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/work")
def work(lab_id: str) -> BaseResponse:
    """One worker takes one message (``every=1``: every worker at once, on threads).

    :raises Problem: 429 ``workers-busy``; 503 ``broker-unavailable``.
    """
    lab = lab_to_write(lab_id)
    every = request.form.getlist("every")  # sent twice is ambiguous: refused too
    if every not in ([], ["1"]):
        raise _bad_choice("every", {"1": None})
    entries = lab.queue.work_all() if every == ["1"] else [lab.queue.work()]
    early = all(entry.too_early for entry in entries)
    lab.queue.by_hand("work_all" if every else "work", received=not early)
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/clock")
def advance_clock(lab_id: str) -> BaseResponse:
    """Move the workspace's clock (form field ``advance_s``, s), as ``POST
    /lab/<id>/api/clock`` does: visibility timeouts run on it.

    :raises Problem: 422 unless 1 <= ``advance_s`` <= 30 days.
    """
    lab = lab_to_write(lab_id)
    seconds = _number(request.form.get("advance_s", ""), int)
    lab.advance(seconds)
    lab.queue.by_hand("advance", seconds)
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/settings")
def update_settings(lab_id: str) -> BaseResponse:
    """Change one setting of :data:`PAGE_SETTINGS`: form field ``setting`` names it, the
    field of that name holds the value (a checkbox sends ``on`` when checked and nothing
    when not; a number is written in plain digits).

    :raises Problem: 422 ``invalid-settings`` (the core's rules, and step mode, which this
        page has no buttons for); nothing changes then.
    """
    lab = lab_to_write(lab_id)
    name = request.form.get("setting", "")
    if name not in PAGE_SETTINGS:
        raise Problem(
            422,
            "invalid-settings",
            N_("Invalid settings"),
            Text("The page changes these settings: %(names)s.", names=", ".join(PAGE_SETTINGS)),
        )
    changes = {name: _setting_value(name, request.form.get(name))}
    lab.queue.update_settings(changes)
    lab.queue.by_hand("settings", changes)
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/simulate")
def simulate(lab_id: str) -> BaseResponse:
    """Run the delivery-semantics simulator (form fields ``mode``, ``messages``,
    ``loss``, ``ack_loss``, ``seed``).

    :raises Problem: 422 ``invalid-simulation`` (the core's rules).
    """
    lab = lab_to_write(lab_id)
    form = request.form
    body: dict[str, Any] = {"mode": form.get("mode", "")}
    for name, kind in (("messages", int), ("loss", float), ("ack_loss", float), ("seed", int)):
        if name in form or name == "messages":  # loss, ack_loss and seed default to 0
            body[name] = _number(form.get(name, ""), kind)
    lab.queue.simulate(body)
    lab.queue.by_hand("simulate", body)
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/run")
def run_scenario(lab_id: str) -> BaseResponse:
    """Run scenario ``scenario`` afresh, clicks and all (``fixed=1``: with its fix), as
    :meth:`~demo.queue.lab.QueueLab.play` does; an open lesson on it stays open.

    :raises Problem: 404 ``unknown-scenario``.
    """
    lab = lab_to_write(lab_id)
    name, fixed = _scenario_form()
    lab.apply_scenario(name, fixed=fixed, lab="queue")  # the clock back to now, too
    lab.queue.play(name, fixed=fixed)
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/next")
def next_step(lab_id: str) -> BaseResponse:
    """Next step, as on the other labs' cards: one click of scenario ``scenario``
    (``fixed=1``: with its fix), the first starting it afresh.

    :raises Problem: 404 ``unknown-scenario``; 409 in a read-only replay.
    """
    lab = lab_to_write(lab_id)
    name, fixed = _scenario_form()
    with lab.queue.stepping:
        if lab.queue.next_click(name, fixed=fixed) == 0:
            lab.apply_scenario(name, fixed=fixed, lab="queue")
        lab.queue.play_next()
    return _answer(lab)


def _scenario_form() -> tuple[str, bool]:
    """The form's ``scenario`` and ``fixed`` ("0" or "1").

    :raises Problem: 422 for another ``fixed``.
    """
    name, flag = request.form.get("scenario", ""), request.form.get("fixed", "0")
    if flag not in ("0", "1"):
        raise _bad_choice("fixed", {"0": None, "1": None})
    return name, flag == "1"


@bp.post("/lab/<lab_id>/queue/lessons/<name>/hint")
def hint(lab_id: str, name: str) -> BaseResponse:
    """Reveal the next hint of lesson ``name``, as the other labs' cards do: the panels
    (htmx), else 303 to the page.

    :raises Problem: 404 for an unknown lesson; 409 in a read-only replay.
    """
    lab = lab_to_write(lab_id)
    lab.show_hint(name)
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/step")
def step(lab_id: str) -> BaseResponse:
    """Step mode, as ``POST .../queue/api/step`` does (step mode itself is turned on
    through the API): form field ``request`` (a paused work call's id) lets it go on one
    step, with ``to_end=1`` to its end; ``release_all=1`` lets every paused call finish;
    ``off=1`` turns step mode off, which releases them all too.

    :raises Problem: 404 when the call is not paused, 409 when it is not at a step, 422
        for another form.
    """
    lab = lab_to_write(lab_id)
    queue, form = lab.queue, request.form
    # Exactly one of the three forms: two at once would be ambiguous.
    off, release = form.get("off") == "1", form.get("release_all") == "1"
    stepping = _INTEGER.fullmatch(form.get("request", "")) is not None
    if off + release + stepping != 1:
        raise _bad_choice("request", {"<id>": None, "release_all=1": None, "off=1": None})
    if off:
        queue.update_settings({"step_mode": False})
    elif release:
        queue.release_all()
    elif form.get("to_end", "0") in ("0", "1"):
        request_id = int(form["request"])  # plain digits: checked above
        queue.stepper.settle(request_id, queue.step(request_id, to_end=form.get("to_end") == "1"))
    else:
        raise _bad_choice("request", {"<id>": None, "release_all=1": None, "off=1": None})
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/reset")
def reset(lab_id: str) -> BaseResponse:
    """Start the queue lab afresh: empty queue, tables and mailbox; settings kept."""
    lab = lab_to_write(lab_id)
    lab.queue.reset()
    return _answer(lab)


def _answer(lab: Workspace) -> BaseResponse:
    """The panels for htmx, else 303 back to the page (a form without script)."""
    if is_htmx():
        return _panels(lab)
    return redirect(PAGES["queue"].url(lab.id), 303)


def _panels(lab: Workspace) -> Response:
    html = render_template("queue/_partials/panels.html", poll_s=poll_s(), **panels_context(lab))
    response = Response(html, 200, mimetype="text/html")
    response.headers["Cache-Control"] = "no-store"
    response.vary.add("HX-Request")
    return response


PAGE_SETTINGS = (
    "delivery", "crash_at", "visibility_timeout_s", "max_attempts", "workers",
    "dedup", "outbox", "provider_dedup",
)  # fmt: skip
"""The settings the page's controls change (step mode has no Step buttons here)."""

_INTEGER = re.compile(r"0|[1-9][0-9]{0,17}")
_DECIMAL = re.compile(r"(0|[1-9][0-9]{0,6})(\.[0-9]{1,6})?")


def _setting_value(name: str, raw: str | None) -> object:
    """A form value as the setting's type: a checkbox is on when it sends ``on`` and off
    when it sends nothing, a number is plain digits; anything else goes on as sent, so
    the core's rules refuse it by name."""
    default = getattr(Settings(), name)
    if isinstance(default, bool):
        return {None: False, "on": True}.get(raw, raw)
    if isinstance(default, int):
        return _number(raw or "", int)
    return raw


def _number(raw: str, kind: type[int] | type[float]) -> object:
    """``raw`` as ``kind`` when written plainly (digits, and for a decimal at most six
    after the point), else ``raw`` itself, which the core's rules then refuse (422)."""
    rule = _INTEGER if kind is int else _DECIMAL
    return kind(raw) if rule.fullmatch(raw) else raw


def _bad_choice(name: str, choices: dict[str, Any]) -> Problem:
    return Problem(
        422,
        "invalid-choice",
        N_("Unknown choice"),
        Text("%(name)s must be one of %(choices)s.", name=name, choices=", ".join(choices)),
    )
