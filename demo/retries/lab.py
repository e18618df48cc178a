"""The retry lab: a client that charges through the payment lab's API and retries by the
attendee's policy, a fault plan in front of the payment lab, and the storm simulator.

No web framework, and no import of the payment lab: the attempts go through a
:class:`~.transport.Transport` (the web layer's sends them to the payment lab of the same
workspace, over its HTTP API), so they are real requests, in its ledger and timeline.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..engine.clock import VirtualClock
from ..engine.problems import Problem
from ..engine.text import N_, Text, translate
from ..engine.timeline import Entry, Timeline
from .client import Run, charge_with_retries
from .faults import Fault, FaultLayer, parse_faults
from .ledger import charges_for, payment_state
from .policy import Policy
from .scenarios import SCENARIOS, UNKNOWN, Scenario
from .storm_input import storm_answer
from .transport import Transport

DEFAULT_FAULTS: tuple[Fault, ...] = ("lose_response", 503, "ok")
"""The free lab's fault plan: a lost answer, an overloaded server, then success."""

AMOUNT, CURRENCY = 100_000, "VND"
"""What each run charges, in the payment lab's own currency and units (VND has no minor
unit, ISO 4217: 100,000 VND, like the payment lab's default order)."""

MAX_STORMS = 2
"""Storms simulated at once in the whole process (one per lab): a 1,000-client storm
takes seconds of CPU, and the machine is shared by every attendee."""

BUSY_RETRY_AFTER_S = 2
"""The ``Retry-After`` (s) of a 409/429 for a run or storm refused while one is in flight."""

_storms = threading.BoundedSemaphore(MAX_STORMS)

MAX_RUNS = 50
"""Runs kept on the lab's timeline (a ring buffer)."""


@dataclass
class RunEntry(Entry):
    """One run on the timeline: the order it paid, and its steps (``send`` and ``answer``
    per attempt, see :func:`~.client.charge_with_retries`)."""

    order_id: str = ""
    outcome: str | None = None
    charges: int | None = None
    respect_retry_after: bool = True
    """The run's policy waited at least a ``Retry-After`` (lesson 3's fix)."""

    def trace(self, step: str, /, **detail: Any) -> None:
        """The client's trace seam: record ``step`` on this run now."""
        self.mark(step, **detail)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, the reasons in the request's language."""
        return {
            "id": self.id,
            "action": self.action,
            "at": self.at,
            "order_id": self.order_id,
            "outcome": self.outcome,
            "charges": self.charges,
            "steps": [
                {
                    "name": s.name,
                    "detail": {
                        k: translate(v) if isinstance(v, (str, Text)) and k == "reason" else v
                        for k, v in s.detail.items()
                    },
                }
                for s in self.steps
            ],
        }


@dataclass
class LastRun:
    """The last run, kept to show: its :class:`~.client.Run`, order and charges caused."""

    run: Run
    order_id: str
    charges: int

    def as_dict(self) -> dict[str, Any]:
        """The API's run result: ``attempts``, ``outcome``, ``charges``, ``order_id``."""
        return {
            "attempts": [a.as_dict() for a in self.run.attempts],
            "outcome": self.run.outcome,
            "charges": self.charges,
            "order_id": self.order_id,
        }


