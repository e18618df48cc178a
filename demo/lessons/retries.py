"""The retry lab's chapter of the lessons path: the client's side of idempotency, in five
lessons (their names are the retry lab's scenarios, :mod:`demo.retries.scenarios`)."""

from __future__ import annotations

from ..engine.text import N_
from .engine import Check, Lesson
from .retries_facts import (
    budget_lowers_peak,
    double_charge_new_keys,
    final_at_once,
    jitter_fewer_calls,
    no_jitter_storm,
    outage_storm,
    replayed_same_key,
    retried_too_soon,
    waited_retry_after,
    wasted_retry,
)


def _lesson(name: str, goal: str, hints: tuple[str, ...], takeaway: str, *checks: Check) -> Lesson:
    return Lesson(name, goal, hints, checks, takeaway, lab="retries")


CHAPTER: tuple[Lesson, ...] = (
    _lesson(
        "retry-policy",
        N_("See a 400 retried for nothing, then a client that stops at the first 4xx."),
        (
            N_("Every attempt gets the same 400: the request is wrong; waiting fixes nothing."),
            N_(
                "Apply the fix: retry_on keeps only network errors, 408, 429 and 5xx, so the "
                "same 400 ends the run at once; a declined card (402) does too."
            ),
        ),
        N_("Retry only what may succeed next time; a 400 or a declined card is final."),
        Check("wasted", N_("A 4xx that no retry can change was retried"), wasted_retry),
        Check(
            "final",
            N_("A 4xx no retry can change ended the run at once: one attempt, a final error"),
            final_at_once,
        ),
    ),
    _lesson(
        "lost-response-retry",
        N_(
            "An answer is lost after the charge: a new key per attempt charges twice, one key "
            "replays."
        ),  # fmt: skip
        (
            N_("The client got no answer, yet the payment lab's ledger holds the charge."),
            N_("Apply the fix: every attempt carries the same Idempotency-Key."),
        ),
        N_("Keep one key for every attempt of one intent: only the server knows if it charged."),
        Check(
            "double",
            N_("A retry under a new key charged the order a second time"),
            double_charge_new_keys,
        ),
        Check(
            "replayed",
            N_("A retry under the same key replayed: one charge"),
            replayed_same_key,
        ),
    ),
    _lesson(
        "retry-after",
        N_("The server says when to come back (Retry-After: 3): a client that listens waits."),
        (
            N_("Look at the wait before attempt 2 in the attempts table."),
            N_("Apply the fix: respect_retry_after waits at least the server's seconds."),
        ),
        N_("Honour Retry-After: the server knows when it can serve you again."),
        Check("early", N_("A 429 was retried before its Retry-After"), retried_too_soon),
        Check(
            "waited",
            N_("With respect_retry_after, a 429 waited its 3 s and the charge went through"),
            waited_retry_after,
        ),
    ),
    _lesson(
        "jitter",
        N_("100 clients contend for one record: without jitter they collide in waves."),
        (
            N_("The chart shows the load over time: no jitter comes in synchronised spikes."),
            N_("Apply the fix, or choose all strategies: full jitter spreads the retries out."),
        ),
        N_("Back off with jitter: synchronised retries become a storm."),
        Check("waves", N_("A contention storm ran without jitter"), no_jitter_storm),
        Check(
            "fewer",
            N_("Full jitter made fewer calls than exponential backoff, same clients and seed"),
            jitter_fewer_calls,
        ),
    ),
    _lesson(
        "retry-budget",
        N_("A server comes back from an outage to a wall of retries; a retry budget lowers it."),
        (
            N_("Peak load, in the table under the chart: the busiest 100 ms, in calls/s."),
            N_("Apply the fix: a token bucket on the client allows a few retries a second."),
        ),
        N_(
            "Bound the retries: a retry budget or a circuit breaker keeps a blip from "
            "becoming an outage."
        ),  # fmt: skip
        Check("storm", N_("An outage storm ran without a retry budget"), outage_storm),
        Check(
            "budget",
            N_("With a retry budget, the same storm's peak load fell"),
            budget_lowers_peak,
        ),
    ),
)
"""The retry lab's lessons, in workshop order."""
