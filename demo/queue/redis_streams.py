"""The queue on Redis Streams with a consumer group (``python -m demo --redis URL``).

- publish: ``XADD`` with ``MAXLEN`` (the stream keeps at most ``max_messages`` entries;
  the oldest acked or dead entry is deleted first to make room, and a stream full of live
  messages refuses with 503 ``queue-full``);
- receive: redelivery first: a pending entry (``XPENDING``) whose visibility timeout has
  passed on the lab's *virtual* clock is claimed with ``XCLAIM`` at min-idle 0 (the
  server's idle time is wall-clock time, the lab's clock is not), which adds one to its
  delivery count; an entry already delivered ``max_attempts`` times is acked and copied
  to the dead-letter stream instead. Else a new entry: ``XREADGROUP ... >`` (with
  ``NOACK`` under at-most-once);
- ack: ``XACK``; the entry stays in the stream, listed as ``acked``.

Beside the stream: a hash with each delivered message's state and receive count, and a
sorted set of the in-flight ones scored by the lab-clock time they become visible, so a
receive looks only at those whose timeout has passed. Every key is under a
per-workspace prefix, deleted on reset, and set to expire ``ttl_s`` after the last
write, so an abandoned workspace's keys go.
A Redis that does not answer raises 503 ``broker-unavailable``, never a 500.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from .broker import Delivery, Message, MessageState, Received, broker_unavailable, queue_full
from .jobs import Job
from .memory import MAX_MESSAGES, shown_state

GROUP = "workers"
"""The consumer group every worker of the lab reads in."""

KEY_TTL_S = 24 * 3600
"""A workspace's keys expire this long after its last write to them, s."""

P = ParamSpec("P")
R = TypeVar("R")


def _answering(method: Callable[P, R]) -> Callable[P, R]:
    """Turn a Redis that went away into 503 ``broker-unavailable``."""

    @functools.wraps(method)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except redis.RedisError as error:
            raise broker_unavailable() from error

    return guarded


