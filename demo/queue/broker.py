"""What the queue lab needs of a broker, with the semantics of SQS and BullMQ.

- :meth:`Broker.publish` adds a message (a new ``message_id`` even for a job sent
  before: the broker does not dedup sends);
- :meth:`Broker.receive` hands the oldest visible message to one worker and hides it for
  the visibility timeout, on the lab's (virtual) clock; with ``ack_on_receive`` (the
  ``at_most_once`` switch) it is acked at once, before any work;
- a message not acked before its timeout is visible again, and its next receive counts
  one more (SQS ``ApproximateReceiveCount``);
- a message received ``max_attempts`` times and still not acked goes to the dead-letter
  queue instead of a further delivery (SQS redrive policy, ``maxReceiveCount``);
- :meth:`Broker.ack` deletes it for good (it stays listed as ``acked``).

Two brokers: :class:`~.memory.MemoryBroker` (the default) and
:class:`~.redis_streams.RedisStreamsBroker` (``python -m demo --redis URL``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from ..engine.problems import Problem
from ..engine.text import N_, Text
from .jobs import Job

MessageState = Literal["ready", "in_flight", "acked", "dead"]


@dataclass(frozen=True)
class Delivery:
    """One receive: the message handed to a worker, and how many times it has been
    received, this one included (1 on the first delivery)."""

    message_id: str
    job: Job
    receive_count: int


@dataclass(frozen=True)
class Message:
    """A message as the queue panel lists it.

    ``visible_at`` is the lab-clock time (s) an in-flight message becomes visible again.
    """

    message_id: str
    job: Job
    state: MessageState
    receive_count: int
    visible_at: float | None = None

    def as_dict(self) -> dict[str, object]:
        """The message as the API spells it."""
        return {
            "message_id": self.message_id,
            "job_id": self.job.id,
            "idempotency_key": self.job.idempotency_key,
            "state": self.state,
            "receive_count": self.receive_count,
            "visible_at": self.visible_at,
        }


@dataclass(frozen=True)
class Received:
    """What one call of :meth:`Broker.receive` did: the delivery (``None``: nothing
    visible) and the messages it moved to the dead-letter queue on the way."""

    delivery: Delivery | None
    dead_lettered: tuple[str, ...] = ()


class Broker(Protocol):
    """A queue of jobs, at-least-once, on the lab's clock. Thread-safe."""

    kind: str
    """``"memory"`` or ``"redis"``."""

    def publish(self, job: Job) -> str:
        """Enqueue ``job``; returns its new ``message_id``.

        :raises Problem: 503 ``queue-full`` when the queue holds its cap of messages not
            yet acked or dead; 503 ``broker-unavailable`` when the broker cannot be reached.
        """
        ...

    def receive(
        self,
        *,
        now: float,
        visibility_timeout_s: int,
        max_attempts: int,
        consumer: str,
        ack_on_receive: bool = False,
    ) -> Received:
        """Hand the oldest visible message to ``consumer`` and hide it until
        ``now + visibility_timeout_s`` (s, lab clock); messages already received
        ``max_attempts`` times go to the dead-letter queue instead.

        :raises Problem: 503 ``broker-unavailable``.
        """
        ...

    def ack(self, message_id: str) -> bool:
        """Delete ``message_id`` for good; False when it was not in flight (already acked,
        dead, or unknown).

        :raises Problem: 503 ``broker-unavailable``.
        """
        ...

    def messages(self, *, now: float, max_attempts: int) -> list[Message]:
        """Every message kept, oldest first, with its state at ``now`` (s): an in-flight
        message past its timeout reads ``ready`` again, or ``dead`` once it has had its
        ``max_attempts`` receives (the next receive moves it). Changes nothing.

        :raises Problem: 503 ``broker-unavailable``.
        """
        ...

    def clear(self) -> None:
        """Drop every message (a reset).

        :raises Problem: 503 ``broker-unavailable``.
        """
        ...


def queue_full(limit: int) -> Problem:
    """503: the queue holds ``limit`` messages still to process."""
    return Problem(
        503,
        "queue-full",
        N_("Queue full"),
        Text(
            "The queue holds %(limit)s messages not yet acked or dead-lettered. Work some "
            "off, or reset the lab, then enqueue again.",
            limit=limit,
        ),
        retry_after_s=5,
    )


def broker_unavailable() -> Problem:
    """503: the Redis server does not answer (the lab itself is intact)."""
    return Problem(
        503,
        "broker-unavailable",
        N_("Broker unavailable"),
        N_(
            "The queue's Redis server does not answer. Nothing was changed; try again once "
            "it is back."
        ),
        retry_after_s=5,
    )
