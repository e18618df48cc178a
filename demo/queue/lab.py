"""The queue lab: a producer, a broker (in memory, or Redis Streams), 1-3 workers running
the consumer of :mod:`.worker`, the consumer's dedup table and outbox, the relay and the
mailbox, on the workspace's clock, timeline and step mode."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..engine.clock import VirtualClock
from ..engine.problems import Problem
from ..engine.stepping import MAX_PAUSED_PER_LAB, StepMode
from ..engine.text import N_, Text
from ..engine.timeline import Timeline
from .broker import Broker
from .dedup import ConsumerDb
from .entries import STEP_POINTS, WorkEntry
from .jobs import EXAMPLE, Job, parse_job
from .mailbox import Mailbox
from .memory import MemoryBroker
from .outbox import Relay
from .reading import lab_state
from .runner import World, run_work
from .scenarios import SCENARIOS, Click, Scenario
from .settings import Settings
from .simulator import Simulation, parse_simulation, simulate
from .workers import Workers, all_at_once


class QueueLab:
    """One attendee's queue lab (satisfies :class:`demo.engine.lab.Lab`).

    :param settings: the switches (:class:`~.settings.Settings`), defaults if ``None``.
    :param clock: the workspace's clock, s (a fresh one on ``time.time`` if ``None``);
        visibility timeouts run on it.
    :param make_broker: builds an empty broker (at start and on every reset); an
        in-memory one by default.
    :param max_log: the timeline is a ring buffer of this many entries.
    :param max_paused: work calls in step mode at once; one more gets 429.
    :param paused_slots: the step-mode budget shared by every lab of the process.
    :param touch: called after every change (open pages catch up).
    :param finished: called after each call the lab handles (the lesson checks run).
    """

    name = "queue"

    def __init__(
        self,
        *,
        settings: Settings | None = None,
        clock: VirtualClock | None = None,
        make_broker: Callable[[], Broker] | None = None,
        max_log: int = 200,
        max_paused: int = MAX_PAUSED_PER_LAB,
        paused_slots: threading.BoundedSemaphore | None = None,
        touch: Callable[[], None] = lambda: None,
        finished: Callable[[], None] = lambda: None,
    ) -> None:
        self.settings = self._base_settings = settings or Settings()
        self.clock = clock or VirtualClock(time.time)
        self._make_broker: Callable[[], Broker] = make_broker or MemoryBroker
        self._touch, self._finished = touch, finished
        self.timeline: Timeline[WorkEntry] = Timeline(max_log)
        self.stepper = StepMode(
            STEP_POINTS, max_paused=max_paused, paused_slots=paused_slots, touch=self.touch
        )
        self.scenario: Scenario | None = None
        self.fixed, self.played, self.left = False, 0, False  # left: a press left the steps
        self.stepping = threading.Lock()  # one Next step at a time: a fast double press
        self.simulation: Simulation | None = None
        self.last_job: Job | None = None
        self.last_batch: tuple[int, ...] = ()  # the entry ids of the last work_all()
        self.workers = Workers()
        self._guard = threading.RLock()
        self.world = _new_world(self._make_broker(), self.clock)

    @property
    def broker(self) -> Broker:
        """The broker of the current world."""
        return self.world.broker

    # -- the producer ------------------------------------------------------------------

    def enqueue(self, body: object, *, action: str = "enqueue") -> str:
        """``POST .../jobs``: check the job and publish it; returns its new ``message_id``.

        :raises Problem: 422 ``invalid-job``; 503 ``queue-full`` or ``broker-unavailable``.
        """
        job = parse_job(body)
        return self._publish(job, action)

    def producer_retry(self) -> str:
        """The producer sends its last job again (it never saw the broker's answer): a new
        message for the same job id. The article's job when none was sent yet."""
        return self._publish(self.last_job or parse_job(EXAMPLE), "producer_retry")

    def _publish(self, job: Job, action: str) -> str:
        message_id = self.world.broker.publish(job)
        entry = WorkEntry(id=self.timeline.next_id(), action=action, started=time.perf_counter(),
                          at=self.clock(), key=job.idempotency_key, job_id=job.id,
                          message_id=message_id, settings=self.settings.as_dict())  # fmt: skip
        entry.mark("publish", message_id=message_id, job_id=job.id)
        entry.outcome, entry.finished = "published", time.perf_counter()
        self.timeline.append(entry)
        self.last_job = job
        self.touch()
        self.finished()
        return message_id

    # -- the workers -------------------------------------------------------------------

    def work(self, *, together: threading.Barrier | None = None) -> WorkEntry:
        """``POST .../work``: a free worker receives and processes one visible message,
        then the relay runs (``together``: :meth:`~.workers.Workers.take`). A crash is an
        outcome on the entry, never an exception.

        :raises Problem: 429 ``workers-busy`` when every worker is busy (at once in step
            mode, else after waiting 5 s), or past step mode's caps; 503
            ``broker-unavailable``.
        """
        settings = self.settings
        if settings.step_mode:
            self.stepper.take_slot()
        try:
            worker = self.workers.take(settings.workers, wait=not settings.step_mode,
                                       together=together)  # fmt: skip
            try:
                entry = run_work(self, self.world, worker, settings)
            finally:
                self.workers.give(worker)
        finally:
            if settings.step_mode:
                self.stepper.give_slot()
        self.finished()
        return entry

    def work_all(self) -> list[WorkEntry]:
        """Every worker (``settings.workers``) takes a message at the same moment, each on
        its own thread; returns their entries, in timeline order (their ids stay in
        ``last_batch``, so the page tells every worker's outcome)."""
        runs = all_at_once(self.settings.workers, lambda together: self.work(together=together))
        done = sorted(runs, key=lambda e: e.id)
        self.last_batch = tuple(e.id for e in done)
        return done

    def busy_workers(self) -> list[str]:
        """The workers running a work call now."""
        return self.workers.busy()

    def claim_crash(self, point: str, world: World) -> bool:
        """Fire the armed crash at ``point`` once (then ``crash_at`` is ``"none"``); a call
        from before a reset (an older world) never fires the fresh lab's crash."""
        with self._guard:
            if self.settings.crash_at != point or world is not self.world:
                return False
            self.settings = self.settings.patched({"crash_at": "none"})
        self.touch()
        return True

    def step(self, request_id: object, *, to_end: object = False) -> int:
        """Step mode: let paused work call ``request_id`` go on (see
        :meth:`demo.engine.stepping.StepMode.step`: 422, 404, 409)."""
        return self.stepper.step(request_id, to_end=to_end)

    def release_all(self) -> int:
        """Step mode: let every paused work call run to its end; returns how many."""
        return self.stepper.release_all()

    # -- the simulator -----------------------------------------------------------------

    def simulate(self, body: object) -> Simulation:
        """``POST .../simulate``: run the delivery-semantics simulator and keep its result.

        :raises Problem: 422 ``invalid-simulation``.
        """
        result = simulate(**parse_simulation(body))  # type: ignore[arg-type]
        with self._guard:
            self.simulation = result
        self.touch()
        self.finished()
        return result

    # -- settings, scenarios, reset ------------------------------------------------------

    def update_settings(self, changes: object) -> Settings:
        """Apply a settings patch (:meth:`Settings.patched`); returns the new settings.

        :raises Problem: 422 ``invalid-settings``; nothing changes then.
        """
        with self._guard:
            old = self.settings
            self.settings = new = old.patched(changes)
            if old.step_mode and not new.step_mode:
                self.stepper.release_all()
        self.touch()
        return new

    def apply_scenario(self, name: str, *, fixed: bool = False) -> Scenario:
        """Start scenario ``name`` afresh, with its fix if ``fixed``.

        :raises Problem: 404 ``unknown-scenario``.
        """
        scenario = SCENARIOS.get(name)
        if scenario is None:
            names = ", ".join(SCENARIOS)
            raise Problem(404, "unknown-scenario", N_("No such scenario"),
                          Text("Scenarios are: %(names)s.", names=names))  # fmt: skip
        self.reset()
        changes = {**scenario.settings, **(scenario.fix if fixed else {})}
        with self._guard:
            self.settings = self._base_settings.patched(changes)
            self.scenario, self.fixed, self.played, self.left = scenario, fixed, 0, False
        self.touch()
        return scenario

    def play(self, name: str, *, fixed: bool = False) -> Scenario:
        """Start scenario ``name`` and run its clicks, as the page does."""
        scenario = self.apply_scenario(name, fixed=fixed)
        for click, arg in scenario.clicks_for(fixed):
            self._click(click, arg)
        self.played, self.left = len(scenario.clicks_for(fixed)), False
        return scenario

    def next_click(self, name: str, *, fixed: bool) -> int:
        """The index of scenario ``name``'s click (its fix's or not) Next step runs next; 0
        to start afresh (another scenario or case, or all clicks run). Hold :attr:`stepping`."""
        scenario = self.scenario
        if scenario is None or scenario.name != name:
            return 0
        if self.fixed != fixed and not (
            fixed and scenario.fix_set_by_hand(self.settings.as_dict())
        ):
            return 0  # another case (the fix ticked by hand mid-case goes on: the same clicks)
        return self.played if self.played < len(scenario.clicks_for(self.fixed)) else 0

    def play_next(self) -> int:
        """Next step: run the open scenario's next click; returns how many have run. Call
        it holding :attr:`stepping`, after :meth:`apply_scenario` when
        :meth:`next_click` is 0.

        :raises Problem: 409 ``no-scenario`` when none is open.
        """
        scenario = self.scenario
        if scenario is None:
            raise Problem(409, "no-scenario", N_("No scenario is open"),
                          N_("Open a scenario or a lesson first."))  # fmt: skip
        clicks = scenario.clicks_for(self.fixed)
        self._click(*clicks[self.played % len(clicks)])
        self.played, self.left = self.played % len(clicks) + 1, False
        return self.played

    def by_hand(self, click: str, arg: Any = None, *, received: bool = True) -> None:
        """A press by hand, not Next step's: :func:`played_after` (``received``: Work took one)."""
        with self.stepping:
            clicks = self.scenario.clicks_for(self.fixed) if self.scenario else None
            if clicks:
                self.played, self.left = played_after(clicks, self.played, click, arg, received)

    def _click(self, click: str, arg: Any) -> None:
        if click == "enqueue":
            self.enqueue(arg)
        elif click == "producer_retry":
            self.producer_retry()
        elif click == "work":
            self.work()
        elif click == "advance":
            self.clock.advance(arg)
            self.touch()
        elif click == "settings":
            self.update_settings(arg)
        elif click == "simulate":
            self.simulate(arg)

    def leave_scenario(self) -> None:
        """Back to the free lab: default settings, results kept."""
        with self._guard:
            self.settings = self._base_settings
            self.scenario, self.fixed = None, False
        self.touch()

    def reset(self) -> None:
        """Start afresh: an empty queue, dedup table, outbox, mailbox and timeline; the
        settings stay. Work calls still running finish in the old world."""
        self.stepper.forget()
        old = self.world
        with self._guard:
            self.timeline.clear()
            self.world = _new_world(self._make_broker(), self.clock)
            # The open scenario's steps start again: nothing is "not over".
            self.simulation, self.last_job, self.last_batch = None, None, ()
            self.played, self.left = 0, False
        with contextlib.suppress(Problem):
            old.broker.clear()  # a Redis that went away: the old keys expire on their own
        self.touch()

    def touch(self) -> None:
        """Something changed: open pages catch up."""
        self._touch()

    def finished(self) -> None:
        """A call has ended: the open lesson's checks run."""
        self._finished()

    # -- reading -----------------------------------------------------------------------

    def entries(self) -> list[WorkEntry]:
        """The timeline: producer sends and work calls, oldest first."""
        return self.timeline.entries()

    def is_blank(self) -> bool:
        """True while the lab holds nothing a fresh one would not (never asks the broker)."""
        with self._guard:
            return (
                not len(self.timeline)
                and self.scenario is None
                and self.simulation is None
                and self.settings == self._base_settings
            )

    def measure(self, what: str) -> int:
        """A scenario's count (see :class:`~.scenarios.Scenario`)."""
        return int(lab_state(self)["summary"][what])

    def state(self) -> dict[str, Any]:
        """What the lab holds, as JSON-ready values: see :func:`~.reading.lab_state`.

        :raises Problem: 503 ``broker-unavailable``.
        """
        return lab_state(self)


def played_after(
    clicks: Sequence[Click], played: int, click: str, arg: Any, received: bool = True
) -> tuple[int, bool]:
    """How many of a scenario's ``clicks`` count as played after a button pressed by hand,
    and whether the press left the steps.
    The next click counts, so Next step goes on after it (a clock step before it too: the
    payment lab's clock buttons move the same clock). Another Enqueue, Work or simulation
    leaves the steps (all played: Next step starts them afresh). A setting or a clock
    press that is no step changes nothing, and so does a Work too early to receive
    (not ``received``: :attr:`~.entries.WorkEntry.too_early`)."""
    if click in ("work", "work_all") and not received:
        return played, False
    at = played % len(clicks)  # all played: a new round
    while at < len(clicks) - 1 and clicks[at][0] == "advance" and click != "advance":
        at += 1
    name, want = clicks[at]
    if name == click and _matches(click, want, arg):
        return at + 1, False
    if click in ("settings", "advance"):
        return played, False
    return len(clicks), True


def _matches(click: str, want: Any, got: Any) -> bool:
    """A step's argument as the scenario names it, against the one pressed: settings that
    hold each value the step sets, or the same job (the same seconds, …)."""
    if click == "settings" and isinstance(want, Mapping) and isinstance(got, Mapping):
        return all(got.get(name) == value for name, value in want.items())
    if click == "simulate" and isinstance(want, Mapping) and isinstance(got, Mapping):
        return got.get("mode") == want.get("mode")  # the mode the step compares
    if click == "advance":  # +60 s passes the timeout as +31 s does
        return isinstance(got, int) and got >= want
    return want is None or want == got


def _new_world(broker: Broker, clock: VirtualClock) -> World:
    """A fresh world on ``broker``: an empty consumer database, mailbox and relay."""
    db, mailbox = ConsumerDb(), Mailbox()
    return World(broker, db, mailbox, Relay(db, mailbox, clock))