class RetriesLab:
    """One attendee's retry lab.

    :param clock: the workspace's clock: the client's waits move it (never real sleep).
    :param transport: where runs send their requests when :meth:`run` is given none.
    :param rng: jitter and key source (a fresh ``random.Random()`` if ``None``).
    :param touch: called after every change (open pages catch up).
    :param finished: called after each run or storm (the open lesson's checks).
    """

    name = "retries"

    def __init__(
        self,
        *,
        clock: VirtualClock | None = None,
        transport: Transport | None = None,
        rng: random.Random | None = None,
        max_log: int = MAX_RUNS,
        touch: Callable[[], None] = lambda: None,
        finished: Callable[[], None] = lambda: None,
    ) -> None:
        self.clock = clock or VirtualClock(time.time)
        self.transport = transport
        self.rng = rng or random.Random()
        self._touch, self._finished = touch, finished
        self._guard = threading.RLock()
        # One run and one storm at a time: a double click is one charge, not two.
        self._running, self._storming = threading.Lock(), threading.Lock()
        self._generation = 0
        """Bumped by :meth:`reset`: a storm that started before it does not come back."""
        self._orders = 0
        """Runs so far, resets and lessons included: each run's order is numbered on, so
        the payment ledger tells them apart ("retry-1-…" each time read as one order)."""
        self.timeline: Timeline[RunEntry] = Timeline(max_log)
        self.policy = Policy()
        self.faults: tuple[Fault, ...] = DEFAULT_FAULTS
        self.storm_request: dict[str, Any] = {}
        """The storm the page's form shows (a scenario's, or the last one asked for)."""
        self.scenario: Scenario | None = None
        self.fixed = False
        self.last_run: LastRun | None = None
        self.last_storm: dict[str, Any] | None = None

    # -- running ---------------------------------------------------------------------------

    def run(self, request: object, transport: Transport | None = None) -> dict[str, Any]:
        """``POST /retries/api/run``: charge once through the retrying client.

        :param request: ``{"policy": {...}, "faults": [...]}``, both optional: ``policy``
            gives members on top of the defaults (:class:`~.policy.Policy`), ``faults`` the
            plan; left out, the lab's own are used. Both are kept as the lab's own.
        :returns: ``{"attempts": [{"n", "key", "status", "error", "waited_ms", "retried",
            "reason"}], "outcome", "charges", "order_id"}``; ``charges`` counts the payment
            lab's ledger entries for this run's order, read before and after through its
            API (``GET /api/state``).
        :raises Problem: 422 for a bad policy or plan, 409 ``payment-lab-stepping`` while
            the payment lab is in step mode (nothing changes); 409 ``run-in-flight`` with
            ``Retry-After`` while another run of this lab is in flight (a double click:
            one click, one charge); 502 ``payment-lab-unreachable`` when its state cannot
            be read.
        """
        if not isinstance(request, Mapping) or not set(request) <= {"policy", "faults"}:
            raise Problem(
                422,
                "invalid-run",
                N_("Invalid run"),
                N_('Send {"policy": {...}, "faults": [...]}, both optional.'),
            )
        send = transport or self.transport
        if send is None:
            raise Problem(503, "no-server", N_("No server"), N_("The lab has no server to call."))
        if not self._running.acquire(blocking=False):
            raise Problem(
                409,
                "run-in-flight",
                N_("A run is in flight"),
                N_("This lab is already running a charge: one click, one run. Wait for it."),
                retry_after_s=BUSY_RETRY_AFTER_S,
            )
        try:
            return self._run(request, send)
        finally:
            self._running.release()

    def _run(self, request: Mapping[str, Any], send: Transport) -> dict[str, Any]:
        ledger = payment_state(send, before=True)  # before anything changes
        with self._guard:
            # Given members go on the defaults, so a run's policy does not depend on the
            # runs before it; without "policy" the lab's own (the page's form) is used.
            given = "policy" in request
            policy = Policy.parse(request["policy"]) if given else self.policy
            faults = parse_faults(request.get("faults", list(self.faults)))
            self.policy, self.faults = policy, faults
            entry = RunEntry(self.timeline.next_id(), "Run", time.perf_counter(), self.clock())
            self._orders += 1
            entry.order_id = f"retry-{self._orders}-{self.rng.getrandbits(24):06x}"
            entry.respect_retry_after = policy.respect_retry_after
            self.timeline.append(entry)
        self.touch()
        before = charges_for(ledger, entry.order_id)
        run = charge_with_retries(
            policy,
            FaultLayer(faults, send, self.clock),
            {"order_id": entry.order_id, "amount": AMOUNT, "currency": CURRENCY},
            new_key=self._new_key,
            sleep=self.clock.sleep,
            rng=self.rng,
            trace=entry.trace,
        )
        after = charges_for(payment_state(send), entry.order_id)
        last = LastRun(run, entry.order_id, after - before)
        entry.outcome, entry.charges = run.outcome, last.charges
        entry.finished = time.perf_counter()
        with self._guard:
            if self.timeline.holds(entry):  # not a run from before a reset
                self.last_run = last
        self.touch()
        self.finished()
        return last.as_dict()

    def storm(self, request: object) -> dict[str, Any]:
        """``POST /retries/api/storm``: simulate the storm ``request`` asks for (see
        :func:`~.storm_input.storm_answer` for its members and the answer).

        :raises Problem: 422 for a bad request (nothing changes); 409 ``storm-in-flight``
            while this lab simulates one, 429 ``storms-busy`` while :data:`MAX_STORMS`
            storms run in the process, both with ``Retry-After``.
        """
        if not self._storming.acquire(blocking=False):
            raise Problem(
                409,
                "storm-in-flight",
                N_("A storm is in flight"),
                N_("This lab is already simulating a storm: wait for it, then storm again."),
                retry_after_s=BUSY_RETRY_AFTER_S,
            )
        try:
            if not _storms.acquire(blocking=False):
                raise Problem(
                    429,
                    "storms-busy",
                    N_("Too many storms"),
                    N_("Other labs are simulating storms right now: try again in a moment."),
                    retry_after_s=BUSY_RETRY_AFTER_S,
                )
            try:
                return self._storm(request)
            finally:
                _storms.release()
        finally:
            self._storming.release()

    def _storm(self, request: object) -> dict[str, Any]:
        with self._guard:
            generation = self._generation
        answer = storm_answer(request)
        with self._guard:
            if generation != self._generation:  # a reset came meanwhile: it wins
                return answer
            self.storm_request = dict(request) if isinstance(request, Mapping) else {}
            self.last_storm = answer
        self.touch()
        self.finished()
        return answer

    def set_policy(self, changes: object) -> Policy:
        """Change the policy (see :meth:`~.policy.Policy.parse`); returns the new one.

        :raises Problem: 422 for a bad policy; nothing changes then.
        """
        with self._guard:
            self.policy = Policy.parse(changes, self.policy)
        self.touch()
        return self.policy

    def _new_key(self) -> str:
        """A UUID v4 (Stripe's suggestion for a key), from the lab's random source."""
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    # -- scenarios ------------------------------------------------------------------------

    def apply_scenario(self, name: str, *, fixed: bool = False) -> Scenario:
        """Start scenario ``name`` afresh: its policy, fault plan and storm (with its fix
        if ``fixed``), no run or storm shown yet.

        :raises Problem: 404 for an unknown scenario name.
        """
        scenario = SCENARIOS.get(name)
        if scenario is None:
            raise Problem(404, "unknown-scenario", N_("No such scenario"), UNKNOWN)
        self.reset()
        with self._guard:
            self.policy = Policy.parse(scenario.policy_for(fixed))
            self.faults = scenario.faults_for(fixed) or DEFAULT_FAULTS
            self.storm_request = scenario.storm_for(fixed)
            self.scenario, self.fixed = scenario, fixed
        self.touch()
        return scenario

    def leave_scenario(self) -> None:
        """Back to the free lab: the default policy and plan, results kept."""
        with self._guard:
            self.policy, self.faults = Policy(), DEFAULT_FAULTS
            self.storm_request = {}
            self.scenario, self.fixed = None, False
        self.touch()

    def reset(self) -> None:
        """Forget the runs and the storm; the policy and the fault plan stay."""
        with self._guard:
            self._generation += 1
            self.timeline.clear()
            self.last_run = self.last_storm = None
        self.touch()

    def touch(self) -> None:
        """Something changed: open pages catch up."""
        self._touch()

    def finished(self) -> None:
        """A run or storm has ended."""
        self._finished()

    # -- reading ---------------------------------------------------------------------------

    def runs(self) -> list[RunEntry]:
        """The runs on the timeline, oldest first (a ring buffer of ``max_log``)."""
        return self.timeline.entries()

    def is_blank(self) -> bool:
        """True while the lab holds nothing a fresh one would not."""
        with self._guard:
            return (
                not len(self.timeline)
                and self.last_storm is None
                and self.scenario is None
                and self.policy == Policy()
                and self.faults == DEFAULT_FAULTS
                and not self.storm_request
            )

    def expected(self) -> list[dict[str, Any]]:
        """The open scenario's expected-vs-actual rows (empty outside a scenario)."""
        with self._guard:
            scenario, run, storm = self.scenario, self.last_run, self.last_storm
        if scenario is None:
            return []
        if storm is not None and "results" in storm:  # "all": the scenario's strategy's
            wanted = scenario.storm_for(self.fixed).get("strategy")
            wanted = scenario.watch if wanted == "all" else wanted
            storm = next((r for r in storm["results"] if r["strategy"] == wanted), None)
        return scenario.expected(self.fixed, run.as_dict() if run else None, storm)

    def state(self) -> dict[str, Any]:
        """What the lab holds, JSON-ready (``GET /retries/api/state``)."""
        with self._guard:
            return {
                "policy": self.policy.as_dict(),
                "faults": list(self.faults),
                "storm_request": dict(self.storm_request),
                "scenario": self.scenario.name if self.scenario else None,
                "fixed": self.fixed,
                "last_run": self.last_run.as_dict() if self.last_run else None,
                "last_storm": self.last_storm,
                "expected": self.expected(),
                "runs": [e.as_dict() for e in self.runs()],
            }
