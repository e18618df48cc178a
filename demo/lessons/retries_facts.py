"""What the retry lab's lessons check: its evidence (the runs on its timeline, the storms
it simulated), and the facts the checks are written in.

Checks read the lab's public state only (:class:`~demo.retries.lab.RetriesLab`: ``runs()``,
``last_storm``, ``scenario``, ``fixed``)."""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..retries.lab import RetriesLab

RECENT = 20
"""Checks look at this many of the newest runs (the lab keeps 50)."""

MAX_STORMS = 10
"""Storms remembered per lab for the checks that compare one storm with an earlier one."""

NO_JITTER = ("none", "fixed", "exponential")
MISTAKES = (400, 402, 409, 422)
RETRY_AFTER_MS = 3000
"""The ``Retry-After: 3`` a planned 429 carries, in ms (:mod:`demo.retries.faults`)."""


@dataclass(frozen=True)
class Attempt:
    """One attempt of a run, as its ``send`` and ``answer`` steps say."""

    n: int
    key: str
    status: int | None
    error: str | None
    waited_ms: float
    retried: bool


@dataclass(frozen=True)
class Run:
    """One finished run: when it started (perf_counter s), its attempts and results."""

    started: float
    attempts: tuple[Attempt, ...]
    outcome: str
    charges: int
    respect_retry_after: bool = True

    @property
    def keys(self) -> set[str]:
        return {a.key for a in self.attempts}


@dataclass(frozen=True)
class Storm:
    """One storm the lab simulated: when the checks first saw it (perf_counter s), its
    request, and each strategy's numbers (``{"calls", "peak_load", "completion_s"}``)."""

    seen: float
    model: str
    clients: int
    seed: int
    budget: bool
    results: Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Evidence:
    """The runs and storms a check may be met by; ``every_*`` also hold the earlier ones."""

    runs: Sequence[Run]
    storms: Sequence[Storm]
    every_runs: Sequence[Run] = ()
    every_storms: Sequence[Storm] = ()

    def since(self, started_after: float) -> Evidence:
        """The runs and storms after ``started_after`` (perf_counter s), all kept as
        ``every_*`` for context."""
        return Evidence(
            [r for r in self.runs if r.started > started_after],
            [s for s in self.storms if s.seen > started_after],
            self.runs,
            self.storms,
        )


@dataclass
class _Seen:
    """The storms seen in one lab, newest last, and the scenario they were seen in."""

    scenario: str | None = None
    last: object = None
    storms: list[Storm] = field(default_factory=list)


_seen: weakref.WeakKeyDictionary[RetriesLab, _Seen] = weakref.WeakKeyDictionary()
_guard = threading.Lock()


def evidence(lab: RetriesLab) -> Evidence:
    """The lab's evidence now. The lab keeps its last storm only, so the storms are
    remembered here as they are first seen (the checks run after every storm). Another
    scenario forgets them; its fix does not, so a lesson can compare the storm with the
    fix against the one without it (as its progress spans the fix's reset)."""
    runs = [r for r in (_run(e) for e in lab.runs()[-RECENT:]) if r is not None]
    scenario = lab.scenario.name if lab.scenario else None
    storm = lab.last_storm
    with _guard:
        seen = _seen.setdefault(lab, _Seen())
        if storm is None or seen.scenario != scenario:
            seen.storms.clear()
            seen.last = None
        seen.scenario = scenario
        if storm is not None and storm is not seen.last:
            seen.last = storm
            seen.storms = [*seen.storms, _storm(storm, lab.storm_request)][-MAX_STORMS:]
        storms = list(seen.storms)
    return Evidence(runs, storms, runs, storms)


def _run(entry: Any) -> Run | None:
    if entry.finished is None or entry.outcome is None or entry.charges is None:
        return None
    sent = {s.detail.get("n"): s.detail for s in entry.steps if s.name == "send"}
    answers = {s.detail.get("n"): s.detail for s in entry.steps if s.name == "answer"}
    attempts = tuple(
        Attempt(
            n=int(n),
            key=str(sent[n].get("key", "")),
            status=answers.get(n, {}).get("status"),
            error=answers.get(n, {}).get("error"),
            waited_ms=float(sent[n].get("waited_ms") or 0.0),
            retried=bool(answers.get(n, {}).get("retried")),
        )
        for n in sorted(sent)
    )
    return Run(
        entry.started,
        attempts,
        str(entry.outcome),
        int(entry.charges),
        bool(entry.respect_retry_after),
    )


