"""The retry policy the attendee edits, and the backoff strategies it names.

The strategies are those of the AWS Architecture Blog's "Exponential Backoff and Jitter"
(Marc Brooker, 2015), with the first retry's ceiling at ``base_ms`` (then 2×, 4×…, never
past ``cap_ms``). :func:`backoff_ms` is the one formula: the client's waits and the storm
simulator's both come from it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..engine.problems import Problem
from ..engine.text import N_, Reasons, Text

STRATEGIES = (
    "none",
    "fixed",
    "exponential",
    "full_jitter",
    "equal_jitter",
    "decorrelated_jitter",
)
"""``none``: retry at once; ``fixed``: ``base_ms`` every time; ``exponential``:
``min(cap, base·2ⁿ)``, no jitter; ``full_jitter``: ``random(0, that)``; ``equal_jitter``:
half of it plus ``random(0, half)``; ``decorrelated_jitter``: ``min(cap, random(base,
3·previous))`` (AWS blog)."""

SAFE_TO_RETRY: tuple[str | int, ...] = ("network", 408, 429, 500, 502, 503, 504)
"""What may succeed on a second try: a network error, 408, 429 and 5xx (RFC 9110 §15.5.9,
RFC 6585 §4, §15.6)."""

MISTAKES = (400, 402, 409, 422)
"""Answers a retry cannot change (a bad request, a declined card, a key reused with another
body, an invalid charge): offered in ``retry_on`` only to show the mistake."""

RETRY_ON_CHOICES: tuple[str | int, ...] = (*SAFE_TO_RETRY, *MISTAKES)

MAX_ATTEMPTS = 10
MAX_BASE_MS = 10_000
MAX_CAP_MS = 60_000
"""The longest single wait, in ms: ten attempts wait at most 9 minutes of virtual time."""

MAX_RETRY_AFTER_S = 60
"""A ``Retry-After`` longer than this (s) is honoured as this, so a run stays bounded."""


@dataclass(frozen=True)
class Policy:
    """How the lab's client retries one charge.

    :param max_attempts: attempts in all, the first included (1-10).
    :param strategy: one of :data:`STRATEGIES`.
    :param base_ms: the first retry's wait (its ceiling under jitter), 1-10,000 ms.
    :param cap_ms: no wait longer than this, 1-60,000 ms (under ``base_ms``, every
        wait is ``cap_ms`` at most, the first too).
    :param retry_on: what is retried: ``"network"`` (no answer at all) and statuses, from
        :data:`RETRY_ON_CHOICES`.
    :param respect_retry_after: wait at least the answer's ``Retry-After`` seconds
        (RFC 9110 §10.2.3; delay-seconds only, at most 60 s).
    :param same_key: one ``Idempotency-Key`` for every attempt of the charge (the fix);
        ``False`` makes a new key per attempt, the classic double-charge mistake.
    """

    max_attempts: int = 4
    strategy: str = "full_jitter"
    base_ms: int = 200
    cap_ms: int = 5_000
    retry_on: tuple[str | int, ...] = SAFE_TO_RETRY
    respect_retry_after: bool = True
    same_key: bool = True

    def retries(self, what: str | int) -> bool:
        """True if ``what`` (``"network"`` or a status code) is retried by this policy."""
        return what in self.retry_on

    def as_dict(self) -> dict[str, Any]:
        """The policy as JSON-ready values (``retry_on`` a list, ``"network"`` first)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["retry_on"] = list(self.retry_on)
        return values

    @classmethod
    def parse(cls, value: object, base: Policy | None = None) -> Policy:
        """The policy ``value`` describes: a JSON object of members to change from ``base``
        (the defaults if ``None``); members left out keep ``base``'s values.

        :raises Problem: 422 ``invalid-policy`` naming each bad member (an unknown one, a
            wrong type, out of range, an unknown ``retry_on``).
        """
        base = base or cls()
        if not isinstance(value, Mapping):
            raise _bad_policy({"policy": N_("must be a JSON object")})
        errors: dict[str, str | Text] = {}
        changes: dict[str, Any] = {}
        for name, given in value.items():
            why = _check(str(name), given)
            if why is not None:
                errors[str(name)] = why
            else:
                changes[name] = tuple(_ordered(given)) if name == "retry_on" else given
        if errors:
            raise _bad_policy(errors)
        merged = {**base.as_dict(), **changes}
        merged["retry_on"] = tuple(merged["retry_on"])
        return cls(**merged)


RANGES = {"max_attempts": (1, MAX_ATTEMPTS), "base_ms": (1, MAX_BASE_MS), "cap_ms": (1, MAX_CAP_MS)}
_BOOLS = ("respect_retry_after", "same_key")


def _check(name: str, value: object) -> str | Text | None:
    """Why ``value`` is no good for member ``name``, or ``None``."""
    if name in RANGES:
        low, high = RANGES[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return Text("must be an integer from %(low)s to %(high)s", low=low, high=high)
    elif name in _BOOLS:
        if not isinstance(value, bool):
            return N_("must be true or false")
    elif name == "strategy":
        if value not in STRATEGIES:
            return Text("must be one of %(choices)s", choices=", ".join(STRATEGIES))
    elif name == "retry_on":
        if not isinstance(value, list) or any(
            type(v) not in (int, str) or v not in RETRY_ON_CHOICES for v in value
        ):
            return Text(
                "must be a list of %(choices)s",
                choices=", ".join(
                    f'"{c}"' if isinstance(c, str) else str(c) for c in RETRY_ON_CHOICES
                ),
            )
    else:
        return Text(
            "is not a policy member (they are: %(names)s)",
            names=", ".join(f.name for f in fields(Policy)),
        )
    return None


def _ordered(values: list[Any]) -> list[str | int]:
    """``retry_on`` without duplicates, in the order of :data:`RETRY_ON_CHOICES`."""
    return [c for c in RETRY_ON_CHOICES if c in values]


def _bad_policy(errors: dict[str, str | Text]) -> Problem:
    reasons = Reasons(errors)
    return Problem(
        422,
        "invalid-policy",
        N_("Invalid retry policy"),
        Text("Fix the retry policy: %(fields)s.", fields=reasons),
        errors=reasons.english(),
    )


def backoff_ms(
    strategy: str,
    retry: int,
    base_ms: float,
    cap_ms: float,
    previous_ms: float,
    rng: random.Random,
) -> float:
    """The wait before retry number ``retry`` (1 = the second attempt), in ms.

    :param previous_ms: the wait before the previous retry (``base_ms`` before the first):
        decorrelated jitter walks on from it.
    :param rng: the source of jitter (seeded for a reproducible storm).
    :raises ValueError: for an unknown strategy.

    Source: AWS Architecture Blog, "Exponential Backoff and Jitter" (2015).
    """
    ceiling = float(min(cap_ms, base_ms * 2.0 ** min(retry - 1, 62)))
    if strategy == "none":
        return 0.0
    if strategy == "fixed":
        return float(min(base_ms, cap_ms))
    if strategy == "exponential":
        return float(ceiling)
    if strategy == "full_jitter":
        return rng.uniform(0, ceiling)
    if strategy == "equal_jitter":
        return ceiling / 2 + rng.uniform(0, ceiling / 2)
    if strategy == "decorrelated_jitter":
        return float(min(cap_ms, rng.uniform(base_ms, max(base_ms, previous_ms) * 3)))
    raise ValueError(strategy)
