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
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..engine.clock import Clock
from ..engine.problems import Problem, canonical_json
from ..engine.text import N_, Text
from ..engine.timeline import Trace, no_trace
from .store import (
    REPLAYED_HEADER,
    IdempotencyStore,
    KeyBusy,
    OutcomeUnknown,
    Record,
    Response,
    State,
    StoreFull,
)

__all__ = [
    "Clock",
    "IdempotencyStore",
    "KeyBusy",
    "OutcomeUnknown",
    "Record",
    "Response",
    "State",
    "StoreFull",
    "Trace",
    "execute",
    "fingerprint",
]


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
