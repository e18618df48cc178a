"""Step mode: a request pauses at each step boundary of the real handler until the
attendee steps it, so a race can be played one step at a time (you are the scheduler).

Each paused request holds one of the server's threads, so the number is capped per lab
and across the process (:class:`StepMode`); a request left paused runs on by itself after
:data:`PAUSE_TIMEOUT_S`, so none waits for ever.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from typing import Any

from .problems import Problem
from .text import N_, Text
from .timeline import Entry

PAUSE_TIMEOUT_S = 120.0
"""In step mode, a request left paused this long runs on by itself, so none waits for ever."""

PAUSED_MS = "paused_ms"
"""In step mode, the detail member of the step a request stopped after: how long it stood
there until the attendee stepped it on, in ms (wall clock spent by the attendee, not by
the server). Any step may carry it."""

MAX_PAUSED_PER_LAB = 8
"""Requests a lab may have in step mode at once (each holds one of the server's threads)."""

MAX_PAUSED = 24
"""Requests in step mode at once across every lab sharing one budget: half of the
server's 48 threads, so paused requests never starve the others."""


def lane_label(n: int) -> str:
    """The label of step-mode lane ``n`` (0-based): A-Z, then AA, AB… like spreadsheet
    columns, so every paused request has a label of its own whatever their number."""
    label = ""
    n += 1
    while n:
        n, digit = divmod(n - 1, 26)
        label = chr(ord("A") + digit) + label
    return label


@dataclass
class Pause:
    """A request in step mode: where it stands, and the event that lets it go on."""

    entry: Entry
    label: str
    step: str = "arrived"
    occurrence: int = 0  # the 2nd "lookup" is the look-again under the lock
    parks: int = 0  # how many step points it has stopped at
    waiting: bool = False
    to_end: bool = False
    go: threading.Event = field(default_factory=threading.Event)
    round: int = 0  # which round of lanes it belongs to (see StepMode.pause_for)


class StepMode:
    """The paused requests of one lab, and the caps on them.

    :param points: the step names a request stops at (a lab's step boundaries).
    :param max_paused: requests in step mode at once in this lab; one more gets 429.
    :param paused_slots: the budget shared by every lab of the process (one slot per
        request, taken without waiting); ``None``: no shared budget.
    :param touch: called after every change, so open pages catch up.
    """

    def __init__(
        self,
        points: Collection[str],
        *,
        max_paused: int = MAX_PAUSED_PER_LAB,
        paused_slots: threading.BoundedSemaphore | None = None,
        touch: Callable[[], None] = lambda: None,
    ) -> None:
        self.points = frozenset(points)
        self._max_paused = max_paused
        self._paused_slots = paused_slots
        self._touch = touch
        self._paused: OrderedDict[int, Pause] = OrderedDict()
        self._finished: OrderedDict[int, Pause] = OrderedDict()
        """Lanes whose request has ended, kept (at most ``max_paused``) until the next round:
        "A finished: CHARGED" stays beside B, and B keeps its letter."""
        self._round = 0
        """The round of lanes on screen: a new one starts when no lane waits for the attendee."""
        self._running = 0
        """Requests in step mode still running, from before a reset too (each holds a thread)."""
        self._guard = threading.RLock()

    # -- a request's side --------------------------------------------------------

    def take_slot(self) -> None:
        """Count one more request in step mode, within the lab's cap and the shared one.

        :raises Problem: 429 ``too-many-paused`` when the lab has ``max_paused`` requests
            in step mode, or every slot of the shared budget is taken (with
            ``Retry-After``: slots free up as requests are stepped or time out).
        """
        with self._guard:
            if self._running >= self._max_paused:
                raise Problem(
                    429, "too-many-paused", N_("Too many paused requests"),
                    Text("This lab has reached its limit of %(count)s requests in step mode. "
                         "Step them or press Release all, then send more.",
                         count=self._max_paused),
                )  # fmt: skip
            if self._paused_slots is not None and not self._paused_slots.acquire(blocking=False):
                raise Problem(
                    429, "too-many-paused", N_("Too many paused requests"),
                    N_("The server holds as many paused requests as it can, across all labs. "
                       "Step or release yours, or try again in a few seconds."),
                    retry_after_s=5,
                )  # fmt: skip
            self._running += 1

    def give_slot(self) -> None:
        """The request that took a slot has ended."""
        with self._guard:
            self._running -= 1
            if self._paused_slots is not None:
                self._paused_slots.release()

    def pause_for(self, entry: Entry) -> Pause:
        """A lane for ``entry``, labelled with the first free letter of its round: a new
        round (no lane waiting for the attendee: none paused, or all let go to their end
        and still running) forgets the finished lanes and starts at A again."""
        with self._guard:
            if all(p.to_end for p in self._paused.values()):
                self._round += 1
                self._finished.clear()
            shown = [p for p in self._paused.values() if p.round == self._round]
            used = {p.label for p in (*shown, *self._finished.values())}
            label = next(lane_label(n) for n in itertools.count() if lane_label(n) not in used)
            pause = self._paused[entry.id] = Pause(entry, label, round=self._round)
        return pause

    def park(self, pause: Pause, step: str) -> None:
        """Wait at step point ``step`` until stepped, or run on after ``PAUSE_TIMEOUT_S``."""
        if pause.to_end or step not in self.points:
            return
        with self._guard:
            pause.step, pause.waiting = step, True
            pause.parks += 1
            pause.occurrence = sum(1 for s in pause.entry.steps if s.name == step)
        self._touch()
        stopped = time.perf_counter()
        stepped = pause.go.wait(PAUSE_TIMEOUT_S)
        with self._guard:
            pause.go.clear()
            pause.waiting = False
            # The time the attendee took to press Step is theirs, not the server's: the
            # step it stood at says so, and the timeline shows it as "paused by you".
            paused_ms = round((time.perf_counter() - stopped) * 1000, 1)
            steps = pause.entry.steps
            at = next((n for n in range(len(steps) - 1, -1, -1) if steps[n].name == step), None)
            if at is not None:
                steps[at] = replace(steps[at], detail={**steps[at].detail, PAUSED_MS: paused_ms})
            if not stepped:
                pause.to_end = True
                pause.entry.mark("step timeout")
        self._touch()

    def end(self, pause: Pause) -> None:
        """The request of ``pause`` has finished: remove its lane (only its own: after a
        reset, ids start at 1 again, and a request from before it must not remove the new
        #1's lane)."""
        with self._guard:
            if self._paused.get(pause.entry.id) is pause:
                del self._paused[pause.entry.id]
                if pause.round != self._round:
                    return  # let go in an earlier round: its lane is gone from the screen
                self._finished[pause.entry.id] = pause
                while len(self._finished) > self._max_paused:
                    self._finished.popitem(last=False)

    # -- the attendee's side -------------------------------------------------------

    def step(self, request_id: object, *, to_end: object = False) -> int:
        """Let paused request ``request_id`` go on to its next step point (or to its end);
        returns how many step points it had stopped at (for :meth:`settle`).

        :raises Problem: 422 for a malformed id or ``to_end``; 404 when no such request is
            in step mode; 409 when it is not waiting at a step point (it is running, or
            blocked on a lock another request holds).
        """
        if isinstance(request_id, bool) or not isinstance(request_id, int):
            raise Problem(
                422, "invalid-step", N_("Invalid step"),
                N_("request must be a request id (an integer)."),
                errors={"request": "must be an integer"},
            )  # fmt: skip
        if not isinstance(to_end, bool):
            raise Problem(
                422, "invalid-step", N_("Invalid step"), N_("to_end must be true or false."),
                errors={"to_end": "must be true or false"},
            )  # fmt: skip
        with self._guard:
            pause = self._paused.get(request_id)
            if pause is None:
                raise Problem(
                    404, "not-paused", N_("No such paused request"),
                    Text("Request #%(id)s is not in step mode (finished, or never paused).",
                         id=request_id),
                )  # fmt: skip
            if not pause.waiting:
                raise Problem(
                    409, "not-at-a-step", N_("Not at a step"),
                    Text("Request #%(id)s is running or blocked on a lock; step it when it "
                         "stops at its next step.", id=request_id),
                )  # fmt: skip
            pause.to_end = to_end
            pause.waiting = False  # it is on its way: no second step until it stops again
            pause.go.set()
            parks = pause.parks
        # A change of its own: the lane now reads "on its way" (or "blocked"), even before
        # its thread wakes; the answer's version must move, or a page keeps the old one.
        self._touch()
        return parks

    def settle(self, request_id: int, parks: int, timeout_s: float = 3.0) -> None:
        """Wait (at most ``timeout_s``) until a request stepped after ``parks`` stops
        stands at its next step point, is blocked on a lock, or has finished: so the page
        shows where it went."""
        deadline = time.monotonic() + timeout_s
        with self._guard:
            known = self._paused.get(request_id)
        while time.monotonic() < deadline:
            time.sleep(0.005)
            with self._guard:
                pause = self._paused.get(request_id)
                # A request leaves the paused list just before it is logged as finished:
                # wait for that too, so the page shows its answer, not "in flight".
                if pause is None and (known is None or known.entry.finished is not None):
                    return
                if pause is not None and pause.parks > parks:
                    return
            if any(p["request"] == request_id and p["blocked_by"] for p in self.paused()):
                return

    def release_all(self) -> int:
        """Let every paused request run to its end; returns how many there were."""
        with self._guard:
            pauses = list(self._paused.values())
            for pause in pauses:
                pause.to_end = True
                pause.go.set()
        self._touch()
        return len(pauses)

    def forget(self) -> None:
        """Release every paused request and drop their lanes (a reset: they finish in the
        old lab, unseen)."""
        self.release_all()
        with self._guard:
            self._paused.clear()
            self._finished.clear()

    def finished(self) -> list[dict[str, Any]]:
        """The lanes of this round whose request has ended, oldest first: ``{"request",
        "label", "action"}`` (the page says how each ended, from the request's entry)."""
        with self._guard:
            return [
                {"request": p.entry.id, "label": p.label, "action": p.entry.action}
                for p in self._finished.values()
            ]

    def paused(self) -> list[dict[str, Any]]:
        """The requests in step mode, oldest first: where each stands, and whom it waits
        for (the lane holding the per-key lock it is blocked on)."""
        with self._guard:
            pauses = [p for p in self._paused.values() if not p.to_end]  # to_end: let go
        holders = {
            p.entry.key: p.label
            for p in pauses
            if p.entry.step("lock acquire") is not None and p.entry.finished is None
        }
        listing = []
        for p in pauses:
            holder = holders.get(p.entry.key)
            blocked = not p.waiting and p.step == "lock wait" and holder not in (None, p.label)
            listing.append(
                {
                    "request": p.entry.id,
                    "label": p.label,
                    "action": p.entry.action,
                    "idempotency_key": p.entry.key,
                    "step": p.step,
                    "occurrence": p.occurrence,
                    "waiting": p.waiting,
                    "blocked_by": holder if blocked else None,
                }
            )
        return listing
