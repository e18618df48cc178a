"""What the payment lab's panels show, computed from the lab's real state, and the
responses that carry them (the panels fragment; the settings fragment with the panels
out of band). The API's views answer htmx with these too."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, render_template

from ...lessons import PATH, Lesson
from ...payments.explain import explain
from ...payments.gateway import summarise
from ...payments.idempotency import PROFILES
from ...payments.requests import RequestEntry
from ...payments.scenarios import SCENARIOS, Scenario
from ...payments.store import Record
from ...workspace import Workspace
from ..filters import duration
from .lanes import step_context
from .timeline import timeline

TIMELINE_LANES = 8
"""Requests shown on the timeline (the log keeps more; ``GET /api/state`` lists them)."""

TABLE_ROWS = 6
"""Newest rows shown in the store and ledger tables; the tally counts them all."""


def poll_s() -> int:
    """How often an open page refreshes its panels, in s (config ``POLL_S``)."""
    return int(current_app.config["POLL_S"])


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
        "payments/_partials/panels.html",
        poll_s=poll_s(),
        settings_stale=settings_stale,
        **panels_context(lab, focus),
    )
    response = Response(html, status, mimetype="text/html")
    response.vary.add("HX-Request")
    return response


def settings_response(lab: Workspace) -> Response:
    """The settings fragment, plus the panels out of band (the explanation may change)."""
    html = render_template(
        "payments/_partials/settings_changed.html", poll_s=poll_s(), **panels_context(lab)
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
    first_click = _first_click(lab)
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
            **_now(lab, records),
        ),
        "first_click": first_click,
        # Free play shows a scenario's answer, and its lesson's number, until a new request.
        "left_from": _left_from(lab.payments.left, entries),
        "left_lesson": _lesson_number(lab.payments.left[0].name) if lab.payments.left else None,
        **_answers(entries, focus),
        "in_flight_now": _in_flight_now(lab, entries),
        "clusters": timeline(entries[-TIMELINE_LANES:]),
        **_store_rows(entries, records, now, settings.ttl_s),
        "charges": charges[::-1][:TABLE_ROWS],
        "more_charges": max(len(charges) - TABLE_ROWS, 0),
        "summary": summary,
        "coming": _coming(entries, charges),
        "emails": len(emails),
        # The mailbox itself (newest first) and the outbox waiting to be relayed (lesson 10).
        "mailbox": [
            {"email": m, "ago": duration(now - m.sent_at) if m.sent_at else None}
            for m in emails[::-1][:TABLE_ROWS]
        ],
        "outbox": lab.payments.outbox(),
        # One receipt per paid order is what should happen; the mailbox is what did.
        "expected_emails": summary.intended if settings.email != "off" else None,
        "clock_offset": duration(lab.clock_offset_s()) if lab.clock_offset_s() >= 1 else None,
        "profiles": PROFILES.values(),
        **_lesson_context(lab),
        **(step_context(lab) if settings.step_mode or lab.payments.stepper.paused() else {}),
    }


def _answers(entries: list[RequestEntry], focus: RequestEntry | None) -> dict[str, Any]:
    """The requests as read once for this render (``entries``: every template reads these,
    not the lab again, so a render is one snapshot), and what their last answers say."""
    answered = [e.status for e in entries if e.outcome != "in_flight"]
    shown = focus or next((e for e in reversed(entries) if e.finished is not None), None)
    return {
        # The answer explained came from the retry lab's client, not this page (run AC).
        "from_retry_lab": shown is not None and shown.from_retry_lab,
        "entries": entries,
        # The last request sent no key: the per-key lock had nothing to lock.
        "keyless": bool(entries) and entries[-1].step("no key") is not None,
        # The last answer's status: a decline (402, or its replay) is not a later 502 (run
        # AB); a 502 answered means lesson 9's second case is set up (run AB).
        "last_status": answered[-1] if answered else None,
    }


def _in_flight_now(lab: Workspace, entries: list[RequestEntry]) -> RequestEntry | None:
    """The newest request, while it is still on its way and an older one's answer is what
    the explanation shows (a slow gateway): said above it, so that answer is not read as
    this press's (paused in step mode, too). ``None`` for a Double-submit's pair, sent
    together: the first answer's lanes show the other."""
    newest = entries[-1] if entries else None
    if newest is None or newest.finished is not None:
        return None
    if newest.action.startswith("Double-submit"):
        return None
    return newest if any(e.finished is not None for e in entries) else None


