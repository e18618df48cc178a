"""What the retry lab's page shows, computed from the lab's real state: the editors'
values, the last run and its attempts on a time line, the storm chart, the open scenario's
expected-vs-actual, and the chapter's lessons."""

from __future__ import annotations

from typing import Any

from ...engine.text import N_, Text, translate
from ...lessons import CHAPTERS, Lesson
from ...retries.faults import FAULT_NAMES, FAULT_STATUSES
from ...retries.lab import RetriesLab
from ...retries.policy import MISTAKES, SAFE_TO_RETRY, STRATEGIES
from ...retries.policy import RANGES as POLICY_RANGES
from ...retries.scenarios import SCENARIOS
from ...retries.storm import MODELS
from ...retries.storm_input import BUDGET_RANGES, RANGES
from ...workspace import Workspace
from .chart import storm_chart
from .code import client_lines
from .forms import FAULT_PRESETS, plan_text, preset_index, storm_shown

LAB = "retries"

STORM_DEFAULTS: dict[str, Any] = {
    "model": "contention",
    "clients": 100,
    "strategy": "all",
    "base_ms": 10,
    "cap_ms": 2000,
    "capacity_per_s": 100,
    "outage_s": 10,
    "seed": 1,
    "budget": {"burst": 10, "per_s": 5},
}
"""What the storm form shows before any storm (the API's own defaults, see
:func:`~demo.retries.storm_input.parse_storm`; a retry budget offered, off)."""


def retries_of(workspace: Workspace) -> RetriesLab:
    """The workspace's retry lab."""
    return workspace.retries


LINE_W, LINE_GAP = 1000, 120
"""The attempts' line, in SVG units: its width, and the least room between two attempts."""

LABEL_EM = {"attempt": 19 * 0.68, "wait": 16 * 0.62}
"""Room per character of a label, in SVG units: the label's font size (19 and 16, as
``retries.css`` sets them) times a wide character's advance in DejaVu Sans (bold for an
attempt). An estimate on the wide side: labels never touch, the line only grows."""


def _label_width(text: str, kind: str) -> float:
    return len(text) * LABEL_EM[kind]


def timeline(attempts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run's attempts on one line of virtual time: each attempt starts after the wait
    before it (``at_ms`` from the first attempt), drawn at ``x`` (SVG units, 0 to
    :data:`LINE_W`) with the wait drawn from ``from_x``, and its two labels, ``label``
    ("#2 503") and ``wait_label`` ("waited 108 ms", empty without a wait).

    Attempts are pushed apart so that neither their labels nor their waits' labels touch
    (:data:`LINE_GAP` at least). The line may then run past :data:`LINE_W`: the page widens
    its drawing to the last ``x`` and scales it down whole, text with it."""
    at, placed = 0.0, []
    for attempt in attempts:
        at += attempt["waited_ms"]
        status = attempt["status"] or translate(N_("no answer"))
        waited = attempt["waited_ms"]
        placed.append({
            **attempt,
            "at_ms": at,
            "label": f"#{attempt['n']} {status}",
            "wait_label": translate(Text("waited %(ms)s ms", ms=waited)) if waited else "",
        })  # fmt: skip
    total = at or 1.0
    x, previous = -float(LINE_GAP), None
    for index, item in enumerate(placed):
        gap = float(LINE_GAP)
        if previous is not None:
            # The first label grows right from its dot, the last one left, others centred.
            before = _label_width(previous["label"], "attempt") * (1.0 if index == 1 else 0.5)
            after = _label_width(item["label"], "attempt") * (1.0 if item is placed[-1] else 0.5)
            wait = _label_width(item["wait_label"], "wait")
            gap = max(gap, before + after + 24, wait + 24)
        x = max(LINE_W * item["at_ms"] / total, x + gap)
        item["x"] = x
        previous = item
    start = 0.0
    for item in placed:
        item["x"] = round(item["x"], 1)
        item["from_x"] = start
        start = item["x"]
    return placed


def page_context(workspace: Workspace) -> dict[str, Any]:
    """Everything the page and its panels show.

    ``version`` is read first, as the payment lab's panels do: a later change bumps it.
    """
    version = workspace.version
    lab = retries_of(workspace)
    state = lab.state()
    last_run = state["last_run"]
    storm = state["last_storm"]
    return {
        "version": version,
        "lab": workspace,
        "retries": lab,
        "policy": state["policy"],
        "strategies": STRATEGIES,
        "safe_to_retry": SAFE_TO_RETRY,
        "mistakes": MISTAKES,
        "faults": state["faults"],
        "fault_text": plan_text(state["faults"]),
        "fault_preset": preset_index(state["faults"]),
        "fault_presets": [(i, plan_text(p), words) for i, (p, words) in enumerate(FAULT_PRESETS)],
        "fault_words": (*FAULT_NAMES, *map(str, FAULT_STATUSES)),
        "last_run": last_run,
        "attempt_line": timeline(last_run["attempts"]) if last_run else [],
        "storm": storm,
        "chart": storm_chart(storm) if storm else None,
        "storm_form": storm_shown(state["storm_request"], STORM_DEFAULTS),
        "storm_request": state["storm_request"],
        "models": MODELS,
        # The forms' min/max are the API's own ranges: one source for both.
        "policy_ranges": POLICY_RANGES,
        "storm_ranges": RANGES,
        "budget_ranges": BUDGET_RANGES,
        "scenario": lab.scenario,
        "fixed": lab.fixed,
        "expected": state["expected"],
        "scenarios": SCENARIOS.values(),
        "code_lines": client_lines(),
        **_lesson_context(workspace),
    }


def _lesson_context(workspace: Workspace) -> dict[str, Any]:
    """The chapter's lessons with each one's state, and the open lesson's progress."""
    chapter = CHAPTERS[LAB]
    achieved = workspace.achieved()
    lesson = workspace.lesson if workspace.lesson and workspace.lesson.lab == LAB else None
    return {
        "path": [(n, item, item.name in achieved) for n, item in enumerate(chapter, 1)],
        "lesson": lesson,
        "progress": workspace.progress.get(lesson.name) if lesson else None,
        "next_lesson": _next(chapter, lesson)
        if lesson
        else next((item for item in chapter if item.name not in achieved), chapter[0]),
        "achieved_count": sum(item.name in achieved for item in chapter),
    }


def _next(chapter: tuple[Lesson, ...], lesson: Lesson) -> Lesson | None:
    names = [item.name for item in chapter]
    at = names.index(lesson.name)
    return chapter[at + 1] if at + 1 < len(chapter) else None
