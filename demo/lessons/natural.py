"""The operations lab's chapter of the lessons path: four short lessons, met right after
the payment lab's first (which operations need a key at all?)."""

from __future__ import annotations

from ..engine.text import N_
from .engine import Check, Lesson
from .natural_facts import (
    all_sorted,
    balance_after,
    counted_once,
    counted_twice,
    late_write_refused,
    lost_update,
)


def _lesson(name: str, goal: str, hints: tuple[str, ...], takeaway: str, *checks: Check) -> Lesson:
    return Lesson(name, goal, hints, checks, takeaway, lab="natural")


CHAPTER: tuple[Lesson, ...] = (
    _lesson(
        "set-vs-add",
        N_("See SET survive its retries and += add once per attempt; then tame += with a record."),
        (
            N_("Set Attempts to 3 and leave Dedup off; press Retry it on both balance rows."),
            N_("Then switch dedup on (or Apply the fix) and retry balance += 100 again."),
        ),
        N_(
            "An operation that names the final value survives a retry; one that names a change "
            "needs an “applied for key X?” record."
        ),
        Check(
            "set-natural-add-not",
            N_("Retried without dedup: SET ended at 100, += went past 100"),
            lambda ev: (
                balance_after(ev, "set_balance", dedup=False, test=lambda b: b == 100)
                and balance_after(ev, "add_balance", dedup=False, test=lambda b: b > 100)
            ),
        ),
        Check(
            "add-deduplicated",
            N_("Retried with dedup: += ended at 100"),
            lambda ev: balance_after(ev, "add_balance", dedup=True, test=lambda b: b == 100),
        ),
    ),
    _lesson(
        "which-are-natural",
        N_("Sort the nine operations: naturally idempotent, or needs a dedup record."),
        (
            N_("Press Retry them all with Dedup off, then again with Dedup on."),
            N_("Look at the DELETE's answers: 204, then 404. Same state, another response."),
        ),
        N_(
            "Same state is not same response: a retried DELETE answers 404 and is still idempotent."
        ),
        Check(
            "all-sorted",
            N_("Every operation retried without dedup and classified"),
            lambda ev: all_sorted(ev, dedup=False),
        ),
        Check(
            "all-deduplicated",
            N_("Every operation retried with dedup kept the state of one attempt"),
            lambda ev: all_sorted(ev, dedup=True),
        ),
    ),
    _lesson(
        "lost-update",
        N_("Watch a late retry of SET undo a newer write, then refuse it with If-Match."),
        (
            N_("The three writes: A sets 100, B sets 50, A's retry of its 100 arrives last."),
            N_("With If-Match, the late write carries the ETag A read first: stale, so 412."),
        ),
        N_(
            "Naturally idempotent is not safe against a late duplicate: make the write "
            "conditional (If-Match, 412)."
        ),
        Check(
            "update-lost",
            N_("Without If-Match the late retry won: the balance ended at 100"),
            lost_update,
        ),
        Check(
            "late-write-refused",
            N_("With If-Match the late retry got 412: the balance stayed 50"),
            late_write_refused,
        ),
    ),
    _lesson(
        "tracking-pixel",
        N_("See one reader's reload and prefetch count as views, then count them once."),
        (
            N_("Reload the article and Prefetch it: the counter climbs with each GET."),
            N_("Apply the fix: a 30-minute window per (viewer, post), told apart by a cookie."),
        ),
        N_(
            "A GET with a side effect must survive repeats: browsers, prefetchers and chat "
            "apps send them freely."
        ),
        Check(
            "counted-twice",
            N_("With no window, one viewer's repeated GET counted again"),
            counted_twice,
        ),
        Check(
            "counted-once",
            N_("With a window, one viewer's repeated GET was not counted"),
            counted_once,
        ),
    ),
)
"""The operations lab's lessons, in order; each name is a scenario of the lab."""
