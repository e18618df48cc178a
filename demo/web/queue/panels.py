"""What the queue lab's panels show, computed from the lab's real state: the queue, the
worker lanes, the dedup table, the outbox, the mailbox, "what just happened", the code
view, the sequence diagram, the simulator's chart, and the chapter's lessons."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flask import current_app

from ...engine.text import N_, Text
from ...lessons import CHAPTERS, Lesson
from ...queue.entries import WorkEntry
from ...queue.explain import explain
from ...queue.jobs import EXAMPLE
from ...queue.scenarios import NEXT_JOB, POISON_JOB, SCENARIOS, Scenario
from ...workspace import Workspace
from ..filters import duration
from .chart import semantics_chart
from .code import code_view
from .sequence import diagram
from .steps import crash_step, scenario_steps, steps_done
from .words import (
    BROKERS,
    CRASH_POINTS,
    MEASURES,
    MESSAGE_STATES,
    MODES,
    STEP_NAMES,
    outcome_word,
)

LANE_ENTRIES = 8
"""Producer sends and work calls shown on the lanes (the timeline keeps more)."""

EARLIER = 4
"""Calls before the last one that "what just happened" retells, newest first."""

TABLE_ROWS = 8
"""Newest rows shown in each table; the headings count them all."""


def poll_s() -> int:
    """How often an open page refreshes its panels, in s (config ``POLL_S``)."""
    return int(current_app.config["POLL_S"])


JOBS = {"42": EXAMPLE, "43": NEXT_JOB, "poison": POISON_JOB}
"""The jobs the producer card offers: the article's, the next invoice, a poison job."""


def panels_context(lab: Workspace) -> dict[str, Any]:
    """Everything the queue page shows, from the lab's state (``version`` read first, so
    a later change always bumps it past this render).

    :raises Problem: 503 ``broker-unavailable`` (the Redis broker cannot be reached).
    """
    version = lab.version
    queue = lab.queue
    state = queue.state()
    entries = queue.entries()
    recent = entries[-LANE_ENTRIES:]
    last_work = next((e for e in reversed(entries) if e.action == "work"), None)
    last = entries[-1] if entries else None
    return {
        "version": version,
        "lab": lab,
        "state": state,
        "settings": queue.settings,
        "summary": state["summary"],
        "scenario": queue.scenario,
        "fixed": queue.fixed,
        "played": queue.played,
        "left_steps": queue.left,
        "before_fix": _before_fix(queue.scenario, entries, state["messages"]),
        "rearm": _rearm(queue.scenario),
        **_crashes_seen(queue.scenario, entries),
        "messages": _messages(state["messages"], state["now"])[-TABLE_ROWS:],
        "more_messages": max(len(state["messages"]) - TABLE_ROWS, 0),
        "dedup": state["dedup"][-TABLE_ROWS:],
        "outbox": state["outbox"][-TABLE_ROWS:],
        "emails": state["emails"][::-1][:TABLE_ROWS],
        "emails_per_key": _per_key(state["emails"]),
        "lanes": _lanes(recent, state["settings"]["workers"]),
        "headline": _headline(last),
        "explanation": explain(last) if last is not None and last.action == "work" else [],
        "batch": _batch(entries, queue.last_batch),
        "paused": queue.stepper.paused(),
        "earlier": [
            {"headline": _headline(e), "sentences": explain(e) if e.action == "work" else []}
            for e in entries[-EARLIER - 1 : -1][::-1]
        ],
        "code": code_view(last_work.as_dict() if last_work else None),
        "sequence": diagram(entries[-5:]),
        "chart": semantics_chart(state["simulation"]),
        "clock_offset": duration(lab.clock_offset_s()) if lab.clock_offset_s() >= 1 else None,
        "outcome_word": _word,
        "CRASH_POINTS": CRASH_POINTS,
        "MESSAGE_STATES": MESSAGE_STATES,
        "STEP_NAMES": STEP_NAMES,
        "MODES": MODES,
        "BROKERS": BROKERS,
        "MEASURES": MEASURES,
        "scenario_steps": scenario_steps,
        "steps_done": steps_done,
        "jobs": JOBS,
        **_lesson_context(lab),
    }


