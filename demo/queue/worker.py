"""The consumer: **the lesson**. :func:`consume` reads like the article's sketch, top to
bottom: receive → dedup check → side effect → record → ack.

Every step boundary calls ``trace(step, **detail)``: the lab logs the step on the shared
timeline, pauses there in step mode, and raises an armed crash there (``after_receive``
at ``receive``, ``after_effect`` at ``side effect``, ``after_record`` at ``record``), so
the code on screen is the code that runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..engine.clock import Clock
from ..engine.text import N_
from ..engine.timeline import Trace
from .broker import Broker, Delivery
from .dedup import ConsumerDb
from .mailbox import Mailbox
from .settings import Settings

Outcome = Literal["processed", "duplicate_skipped", "crashed", "lost", "idle"]


class UnprocessableJob(Exception):
    """The handler cannot do this job (a poison message): it fails on every delivery."""


@dataclass(frozen=True)
class Worker:
    """What one worker works with: its name (``"worker-1"``…), the lab's settings at the
    start of the call, the broker, the consumer's database, the mailbox and the clock."""

    name: str
    settings: Settings
    broker: Broker
    db: ConsumerDb
    mailbox: Mailbox
    clock: Clock


@dataclass(frozen=True)
class Done:
    """How :func:`consume` ended (a crash ends it with an exception instead)."""

    outcome: Outcome
    delivery: Delivery | None = None
    dead_lettered: tuple[str, ...] = ()


def consume(worker: Worker, trace: Trace) -> Done:
    """Take one message and do its job at most once per idempotency key, if the switches
    allow it.

    :raises UnprocessableJob: the job's payload cannot be turned into an e-mail; the
        message is not acked, so it comes back after the visibility timeout.
    """
    settings, broker, db = worker.settings, worker.broker, worker.db
    at_most_once = settings.delivery == "at_most_once"
    received = broker.receive(
        now=worker.clock(),
        visibility_timeout_s=settings.visibility_timeout_s,
        max_attempts=settings.max_attempts,
        consumer=worker.name,
        ack_on_receive=at_most_once,  # at-most-once: acked before any work is done
    )
    message = received.delivery
    if message is None:
        return Done("idle", dead_lettered=received.dead_lettered)
    job, key = message.job, message.job.idempotency_key
    trace("receive", message_id=message.message_id, job_id=job.id, key=key,
          receive_count=message.receive_count)  # fmt: skip

    if settings.dedup:
        seen = db.completed(key)  # the dedup table is the source of truth
        trace("dedup check", seen=seen)
        if seen:
            return skip_duplicate(worker, message, trace)

    subject = invoice_email(job.payload)  # a poison job fails here, on every delivery
    if settings.outbox:
        # The e-mail and the dedup record in one atomic step: no crash can fall between.
        row = db.commit(job, message.message_id, dedup=settings.dedup)
        if row is None:  # a concurrent worker committed this key first
            trace("dedup check", seen=True)
            return skip_duplicate(worker, message, trace)
        trace("side effect", via="outbox", row=row.row_id, subject=subject)
    else:
        email, _ = worker.mailbox.send(idempotency_key=key, message_id=message.message_id,
                                       job_id=job.id, via="worker",
                                       sent_at=worker.clock())  # fmt: skip
        trace("side effect", via="mailbox", email=email, subject=subject)
        if settings.dedup:
            db.record(key)
    trace("record", dedup=settings.dedup, with_outbox=settings.outbox)

    if not at_most_once:
        broker.ack(message.message_id)
        trace("ack")
    return Done("processed", message)


def skip_duplicate(worker: Worker, message: Delivery, trace: Trace) -> Done:
    """A job already done: ack its message (unless the broker acked it on receive) and
    do nothing else."""
    if worker.settings.delivery != "at_most_once":
        worker.broker.ack(message.message_id)
        trace("ack")
    return Done("duplicate_skipped", message)


INVOICE_ID_ERROR = N_("invoice_id must be a positive integer")
"""The handler's error for a job it can never do (a poison message), marked for
translation: the page says it in its own language."""


def invoice_email(payload: dict[str, object]) -> str:
    """The e-mail's subject for an invoice job.

    :raises UnprocessableJob: unless ``payload["invoice_id"]`` is a positive integer.
    """
    invoice = payload.get("invoice_id")
    if isinstance(invoice, bool) or not isinstance(invoice, int) or invoice < 1:
        raise UnprocessableJob(INVOICE_ID_ERROR)
    return f"Invoice {invoice}"
