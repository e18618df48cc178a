"""The operations lab: which operations survive a retry on their own, a late duplicate
that loses an update, and the GET that counts twice (a tracking pixel).

Plain Python, no web framework. Every request the lab handles is logged on its
timeline (:mod:`demo.engine.timeline`), a bounded ring buffer; the pixel's counters and
windows are bounded too (:mod:`demo.natural.pixel`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..engine.clock import VirtualClock
from ..engine.problems import Problem
from ..engine.text import N_, Text
from ..engine.timeline import Entry, Timeline
from .conditional import Write, delayed_duplicate, parse_delayed
from .operations import OPERATIONS, Run, apply, parse_apply
from .pixel import Pixel, View, parse_post, parse_window
from .scenarios import FIX_WINDOW_S, SCENARIOS, Scenario

SUMMARY = ("operation", "code", "times", "dedup", "key", "natural",
           "same_state", "same_response")  # fmt: skip
"""What the timeline keeps of a run (plus its ``statuses`` and final ``balance``); the
newest run of each operation is kept whole (:meth:`NaturalLab.latest_runs`)."""


@dataclass
class NaturalEntry(Entry):
    """One request on the operations lab's timeline: ``action`` is ``"apply"``,
    ``"delayed-duplicate"`` or ``"pixel"``; ``result`` what it answered (JSON-ready)."""

    result: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "action": self.action,
            "at": self.at,
            "duration_ms": self.duration_ms,
            "steps": [{"name": s.name, "at_ms": s.at_ms, **s.detail} for s in self.steps],
            "result": self.result,
        }


class NaturalLab:
    """One attendee's operations lab.

    :param clock: the workspace's clock, s (the pixel's dedup window runs on it).
    :param max_log: the timeline is a ring buffer of this many requests.
    :param touch: called after every change (the workspace's version, so pages catch up).
    :param finished: called when a request has ended (the workspace's lesson checks).
    """

    name = "natural"

    def __init__(
        self,
        *,
        clock: VirtualClock | None = None,
        max_log: int = 200,
        touch: Callable[[], None] = lambda: None,
        finished: Callable[[], None] = lambda: None,
    ) -> None:
        self.clock = clock or VirtualClock(time.time)
        self._touch, self._finished = touch, finished
        self.timeline: Timeline[NaturalEntry] = Timeline(max_log)
        self.pixel = Pixel(self.clock)
        self.scenario: Scenario | None = None
        self.fixed = False
        self._guard = threading.Lock()
        self._latest: dict[str, dict[str, Any]] = {}
        # The Attempts field's value, kept across a reset as a setting is: Apply the fix
        # (the lab afresh) put a 5 back to 3 without a word (run M).
        self.attempts = 3

    # -- the API ------------------------------------------------------------------------

    def apply(self, body: object) -> Run:
        """``POST …/natural/api/apply``: run an operation ``times`` times (see
        :func:`~demo.natural.operations.apply`).

        :raises Problem: 422 for a bad body (nothing is logged).
        """
        operation, times, dedup, key = parse_apply(body)
        entry = self._arrive("apply", key if dedup else None)
        run = apply(operation, times, dedup=dedup, key=key)
        entry.mark(
            "attempts",
            n=times,
            replayed=sum(a.replayed for a in run.attempts),
            changed=sum(a.changed for a in run.attempts),
        )
        full = run.as_dict()
        with self._guard:
            self._latest[operation] = full  # every attempt's state: the newest run only
            self.attempts = times
        # The log keeps a summary: a state per attempt for 200 requests would be megabytes.
        summary = {k: full[k] for k in SUMMARY}
        statuses = [a.status for a in run.attempts]
        self._done(entry, {**summary, "statuses": statuses, "balance": run.final_state["balance"]})
        return run

    def delayed(self, body: object) -> tuple[Write, ...]:
        """``POST …/natural/api/delayed-duplicate``: the three writes (see
        :func:`~demo.natural.conditional.delayed_duplicate`).

        :raises Problem: 422 for a bad body (nothing is logged).
        """
        conditional = parse_delayed(body)
        entry = self._arrive("delayed-duplicate", None)
        writes = delayed_duplicate(conditional)
        for w in writes:
            entry.mark("write", client=w.client, status=w.status, balance=w.balance_after)
        result = {
            "conditional": conditional,
            "writes": [w.as_dict() for w in writes],
            "final_balance": writes[-1].balance_after,
        }
        self._done(entry, result)
        return writes

    def view_pixel(self, post: object, viewer: str | None, *, prefetch: bool) -> View:
        """``GET …/natural/pixel.gif?post=<id>``: count a view, unless the dedup window
        holds one of this (viewer, post). This GET changes state on purpose: it is the
        pitfall the lab teaches. ``prefetch`` is logged (the request said
        ``Sec-Purpose: prefetch``), never treated differently: a real counter can't tell.

        :raises Problem: 422 for a bad post id, or one post too many (nothing is logged).
        """
        checked = parse_post(post)
        view = self.pixel.view(checked, viewer)
        entry = self._arrive("pixel", None)
        entry.mark("viewer", viewer=view.viewer_no, new=view.new_viewer, prefetch=prefetch)
        entry.mark("window", counted=view.counted, window_s=view.window_s)
        result = {
            "post": view.post,
            "viewer": view.viewer_no,
            "new_viewer": view.new_viewer,
            "cookie": viewer is not None,
            "prefetch": prefetch,
            "counted": view.counted,
            "views": view.views,
            "window_s": view.window_s,
            "since_s": view.since_s,
        }
        self._done(entry, result)
        return view

    def settings(self) -> dict[str, Any]:
        """The lab's settings: ``{"pixel_dedup_window_s": int}`` (s, 0 = count every GET)."""
        return {"pixel_dedup_window_s": self.pixel.window_s}

    def update_settings(self, changes: object) -> dict[str, Any]:
        """``PATCH …/natural/api/settings`` ``{"pixel_dedup_window_s": 0-86400}``; returns
        the settings.

        :raises Problem: 422 for a body that is not an object, an unknown setting or a
            window out of range; nothing changes then.
        """
        if not isinstance(changes, dict) or set(changes) - {"pixel_dedup_window_s"}:
            raise Problem(
                422,
                "invalid-settings",
                N_("Invalid settings"),
                N_("The operations lab has one setting: pixel_dedup_window_s."),
                errors={"body": 'must be {"pixel_dedup_window_s": 0-86400}'},
            )
        if "pixel_dedup_window_s" in changes:
            self.pixel.window_s = parse_window(changes["pixel_dedup_window_s"])
        self._touch()
        return self.settings()

    # -- scenarios and resets -------------------------------------------------------------

    def apply_scenario(self, name: str, *, fixed: bool = False) -> Scenario:
        """Start scenario ``name`` afresh: an empty lab, the pixel window 0, or with the
        fix applied (``fixed``) the scenario's fix on (dedup, If-Match, a 1800 s window).

        :raises Problem: 404 for an unknown scenario name.
        """
        scenario = SCENARIOS.get(name)
        if scenario is None:
            raise Problem(
                404,
                "unknown-scenario",
                N_("No such scenario"),
                Text("Scenarios are: %(names)s.", names=", ".join(SCENARIOS)),
            )
        self.reset()
        with self._guard:
            self.scenario, self.fixed = scenario, fixed
            # Every case is about a retry: one attempt retries nothing, so a case afresh
            # never starts from it (run O: Next step started it afresh, forever).
            if self.attempts < 2:
                self.attempts = 3
            self.pixel.window_s = FIX_WINDOW_S if fixed and scenario.fix == "window" else 0
        self._touch()
        return scenario

    def leave_scenario(self) -> None:
        """Back to the free lab: no scenario, no fix preset; results and settings kept."""
        with self._guard:
            self.scenario, self.fixed = None, False
        self._touch()

    def reset(self) -> None:
        """Empty the timeline and the pixel's counters; the settings and scenario stay."""
        self.timeline.clear()
        self.pixel.clear()
        with self._guard:
            self._latest.clear()
        self._touch()

    def fix_on(self, fix: str) -> bool:
        """Whether the open scenario's fix ``fix`` (``"dedup"``, ``"conditional"``,
        ``"window"``) is applied: the page's switches start from it."""
        return self.fixed and self.scenario is not None and self.scenario.fix == fix

    # -- reading --------------------------------------------------------------------------

    def requests(self) -> list[NaturalEntry]:
        """The timeline, oldest first."""
        return self.timeline.entries()

    def last(self, action: str) -> NaturalEntry | None:
        """The newest finished request of ``action``, or ``None``."""
        return next((e for e in reversed(self.requests()) if e.action == action), None)

    def latest_runs(self) -> dict[str, dict[str, Any]]:
        """The newest run of each operation (its :meth:`Run.as_dict`, every attempt's
        state), by operation name, in the order of :data:`OPERATIONS`."""
        with self._guard:
            return {name: self._latest[name] for name in OPERATIONS if name in self._latest}

    def is_blank(self) -> bool:
        """True while the lab holds nothing a fresh one would not."""
        return (
            not len(self.timeline)
            and not self.pixel.counts()
            and self.scenario is None
            and self.pixel.window_s == 0
        )

    def state(self) -> dict[str, Any]:
        """What the lab holds, as JSON-ready values (``GET …/natural/api/state``)."""
        return {
            "views": self.pixel.counts(),
            "settings": self.settings(),
            "scenario": self.scenario.name if self.scenario else None,
            "fixed": self.fixed,
            "requests": [e.as_dict() for e in self.requests()],
        }

    # -- one request -----------------------------------------------------------------------

    def _arrive(self, action: str, key: str | None) -> NaturalEntry:
        entry = NaturalEntry(
            self.timeline.next_id(), action, time.perf_counter(), at=self.clock(), key=key
        )
        entry.mark("arrive")
        return entry

    def _done(self, entry: NaturalEntry, result: dict[str, Any]) -> None:
        entry.result = result
        entry.mark("respond")
        entry.finished = time.perf_counter()
        self.timeline.append(entry)
        self._touch()
        self._finished()
