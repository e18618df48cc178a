"""The retry storm: N clients retrying against one server, simulated on a virtual clock.

Two models, both discrete-event simulations, deterministic for a ``seed``:

- ``contention``: the AWS Architecture Blog's experiment ("Exponential Backoff and Jitter",
  2015): every client updates one record under optimistic concurrency (read the version,
  write if it is unchanged); a write that lost the race fails, and the client backs off
  and starts over. The network delays each message by |Normal(10 ms, 2 ms)|, as there.
- ``outage``: the clients arrive at random moments of the first ``outage_s``, while the
  server answers 503 to everything; then it serves ``capacity_per_s`` (a token bucket
  holding 100 ms of it) and sheds the rest with 503.

``calls`` counts the requests that reach the server (the OCC writes; every call in the
outage); ``completion_s`` is when the last client was done; ``peak_load`` the busiest
100 ms, in calls per second. A retry ``budget`` (one token bucket shared by the clients,
as an SDK's retry quota is) refuses a retry when empty: that client gives up.
"""

from __future__ import annotations

import heapq
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .policy import STRATEGIES, backoff_ms

MODELS = ("outage", "contention")

NET_MS = {"contention": (10.0, 2.0), "outage": (50.0, 10.0)}
"""One network hop, |Normal(mean, sd)| ms: the blog's simulator's in a data centre for
``contention``; clients across the internet for ``outage``."""

MAX_CALLS = 250_000
"""A simulation stops (``truncated``) after this many calls: memory and time stay bounded."""

PEAK_WINDOW_S = 0.1
FINE_S = 0.01
"""The load is counted per 10 ms, then summed into the chart's buckets."""

MAX_POINTS = 100
"""A series has at most this many buckets."""

_NICE_S = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


@dataclass(frozen=True)
class Budget:
    """A retry budget: a token bucket of ``burst`` tokens, refilled at ``per_s`` a second;
    each retry takes one, and a client finding it empty gives up."""

    burst: int
    per_s: float


@dataclass(frozen=True)
class Storm:
    """One storm to simulate (see :mod:`.storm_input` for the API's rules): times in ms
    and s as named; ``strategy`` one of :data:`~.policy.STRATEGIES`."""

    model: str = "contention"
    clients: int = 100
    strategy: str = "full_jitter"
    base_ms: int = 10
    cap_ms: int = 2_000
    capacity_per_s: int = 100
    outage_s: int = 10
    budget: Budget | None = None
    seed: int = 1


@dataclass
class Result:
    """What one strategy did: see the module docstring for each number."""

    strategy: str
    calls: int = 0
    completion_s: float = 0.0
    peak_load: float = 0.0
    gave_up: int = 0
    truncated: bool = False
    load: Counter[int] = field(default_factory=Counter)  # calls per 10 ms

    def as_dict(self, bucket_s: float) -> dict[str, Any]:
        """JSON-ready, with the load as ``series``: ``{"t_s", "calls"}`` per ``bucket_s``."""
        return {
            "strategy": self.strategy,
            "calls": self.calls,
            "completion_s": round(self.completion_s, 3),
            "peak_load": round(self.peak_load, 1),
            "gave_up": self.gave_up,
            "truncated": self.truncated,
            "series": series(self.load, bucket_s, self.completion_s),
        }


class _World:
    """The shared parts of a simulation: the random source, the event queue, the budget."""

    def __init__(self, storm: Storm, strategy: str) -> None:
        self.storm, self.strategy = storm, strategy
        self.rng = random.Random(storm.seed)
        self.net_ms = NET_MS[storm.model]
        self.events: list[tuple[float, int, int]] = []
        self.seq = 0
        self.result = Result(strategy)
        self.tokens = float(storm.budget.burst) if storm.budget else 0.0
        self.refilled_at = 0.0

    def hop(self) -> float:
        # gauss, not normalvariate: the same distribution, twice as fast (not thread-safe,
        # and need not be: one simulation owns its random source).
        return abs(self.rng.gauss(*self.net_ms)) / 1000

    def at(self, t: float, client: int) -> None:
        self.seq += 1
        heapq.heappush(self.events, (t, self.seq, client))

    def arrive(self, t: float) -> None:
        """A call reached the server at ``t``: count it."""
        self.result.calls += 1
        self.result.load[int(t / FINE_S)] += 1

    def wait(self, retry: int, previous_ms: float) -> float:
        s = self.storm
        return backoff_ms(self.strategy, retry, s.base_ms, s.cap_ms, previous_ms, self.rng)

    def may_retry(self, t: float) -> bool:
        """True if the budget (if any) has a token for a retry at ``t``; takes it."""
        budget = self.storm.budget
        if budget is None:
            return True
        self.tokens = min(budget.burst, self.tokens + (t - self.refilled_at) * budget.per_s)
        self.refilled_at = t
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def done(self, t: float, *, gave_up: bool = False) -> None:
        self.result.completion_s = max(self.result.completion_s, t)
        self.result.gave_up += gave_up


