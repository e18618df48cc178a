"""The queue lab's chapter of the lessons path: six lessons, one per scenario, each
"see it fail, then fix it" on the lab's real state (:mod:`.queue_facts`)."""

from __future__ import annotations

from ..engine.text import N_
from .engine import Check, Lesson
from .queue_facts import (
    crash_redelivered,
    crash_window,
    dead_lettered,
    each_key_once,
    job_lost,
    one_job_two_messages,
    poison_retried,
    redelivered_twice,
    relay_crash_absorbed,
    sent_twice,
    simulated,
    skipped,
)


def _lesson(name: str, goal: str, hints: tuple[str, ...], takeaway: str, *checks: Check) -> Lesson:
    return Lesson(name, goal, hints, checks, takeaway, lab="queue")


QUEUE_PATH: tuple[Lesson, ...] = (
    _lesson(
        "redelivery",
        N_("See a redelivered message send a second e-mail, then see dedup send none."),
        (
            N_(
                "Run the steps: the worker crashes before its ack, the clock passes the "
                "visibility timeout, and the broker delivers the message again."
            ),
            N_("Then apply the fix: the dedup table keyed by invoice:42:email."),
        ),  # fmt: skip
        N_("At-least-once means a handler runs more than once: make it idempotent."),
        Check(
            "redelivered-twice",
            N_("A redelivery without dedup sent a second e-mail"),
            lambda ev: redelivered_twice(ev, dedup=False) and sent_twice(ev),
        ),
        Check(
            "redelivered-once",
            N_("With dedup, the redelivery was acked and sent nothing: one e-mail"),
            lambda ev: redelivered_twice(ev, dedup=True) and skipped(ev) and each_key_once(ev),
        ),
    ),
    _lesson(
        "duplicate-job",
        N_("See the producer's retry put one job in the queue twice, and dedup absorb it."),
        (N_("A producer retry is a second message with the same job id and key."),),
        N_("The producer retries too: dedup on the job's key, not on the message id."),
        Check(
            "two-messages-two-emails",
            N_("One job in two messages sent two e-mails"),
            lambda ev: one_job_two_messages(ev) and sent_twice(ev),
        ),
        Check(
            "two-messages-one-email",
            N_("One job in two messages, one e-mail: the second was skipped"),
            lambda ev: one_job_two_messages(ev) and skipped(ev) and each_key_once(ev),
        ),
    ),
    _lesson(
        "at-most-once",
        N_("See at-most-once lose a job without a trace, and at-least-once redeliver it."),
        (
            N_("Look for an error after the crash: there is none, and the queue is empty."),
            N_("The fix acks after the work: the crash becomes a redelivery."),
        ),
        N_("Ack after the work, never before: a lost job raises no error."),
        Check("lost", N_("A crash under at-most-once lost the job"), job_lost),
        Check(
            "redelivered",
            N_("Under at-least-once the crashed message came back and was done"),
            crash_redelivered,
        ),
    ),
    _lesson(
        "outbox",
        N_("See the crash window send twice despite dedup, and the outbox close it."),
        (
            N_("The crash falls between the e-mail and its dedup record: dedup cannot see it."),
            N_(
                "The outbox writes the e-mail and the record in one atomic step; provider "
                "dedup absorbs the relay's own resend."
            ),
        ),  # fmt: skip
        N_("Dedup covers a crash after the record; the outbox covers the one before it."),
        Check("window", N_("Dedup on, a crash after the e-mail: sent twice"), crash_window),
        Check(
            "outbox-once",
            N_(
                "Outbox and provider dedup: the relay crashes and resends, still one e-mail per key"
            ),
            relay_crash_absorbed,
        ),
    ),
    _lesson(
        "delivery-semantics",
        N_('Measure why "exactly-once" is at-least-once plus an idempotent consumer.'),
        (N_("Compare the duplicate side effects of the two runs in the chart's table."),),
        N_('"Exactly-once" is not a switch on the queue: it is at-least-once plus dedup.'),
        Check(
            "duplicates",
            N_("At-least-once lost nothing and repeated side effects"),
            lambda ev: simulated(ev, "at_least_once", duplicates=True),
        ),
        Check(
            "exactly-once",
            N_("With an idempotent consumer: nothing lost, no duplicate side effect"),
            lambda ev: simulated(ev, "idempotent", duplicates=False),
        ),
    ),
    _lesson(
        "poison-message",
        N_("See a poison message come back on every timeout, then end in the dead-letter queue."),
        (N_("Each receive counts; after max_attempts receives the broker gives up."),),
        N_("Cap the attempts: a job that always fails belongs in a dead-letter queue."),
        Check("retried", N_("The handler failed on one job four times"), poison_retried),
        Check("dead", N_("The poison message reached the dead-letter queue"), dead_lettered),
    ),
)
"""The queue lab's lessons, in workshop order; each name is one of its scenarios."""