def _storm(answer: Mapping[str, Any], request: Mapping[str, Any]) -> Storm:
    results = answer.get("results")
    each = results if isinstance(results, list) else [answer]
    return Storm(
        seen=time.perf_counter(),
        model=str(answer.get("model")),
        clients=int(answer.get("clients", 0)),
        seed=int(answer.get("seed", 0)),
        budget=isinstance(request.get("budget"), Mapping),
        results={str(r["strategy"]): r for r in each},
    )


# -- facts over the evidence ---------------------------------------------------


def wasted_retry(ev: Evidence) -> bool:
    """A run retried an answer no retry can change (400, 402, 409, 422)."""
    return any(a.retried and a.status in MISTAKES for r in ev.runs for a in r.attempts)


def final_at_once(ev: Evidence) -> bool:
    """An answer no retry can change (400, 402, 409, 422: a bad request, a declined card)
    ended a run at its first attempt: final, not retried."""
    return any(
        r.outcome == "final_error" and len(r.attempts) == 1 and r.attempts[0].status in MISTAKES
        for r in ev.runs
    )


def lost(run: Run) -> bool:
    """An attempt of the run got no answer (the charge may have happened)."""
    return any(a.error == "network" for a in run.attempts)


def double_charge_new_keys(ev: Evidence) -> bool:
    """After a lost answer, a retry under a new key charged the order again."""
    return any(lost(r) and len(r.keys) > 1 and r.charges >= 2 for r in ev.runs)


def replayed_same_key(ev: Evidence) -> bool:
    """After a lost answer, the retry under the same key replayed: one charge."""
    return any(
        lost(r) and len(r.keys) == 1 and r.outcome == "replayed" and r.charges == 1 for r in ev.runs
    )


def _after_429(run: Run) -> list[Attempt]:
    """The attempts that followed a 429."""
    return [b for a, b in zip(run.attempts, run.attempts[1:], strict=False) if a.status == 429]


def retried_too_soon(ev: Evidence) -> bool:
    """A 429's retry went out before its ``Retry-After`` (3 s)."""
    return any(b.waited_ms < RETRY_AFTER_MS for r in ev.runs for b in _after_429(r))


def waited_retry_after(ev: Evidence) -> bool:
    """A 429's retry waited at least its ``Retry-After`` (3 s) because the policy respects
    it (a fixed 4 s backoff that happens to wait long enough does not listen: the next
    server may say 30 s), and the charge went through."""
    return any(
        r.respect_retry_after and r.outcome in ("charged", "replayed") and _after_429(r)
        and all(b.waited_ms >= RETRY_AFTER_MS for b in _after_429(r))
        for r in ev.runs
    )  # fmt: skip


def no_jitter_storm(ev: Evidence) -> bool:
    """A contention storm ran with a strategy without jitter."""
    return any(s.model == "contention" and set(s.results) & set(NO_JITTER) for s in ev.storms)


def _calls(storms: Sequence[Storm], like: Storm, strategy: str) -> list[int]:
    """The calls ``strategy`` made in the storms like ``like`` (model, clients, seed)."""
    return [
        int(s.results[strategy]["calls"])
        for s in storms
        if (s.model, s.clients, s.seed) == (like.model, like.clients, like.seed)
        and strategy in s.results
    ]


def jitter_fewer_calls(ev: Evidence) -> bool:
    """A contention storm with full jitter made fewer calls than exponential backoff
    without jitter, in the same storm (clients, seed)."""
    for s in ev.storms:
        if s.model != "contention" or "full_jitter" not in s.results:
            continue
        plain = _calls([*ev.every_storms, *ev.storms], s, "exponential")
        if plain and int(s.results["full_jitter"]["calls"]) < min(plain):
            return True
    return False


def outage_storm(ev: Evidence) -> bool:
    """An outage storm ran without a retry budget."""
    return any(s.model == "outage" and not s.budget for s in ev.storms)


def budget_lowers_peak(ev: Evidence) -> bool:
    """An outage storm with a retry budget had a lower peak load than the same storm
    (clients, seed, strategy) without one."""
    every = [*ev.every_storms, *ev.storms]
    for s in ev.storms:
        if s.model != "outage" or not s.budget:
            continue
        for strategy, result in s.results.items():
            peaks = [
                float(o.results[strategy]["peak_load"])
                for o in every
                if o.model == "outage" and not o.budget and strategy in o.results
                and (o.clients, o.seed) == (s.clients, s.seed)
            ]  # fmt: skip
            if peaks and float(result["peak_load"]) < min(peaks):
                return True
    return False
