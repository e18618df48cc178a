"""The lesson itself: the idempotency store, the request fingerprint, and the
idempotent execution of a charge.

One idempotency key stands for one intent. However many attempts carry it, the
charge runs once:

- key seen for the first time: charge, then store key → (fingerprint, response);
- same key, same fingerprint: replay the stored response, charge nothing;
- same key, another fingerprint: 409 Conflict, charge nothing;
- concurrent duplicates: a per-key lock makes the second one wait, then replay.
  Without the lock both find no record and both charge: a TOCTOU race.

Plain Python, no web framework. Every step boundary calls ``trace(step, **detail)``;
the lab records those calls as the request's timeline.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Literal, Protocol

from ..engine.problems import Problem, canonical_json
from ..engine.text import N_, Text

Clock = Callable[[], float]
"""A clock in seconds (``time.time`` by default); tests and the lab inject their own."""


class Trace(Protocol):
    """The hook called at every step boundary, e.g. ``trace("lookup", hit=False)``."""

    def __call__(self, step: str, /, **detail: Any) -> None: ...


def no_trace(step: str, /, **detail: Any) -> None:
    """A trace that records nothing."""


# ---------------------------------------------------------------------------
# Fingerprint
# ---------------------------------------------------------------------------


def fingerprint(method: str, path: str, body: Mapping[str, Any]) -> str:
    """SHA-256 (hex, 64 chars) of the method, the path and the canonical JSON of ``body``.

    ``body`` must be the *validated* body: the canonical JSON sorts keys and drops
    insignificant whitespace, so reordered keys or extra spaces are the same request.
    Numbers are whatever validation left: amounts are integers in minor units, and
    validation rejects ``100000.0`` (422) rather than guessing that it means ``100000``.
    """
    canonical = canonical_json(dict(body))
    return hashlib.sha256(
        method.upper().encode() + b" " + path.encode() + b"\n" + canonical
    ).hexdigest()


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

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or ``None``."""
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    @classmethod
    def of_problem(cls, problem: Problem, *headers: tuple[str, str]) -> Response:
        """The ``application/problem+json`` response for ``problem``."""
        return cls(
            problem.status, problem.body(), (("Content-Type", "application/problem+json"), *headers)
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


# ---------------------------------------------------------------------------
# Profiles: how public APIs answer the situations they disagree on
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """The status codes (and error codes) one API uses for idempotency errors."""

    name: str
    mismatch_status: int
    in_use_status: int
    mismatch_code: str | None = None
    in_use_code: str | None = None
    source: str = ""


PROFILES: dict[str, Profile] = {
    "seed": Profile("seed", 409, 409, source="this lab's seed; Brandur Leach's atomic phases"),
    "ietf": Profile("ietf", 422, 409, source="IETF draft 'The Idempotency-Key HTTP Header Field'"),
    "stripe": Profile(
        "stripe", 400, 409, "idempotency_error", "idempotency_key_in_use", source="Stripe API v1"
    ),
}
"""Same key with another body: seed 409, IETF 422, Stripe 400 ``idempotency_error``.
Duplicate still in flight (under ``in_flight="reject"``): 409 everywhere."""


def mismatch_problem(profile: Profile, key: str, first: str, this: str) -> Problem:
    """The answer to the same key with another body, in ``profile``'s words."""
    code: dict[str, Any] = {"code": profile.mismatch_code} if profile.mismatch_code else {}
    return Problem(
        profile.mismatch_status,
        "key-mismatch",
        N_("Idempotency key reused with another request"),
        Text(
            "The key %(key)s was first used with a different request body. "
            "A new intent needs a new key.",
            key=repr(key),
        ),
        first_fingerprint=first[:12],
        this_fingerprint=this[:12],
        **code,
    )


def in_doubt_problem(key: str) -> Problem:
    """The answer to a retry whose key is in doubt: an earlier attempt may have charged."""
    return Problem(
        409,
        "key-in-doubt",
        N_("Idempotency key in doubt"),
        Text(
            "An earlier attempt with the key %(key)s timed out after it reached the gateway: "
            "it may have charged. Nothing runs again under this key until the outcome is known "
            "(ask the gateway, or pass the key on to it so a re-run is safe).",
            key=repr(key),
        ),
    )


def in_use_problem(profile: Profile, retry_after_s: int) -> Problem:
    """The answer to a duplicate that arrives while the first is still in flight."""
    code: dict[str, Any] = {"code": profile.in_use_code} if profile.in_use_code else {}
    return Problem(
        profile.in_use_status,
        "key-in-use",
        N_("Idempotency key in use"),
        Text(
            "A request with this key is still in flight. Retry in %(seconds)s s.",
            seconds=retry_after_s,
        ),
        **code,
    )


# ---------------------------------------------------------------------------
# Idempotent execution
# ---------------------------------------------------------------------------

Outcome = Literal["charged", "replayed", "conflict", "in_use", "in_doubt"]
InFlight = Literal["wait", "reject"]


@dataclass(frozen=True)
class Execution:
    """What :func:`execute` did: ``outcome`` and the ``response`` to send."""

    outcome: Outcome
    response: Response
    record: Record | None = field(default=None, compare=False)


def execute(
    store: IdempotencyStore,
    key: str,
    request_fingerprint: str,
    charge: Callable[[], Response],
    *,
    lock: bool = True,
    in_flight: InFlight = "wait",
    profile: Profile = PROFILES["seed"],
    trace: Trace = no_trace,
    lock_timeout_s: float = 30.0,
    rerun_safe: bool = False,
) -> Execution:
    """Run ``charge`` at most once per ``key``; replay or refuse every other attempt.

    The body has already been validated (invalid bodies are never stored).

    :param charge: the side effect; returns the business response to store and replay.
    :param lock: take the per-key lock around look-again, charge and save. ``False`` runs
        the same check-then-act without it, so concurrent duplicates both charge (TOCTOU).
    :param in_flight: a duplicate of a request still in flight ``"wait"`` s for the lock
        and then replays, or is ``"reject"`` ed at once with 409 and ``Retry-After``
        (Stripe, IETF draft).
    :param profile: the status codes for the errors (see :data:`PROFILES`).
    :param lock_timeout_s: how long a duplicate waits for the per-key lock, in seconds.
    :param rerun_safe: ``charge`` is idempotent downstream (the key goes on to the
        gateway), so running it again after :class:`OutcomeUnknown` cannot charge twice.
    :returns: ``charged`` (the response of ``charge``), ``replayed`` (the stored response,
        byte-identical, plus ``Idempotent-Replayed: true``), ``conflict`` (same key, other
        body: 409 in the seed profile), ``in_use`` (409, under ``reject``) or
        ``in_doubt`` (409: an earlier attempt may have charged, and a re-run is not safe).
    :raises OutcomeUnknown: from ``charge``, after marking the key in doubt, or releasing
        it when ``rerun_safe``.
    :raises Exception: whatever else ``charge`` raised, after releasing the key, so no key
        is left in progress and a retry runs again. (A crash of the whole instance is a
        ``BaseException``: nothing runs after it, and the record stays in progress until
        its deadline.)
    :raises KeyBusy: the per-key lock was not acquired in time.
    :raises StoreFull: no room to reserve the key (see :meth:`IdempotencyStore.reserve`).
    """
    # 1. Look up the key.
    record = store.get(key)
    trace("lookup", hit=record is not None, state=record.state.value if record else None)
    answer = _answer_from(store, record, key, request_fingerprint, trace, profile, in_flight)
    if answer is not None:
        return answer

    if not lock:
        # 2a. No lock: check, then act. A duplicate that looks the key up before we save
        # it below also finds nothing, and charges again. That gap is the TOCTOU race.
        return _charge_and_save(store, key, request_fingerprint, charge, trace, rerun_safe)

    # 2b. The per-key lock: one attempt per key at a time; other keys never wait.
    trace("lock wait")
    waiting_since = time.perf_counter()
    with store.lock(key, lock_timeout_s):
        trace("lock acquire", waited_ms=round((time.perf_counter() - waiting_since) * 1000, 1))
        # Look again: a duplicate may have finished while we waited for the lock.
        record = store.get(key)
        trace(
            "lookup",
            hit=record is not None,
            state=record.state.value if record else None,
            again=True,
        )
        answer = _answer_from(store, record, key, request_fingerprint, trace, profile, "wait")
        if answer is not None:
            return answer
        if record is not None:
            # In progress, yet we hold its lock: the request that reserved it died. The
            # lock knows this only within one process: a store shared by several processes
            # needs the deadline instead, a lease on the key (see the README).
            trace("reclaim")
        # Reserve, so a request with another body gets its answer without waiting.
        store.reserve(key, request_fingerprint)
        trace("reserve")
        return _charge_and_save(store, key, request_fingerprint, charge, trace, rerun_safe)


def _answer_from(
    store: IdempotencyStore,
    record: Record | None,
    key: str,
    request_fingerprint: str,
    trace: Trace,
    profile: Profile,
    in_flight: InFlight,
) -> Execution | None:
    """Replay or refuse from an existing record; ``None`` means "go on towards the charge"."""
    if record is None:
        return None
    same_body = record.fingerprint == request_fingerprint
    trace("fingerprint check", match=same_body)
    if not same_body:
        # Checked before any lock, so the answer comes even while the first one runs.
        problem = mismatch_problem(profile, key, record.fingerprint, request_fingerprint)
        return Execution("conflict", Response.of_problem(problem), record)
    if record.state is State.COMPLETED and record.response is not None:
        stored = record.response
        return Execution(
            "replayed", replace(stored, headers=(*stored.headers, REPLAYED_HEADER)), record
        )
    if record.state is State.IN_DOUBT:
        # It may have charged, and that attempt carried no downstream key (else the key
        # would have been released): running it again could charge twice.
        return Execution("in_doubt", _in_doubt(key), record)
    left_s = record.deadline_at - store.now()
    if in_flight == "reject" and left_s > 0:
        retry_after = max(1, math.ceil(left_s))
        problem = in_use_problem(profile, retry_after)
        return Execution(
            "in_use", Response.of_problem(problem, ("Retry-After", str(retry_after))), record
        )
    return None  # in progress with the same body: wait for the lock, then look again


def _charge_and_save(
    store: IdempotencyStore,
    key: str,
    request_fingerprint: str,
    charge: Callable[[], Response],
    trace: Trace,
    rerun_safe: bool = False,
) -> Execution:
    # The last stop before the money moves: step mode shows it, the code view marks it.
    trace("charging")
    started = time.perf_counter()
    try:
        response = charge()
    except OutcomeUnknown:
        if rerun_safe:
            store.release(key)  # a re-run gets the first charge back downstream
            trace("release")
        else:
            store.mark_in_doubt(key, request_fingerprint)  # never charge blindly again
            trace("in doubt")
        raise
    except Exception:
        store.release(key)  # never leave the key stuck in progress
        trace("release")
        raise
    trace("gateway charge", ms=round((time.perf_counter() - started) * 1000, 1))
    record = store.complete(key, request_fingerprint, response)
    trace("record save")
    return Execution("charged", response, record)


def _in_doubt(key: str) -> Response:
    return Response.of_problem(in_doubt_problem(key))
