"""The payment lab's switches: each one a failure from the field, or its fix."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ..engine.problems import Problem
from ..engine.settings import setting_errors
from ..engine.text import N_, Reasons, Text
from .gateway import MAX_LATENCY_MS
from .idempotency import PROFILES

MAX_TTL_S = 30 * 24 * 3600
"""The longest TTL a key may be given, in seconds (30 days)."""

IN_PROGRESS_S = 30
"""How long an in-progress record is presumed alive (its deadline), in seconds."""

DEFAULT_CLIENT: Mapping[str, Any] = {"key_strategy": "stable", "guard": False}
"""The page's client switches: a stable key per intent, no client-side guard."""

CHOICES: dict[str, tuple[str, ...]] = {
    "in_flight": ("wait", "reject"),
    "profile": tuple(PROFILES),
    "fault": ("none", "lose_response", "crash_after_charge", "gateway_error", "gateway_timeout"),
    "recovery": ("none", "downstream_key"),
    "store_scope": ("shared", "per_instance"),
    "email": ("off", "inline", "outbox"),
}
RANGES: dict[str, tuple[int, int]] = {
    "gateway_latency_ms": (0, MAX_LATENCY_MS),
    "ttl_s": (1, MAX_TTL_S),
    "instances": (1, 3),
}


@dataclass(frozen=True)
class Settings:
    """A lab's switches, each one a failure from the field or its fix.

    :param lock: take the per-key lock (``False`` shows the TOCTOU double charge).
    :param gateway_latency_ms: how long the gateway takes to charge, 0-3000 ms.
    :param ttl_s: how long a key is remembered, 1 s to 30 days; 24 h by default. Under
        ``in_flight="reject"`` at least 30 s (``IN_PROGRESS_S``), else 422: a key that
        expired while its request still runs would make the duplicate wait and replay
        instead of getting its 409.
    :param in_flight: a duplicate of a request still running: ``"wait"`` for the lock and
        replay, or ``"reject"`` it with 409 and ``Retry-After`` (Stripe, IETF draft).
    :param profile: ``"seed"``, ``"ietf"`` or ``"stripe"``: the status codes for errors.
    :param require_key: answer 400 to a request without ``Idempotency-Key`` (IETF draft).
    :param fault: a fault that fires once, on the next request that reaches its point,
        then returns to ``"none"``: ``"lose_response"`` (charged and saved, but the
        response never reaches the client), ``"crash_after_charge"`` (the instance dies
        after the gateway charged, before the record is saved), ``"gateway_error"``
        (the gateway fails before charging) or ``"gateway_timeout"`` (the gateway charges,
        and its answer never comes: the outcome is unknown to the server).
    :param recovery: ``"downstream_key"`` passes the idempotency key on to the gateway,
        which deduplicates on it as real payment providers do.
    :param instances: 1-3 instances behind a round-robin balancer, in this one process.
    :param store_scope: ``"shared"`` (one store, like Redis) or ``"per_instance"`` (each
        instance remembers only what it served itself).
    :param gateway_decline: the gateway declines cards (402 ``card_declined``).
    :param email: the receipt e-mail: ``"off"``, ``"inline"`` (sent by the handler right
        after the charge) or ``"outbox"`` (written with the record in one atomic step,
        and sent once per key).
    :param step_mode: every new charge request pauses at each step boundary of the real
        handler until it is stepped (``POST /api/step``), or for at most 120 s.
    """

    lock: bool = True
    gateway_latency_ms: int = 300
    ttl_s: int = 24 * 3600
    in_flight: str = "wait"
    profile: str = "seed"
    require_key: bool = False
    fault: str = "none"
    recovery: str = "none"
    instances: int = 1
    store_scope: str = "shared"
    gateway_decline: bool = False
    email: str = "off"
    step_mode: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The settings as JSON-ready values."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def patched(self, changes: object) -> Settings:
        """A copy with ``changes`` applied, e.g. ``{"lock": false}``.

        :raises Problem: 422 when ``changes`` is not an object, names an unknown setting
            or gives a value of the wrong type or out of range, or when the result would
            have ``ttl_s`` under 30 s with ``in_flight="reject"``; nothing changes then.
        """
        if not isinstance(changes, Mapping):
            raise _bad_settings({"body": N_("must be a JSON object of settings")})
        errors = setting_errors(self, changes, RANGES, CHOICES)
        if not errors:
            patched = replace(self, **changes)
            if patched.in_flight == "reject" and patched.ttl_s < IN_PROGRESS_S:
                # A key that expires while its request still runs cannot be "in flight": the
                # duplicate would find nothing, wait for the lock and replay instead of a 409.
                if "ttl_s" in changes:
                    errors["ttl_s"] = Text(
                        "must be at least %(deadline)s s (the in-progress deadline) under "
                        'in_flight "reject"',
                        deadline=IN_PROGRESS_S,
                    )
                else:
                    errors["in_flight"] = Text(
                        "must leave ttl_s at least %(deadline)s s (the in-progress deadline) "
                        'under in_flight "reject"',
                        deadline=IN_PROGRESS_S,
                    )
        if errors:
            raise _bad_settings(errors)
        return replace(self, **changes)


def _bad_settings(errors: dict[str, str | Text]) -> Problem:
    reasons = Reasons(errors)
    return Problem(
        422,
        "invalid-settings",
        N_("Invalid settings"),
        Text("Fix the settings: %(fields)s.", fields=reasons),
        errors=reasons.english(),
    )