def _messages(messages: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    """The queue's rows, each with how long an in-flight message stays hidden (s)."""
    rows = []
    for m in messages:
        hidden = m["visible_at"] - now if m["state"] == "in_flight" and m["visible_at"] else None
        rows.append({**m, "hidden_s": max(int(hidden + 0.999), 0) if hidden else None})
    return rows


def _per_key(emails: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in emails:
        counts[e["idempotency_key"]] = counts.get(e["idempotency_key"], 0) + 1
    return counts


def _lanes(entries: list[Any], workers: int) -> list[dict[str, Any]]:
    """The shared timeline as lanes: the producer, then each worker; every entry in its
    lane at its column (1 = the oldest shown)."""
    names = ["producer"] + [f"worker-{n}" for n in range(1, 4)]
    used = {e.worker for e in entries if e.worker}
    shown = [n for n in names if n == "producer" or n in used or int(n[-1]) <= workers]
    lanes = []
    for row, name in enumerate(shown, 1):
        cells = [
            {"col": col, "entry": e.as_dict()}
            for col, e in enumerate(entries, 1)
            if (e.worker or "producer") == name
        ]
        lanes.append({"name": name, "row": row, "cells": cells})
    return lanes


def _batch(entries: list[Any], batch: tuple[int, ...]) -> list[dict[str, Any]]:
    """Every worker's call of "every worker at once", when it is the latest thing that
    happened (else ``[]``): one headline and explanation per worker."""
    if len(batch) < 2 or not entries or entries[-1].id != batch[-1]:
        return []
    chosen = [e for e in entries if e.id in batch]
    return [{"headline": _headline(e), "sentences": explain(e)} for e in chosen]


def _headline(entry: Any) -> str | Text | None:
    """The one line above the explanation: who did what to which message."""
    if entry is None:
        return None
    if entry.action != "work":
        word = N_("Producer retry") if entry.action == "producer_retry" else N_("Enqueue")
        return Text(
            "%(action)s: job %(job)s is message %(id)s in the queue.",
            action=Text(word), job=entry.job_id, id=entry.message_id,
        )  # fmt: skip
    if entry.outcome == "idle" and entry.step("relay send"):  # no message, but the relay ran
        return Text("%(worker)s: IDLE; the relay sent an outbox row again", worker=entry.worker)
    # Text, not a bare string: a parameter is translated only as a Text of its own.
    return Text("%(worker)s: %(outcome)s", worker=entry.worker, outcome=Text(_word(entry)))


def _word(entry: Any) -> str:
    """The call's outcome word (a redelivery that did the job again: PROCESSED AGAIN; a
    receive that dead-lettered: DEAD-LETTERED), for an entry or its ``as_dict()`` (the
    lanes draw from those)."""
    data = entry if isinstance(entry, dict) else vars(entry)
    again = bool(data.get("repeats")) and not (data.get("settings") or {}).get("dedup")
    dead = bool(data.get("dead_lettered"))
    return outcome_word(data.get("outcome"), data.get("error"), again, dead)


def _lesson_context(lab: Workspace) -> dict[str, Any]:
    """The queue chapter with each lesson's state, and the open lesson's progress."""
    chapter = CHAPTERS["queue"]
    achieved = lab.achieved()
    lesson = lab.lesson if lab.lesson is not None and lab.lesson.lab == "queue" else None
    names = [item.name for item in chapter]
    following: Lesson | None = None
    if lesson is not None and names.index(lesson.name) + 1 < len(chapter):
        following = chapter[names.index(lesson.name) + 1]
    return {
        "path": [(n, item, item.name in achieved) for n, item in enumerate(chapter, 1)],
        "lesson": lesson,
        "progress": lab.progress.get(lesson.name) if lesson else None,
        "next_lesson": following
        if lesson
        else next((item for item in chapter if item.name not in achieved), chapter[0]),
        "achieved_count": sum(1 for item in chapter if item.name in achieved),
        "scenarios_by_name": SCENARIOS,
    }


def _crashes_seen(scenario: Scenario | None, entries: Sequence[Any]) -> dict[str, bool]:
    """``crash_seen``: a crash since the lab's start (without it, a run with the fix shows
    "as expected" with nothing redelivered, the check unmet); ``crash_seen_fixed``: one
    with the fix held (the first case's crash, lesson 3's, says nothing of a run with
    Dedup ticked by hand after it)."""
    crashed = [e for e in entries if getattr(e, "crashed_at", None)]
    return {
        "crash_seen": bool(crashed),
        "crash_seen_fixed": scenario is not None
        and any(scenario.holds_fix(e.settings) for e in crashed),
    }


def _rearm(scenario: Scenario | None) -> Text | None:
    """The case's crash, named as its step names it: it fires once, so a lab reset by hand
    needs it set again (the card said only "set the case's settings again")."""
    crash = scenario.settings.get("crash_at") if scenario is not None else None
    if crash is None or crash == "none":
        return None
    return crash_step(crash)


def _before_fix(
    scenario: Scenario | None, entries: Sequence[WorkEntry], messages: Sequence[Mapping[str, Any]]
) -> str:
    """What the lab still holds from before the fix was set by hand: ``"emails"`` (sent),
    ``"messages"`` (one still in the queue, ready or in flight: a poison message), or
    ``""``. The fix's steps, done on top, only add to it: the card says to start afresh
    first (run Z followed the steps and enqueued a second poison message)."""
    if scenario is None:
        return ""
    before = [e for e in entries if not scenario.holds_fix(e.settings)]
    if any(e.emails for e in before):
        return "emails"
    sent = {e.message_id for e in before if e.action != "work"}
    waiting = any(
        m["message_id"] in sent and m["state"] in ("ready", "in_flight") for m in messages
    )
    return "messages" if waiting else ""
