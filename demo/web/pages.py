"""The HTML side: the lab page and the fragments htmx swaps into it.

The page *includes* the same partials that htmx later swaps in, so one template serves
both the first render and every update.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, jsonify, redirect, render_template, request, url_for
from flask_babel import format_decimal
from werkzeug.wrappers import Response as BaseResponse

from ..engine.problems import Problem
from ..engine.stepping import PAUSED_MS
from ..engine.text import N_, Text, translate
from ..engine.timeline import Step
from ..lessons import LESSONS, PATH, Lesson
from ..payments.explain import explain
from ..payments.gateway import summarise
from ..payments.idempotency import PROFILES
from ..payments.requests import RequestEntry
from ..payments.scenarios import SCENARIOS
from ..payments.step_names import step_at, step_name
from ..registry import LabRegistry
from ..workspace import Workspace
from . import lab_to_read, lab_to_write
from .code import handler_lines, where
from .i18n import LANGUAGES
from .openapi import document
from .sequence import diagram

bp = Blueprint("pages", __name__)

TIMELINE_LANES = 8
"""Requests shown on the timeline (the log keeps more; ``GET /api/state`` lists them)."""

TABLE_ROWS = 6
"""Newest rows shown in the store and ledger tables; the tally counts them all."""


KEY_TEMPLATE = "t1:u7:pay:order-{order}:v1"
"""A stable key per intent: tenant, actor, operation, business id, version."""


def intent_key(order_id: str) -> str:
    """The idempotency key the page derives for paying ``order_id``: one intent, one key."""
    return KEY_TEMPLATE.replace("{order}", order_id)


@bp.get("/")
def index() -> BaseResponse:
    """Redirect to a fresh lab with a random, unguessable id."""
    return redirect(url_for("pages.lab_page", lab_id=LabRegistry.new_id()), 303)


@bp.get("/openapi.json")
def openapi() -> BaseResponse:
    """The OpenAPI 3.1 document of the JSON API."""
    return jsonify(document(tuple(LANGUAGES)))


LINK_ARGS = ("scenario", "fixed", "run", "lesson", "present")
"""The query arguments of a shareable link (``?lesson=race``, ``?present=1``, …)."""


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

    :raises Problem: 404 for a bad lab id, or an unknown scenario or lesson.
    """
    lab = lab_to_read(lab_id)
    offer = _offer(lab)
    last = lab.payments.latest_charge()
    order_id = lab.payments.current_order
    amount = last.amount if last and last.order_id == order_id else 100_000
    return render_template(
        "lab.html",
        form=_form(order_id, amount),
        poll_s=_poll_s(),
        scenarios=SCENARIOS.values(),
        client=lab.payments.client,
        key_template=KEY_TEMPLATE,
        offer=offer,
        autorun=offer is None
        and request.args.get("run") == "1"
        and lab.payments.scenario is not None,
        **panels_context(lab),
    )


@bp.post("/lab/<lab_id>")
def open_link(lab_id: str) -> BaseResponse:
    """Apply a link's change, given as query arguments or form fields (see
    :func:`lab_page`): presenter mode, then a lesson (its scenario afresh, progress kept),
    else a scenario. 303 to the plain lab address, keeping ``run=1``.

    :raises Problem: 404 for an unknown scenario or lesson; 409 in a read-only replay
        (presenter mode excepted); 503 when a new lab gets no slot.
    """
    params = request.values
    changes = params.get("present") in ("0", "1") or "scenario" in params or "lesson" in params
    if not changes:  # nothing to apply: no lab is made for it
        return redirect(url_for("pages.lab_page", lab_id=lab_id), 303)
    _check_names(params.get("lesson"), params.get("scenario"))  # before anything changes
    lab = lab_to_write(lab_id)
    run = params.get("run") == "1"
    if params.get("present") in ("0", "1"):
        lab.set_view(present=params["present"] == "1")
    lesson = params.get("lesson")
    if lesson is not None:
        lab.open_lesson(lesson)
        return redirect_to_lab(lab, run=run)
    name = params.get("scenario")
    if name is not None:
        if name == "none":
            lab.leave_scenario()
        else:
            lab.apply_scenario(name, fixed=params.get("fixed") == "1")
        return redirect_to_lab(lab, run=run and name != "none")
    return redirect_to_lab(lab)


