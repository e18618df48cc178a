"""The idempotency store: key → :class:`Record` (fingerprint, state, stored response),
with one lock per key, a TTL, an in-progress deadline, and bounded memory.

Plain Python, no web framework. :func:`demo.payments.idempotency.execute` is what reads
and writes it, one request at a time or many at once.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import Enum

from ..engine.clock import Clock
from ..engine.problems import Problem

# ---------------------------------------------------------------------------
# Responses and records
# ---------------------------------------------------------------------------

REPLAYED_HEADER = ("Idempotent-Replayed", "true")
"""Marks a replayed response (Stripe: ``Idempotent-Replayed: true``)."""

STORED_HEADERS = frozenset({"content-type", "location"})
"""Headers worth replaying. Never ``Set-Cookie`` or credentials: a replay must not hand
the first caller's session to the second."""


@dataclass(frozen=True)
class Response:
    """A business response: HTTP status, body bytes, headers as ``(name, value)`` pairs.

    ``outbox``: messages to send once this response is committed. The store writes them in
    the same atomic step as the record (a transactional outbox) and never replays them.
    """

    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    outbox: tuple[str, ...] = ()
    title: str | None = field(default=None, compare=False)
    """A problem's title untranslated (its ``N_`` msgid): the request log keeps it so, and
    the page shows it in the reader's language, not in the language of who sent it."""

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or ``None``."""
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    @classmethod
    def of_problem(cls, problem: Problem, *headers: tuple[str, str]) -> Response:
        """The ``application/problem+json`` response for ``problem``."""
        return cls(
            problem.status,
            problem.body(),
            (("Content-Type", "application/problem+json"), *headers),
            title=problem.title,
        )


class State(str, Enum):
    """A record's state: reserved while its charge runs, completed once its response is
    stored, in doubt when its side effect may have happened and nobody knows."""

    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    IN_DOUBT = "in_doubt"


@dataclass(frozen=True)
class Record:
    """What the store keeps for one key.

    Times are in seconds on the store's clock. ``response`` is ``None`` while in progress.
    ``deadline_at``: past it, an in-progress record is presumed abandoned (its request
    crashed) and may be reclaimed, so no key stays stuck in progress for ever.
    """

    key: str
    fingerprint: str
    state: State
    created_at: float
    expires_at: float
    response: Response | None = None
    deadline_at: float = 0.0


# ---------------------------------------------------------------------------
# The store
# ---------------------------------------------------------------------------


class KeyBusy(Exception):
    """The per-key lock was not acquired within the timeout."""


class OutcomeUnknown(Exception):
    """The side effect may have happened: the call left, and its answer never came (a
    timeout after the gateway took the charge). Unlike a failure before the call, a
    re-run is safe only if the side effect is idempotent itself (a downstream key)."""


class StoreFull(Exception):
    """Every record of a full store is in progress and within its deadline: no key may be
    reserved for ``retry_after_s`` seconds (until the oldest deadline passes)."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(retry_after_s)
        self.retry_after_s = retry_after_s