def _first_click(lab: Workspace) -> str:
    """The open lesson's first button, which the empty states name ("Pay" in free play)."""
    scenario = lab.payments.scenario
    return scenario.clicks(lab.payments.fixed)[0] if scenario and scenario.script else "Pay"


def _coming(entries: list[RequestEntry], charges: list[Any]) -> int:
    """Orders still on their way to the gateway (paused in step mode, or in flight), not
    yet in the ledger ``charges``: one charge each is expected, though none has moved."""
    on_the_way = {e.charge.order_id for e in entries if e.outcome == "in_flight" and e.charge}
    return len(on_the_way - {c.order_id for c in charges})


def _left_from(left: tuple[Scenario, int] | None, entries: list[RequestEntry]) -> Scenario | None:
    """The scenario left for free play, while the last request shown is still its own."""
    return left[0] if left and entries and entries[-1].id <= left[1] else None


def _lesson_number(name: str) -> int | None:
    """The lesson's number on the payment path (1-10), or ``None`` for a scenario only."""
    return next((n for n, item in enumerate(PATH, 1) if item.name == name), None)


def _store_rows(
    entries: list[RequestEntry], records: list[tuple[str, Record]], now: float, ttl_s: int
) -> dict[str, Any]:
    """The store panel's rows (newest first), how many older ones it leaves out, and the
    keys whose record expired (see :func:`_expired`); ``ttl_s``: Key TTL now, in s."""
    return {
        "records": [
            {
                "store": where,
                "record": r,
                "expires_in": duration(r.expires_at - now),
                # An in-progress record's lease (s left): the deadline a retry waits for
                # before it reclaims the key, beside the record's 24 h TTL (run U).
                "lease_s": r.deadline_at - now if r.state.value == "in_progress" else None,
                # The TTL it was saved under, when Key TTL changed since: that counts for
                # records saved from then on (run W: "kept for 72h" above "Expires 23h 59m").
                "saved_ttl": _saved_ttl(r, ttl_s),
            }
            for where, r in records[:TABLE_ROWS]
        ],
        "more_records": max(len(records) - TABLE_ROWS, 0),
        "expired": _expired(entries, records, now)[:TABLE_ROWS],
    }


def _saved_ttl(record: Record, ttl_s: int) -> str | None:
    """The TTL ``record`` was saved under ("24h 00m"), when it is not ``ttl_s`` (Key TTL
    changed since; a minute's slack: a record saved at its request's end counts from then)."""
    saved = record.expires_at - record.created_at
    return duration(saved) if abs(saved - ttl_s) > 60 else None


def _expired(
    entries: list[RequestEntry], records: list[tuple[str, Record]], now: float
) -> list[dict[str, Any]]:
    """The keys whose record the store dropped at its TTL, newest first, as ``{"key",
    "ttl"}`` (``ttl`` as the page writes a duration).

    The store forgets an expired record (that is what the TTL is), so the store panel
    would say "no key seen" beside a charge made under one; the request log (a bounded
    ring buffer) still tells it: a request saved a record for the key (or left one in
    progress), the key has no live record now, and the TTL it was saved under has run out
    on the lab's clock.
    """
    live = {r.key for _, r in records}
    seen: set[str] = set()
    expired: list[dict[str, Any]] = []
    for e in reversed(entries):
        if not e.key or e.key in live or e.key in seen or e.settings is None:
            continue
        # A record saved, or one left in progress (its request crashed, is paused, or its
        # gateway call timed out: in doubt); a failed charge released its reservation.
        kept = e.step("record save") is not None or (
            e.step("reserve") is not None and e.outcome in ("crashed", "in_flight", "in_doubt")
        )
        if kept and now >= e.at + e.settings.ttl_s:
            seen.add(e.key)
            expired.append({"key": e.key, "ttl": duration(e.settings.ttl_s)})
    return expired


def _now(lab: Workspace, records: list[tuple[str, Record]]) -> dict[str, Any]:
    """What the explanation's advice on the next click must hold true against: the order
    the form holds now, the keys a store still keeps (unexpired) records for, and the
    lab's clock (s)."""
    return {
        "order_now": lab.payments.current_order,
        "kept_keys": {r.key for _, r in records},
        "now_s": lab.now(),
    }


def _lesson_context(lab: Workspace) -> dict[str, Any]:
    """The lessons path with each lesson's state, and the open lesson's progress. Another
    lab's lesson (open, or achieved) is that lab's page's business."""
    achieved = lab.achieved() & {item.name for item in PATH}
    lesson = lab.lesson if lab.lesson is not None and lab.lesson.lab == "payments" else None
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
