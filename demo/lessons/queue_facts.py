"""What the queue lab's lessons check: its evidence (the work calls on the timeline, the
e-mails, the queue, the last simulation), and the facts the checks are written in.

Checks read the lab's public state only (:class:`~demo.queue.lab.QueueLab`): the
mailbox is the source of truth for side effects, never the number of handler calls."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..queue.entries import WorkEntry
from ..queue.lab import QueueLab


@dataclass(frozen=True)
class Evidence:
    """What the queue lab holds now.

    :param entries: the finished producer sends and work calls a check may be met by
        (oldest first).
    :param emails_per_key: e-mails in the mailbox per idempotency key.
    :param messages: the broker's messages (``{"message_id", "job_id", "state",
        "receive_count", …}``).
    :param simulation: the last simulation's result, or ``None``.
    :param lost: jobs acked with no e-mail, sent or in the outbox.
    """

    entries: Sequence[WorkEntry]
    emails_per_key: dict[str, int]
    messages: Sequence[dict[str, Any]]
    simulation: dict[str, Any] | None
    lost: int

    def since(self, started_after: float) -> Evidence:
        """The same evidence, its entries cut to those that started after
        ``started_after`` (``time.perf_counter`` s)."""
        later = [e for e in self.entries if e.started > started_after]
        return Evidence(later, self.emails_per_key, self.messages, self.simulation, self.lost)

    def work(self) -> list[WorkEntry]:
        """The work calls (not the producer's sends)."""
        return [e for e in self.entries if e.action == "work"]


def evidence(lab: QueueLab) -> Evidence:
    """The queue lab's evidence, from its public state.

    :raises ~demo.engine.problems.Problem: 503 when the Redis broker cannot be reached.
    """
    state = lab.state()
    per_key = Counter(e["idempotency_key"] for e in state["emails"])
    finished = [e for e in lab.entries() if e.finished is not None]
    return Evidence(
        finished, dict(per_key), state["messages"], state["simulation"], state["summary"]["lost"]
    )


def redelivered_twice(ev: Evidence, *, dedup: bool) -> bool:
    """A redelivered message (receive 2 or more) was worked with dedup ``dedup``."""
    return any(
        (e.receive_count or 0) > 1 and bool(e.settings.get("dedup")) == dedup for e in ev.work()
    )


def sent_twice(ev: Evidence) -> bool:
    """Some key got two e-mails or more."""
    return max(ev.emails_per_key.values(), default=0) >= 2


def each_key_once(ev: Evidence) -> bool:
    """At least one e-mail, and no key got two."""
    return bool(ev.emails_per_key) and max(ev.emails_per_key.values()) == 1


def skipped(ev: Evidence) -> bool:
    """A work call found its key completed in the dedup table and sent nothing."""
    return any(e.outcome == "duplicate_skipped" for e in ev.work())


def one_job_two_messages(ev: Evidence) -> bool:
    """The producer sent one job id in two messages."""
    counts = Counter(m["job_id"] for m in ev.messages)
    return max(counts.values(), default=0) >= 2


def job_lost(ev: Evidence) -> bool:
    """Under at-most-once a work call lost its job: acked, no e-mail, no message left."""
    return any(e.outcome == "lost" for e in ev.work()) and ev.lost >= 1


def crash_redelivered(ev: Evidence) -> bool:
    """Under at-least-once a crashed message came back and was done: nothing lost."""
    crashed = {e.message_id for e in ev.work() if e.outcome == "crashed"}
    done = {e.message_id for e in ev.work() if e.outcome in ("processed", "duplicate_skipped")}
    return bool(crashed & done) and ev.lost == 0


def crash_window(ev: Evidence) -> bool:
    """Dedup on, no outbox: a crash after the side effect, and a key sent twice."""
    return any(
        e.crashed_at == "after_effect" and e.settings.get("dedup") and not e.settings.get("outbox")
        for e in ev.work()
    ) and sent_twice(ev)


def relay_crash_absorbed(ev: Evidence) -> bool:
    """With the outbox and provider dedup, the relay crashed after sending, its resend
    came back from the provider as a repeat (``dropped``), and no key got a second
    e-mail. The crash alone is not enough: the point is the resend the provider absorbs."""
    outbox = [e for e in ev.work() if e.settings.get("outbox") and e.settings.get("provider_dedup")]
    crashed = any(e.relay_crashed for e in outbox)
    resent = any(
        s.name == "relay send" and s.detail.get("dropped") for e in outbox for s in e.steps
    )
    return crashed and resent and each_key_once(ev)


def simulated(ev: Evidence, mode: str, *, duplicates: bool) -> bool:
    """The last simulation ran ``mode``, with (or without) duplicate side effects, and
    lost nothing."""
    sim = ev.simulation
    if sim is None or sim["mode"] != mode or sim["lost"] != 0:
        return False
    return bool(sim["duplicate_effects"] > 0) == duplicates


POISON_RECEIVES = 4
"""Failed receives of one job that show it keeps coming back (the fixed run gives up at 3)."""


def poison_retried(ev: Evidence) -> bool:
    """The handler failed on one job at its fourth delivery or later: no cap stopped it."""
    return any(e.error is not None and (e.receive_count or 0) >= POISON_RECEIVES for e in ev.work())


def dead_lettered(ev: Evidence) -> bool:
    """A message is in the dead-letter queue."""
    return any(m["state"] == "dead" for m in ev.messages)