class _KeyLock:
    """A per-key lock and the number of requests holding or waiting for it."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0


class IdempotencyStore:
    """In-memory map of idempotency key → :class:`Record`, with one lock per key.

    :param ttl_s: how long a record is kept, in seconds (Stripe keeps keys at least 24 h).
        Expiry is checked on read: an expired key is a new intent.
    :param max_records: a cap on records; past it the oldest completed or abandoned one
        (in progress past its deadline) is evicted, so a very late retry of that key would
        charge again. Records in progress within their deadline are never evicted: when
        they alone fill the store, :meth:`reserve` raises :class:`StoreFull`.
    :param in_progress_s: how long an in-progress record is presumed alive, in seconds
        (AWS Powertools: the in-progress expiry).
    :param clock: seconds, ``time.time`` by default.
    """

    def __init__(
        self,
        *,
        ttl_s: float = 24 * 3600,
        max_records: int = 1000,
        in_progress_s: float = 30.0,
        clock: Clock = time.time,
    ) -> None:
        self.ttl_s = ttl_s
        self.in_progress_s = in_progress_s
        self.max_records = max_records
        self._clock = clock
        self._records: OrderedDict[str, Record] = OrderedDict()
        self._outbox: deque[tuple[str, str]] = deque(maxlen=max_records)
        self._locks: dict[str, _KeyLock] = {}
        self._guard = threading.Lock()  # guards the two dicts only, never held while charging

    def now(self) -> float:
        """The store's clock, in seconds."""
        return self._clock()

    def get(self, key: str) -> Record | None:
        """The live record for ``key``, or ``None`` (an expired record is dropped here)."""
        with self._guard:
            record = self._records.get(key)
            if record is not None and self.now() >= record.expires_at:
                del self._records[key]
                return None
            return record

    def reserve(self, key: str, fingerprint: str) -> Record:
        """Save an in-progress record, so others see the key is taken and by which body.

        :raises StoreFull: the store holds ``max_records`` records in progress, none past
            its deadline (their requests may still be running).
        """
        now = self.now()
        record = Record(
            key,
            fingerprint,
            State.IN_PROGRESS,
            now,
            now + self.ttl_s,
            deadline_at=now + self.in_progress_s,
        )
        return self._put(record, room_needed=True)

    def complete(self, key: str, fingerprint: str, response: Response) -> Record:
        """Save the completed record with the response to replay (stored headers only),
        and, in the same atomic step, the response's outbox messages."""
        now = self.now()
        kept = tuple((k, v) for k, v in response.headers if k.lower() in STORED_HEADERS)
        stored = replace(response, headers=kept, outbox=())
        record = Record(key, fingerprint, State.COMPLETED, now, now + self.ttl_s, stored)
        return self._put(record, [(key, message) for message in response.outbox])

    def pending_outbox(self) -> list[tuple[str, str]]:
        """The committed outbox messages not yet sent, as ``(key, message)`` pairs (a copy)."""
        with self._guard:
            return list(self._outbox)

    def drain_outbox(self) -> list[tuple[str, str]]:
        """Take the committed outbox messages as ``(key, message)`` pairs, oldest first."""
        with self._guard:
            messages = list(self._outbox)
            self._outbox.clear()
            return messages

    def mark_in_doubt(self, key: str, fingerprint: str) -> Record:
        """Keep the key, marked in doubt: its side effect may have happened, so a retry
        must not run it blindly. Kept for the TTL, and evictable like a completed record
        (no request is running for it)."""
        now = self.now()
        record = Record(key, fingerprint, State.IN_DOUBT, now, now + self.ttl_s, deadline_at=now)
        return self._put(record)

    def release(self, key: str) -> bool:
        """Drop the key's *in-progress* record, so a retry runs again; True if one was dropped.

        A completed record is left alone: it may be a concurrent duplicate's result.
        """
        with self._guard:
            record = self._records.get(key)
            if record is not None and record.state is State.IN_PROGRESS:
                del self._records[key]
                return True
            return False

    @contextmanager
    def lock(self, key: str, timeout_s: float = 30.0) -> Iterator[None]:
        """Hold the lock of ``key`` (one per key, never one for all keys).

        The lock object exists only while someone holds or waits for it.

        :raises KeyBusy: not acquired within ``timeout_s`` seconds.
        """
        with self._guard:
            entry = self._locks.setdefault(key, _KeyLock())
            entry.users += 1
        try:
            if not entry.lock.acquire(timeout=timeout_s):
                raise KeyBusy(key)
            try:
                yield
            finally:
                entry.lock.release()
        finally:
            with self._guard:
                entry.users -= 1
                if entry.users == 0:
                    del self._locks[key]

    def records(self) -> list[Record]:
        """A snapshot of the live records, oldest first."""
        now = self.now()
        with self._guard:
            return [r for r in self._records.values() if now < r.expires_at]

    def lock_count(self) -> int:
        """How many per-key lock objects exist now (0 when nothing is in flight)."""
        with self._guard:
            return len(self._locks)

    def clear(self) -> None:
        """Forget every record and outbox message (locks in use stay with their holders)."""
        with self._guard:
            self._records.clear()
            self._outbox.clear()

    def _put(
        self,
        record: Record,
        outbox: list[tuple[str, str]] | None = None,
        *,
        room_needed: bool = False,
    ) -> Record:
        with self._guard:
            self._records.pop(record.key, None)
            if room_needed:
                self._evict(self.max_records - 1)
                if len(self._records) >= self.max_records:
                    oldest = min(r.deadline_at for r in self._records.values())
                    raise StoreFull(max(1, math.ceil(oldest - self.now())))
            self._records[record.key] = record
            self._outbox.extend(outbox or ())
            self._evict(self.max_records)
            return record

    def _evict(self, keep: int) -> None:
        # Oldest first: a completed record, or one abandoned in progress (its deadline
        # passed: its request crashed). A record in progress within its deadline stays:
        # its request may be running, and forgetting its key would let a duplicate charge.
        now = self.now()
        while len(self._records) > keep:
            oldest = next(
                (
                    k
                    for k, r in self._records.items()
                    if r.state is not State.IN_PROGRESS or r.deadline_at <= now
                ),
                None,
            )
            if oldest is None:
                return
            del self._records[oldest]