@dataclass(frozen=True)
class Offer:
    """What a link would change, offered on its page with one button."""

    text: str | Text
    button: str | Text
    action: str
    also: str | Text = ""
    """A second change the same link makes (presenter mode beside a lesson or scenario)."""


def _check_names(lesson: str | None, scenario: str | None) -> None:
    """:raises Problem: 404 for an unknown lesson or scenario (the lab's own problems)."""
    if lesson is not None and lesson not in LESSONS:
        raise Problem(
            404,
            "unknown-lesson",
            N_("No such lesson"),
            Text("Lessons are: %(names)s.", names=", ".join(LESSONS)),
        )
    if scenario is not None and scenario != "none" and scenario not in SCENARIOS:
        raise Problem(
            404,
            "unknown-scenario",
            N_("No such scenario"),
            Text("Scenarios are: %(names)s.", names=", ".join(SCENARIOS)),
        )


def _offer(lab: Workspace) -> Offer | None:
    """The change a link's query asks for, or ``None``.

    :raises Problem: 404 for an unknown scenario or lesson (as the POST would).
    """
    args = request.args
    present = args.get("present") if args.get("present") in ("0", "1") else None
    lesson, scenario = args.get("lesson"), args.get("scenario")
    if present is None and lesson is None and scenario is None:
        return None
    _check_names(lesson, scenario)
    query: dict[str, Any] = {name: args[name] for name in LINK_ARGS if name in args}
    action = url_for("pages.open_link", lab_id=lab.id, **query)
    # A link may carry presenter mode too: the offer names both changes.
    also = (
        N_("It also switches this lab to presenter mode.")
        if present == "1"
        else N_("It also switches presenter mode off.")
        if present == "0"
        else ""
    )
    if lesson is not None:
        n = [item.name for item in PATH].index(lesson) + 1
        title = SCENARIOS[lesson].title
        return Offer(
            Text("This link opens lesson %(n)s, %(title)s, afresh in this lab.", n=n,
                 title=Text(title)),
            Text("Open lesson %(n)s", n=n),
            action,
            also,
        )  # fmt: skip
    if scenario is not None and scenario != "none":
        name = Text(SCENARIOS[scenario].title)
        fixed = args.get("fixed") == "1"
        return Offer(
            Text("This link starts the scenario %(title)s afresh in this lab, with its fix.",
                 title=name) if fixed
            else Text("This link starts the scenario %(title)s afresh in this lab.", title=name),
            N_("Start the scenario"),
            action,
            also,
        )  # fmt: skip
    if scenario == "none":
        return Offer(N_("This link leaves the scenario."), N_("Leave the scenario"), action, also)
    if present == "1":
        return Offer(
            N_("This link switches this lab to presenter mode."),
            N_("Start presenter mode"),
            action,
        )
    return Offer(N_("This link switches presenter mode off."), N_("Leave presenter mode"), action)


def redirect_to_lab(lab: Workspace, *, run: bool = False) -> BaseResponse:
    """303 to the lab's plain address (``run=1`` makes the page click the steps itself)."""
    if run:
        return redirect(url_for("pages.lab_page", lab_id=lab.id, run="1"), 303)
    return redirect(url_for("pages.lab_page", lab_id=lab.id), 303)


@bp.get("/lab/<lab_id>/panels")
def panels(lab_id: str) -> BaseResponse:
    """The four panels, for polling: 204 (nothing to swap) while ``since`` is current."""
    lab = lab_to_read(lab_id)
    stale = request.args.get("settings_version", str(lab.payments.settings_version)) != str(
        lab.payments.settings_version
    )
    if request.args.get("since") == str(lab.version) and not stale:
        return Response(status=204)
    return panels_response(lab, settings_stale=stale)


