"""The embedded broker: an in-memory queue on the lab's virtual clock (the default)."""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from dataclasses import dataclass

from .broker import Delivery, Message, MessageState, Received, queue_full
from .jobs import Job

MAX_MESSAGES = 500
"""Messages a queue keeps, acked and dead ones included (the oldest finished go first)."""


@dataclass
class _Kept:
    job: Job
    state: MessageState = "ready"
    receive_count: int = 0
    visible_at: float | None = None


class MemoryBroker:
    """At-least-once delivery with a visibility timeout and a dead-letter queue, in
    memory (see :mod:`.broker` for the semantics). Thread-safe; at most
    ``max_messages`` messages kept.

    :param max_messages: messages kept; past it the oldest acked or dead one goes, and a
        publish into a queue full of live messages gets 503 ``queue-full``.
    """

    kind = "memory"

    def __init__(self, *, max_messages: int = MAX_MESSAGES) -> None:
        self._max = max_messages
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._ids = itertools.count(1)
        self._guard = threading.Lock()

    def publish(self, job: Job) -> str:
        """See :meth:`.broker.Broker.publish`."""
        with self._guard:
            if len(self._kept) >= self._max:
                done = next(
                    (k for k, m in self._kept.items() if m.state in ("acked", "dead")), None
                )
                if done is None:
                    raise queue_full(self._max)
                del self._kept[done]
            message_id = f"m-{next(self._ids)}"
            self._kept[message_id] = _Kept(job)
            return message_id

    def receive(
        self,
        *,
        now: float,
        visibility_timeout_s: int,
        max_attempts: int,
        consumer: str,
        ack_on_receive: bool = False,
    ) -> Received:
        """See :meth:`.broker.Broker.receive`."""
        dead: list[str] = []
        with self._guard:
            for message_id, kept in self._kept.items():
                visible = kept.state == "ready" or (
                    kept.state == "in_flight"
                    and kept.visible_at is not None
                    and kept.visible_at <= now
                )
                if not visible:
                    continue
                if kept.receive_count >= max_attempts:
                    # Redrive policy: no further delivery, straight to the dead-letter queue.
                    kept.state, kept.visible_at = "dead", None
                    dead.append(message_id)
                    continue
                kept.receive_count += 1
                if ack_on_receive:
                    kept.state, kept.visible_at = "acked", None
                else:
                    kept.state, kept.visible_at = "in_flight", now + visibility_timeout_s
                delivery = Delivery(message_id, kept.job, kept.receive_count)
                return Received(delivery, tuple(dead))
        return Received(None, tuple(dead))

    def ack(self, message_id: str) -> bool:
        """See :meth:`.broker.Broker.ack`."""
        with self._guard:
            kept = self._kept.get(message_id)
            if kept is None or kept.state != "in_flight":
                return False
            kept.state, kept.visible_at = "acked", None
            return True

    def messages(self, *, now: float, max_attempts: int) -> list[Message]:
        """See :meth:`.broker.Broker.messages`."""
        with self._guard:
            kept = list(self._kept.items())
        return [
            Message(
                message_id,
                m.job,
                shown_state(m.state, m.visible_at, m.receive_count, now, max_attempts),
                m.receive_count,
                m.visible_at,
            )
            for message_id, m in kept
        ]

    def clear(self) -> None:
        """See :meth:`.broker.Broker.clear`."""
        with self._guard:
            self._kept.clear()
            self._ids = itertools.count(1)


def shown_state(
    state: MessageState, visible_at: float | None, count: int, now: float, max_attempts: int
) -> MessageState:
    """The state a listing shows at ``now``: an in-flight message past its timeout is
    ``ready`` again, or ``dead`` once it has had ``max_attempts`` receives."""
    if state == "in_flight" and visible_at is not None and visible_at <= now:
        return "dead" if count >= max_attempts else "ready"
    return state
