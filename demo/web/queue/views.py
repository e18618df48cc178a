"""The queue lab's page, ``GET /lab/<id>/queue``, and the fragments its buttons swap in.

Each button is a form POST to one view here that calls one method of the lab
(:class:`~demo.queue.lab.QueueLab`) and answers htmx with the panels (a browser without
script gets 303 back to the page). A GET never creates or changes a lab; bad input is a
422 problem (RFC 9457) from the core's own rules.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, redirect, render_template, request
from werkzeug.wrappers import Response as BaseResponse

from ...engine.problems import Problem
from ...engine.text import N_, Text
from ...queue.jobs import EXAMPLE
from ...queue.scenarios import NEXT_JOB, POISON_JOB, SCENARIOS
from ...queue.settings import Settings
from ...workspace import Workspace
from .. import is_htmx, lab_to_read, lab_to_write
from ..nav import PAGES
from .panels import panels_context, poll_s

bp = Blueprint("queue_page", __name__)

JOBS = {"42": EXAMPLE, "43": NEXT_JOB, "poison": POISON_JOB}
"""The jobs the producer card offers: the article's, the next invoice, a poison job."""

ADVANCES_S = (31, 60)
"""The clock buttons, s: just past the default 30 s visibility timeout, and a minute."""


@bp.get("/lab/<lab_id>/queue")
def page(lab_id: str) -> str:
    """The queue lab's page: the producer, the settings, the workers, and the panels.

    :raises Problem: 404 for a bad lab id; 503 ``broker-unavailable``.
    """
    lab = lab_to_read(lab_id)
    return render_template(
        "queue/lab.html",
        current_lab="queue",
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

    :raises Problem: 422 ``invalid-job`` for another choice; 503 ``queue-full``.
    """
    lab = lab_to_write(lab_id)
    job = JOBS.get(request.form.get("job", "42"))
    if job is None:
        raise _bad_choice("job", JOBS)
    lab.queue.enqueue(dict(job))
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/producer-retry")
def producer_retry(lab_id: str) -> BaseResponse:
    """The producer sends its last job again: a second message for one job id."""
    lab = lab_to_write(lab_id)
    lab.queue.producer_retry()
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/work")
def work(lab_id: str) -> BaseResponse:
    """One worker takes one message (``every=1``: every worker at once, on threads).

    :raises Problem: 429 ``workers-busy``; 503 ``broker-unavailable``.
    """
    lab = lab_to_write(lab_id)
    if request.form.get("every") == "1":
        lab.queue.work_all()
    else:
        lab.queue.work()
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/clock")
def advance_clock(lab_id: str) -> BaseResponse:
    """Move the workspace's clock (form field ``advance_s``, s), as ``POST
    /lab/<id>/api/clock`` does: visibility timeouts run on it.

    :raises Problem: 422 unless 1 <= ``advance_s`` <= 30 days.
    """
    lab = lab_to_write(lab_id)
    raw = request.form.get("advance_s", "")
    lab.advance(int(raw) if raw.isdigit() else raw)
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/settings")
def update_settings(lab_id: str) -> BaseResponse:
    """Change one setting: form field ``setting`` names it, the field of that name holds
    the value (a checkbox sends ``on`` when checked and nothing when not).

    :raises Problem: 422 ``invalid-settings`` (the core's rules); nothing changes then.
    """
    lab = lab_to_write(lab_id)
    name = request.form.get("setting", "")
    lab.queue.update_settings({name: _setting_value(name, request.form.get(name))})
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
        body[name] = _number(form.get(name, ""), kind)
    lab.queue.simulate(body)
    return _answer(lab)


@bp.post("/lab/<lab_id>/queue/run")
def run_scenario(lab_id: str) -> BaseResponse:
    """Run scenario ``scenario`` afresh, clicks and all (``fixed=1``: with its fix), as
    :meth:`~demo.queue.lab.QueueLab.play` does; an open lesson on it stays open.

    :raises Problem: 404 ``unknown-scenario``.
    """
    lab = lab_to_write(lab_id)
    name, fixed = request.form.get("scenario", ""), request.form.get("fixed") == "1"
    lab.apply_scenario(name, fixed=fixed, lab="queue")  # the clock back to now, too
    lab.queue.play(name, fixed=fixed)
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


def _setting_value(name: str, raw: str | None) -> object:
    """A form value as the setting's type: a checkbox is on when sent, a number field an
    int; anything else as sent, so the core's rules refuse it by name."""
    default = Settings.__dataclass_fields__.get(name)
    if default is not None and isinstance(getattr(Settings(), name), bool):
        return raw is not None
    if default is not None and isinstance(getattr(Settings(), name), int):
        return _number(raw or "", int)
    return raw


def _number(raw: str, kind: type[int] | type[float]) -> object:
    """``raw`` as ``kind`` when it reads as one, else ``raw`` (the core refuses it)."""
    try:
        return kind(raw)
    except ValueError:
        return raw


def _bad_choice(name: str, choices: dict[str, Any]) -> Problem:
    return Problem(
        422,
        "invalid-job",
        N_("Unknown job choice"),
        Text("%(name)s must be one of %(choices)s.", name=name, choices=", ".join(choices)),
    )