class RedisStreamsBroker:
    """At-least-once delivery on a Redis stream and its consumer group (see the module).

    :param client: a redis-py client with ``decode_responses=True``.
    :param prefix: the workspace's key prefix, e.g. ``"idem-demo:abc:1:"``.
    :param max_messages: entries the stream keeps (``MAXLEN``).
    :param ttl_s: the keys expire this long after the last write, s.
    """

    kind = "redis"

    def __init__(
        self,
        client: redis.Redis,
        prefix: str,
        *,
        max_messages: int = MAX_MESSAGES,
        ttl_s: int = KEY_TTL_S,
    ) -> None:
        self._r = client
        self.stream, self.meta, self.dead = prefix + "stream", prefix + "meta", prefix + "dlq"
        self.hidden = prefix + "hidden"
        self._max, self._ttl_s = max_messages, ttl_s
        self._guard = threading.Lock()  # one receive at a time: a claim is decided then made
        self._group_ready = False

    def redis_keys(self) -> tuple[str, str, str, str]:
        """Every key this broker writes."""
        return self.stream, self.meta, self.dead, self.hidden

    @_answering
    def publish(self, job: Job) -> str:
        """See :meth:`.broker.Broker.publish`."""
        with self._guard:
            self._ensure_group()
            if self._r.xlen(self.stream) >= self._max:
                self._make_room()
            fields = {"job_id": job.id, "key": job.idempotency_key, "payload": job.payload_json}
            pipe = self._r.pipeline()
            pipe.xadd(self.stream, fields, maxlen=self._max)  # type: ignore[arg-type]
            self._expire(pipe)
            return str(pipe.execute()[0])

    @_answering
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
        with self._guard:
            self._ensure_group()
            dead: list[str] = []
            delivery = self._redeliver(now, max_attempts, consumer, dead)
            if delivery is None:
                delivery = self._read_new(consumer, ack_on_receive)
            if delivery is not None:
                pipe = self._r.pipeline()
                if ack_on_receive:
                    if delivery.receive_count > 1:  # claimed from the pending list
                        pipe.xack(self.stream, GROUP, delivery.message_id)
                    pipe.zrem(self.hidden, delivery.message_id)
                    self._note(pipe, delivery.message_id, "acked", delivery.receive_count, None)
                else:
                    visible_at = now + visibility_timeout_s
                    pipe.zadd(self.hidden, {delivery.message_id: visible_at})
                    self._note(pipe, delivery.message_id, "in_flight", delivery.receive_count,
                               visible_at)  # fmt: skip
                self._expire(pipe)
                pipe.execute()
            return Received(delivery, tuple(dead))

    def _redeliver(
        self, now: float, max_attempts: int, consumer: str, dead: list[str]
    ) -> Delivery | None:
        """Claim the oldest in-flight entry whose timeout has passed on the lab clock
        (``P:hidden`` scores each by the time it becomes visible); dead-letter the ones
        already delivered ``max_attempts`` times (their delivery count, from XPENDING)."""
        expired: list[str] = self._r.zrangebyscore(self.hidden, "-inf", now)  # type: ignore[assignment]
        for message_id in sorted(expired, key=_stream_order):
            pending: list[dict[str, Any]] = self._r.xpending_range(
                self.stream, GROUP, min=message_id, max=message_id, count=1
            )
            if not pending:  # acked or trimmed meanwhile: nothing to redeliver
                self._r.zrem(self.hidden, message_id)
                continue
            count = int(pending[0]["times_delivered"])
            if count >= max_attempts:
                self._dead_letter(message_id, count)
                dead.append(message_id)
                continue
            claimed: list[Any] = self._r.xclaim(
                self.stream, GROUP, consumer, min_idle_time=0, message_ids=[message_id]
            )
            if claimed and claimed[0] and claimed[0][1]:
                return Delivery(message_id, _job(claimed[0][1]), count + 1)
            self._r.zrem(self.hidden, message_id)
        return None

    def _read_new(self, consumer: str, noack: bool) -> Delivery | None:
        read: list[Any] = self._r.xreadgroup(  # type: ignore[assignment]
            GROUP, consumer, {self.stream: ">"}, count=1, noack=noack
        )
        if not read or not read[0][1]:
            return None
        message_id, fields = read[0][1][0]
        return Delivery(str(message_id), _job(fields), 1)

    def _dead_letter(self, message_id: str, count: int) -> None:
        entries: list[Any] = self._r.xrange(self.stream, message_id, message_id)  # type: ignore[assignment]
        pipe = self._r.pipeline()
        pipe.xack(self.stream, GROUP, message_id)
        if entries:
            pipe.xadd(self.dead, {"message_id": message_id, **entries[0][1]}, maxlen=self._max)
        pipe.zrem(self.hidden, message_id)
        self._note(pipe, message_id, "dead", count, None)
        self._expire(pipe)
        pipe.execute()

    @_answering
    def ack(self, message_id: str) -> bool:
        """See :meth:`.broker.Broker.ack`."""
        with self._guard:
            raw = self._r.hget(self.meta, message_id)
            note = json.loads(raw) if isinstance(raw, str) else None
            if note is None or note["s"] != "in_flight":
                return False
            pipe = self._r.pipeline()
            pipe.xack(self.stream, GROUP, message_id)
            pipe.zrem(self.hidden, message_id)
            self._note(pipe, message_id, "acked", int(note["n"]), None)
            self._expire(pipe)
            acked = pipe.execute()[0]
            return int(acked) == 1

    @_answering
    def messages(self, *, now: float, max_attempts: int) -> list[Message]:
        """See :meth:`.broker.Broker.messages`."""
        entries: list[Any] = self._r.xrange(self.stream, "-", "+", count=self._max)  # type: ignore[assignment]
        notes = self._notes()
        listing = []
        for message_id, fields in entries:
            note = notes.get(message_id, {"s": "ready", "n": 0, "v": None})
            state: MessageState = note["s"]
            shown = shown_state(state, note["v"], int(note["n"]), now, max_attempts)
            listing.append(Message(message_id, _job(fields), shown, int(note["n"]), note["v"]))
        return listing

    def dead_letters(self) -> list[str]:
        """The message ids in the dead-letter stream, oldest first."""
        entries: list[Any] = self._r.xrange(self.dead, "-", "+", count=self._max)  # type: ignore[assignment]
        return [str(fields["message_id"]) for _, fields in entries]

    @_answering
    def clear(self) -> None:
        """See :meth:`.broker.Broker.clear`: every key of this broker deleted."""
        with self._guard:
            self._r.delete(*self.redis_keys())
            self._group_ready = False

    # -- helpers ---------------------------------------------------------------------------

    def _ensure_group(self) -> None:
        if self._group_ready:
            return
        try:
            self._r.xgroup_create(self.stream, GROUP, id="0", mkstream=True)
        except redis.ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise
        self._group_ready = True

    def _make_room(self) -> None:
        notes = self._notes()
        entries: list[Any] = self._r.xrange(self.stream, "-", "+", count=self._max)  # type: ignore[assignment]
        done = next((i for i, _ in entries if notes.get(i, {}).get("s") in ("acked", "dead")), None)
        if done is None:
            raise queue_full(self._max)
        pipe = self._r.pipeline()
        pipe.xdel(self.stream, done)
        pipe.hdel(self.meta, done)
        pipe.execute()

    def _notes(self) -> dict[str, dict[str, Any]]:
        raw: dict[str, str] = self._r.hgetall(self.meta)  # type: ignore[assignment]
        return {message_id: json.loads(note) for message_id, note in raw.items()}

    def _note(
        self, pipe: Any, message_id: str, state: str, count: int, visible_at: float | None
    ) -> None:
        pipe.hset(self.meta, message_id, json.dumps({"s": state, "n": count, "v": visible_at}))

    def _expire(self, pipe: Any) -> None:
        """Queue on ``pipe`` the TTL of every key, renewed with each write."""
        for key in self.redis_keys():
            pipe.expire(key, self._ttl_s)


