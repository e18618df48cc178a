"""The lesson: a client that retries a charge right, on tenacity.

:func:`charge_with_retries` keeps the method, the body and (with ``same_key``) the same
``Idempotency-Key`` for every attempt, retries only what the policy says may succeed next
time, waits by the policy's backoff (and at least ``Retry-After``), and stops after
``max_attempts``. The waits go through the ``sleep`` it is given: the workspace's virtual
clock, so a 2 s backoff costs no real time.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tenacity import RetryCallState, Retrying, stop_after_attempt

from ..engine.text import N_, Text, translate
from ..engine.timeline import Trace, no_trace
from .policy import MAX_RETRY_AFTER_S, Policy, backoff_ms
from .transport import NetworkError, Transport, header

OUTCOMES = ("charged", "replayed", "gave_up", "final_error")


@dataclass
class Answer:
    """What one attempt got: a status and headers, or ``None`` for no answer at all."""

    status: int | None
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def what(self) -> str | int:
        """``"network"`` for no answer, else the status: what ``retry_on`` names."""
        return "network" if self.status is None else self.status

    @property
    def ok(self) -> bool:
        """A 2xx answer."""
        return self.status is not None and 200 <= self.status < 300

    def retry_after_s(self) -> int | None:
        """``Retry-After`` in delay-seconds (RFC 9110 §10.2.3), at most 60; ``None`` if
        absent or an HTTP date (the lab's servers send seconds)."""
        value = header(self.headers, "Retry-After")
        if value is None or not value.strip().isdigit():
            return None
        return min(int(value), MAX_RETRY_AFTER_S)


@dataclass
class Attempt:
    """One attempt of a run: ``n`` from 1, the key it carried, what came back, the wait
    before it (ms of virtual time), and whether and why it was retried."""

    n: int
    key: str
    status: int | None
    error: str | None
    waited_ms: float
    retried: bool = False
    reason: str | Text = ""

    def as_dict(self) -> dict[str, Any]:
        """The API's attempt: ``reason`` in the request's language, ``waited_ms`` rounded."""
        return {
            "n": self.n,
            "key": self.key,
            "status": self.status,
            "error": self.error,
            "waited_ms": round(self.waited_ms),
            "retried": self.retried,
            "reason": translate(self.reason),
        }


@dataclass
class Run:
    """A charge and its attempts; ``outcome`` one of :data:`OUTCOMES`."""

    attempts: list[Attempt]
    outcome: str


Send = Transport
"""Where the client sends its attempts: :class:`~.transport.Transport`."""


def charge_with_retries(
    policy: Policy,
    send: Send,
    body: Mapping[str, Any],
    *,
    new_key: Callable[[], str],
    sleep: Callable[[float], None],
    rng: random.Random,
    trace: Trace = no_trace,
) -> Run:
    """``POST /api/charges`` with ``body``, retried by ``policy``.

    :param send: the transport (the payment lab behind the fault plan).
    :param new_key: makes an ``Idempotency-Key`` (one per intent; per attempt when
        ``policy.same_key`` is off).
    :param sleep: waits that many seconds: the virtual clock's, never ``time.sleep``.
    :param rng: the jitter's source of randomness.
    :param trace: the timeline seam: ``"send"`` before each attempt, ``"answer"`` after
        the decision on it.
    :returns: the :class:`Run`: ``charged`` or ``replayed`` (a 2xx, the second marked
        ``Idempotent-Replayed``), ``gave_up`` (still failing after ``max_attempts``), or
        ``final_error`` (an answer the policy does not retry).
    """
    log = AttemptLog(policy, rng, trace)
    key = new_key()

    def attempt() -> Answer:
        nonlocal key
        if log.attempts and not policy.same_key:
            key = new_key()  # the mistake: to the server, each attempt is a new intent
        trace("send", n=len(log.attempts) + 1, key=key, waited_ms=log.next_wait_ms)
        try:
            status, headers, _ = send("POST", "/api/charges", {"Idempotency-Key": key}, body)
            answer = Answer(status, headers)
        except NetworkError:
            answer = Answer(None)  # no answer: charged or not, only the same key can tell
        log.record(key, answer)
        return answer

    answer: Answer = Retrying(
        stop=stop_after_attempt(policy.max_attempts),
        retry=log.should_retry,  # what retry_on names: by default no 400, no 402
        wait=log.wait_s,  # the strategy's backoff, and at least Retry-After
        sleep=sleep,  # the virtual clock: a 2 s wait costs no real time
        before_sleep=log.retrying,
        retry_error_callback=log.gave_up,
    )(attempt)
    return log.result(answer)


class AttemptLog:
    """A run's attempts, and the tenacity hooks that decide on each and record why."""

    def __init__(self, policy: Policy, rng: random.Random, trace: Trace) -> None:
        self.policy, self.rng, self.trace = policy, rng, trace
        self.attempts: list[Attempt] = []
        self.next_wait_ms = 0.0
        self.previous_ms = float(policy.base_ms)  # decorrelated jitter walks on from it

    def record(self, key: str, answer: Answer) -> None:
        """Log an attempt that carried ``key`` and got ``answer``."""
        error = "network" if answer.status is None else None
        n = len(self.attempts) + 1
        self.attempts.append(Attempt(n, key, answer.status, error, self.next_wait_ms))

    def should_retry(self, state: RetryCallState) -> bool:
        """tenacity's ``retry``: True for an answer ``retry_on`` names; says why either way."""
        answer: Answer = state.outcome.result()  # type: ignore[union-attr]
        self.attempts[-1].reason = why(self.policy, answer)
        return not answer.ok and self.policy.retries(answer.what)

    def wait_s(self, state: RetryCallState) -> float:
        """tenacity's ``wait``, in s: the strategy's backoff, and at least ``Retry-After``
        when the policy respects it (RFC 9110 §10.2.3)."""
        policy, answer = self.policy, state.outcome.result()  # type: ignore[union-attr]
        ms = backoff_ms(
            policy.strategy,
            state.attempt_number,
            policy.base_ms,
            policy.cap_ms,
            self.previous_ms,
            self.rng,
        )
        self.previous_ms = ms
        retry_after = answer.retry_after_s()
        if policy.respect_retry_after and retry_after is not None:
            ms = max(ms, retry_after * 1000.0)  # the server said when: never sooner
        return ms / 1000

    def retrying(self, state: RetryCallState) -> None:
        """tenacity's ``before_sleep``: the last attempt is retried after the coming wait."""
        self.next_wait_ms = (state.upcoming_sleep or 0.0) * 1000
        self.attempts[-1].retried = True
        self._traced(self.attempts[-1])

    def gave_up(self, state: RetryCallState) -> Answer:
        """tenacity's ``retry_error_callback``: ``max_attempts`` reached; the last answer."""
        last = self.attempts[-1]
        what = last.status or Text("no answer")
        n = len(self.attempts)
        last.reason = (
            Text("still %(what)s after %(n)s attempts (max_attempts): gave up", what=what, n=n)
            if n > 1
            else Text("%(what)s on its only attempt (max_attempts 1): gave up", what=what)
        )
        return state.outcome.result()  # type: ignore[union-attr, no-any-return]

    def result(self, answer: Answer) -> Run:
        """The run, from the last ``answer``: see :func:`charge_with_retries`."""
        self._traced(self.attempts[-1])
        if answer.ok:
            replayed = header(answer.headers, "Idempotent-Replayed") == "true"
            return Run(self.attempts, "replayed" if replayed else "charged")
        return Run(self.attempts, "gave_up" if self.policy.retries(answer.what) else "final_error")

    def _traced(self, attempt: Attempt) -> None:
        self.trace(
            "answer",
            n=attempt.n,
            status=attempt.status,
            error=attempt.error,
            retried=attempt.retried,
            reason=attempt.reason,
        )


def why(policy: Policy, answer: Answer) -> str | Text:
    """Why an answer is (or is not) retried under ``policy``, in a sentence."""
    if answer.ok:
        return N_("success: nothing to retry")
    if answer.status is None:
        return (
            N_("no answer: it may have charged; retried (the same key makes that safe)")
            if policy.retries("network") and policy.same_key
            else N_("no answer: it may have charged; retried with a NEW key (a double charge)")
            if policy.retries("network")
            else N_("no answer, and retry_on leaves out network errors: not retried")
        )
    if not policy.retries(answer.status):
        return Text("%(status)s is not in retry_on: final, not retried", status=answer.status)
    if answer.status in (400, 402, 409, 422):
        return Text(
            "%(status)s retried because retry_on says so: the same request gets the same "
            "answer (wasted)",
            status=answer.status,
        )
    if policy.respect_retry_after and answer.retry_after_s() is not None:
        return Text(
            "%(status)s may pass later: retried, after Retry-After (%(s)s s)",
            status=answer.status,
            s=answer.retry_after_s(),
        )
    return Text("%(status)s may pass later: retried", status=answer.status)
