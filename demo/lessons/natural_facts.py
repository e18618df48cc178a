"""What the operations lab's lessons check: its evidence (the requests it ran, with what
each answered), and the facts the checks are written in.

Checks read the lab's public state only (:class:`~demo.natural.lab.NaturalLab`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..natural.lab import NaturalEntry, NaturalLab
from ..natural.operations import OPERATIONS

RECENT = 40
"""Checks look at this many of the newest requests (the log keeps 200)."""


@dataclass(frozen=True)
class Evidence:
    """The lab's finished requests, oldest first: those a check may be met by."""

    requests: Sequence[NaturalEntry]

    def since(self, started_after: float) -> Evidence:
        """The requests that arrived after ``started_after`` (perf_counter s)."""
        return Evidence([e for e in self.requests if e.started > started_after])

    def runs(self, operation: str, *, dedup: bool) -> list[dict[str, Any]]:
        """The runs of ``operation`` with at least one retry, ``dedup`` on or off."""
        return [
            e.result
            for e in self.requests
            if e.action == "apply"
            and e.result["operation"] == operation
            and e.result["dedup"] is dedup
            and e.result["times"] >= 2
        ]

    def delayed(self, *, conditional: bool) -> list[dict[str, Any]]:
        """The delayed-duplicate runs, with If-Match or without."""
        return [
            e.result
            for e in self.requests
            if e.action == "delayed-duplicate" and e.result["conditional"] is conditional
        ]

    def pixels(self) -> list[dict[str, Any]]:
        """What each pixel request did, oldest first."""
        return [e.result for e in self.requests if e.action == "pixel"]


def evidence(lab: NaturalLab) -> Evidence:
    """The evidence of ``lab`` now: its newest :data:`RECENT` finished requests."""
    return Evidence(lab.requests()[-RECENT:])


def balance_after(ev: Evidence, operation: str, *, dedup: bool, test: Any) -> bool:
    """A retried run of ``operation`` whose final balance passes ``test``."""
    return any(test(r["balance"]) for r in ev.runs(operation, dedup=dedup))


def all_sorted(ev: Evidence, *, dedup: bool) -> bool:
    """Every operation retried (``dedup`` on or off); with dedup, each kept the state
    it had after one attempt."""
    for name in OPERATIONS:
        runs = ev.runs(name, dedup=dedup)
        if not runs or (dedup and not any(r["same_state"] for r in runs)):
            return False
    return True


def lost_update(ev: Evidence) -> bool:
    """The late write answered 200 and the balance ended at the late write's 100."""
    return any(r["final_balance"] == 100 for r in ev.delayed(conditional=False))


def late_write_refused(ev: Evidence) -> bool:
    """The late write answered 412 and the balance kept B's 50."""
    return any(
        r["final_balance"] == 50 and r["writes"][-1]["status"] == 412
        for r in ev.delayed(conditional=True)
    )


def counted_twice(ev: Evidence) -> bool:
    """One viewer's repeated GET of one post counted again (the window 0)."""
    seen: set[tuple[str, int]] = set()
    for p in ev.pixels():
        if p["counted"] and (p["post"], p["viewer"]) in seen and p["window_s"] == 0:
            return True
        seen.add((p["post"], p["viewer"]))
    return False


def counted_once(ev: Evidence) -> bool:
    """A repeated GET by a known viewer, within the window, was not counted."""
    return any(not p["counted"] and not p["new_viewer"] and p["window_s"] > 0 for p in ev.pixels())