@bp.get("/lab/<lab_id>/sequence.svg")
def sequence_svg(lab_id: str) -> Response:
    """The sequence diagram of the last requests, as SVG (``?download=1`` to save it)."""
    lab = lab_to_read(lab_id)
    summary = summarise(lab.payments.gateway.ledger())
    svg = render_template("sequence.svg", d=diagram(lab.payments.requests(), summary))
    response = Response(svg, 200, mimetype="image/svg+xml")
    response.headers["Cache-Control"] = "no-store"
    if request.args.get("download") == "1":
        response.headers["Content-Disposition"] = 'attachment; filename="idempotency-sequence.svg"'
    return response


@bp.post("/lab/<lab_id>/language")
def set_language(lab_id: str) -> BaseResponse:
    """Switch the lab's language (form field ``language``: ``en`` or ``vi``); 303 back.

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
    return redirect(url_for("pages.lab_page", lab_id=lab.id), 303)


@bp.post("/lab/<lab_id>/new-order")
def new_order(lab_id: str) -> str:
    """The order form for a new intent: the next unused order id, and so a new key."""
    lab = lab_to_write(lab_id)
    current = request.form.get("order_id", "")
    amount = request.form.get("amount", "")
    keep = re.fullmatch(r"[0-9]{1,15}", amount) is not None
    return render_template(
        "_partials/order_form.html",
        form=_form(lab.payments.new_order_id(after=current), int(amount) if keep else 100_000),
        lab=lab,
        key_template=KEY_TEMPLATE,
    )


@bp.app_template_filter("money")
def money(amount: int, currency: str) -> str:
    """``100000, "VND"`` → ``"100,000 VND"`` (amounts are in minor units), with the digit
    grouping of the page's language (``"100.000 VND"`` in Vietnamese)."""
    return f"{format_decimal(amount)} {currency}"


@bp.app_template_filter("duration")
def duration(seconds: float) -> str:
    """``86400`` → ``"24h 00m"``; ``90`` → ``"1m 30s"``."""
    return _duration(seconds)


@bp.app_template_global("badge")
def badge(entry: RequestEntry) -> str:
    """The outcome badge's words: CHARGED, REPLAYED, 409 CONFLICT, ERROR, IN FLIGHT, …"""
    if entry.outcome == "conflict":
        word = N_("%(status)s CONFLICT") if entry.status == 409 else N_("%(status)s REFUSED")
        return translate(Text(word, status=entry.status))
    if entry.outcome == "crashed":
        return translate(N_("CRASHED"))
    if not entry.delivered:
        return translate(N_("CHARGED · NO RESPONSE"))
    words: dict[str, str | Text] = {
        "charged": N_("CHARGED"),
        "recovered": N_("RECOVERED"),
        "replayed": N_("REPLAYED"),
        "in_flight": N_("IN FLIGHT"),
        "in_use": Text("%(status)s IN USE", status=entry.status),
        "in_doubt": Text("%(status)s IN DOUBT", status=entry.status),
        "declined": N_("402 DECLINED"),
    }
    return translate(words.get(entry.outcome, N_("ERROR")))


@bp.app_template_filter("step_name")
def step_name_filter(name: str, occurrence: int = 1) -> str:
    """A step's code name as a sentence shows it: ``lookup``, or ``lookup (tra cứu)``;
    the second ``lookup`` of a request (``occurrence`` 2) is ``lookup again``, as on the
    timeline."""
    named = step_at(name, occurrence)
    return translate(named) if isinstance(named, Text) else named


ACTIONS = {
    "Pay": N_("Pay"),
    "Retry": N_("Retry"),
    "Double-submit A": N_("Double-submit A"),
    "Double-submit B": N_("Double-submit B"),
    "Change amount": N_("Change amount"),
    "Retry with a new key": N_("Retry with a new key"),
    "Pay (second tab)": N_("Pay (second tab)"),
}
"""The page's buttons by their ``data-action`` names (sent as ``X-Lab-Action``)."""


@bp.app_template_filter("action")
def action(name: str) -> str:
    """A request's action in the page's language; an unknown one (``API``) as sent."""
    return translate(ACTIONS[name]) if name in ACTIONS else name


