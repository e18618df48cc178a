"""The request timeline's view-model: requests that overlapped in time share an axis
(a :class:`Cluster`), each request is a :class:`Lane` from its start to its end, and
each step a :class:`Mark` at the time it began. Positions run 0-1000 along the bar."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from ...engine.stepping import PAUSED_MS
from ...engine.text import Number, Text
from ...engine.timeline import Step
from ...payments.requests import RequestEntry
from ...payments.step_names import step_at
from .step_text import step_text


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
                    for text in [step_text(s.name, s.detail, deduplicated)]
                    if text and not (s.name == "lock wait" and _no_wait(s, steps))
                ),
                key=lambda m: m.at_ms,
            )
        )
        shown = {m.name for m in marks}
        # In step mode the attendee's think time is part of the wall clock: say whose it is.
        pauses = tuple(
            Mark("paused", x(start_ms + s.at_ms), start_ms + s.at_ms, _paused_text(ms, s, shown))
            for s in steps
            for ms in [float(s.detail.get(PAUSED_MS) or 0)]
            if ms >= 1
        )
        marks = tuple(sorted(marks + pauses, key=lambda m: m.at_ms))
        paused_ms = sum(float(s.detail.get(PAUSED_MS) or 0) for s in steps)
        lane = Lane(entry, x(start_ms), max(x(end_ms), x(start_ms) + 4), start_ms, marks, paused_ms)
        lanes.append(lane)
    return Cluster(tuple(lanes), span_ms)


def _no_wait(wait: Step, steps: Sequence[Step]) -> bool:
    """A ``lock wait`` that did not wait (the lock was free, ``lock acquire: no wait``) and
    was not paused at: drawn, it reads as if the request waited."""
    acquired = next((s for s in steps if s.name == "lock acquire"), None)
    return (
        acquired is not None
        and float(acquired.detail.get("waited_ms") or 0) < 1
        and not wait.detail.get(PAUSED_MS)
    )


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
    """Where a step's mark goes, in ms: the gateway charge is traced when it ends, with
    its duration, and drawn where it began. ``lock acquire`` stays where the lock was got:
    the wait has its own mark, ``lock wait``, where it began, so a lane never reads as if
    it held the lock while another still did."""
    took = step.detail.get("ms") if step.name == "gateway charge" else 0
    return step.at_ms - float(took or 0)


def _paused_text(ms: float, step: Step, shown: set[str]) -> Text:
    """A pause's words. A pause at a step the timeline draws no line for (``respond``)
    names that step: otherwise two pauses in a row read as one step paused twice."""
    seconds = Number(ms / 1000, 1)
    if step.name not in shown:
        return Text("paused by you at %(step)s: %(s)s s", step=step_at(step.name), s=seconds)
    return Text("paused by you: %(s)s s", s=seconds)