def simulate(storm: Storm, strategy: str) -> Result:
    """Run ``storm`` with ``strategy``; the same seed gives the same result."""
    world = _World(storm, strategy)
    run = _contention if storm.model == "contention" else _outage
    run(world)
    result = world.result
    result.truncated = result.calls >= MAX_CALLS
    windows: Counter[int] = Counter()
    per_window = round(PEAK_WINDOW_S / FINE_S)
    for fine, calls in result.load.items():
        windows[fine // per_window] += calls
    result.peak_load = max(windows.values(), default=0) / PEAK_WINDOW_S
    return result


def _contention(world: _World) -> None:
    """OCC on one record: an event is a client's read or write reaching the server."""
    n = world.storm.clients
    read_at, retries, previous = [0.0] * n, [0] * n, [float(world.storm.base_ms)] * n
    seen = [-1] * n  # the version a client read; -1: its next event is a read
    version = 0
    for c in range(n):
        world.at(world.hop(), c)
    while world.events and world.result.calls < MAX_CALLS:
        t, _, c = heapq.heappop(world.events)
        if seen[c] < 0:  # the read: the version now, the write two hops later
            seen[c] = version
            world.at(t + world.hop() + world.hop(), c)
            continue
        world.arrive(t)
        answered = t + world.hop()
        won, seen[c] = seen[c] == version, -1
        if won:
            version += 1
            world.done(answered)
        elif not world.may_retry(answered):
            world.done(answered, gave_up=True)
        else:
            retries[c] += 1
            previous[c] = world.wait(retries[c], previous[c])
            read_at[c] = answered + previous[c] / 1000 + world.hop()
            world.at(read_at[c], c)


def _outage(world: _World) -> None:
    """Every call gets 503 until ``outage_s``, then at most ``capacity_per_s`` succeed."""
    storm = world.storm
    retries, previous = [0] * storm.clients, [float(storm.base_ms)] * storm.clients
    rate, burst = storm.capacity_per_s, max(1.0, storm.capacity_per_s * PEAK_WINDOW_S)
    tokens, filled_at = burst, float(storm.outage_s)
    for c in range(storm.clients):  # they keep coming while the server is down
        world.at(world.rng.uniform(0, storm.outage_s) + world.hop(), c)
    while world.events and world.result.calls < MAX_CALLS:
        t, _, c = heapq.heappop(world.events)
        world.arrive(t)
        answered = t + world.hop()
        served = False
        if t >= storm.outage_s:
            tokens = min(burst, tokens + (t - filled_at) * rate)
            filled_at = t
            served = tokens >= 1
            tokens -= served
        if served:
            world.done(answered)
        elif not world.may_retry(answered):
            world.done(answered, gave_up=True)
        else:
            retries[c] += 1
            previous[c] = world.wait(retries[c], previous[c])
            world.at(answered + previous[c] / 1000 + world.hop(), c)


def bucket_for(completion_s: float) -> float:
    """The chart's bucket width, in s: the smallest round one giving at most 100 buckets."""
    return next((b for b in _NICE_S if completion_s / b <= MAX_POINTS), _NICE_S[-1])


def series(load: Counter[int], bucket_s: float, until_s: float) -> list[dict[str, float]]:
    """``load`` (calls per 10 ms) summed per ``bucket_s``, from 0 to ``until_s``."""
    per = max(1, round(bucket_s / FINE_S))
    sums: Counter[int] = Counter()
    for fine, calls in load.items():
        sums[fine // per] += calls
    count = min(int(until_s / bucket_s) + 1, MAX_POINTS + 1)
    return [{"t_s": round(i * bucket_s, 3), "calls": sums[i]} for i in range(count)]


def run_storm(storm: Storm, strategies: tuple[str, ...] = STRATEGIES) -> list[Result]:
    """:func:`simulate` once per strategy of ``strategies``, the same seed for each."""
    return [simulate(storm, s) for s in strategies]


Simulator = Callable[[Storm, str], Result]