# -- rendering helpers used by the API views too ----------------------------------


def panels_response(
    lab: Workspace,
    *,
    focus: RequestEntry | None = None,
    status: int = 200,
    settings_stale: bool = False,
) -> Response:
    """The panels fragment with ``status`` (htmx swaps every status, see base.html), and
    the settings form out of band when the page shows settings another tab changed."""
    html = render_template(
        "_partials/panels.html",
        poll_s=_poll_s(),
        settings_stale=settings_stale,
        **panels_context(lab, focus),
    )
    response = Response(html, status, mimetype="text/html")
    response.vary.add("HX-Request")
    return response


def settings_response(lab: Workspace) -> Response:
    """The settings fragment, plus the panels out of band (the explanation may change)."""
    html = render_template(
        "_partials/settings_changed.html", poll_s=_poll_s(), **panels_context(lab)
    )
    return Response(html, 200, mimetype="text/html")


def panels_context(lab: Workspace, focus: RequestEntry | None = None) -> dict[str, Any]:
    """Everything the panels show, computed from the lab's real state.

    ``version`` is read first: anything that changes later bumps it, so the page can
    tell a stale render (a slower response of two) from a fresh one.
    """
    version = lab.version
    entries = lab.payments.requests()
    charges = lab.payments.gateway.ledger()
    summary = summarise(charges)
    emails = lab.payments.emails()
    now = lab.now()
    records = lab.payments.records()[::-1]
    settings = lab.payments.settings
    # The open lesson's first button, which the empty states name.
    first_click = (
        lab.payments.scenario.clicks(lab.payments.fixed)[0]
        if lab.payments.scenario and lab.payments.scenario.script
        else "Pay"
    )
    return {
        "version": version,
        "lab": lab,
        "settings": settings,
        "scenario": lab.payments.scenario,
        "fixed": lab.payments.fixed,
        "explanation": explain(
            entries,
            summary,
            focus,
            settings,
            len(emails),
            first_click,
            in_scenario=lab.payments.scenario is not None,
        ),
        "first_click": first_click,
        "clusters": timeline(entries[-TIMELINE_LANES:]),
        "records": [
            {"store": where, "record": r, "expires_in": _duration(r.expires_at - now)}
            for where, r in records[:TABLE_ROWS]
        ],
        "more_records": max(len(records) - TABLE_ROWS, 0),
        "charges": charges[::-1][:TABLE_ROWS],
        "more_charges": max(len(charges) - TABLE_ROWS, 0),
        "summary": summary,
        "emails": len(emails),
        # The mailbox itself (newest first) and the outbox waiting to be relayed (lesson 10).
        "mailbox": [
            {"email": m, "ago": _duration(now - m.sent_at) if m.sent_at else None}
            for m in emails[::-1][:TABLE_ROWS]
        ],
        "outbox": lab.payments.outbox(),
        # One receipt per paid order is what should happen; the mailbox is what did.
        "expected_emails": summary.intended if settings.email != "off" else None,
        "clock_offset": _duration(lab.clock_offset_s()) if lab.clock_offset_s() else None,
        "profiles": PROFILES.values(),
        **_lesson_context(lab),
        **(_step_context(lab) if settings.step_mode or lab.payments.stepper.paused() else {}),
    }


def _lesson_context(lab: Workspace) -> dict[str, Any]:
    """The lessons path with each lesson's state, and the open lesson's progress."""
    achieved = lab.achieved()
    lesson = lab.lesson
    progress = lab.progress.get(lesson.name) if lesson else None
    return {
        "path": [(n, item, item.name in achieved) for n, item in enumerate(PATH, 1)],
        "lesson": lesson,
        "progress": progress,
        # Outside a lesson, the button opens the first one not yet achieved.
        "next_lesson": _next(lesson.name)
        if lesson
        else next((item for item in PATH if item.name not in achieved), PATH[0]),
        "achieved_count": len(achieved),
        "scenarios_by_name": SCENARIOS,
    }