def connect(url: str, *, timeout_s: float = 2.0) -> redis.Redis:
    """A client for ``url`` (``redis://host:port/db``) that answers fast when the server
    is gone: ``timeout_s`` to connect and per command, one retry, no backoff; so a work
    call then gets its 503 in seconds, not after redis-py's default backoff.

    :raises ValueError: for a URL redis-py cannot read.
    """
    return redis.Redis.from_url(
        url,
        decode_responses=True,
        socket_timeout=timeout_s,
        socket_connect_timeout=timeout_s,
        retry=Retry(NoBackoff(), 1),
    )


def _stream_order(message_id: str) -> tuple[int, int]:
    """A stream entry id (``"<ms>-<seq>"``) as a sortable pair."""
    ms, _, seq = message_id.partition("-")
    return int(ms), int(seq or 0)


def _job(fields: dict[str, str]) -> Job:
    return Job(fields["job_id"], fields["key"], fields["payload"])


def redis_brokers(
    client: redis.Redis,
    workspace_id: str,
    *,
    base: str = "idem-demo:",
    ttl_s: int = KEY_TTL_S,
) -> Callable[[], RedisStreamsBroker]:
    """The ``make_broker`` of one workspace's queue lab: each call (the start, and every
    reset) a broker under a fresh prefix ``<base><workspace>:<n>:``, whose keys expire
    ``ttl_s`` after their last write."""
    generation = iter(range(1, 2**62))
    return lambda: RedisStreamsBroker(
        client, f"{base}{workspace_id}:{next(generation)}:", ttl_s=ttl_s
    )
