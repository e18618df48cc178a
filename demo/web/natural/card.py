"""What the operations lab's scenario card compares: expected against actual, each read
from what the lab really ran (never a fixed answer), and how a state is shown."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...engine.text import N_, Text
from ...natural.lab import NaturalEntry, NaturalLab
from ...natural.operations import OPERATIONS, START

NATURAL = frozenset({"set_balance", "put_profile", "delete_item", "set_flag"})
"""The operations that name a final state, so survive a retry without a record (issue's
list: SET, a full PUT, a DELETE by id, setting a flag)."""


@dataclass(frozen=True)
class Numbers:
    """One expected/actual line of the card: ``what`` (translatable), both values, and
    whether they agree. ``fixed`` says which case ``expected`` predicts: the failure the
    steps make without the fix (then a match is the failure, kept as evidence), or the
    fix's result."""

    what: str
    expected: Any
    actual: Any
    fixed: bool = True
    intended: Any = None
    """What one intent should leave (one add, B's 50, one view per viewer): an expected
    value other than it is the failure the steps make."""
    failure: str | Text | None = None
    """Where the number counts what went right (operations that survived), the failure
    said in its own words; else the verdict's."""
    unretried: bool = False
    """One attempt only (Attempts 1): no retry happened, so the numbers prove nothing yet."""

    @property
    def evidence(self) -> bool:
        """The failure the steps predict, happened: kept as evidence, not a mismatch."""
        return self.ok and self.intended is not None and self.expected != self.intended

    @property
    def ok(self) -> bool:
        return bool(self.expected == self.actual)


def numbers(lab: NaturalLab, post: str) -> list[Numbers]:
    """The open scenario's expected/actual lines (none before anything ran)."""
    name = lab.scenario.name if lab.scenario else None
    runs = lab.latest_runs()
    if name == "set-vs-add" and "add_balance" in runs:
        # With dedup, one intent is one add; without, every attempt adds again.
        run = runs["add_balance"]
        dedup = bool(run["dedup"])
        return [Numbers(N_("Balance after balance += 100, retried"),
                        100 if dedup else 100 * run["times"], _balance(run), dedup,
                        100, unretried=run["times"] < 2)]  # fmt: skip
    retried = [r for r in runs.values() if r["times"] >= 2]
    if name == "which-are-natural" and retried:
        same = sum(1 for r in retried if r["same_state"])
        dedup = all(r["dedup"] for r in retried)
        expected = sum(1 for r in retried if r["dedup"] or r["operation"] in NATURAL)
        failure = Text(
            "the other %(n)s changed the state again: the failure you caused, kept as evidence",
            n=len(retried) - same,
        )
        return [Numbers(N_("Operations whose retries left the state alone"), expected, same,
                        dedup, len(retried), failure)]  # fmt: skip
    delayed = lab.last("delayed-duplicate")
    if name == "lost-update" and delayed is not None:
        # Unconditional, A's late 100 wins (the lost update); with If-Match, B's 50 stays.
        conditional = bool(delayed.result["conditional"])
        return [Numbers(N_("Final balance (B's 50 is the newest write)"),
                        50 if conditional else 100, delayed.result["final_balance"],
                        conditional, 50)]  # fmt: skip
    pixels = [e for e in lab.requests() if e.action == "pixel" and e.result["post"] == post]
    # The page's own first load is no step of the attendee's: wait for a repeat.
    if name == "tracking-pixel" and len(pixels) >= 2:
        window = pixels[-1].result["window_s"] > 0
        # Without a window the failure (a view per GET) differs from one view per viewer;
        # with one, the window's own count is what the fix predicts (GETs counted before
        # it was set by hand stay counted: no second "with the fix" number).
        viewers = len({e.result["viewer"] for e in pixels})
        return [Numbers(N_("Views of post 42"), expected_views(pixels),
                        lab.pixel.counts().get(post, 0), window,
                        None if window else viewers)]  # fmt: skip
    return []


def expected_views(pixels: list[NaturalEntry]) -> int:
    """The views the rule predicts for these pixel GETs, oldest first: each counts unless
    its dedup window (``window_s``, s, as it was at that GET) holds a counted view by the
    same viewer ``at`` (lab clock, s) less than the window before (:mod:`demo.natural.pixel`)."""
    last: dict[int, float] = {}
    views = 0
    for e in pixels:
        viewer, window_s = e.result["viewer"], e.result["window_s"]
        before = last.get(viewer)
        if window_s == 0 or before is None or e.at - before >= window_s:
            views += 1
            last[viewer] = e.at
    return views


def _balance(run: dict[str, Any]) -> int:
    balance: int = run["final_state"]["balance"]
    return balance


def changes(state: dict[str, Any]) -> list[str]:
    """The members of ``state`` that differ from the starting state, one string each, e.g.
    ``["balance 300", "savings 700"]``; ``["="]`` when none does. (The page keeps each
    one on a line of its own: a member is never broken mid-value.)"""
    diff = [f"{k} {_short(v)}" for k, v in state.items() if START.get(k) != v]
    return diff or ["="]


def _short(value: Any) -> str:
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value) if isinstance(value, bool) else str(value)


def start_text() -> list[str]:
    """The starting state's members, one string each, as the page shows them."""
    return [f"{k} {_short(v)}" for k, v in START.items()]


def verdicts(lab: NaturalLab) -> dict[str, int]:
    """How the operations retried so far sort: ``natural`` and ``record`` (needs a dedup
    record) counts, and ``left`` not yet retried."""
    runs = [r for r in lab.latest_runs().values() if r["times"] >= 2]
    natural = sum(1 for r in runs if r["natural"])
    return {"natural": natural, "record": len(runs) - natural, "left": len(OPERATIONS) - len(runs)}