def _next(name: str) -> Lesson | None:
    names = [lesson.name for lesson in PATH]
    at = names.index(name)
    return PATH[at + 1] if at + 1 < len(PATH) else None


def _step_context(lab: Workspace) -> dict[str, Any]:
    """Step mode: the paused requests, and the handler's lines with who stands where."""
    paused = lab.payments.stepper.paused()
    at: dict[str, list[str]] = {}
    for p in paused:
        point = "lock#blocked" if p["blocked_by"] else where(p["step"], p["occurrence"])
        at.setdefault(point, []).append(p["label"])
    return {"paused": paused, "code_lines": handler_lines(), "at": at}


# -- the timeline's geometry -------------------------------------------------------


@dataclass(frozen=True)
class Mark:
    """A step on a lane: where it falls (0-1000 on the bar) and what it says."""

    name: str
    x: float
    at_ms: float
    text: str | Text


@dataclass(frozen=True)
class Lane:
    """One request on the timeline: its bar from ``x0`` to ``x1`` (0-1000) and its steps."""

    entry: RequestEntry
    x0: float
    x1: float
    start_ms: float
    marks: tuple[Mark, ...]
    paused_ms: float = 0.0
    """In step mode, the time it stood paused waiting for the attendee's Step, in ms."""


@dataclass(frozen=True)
class Cluster:
    """Requests that overlapped in time, drawn on one shared axis of ``span_ms``."""

    lanes: tuple[Lane, ...]
    span_ms: float


GAP_S = 0.05  # requests closer than this share an axis, so the overlap is visible
MIN_SPAN_MS = 50.0  # a 1 ms replay draws as a sliver, not as a long bar


def timeline(entries: Sequence[RequestEntry]) -> list[Cluster]:
    """Group requests that overlap (or nearly) into clusters, newest cluster first."""
    now = time.perf_counter()
    groups: list[list[RequestEntry]] = []
    group_end = float("-inf")
    for entry in sorted(entries, key=lambda e: e.started):
        end = entry.finished or now
        if not groups or entry.started > group_end + GAP_S:
            groups.append([])
            group_end = end
        groups[-1].append(entry)
        group_end = max(group_end, end)
    return [_cluster(group, now) for group in reversed(groups)]


def _cluster(group: list[RequestEntry], now: float) -> Cluster:
    origin = group[0].started
    span_ms = max(max((e.finished or now) - origin for e in group) * 1000, MIN_SPAN_MS)

    def x(ms: float) -> float:
        return round(min(ms / span_ms, 1.0) * 1000, 1)

    lanes = []
    for entry in group:
        start_ms = (entry.started - origin) * 1000
        end_ms = ((entry.finished or now) - origin) * 1000
        deduplicated = entry.step("gateway replay") is not None
        steps = list(entry.steps)  # a request in flight may add a step meanwhile
        marks = tuple(
            sorted(
                (
                    Mark(s.name, x(start_ms + at), start_ms + at, text)
                    for s, at in zip(steps, _begin_times(steps), strict=True)
                    for text in [_step_text(s.name, s.detail, deduplicated)]
                    if text
                ),
                key=lambda m: m.at_ms,
            )
        )
        # In step mode the attendee's think time is part of the wall clock: say whose it is.
        pauses = tuple(
            Mark("paused", x(start_ms + s.at_ms), start_ms + s.at_ms, _paused_text(ms))
            for s in steps
            for ms in [float(s.detail.get(PAUSED_MS) or 0)]
            if ms >= 1
        )
        marks = tuple(sorted(marks + pauses, key=lambda m: m.at_ms))
        paused_ms = sum(float(s.detail.get(PAUSED_MS) or 0) for s in steps)
        lane = Lane(entry, x(start_ms), max(x(end_ms), x(start_ms) + 4), start_ms, marks, paused_ms)
        lanes.append(lane)
    return Cluster(tuple(lanes), span_ms)


def _begin_times(steps: Sequence[Step]) -> list[float]:
    """When each step began, in ms: never before the step traced before it (a duration
    rounded to 0.1 ms could otherwise put the charge before the reservation)."""
    times, previous = [], 0.0
    for step in steps:
        previous = max(_began_ms(step), previous)
        times.append(previous)
        previous = max(previous, step.at_ms)
    return times


def _began_ms(step: Step) -> float:
    """When a step began: a step that took time (the charge, the lock wait) is traced
    when it ends, with its duration."""
    took = step.detail.get("ms") if step.name == "gateway charge" else step.detail.get("waited_ms")
    return step.at_ms - float(took or 0)


def _step_text(name: str, detail: dict[str, Any] | Any, deduplicated: bool = False) -> str | Text:
    """The words a step shows on the timeline; empty for steps not worth a label.

    A step point's words begin with its one name (:func:`~demo.step_names.step_at`), the
    name the step panel, the code view and the hints give it: ``lookup again: miss``."""
    if name == "validate":
        return "" if detail.get("ok") else N_("invalid")
    if name == "gateway charge":
        ms = f"{float(detail.get('ms', 0)):.0f}"
        if deduplicated:
            return Text("gateway charge: no new money, %(ms)s ms", ms=ms)
        return Text("gateway charge, %(ms)s ms", ms=ms)
    if name == "gateway replay":
        return Text(
            "gateway returned %(charge)s again: no new money", charge=detail.get("charge_id")
        )
    if name == "crash":
        return Text("✕ instance crashed after %(step)s", step=step_name(detail.get("after", "?")))
    if name == "step timeout":
        return N_("left paused 120 s: ran on by itself")
    what: str | Text | None
    if name == "lookup":
        state = {
            "in_progress": N_("in progress"),
            "completed": N_("completed"),
            "in_doubt": N_("in doubt"),
        }.get(str(detail.get("state")), N_("found"))
        what = Text("hit (%(state)s)", state=Text(state)) if detail.get("hit") else Text("miss")
        return Text("%(step)s: %(what)s", step=step_at(name, 2 if detail.get("again") else 1),
                    what=what)  # fmt: skip
    if name == "fingerprint check":
        what = N_("same") if detail.get("match") else N_("DIFFERENT")
    elif name == "lock acquire":
        waited = float(detail.get("waited_ms", 0))
        ms = f"{waited:.0f}"
        what = Text("waited %(ms)s ms", ms=ms) if waited >= 1 else N_("no wait")
    elif name == "email send":
        email = str(detail.get("email", "?"))
        if detail.get("via") == "outbox":
            what = Text("receipt e-mail %(email)s sent from the outbox", email=email)
        else:
            what = Text("receipt e-mail %(email)s sent", email=email)
    elif name == "outbox enqueue":
        what = Text(
            "receipt for %(charge)s written with the record", charge=detail.get("charge_id")
        )
    else:
        what = {
            "no key": N_("unprotected"),
            "lock wait": None,
            "reserve": N_("in progress"),
            "charging": N_("calling the gateway"),
            "record save": N_("completed, response stored"),
            "release": N_("key released"),
            "reclaim": N_("in progress, nobody holds the lock"),
            "gateway timeout": N_("it charged, but its answer timed out"),
            "in doubt": N_("key kept, it may have charged"),
        }.get(name, "")
        if what == "":
            return ""  # a step with no words: not drawn
    label = step_at(name)
    if what is None:
        return label
    what = what if isinstance(what, Text) else Text(what)  # translated inside the sentence
    return Text("%(step)s: %(what)s", step=label, what=what)


def _paused_text(ms: float) -> Text:
    seconds = f"{ms / 1000:.1f}"
    return Text("paused by you: %(s)s s", s=seconds)


def _duration(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    hours, rest = divmod(seconds, 3600)
    if hours:
        return f"{hours}h {rest // 60:02d}m"
    return f"{rest // 60}m {rest % 60:02d}s"


def _form(order_id: str, amount: int) -> dict[str, Any]:
    return {"order_id": order_id, "amount": amount, "currency": "VND", "key": intent_key(order_id)}


def _poll_s() -> int:
    from flask import current_app

    return int(current_app.config["POLL_S"])
