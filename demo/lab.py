"""A lab: one attendee's world (settings, clock, store, gateway, request log), and the
registry that keeps the number of labs bounded.

No web framework here: the web layer hands a lab the raw header values and body bytes,
and sends back the :class:`~demo.idempotency.Response` it gets.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from .charges import ChargeRequest, parse_charge, parse_idempotency_key
from .gateway import MAX_LATENCY_MS, FakeGateway, GatewayError, summarise
from .idempotency import (
    Clock,
    IdempotencyStore,
    KeyBusy,
    Response,
    execute,
    fingerprint,
)
from .problems import Problem, canonical_json

CHARGES_PATH = "/api/charges"
"""The path the fingerprint covers: the same in every lab, since labs never share a store."""

LAB_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_TTL_S = 30 * 24 * 3600

Outcome = Literal["charged", "replayed", "conflict", "error", "invalid", "in_flight"]


# ---------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """A lab's switches.

    :param lock: take the per-key lock (``False`` shows the TOCTOU double charge).
    :param gateway_latency_ms: how long the gateway takes to charge, 0-3000 ms.
    :param ttl_s: how long a key is remembered, 1 s to 30 days; 24 h by default.
    """

    lock: bool = True
    gateway_latency_ms: int = 300
    ttl_s: int = 24 * 3600

    def as_dict(self) -> dict[str, Any]:
        """The settings as JSON-ready values."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def patched(self, changes: object) -> Settings:
        """A copy with ``changes`` applied, e.g. ``{"lock": false}``.

        :raises Problem: 422 when ``changes`` is not an object, names an unknown setting
            or gives a value of the wrong type or out of range.
        """
        if not isinstance(changes, Mapping):
            raise _bad_settings({"body": "must be a JSON object of settings"})
        errors: dict[str, str] = {}
        known = {f.name for f in fields(self)}
        for name in changes:
            if name not in known:
                errors[str(name)] = "unknown setting"
        if "lock" in changes and not isinstance(changes["lock"], bool):
            errors["lock"] = "must be true or false"
        for name, low, high in (("gateway_latency_ms", 0, MAX_LATENCY_MS), ("ttl_s", 1, MAX_TTL_S)):
            if name in changes:
                value = changes[name]
                if (
                    isinstance(value, bool)
                    or not isinstance(value, int)
                    or not low <= value <= high
                ):
                    errors[name] = f"must be an integer from {low} to {high}"
        if errors:
            raise _bad_settings(errors)
        return replace(self, **{k: v for k, v in changes.items() if k in known})


def _bad_settings(errors: dict[str, str]) -> Problem:
    fields_ = ", ".join(f"{name} {why}" for name, why in errors.items())
    return Problem(
        422, "invalid-settings", "Invalid settings", f"Fix the settings: {fields_}.", errors=errors
    )


# ---------------------------------------------------------------------------
# The request log: the timeline's data
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One step boundary a request passed: ``at_ms`` after it arrived, with ``detail``."""

    name: str
    at_ms: float
    detail: Mapping[str, Any]


@dataclass
class RequestEntry:
    """One HTTP request to the charge endpoint, as the timeline shows it.

    ``started`` and ``finished`` are ``time.perf_counter()`` seconds, comparable across
    the requests of one process; ``status`` and ``outcome`` are ``None`` while in flight.
    """

    id: int
    action: str
    started: float
    key: str | None = None
    charge: ChargeRequest | None = None
    fingerprint: str | None = None
    steps: list[Step] = field(default_factory=list)
    finished: float | None = None
    status: int | None = None
    outcome: Outcome = "in_flight"
    charge_id: str | None = None
    problem: str | None = None
    lock: bool = True

    @property
    def duration_ms(self) -> float | None:
        """Arrival to response, in ms; ``None`` while in flight."""
        return None if self.finished is None else (self.finished - self.started) * 1000

    def step(self, name: str) -> Step | None:
        """The first step called ``name``, or ``None``."""
        return next((s for s in self.steps if s.name == name), None)

    def as_dict(self) -> dict[str, Any]:
        """The entry as JSON-ready values (times in ms)."""
        return {
            "id": self.id,
            "action": self.action,
            "idempotency_key": self.key,
            "body": self.charge.as_dict() if self.charge else None,
            "fingerprint": self.fingerprint,
            "lock": self.lock,
            "status": self.status,
            "outcome": self.outcome,
            "charge_id": self.charge_id,
            "problem": self.problem,
            "duration_ms": None if self.duration_ms is None else round(self.duration_ms, 1),
            "steps": [{"step": s.name, "at_ms": round(s.at_ms, 1), **s.detail} for s in self.steps],
        }


# ---------------------------------------------------------------------------
# The lab
# ---------------------------------------------------------------------------


class Lab:
    """One isolated lab: settings, store, gateway and the log of recent requests.

    :param lab_id: 1-64 characters of ``[A-Za-z0-9_-]``.
    :param clock: seconds, for record expiry and charge times (``time.time`` by default).
    :param max_log: the request log is a ring buffer of this many requests.
    """

    def __init__(
        self,
        lab_id: str,
        *,
        settings: Settings | None = None,
        clock: Clock = time.time,
        max_log: int = 200,
        max_records: int = 1000,
        max_ledger: int = 500,
    ) -> None:
        self.id = lab_id
        self.settings = settings or Settings()
        self._clock = clock
        self.store = IdempotencyStore(
            ttl_s=self.settings.ttl_s, max_records=max_records, clock=self.now
        )
        self.gateway = FakeGateway(
            latency_ms=self.settings.gateway_latency_ms, max_ledger=max_ledger, clock=self.now
        )
        self._log: deque[RequestEntry] = deque(maxlen=max_log)
        self._ids = itertools.count(1)
        self._changes = itertools.count(1)  # next() is atomic, so concurrent bumps never collide
        self.version = 0
        self._guard = threading.Lock()
        self._next_order = 42

    def now(self) -> float:
        """The lab's clock, in seconds."""
        return self._clock()

    # -- the charge endpoint ---------------------------------------------------

    def create_charge(
        self, key_header: list[str], body: bytes, *, action: str = "API"
    ) -> tuple[Response, RequestEntry]:
        """Handle ``POST /api/charges``: validate, then charge at most once per key.

        :param key_header: every ``Idempotency-Key`` header value sent (usually 0 or 1).
        :param body: the raw JSON body.
        :param action: the button that sent it, for the timeline only (``"Pay"``, ``"Retry"``…).
        :returns: the response and the request's log entry. Status 201 (charged),
            the stored status (replayed), 400/422 (invalid, nothing stored),
            409 (key reused with another body, or lock not acquired), 502 (gateway failed,
            key released).
        """
        entry = self._begin(action)

        def trace(step: str, /, **detail: Any) -> None:
            entry.steps.append(Step(step, (time.perf_counter() - entry.started) * 1000, detail))
            self._touch()

        outcome: Outcome
        try:
            # Validate first: an invalid request is answered and stores nothing.
            key = entry.key = parse_idempotency_key(key_header)
            charge = entry.charge = parse_charge(body)
            trace("validate", ok=True)
            if key is None:
                # No key, no protection: every call charges.
                trace("no key")
                response, outcome = self._charge(None, charge, trace), "charged"
            else:
                entry.fingerprint = fingerprint("POST", CHARGES_PATH, charge.as_dict())
                done = execute(
                    self.store,
                    key,
                    entry.fingerprint,
                    lambda: self._charge(key, charge, trace),
                    lock=entry.lock,
                    trace=trace,
                )
                response, outcome = done.response, done.outcome
        except Problem as problem:
            trace("validate", ok=False)
            response, outcome = Response.of_problem(problem), "invalid"
        except GatewayError as exc:
            response, outcome = _gateway_failed(exc), "error"
        except KeyBusy:
            response, outcome = _key_busy(), "conflict"
        trace("respond", status=response.status)
        self._finish(entry, response, outcome)
        return response, entry

    def _charge(
        self, key: str | None, charge: ChargeRequest, trace: Callable[..., None]
    ) -> Response:
        """The side effect: charge through the gateway, and build the business response."""
        started = time.perf_counter()
        done = self.gateway.charge(
            order_id=charge.order_id,
            amount=charge.amount,
            currency=charge.currency,
            idempotency_key=key,
        )
        if key is None:
            trace("gateway charge", ms=round((time.perf_counter() - started) * 1000, 1))
        body = {
            "id": done.id,
            "object": "charge",
            "order_id": done.order_id,
            "amount": done.amount,
            "currency": done.currency,
            "status": "succeeded",
            "created": int(done.created_at),
        }
        return Response(201, canonical_json(body), (("Content-Type", "application/json"),))

    # -- settings, reset, orders -------------------------------------------------

    def update_settings(self, changes: object) -> Settings:
        """Apply a settings patch (see :meth:`Settings.patched`) and return the new settings.

        :raises Problem: 422 for unknown settings or bad values; nothing changes then.
        """
        with self._guard:
            self.settings = self.settings.patched(changes)
            self.store.ttl_s = self.settings.ttl_s
            self.gateway.latency_ms = self.settings.gateway_latency_ms
        self._touch()
        return self.settings

    def reset(self) -> None:
        """Empty the store, the ledger and the request log; keep the settings."""
        with self._guard:
            self.store.clear()
            self.gateway.clear()
            self._log.clear()
            self._next_order = 42
        self._touch()

    def new_order_id(self, after: str = "") -> str:
        """An order id unused in this lab (after ``after`` if it is a number): a new intent."""
        with self._guard:
            used = {e.charge.order_id for e in self._log if e.charge} | {after}
            if after.isdigit() and len(after) < 15:
                self._next_order = max(self._next_order, int(after) + 1)
            while str(self._next_order) in used:
                self._next_order += 1
            return str(self._next_order)

    def latest_charge(self) -> ChargeRequest | None:
        """The body of the most recent valid charge request, or ``None``."""
        with self._guard:
            return next((e.charge for e in reversed(self._log) if e.charge), None)

    # -- reading ---------------------------------------------------------------

    def requests(self) -> list[RequestEntry]:
        """The logged requests, oldest first (a ring buffer of ``max_log``)."""
        with self._guard:
            return list(self._log)

    def state(self) -> dict[str, Any]:
        """Everything the lab holds, as JSON-ready values (``GET /api/state``)."""
        now = self.now()
        charges = self.gateway.ledger()
        summary = summarise(charges)
        return {
            "lab": self.id,
            "settings": self.settings.as_dict(),
            "charges": [
                {
                    "id": c.id,
                    "idempotency_key": c.idempotency_key,
                    "order_id": c.order_id,
                    "amount": c.amount,
                    "currency": c.currency,
                    "created": c.created_at,
                    "double_charge": c.order_id in summary.doubled,
                }
                for c in charges
            ],
            "summary": {"charged": summary.charged, "intended": summary.intended},
            "records": [
                {
                    "idempotency_key": r.key,
                    "fingerprint": r.fingerprint,
                    "state": r.state.value,
                    "status": r.response.status if r.response else None,
                    "created": r.created_at,
                    "expires_in_s": round(r.expires_at - now, 1),
                }
                for r in self.store.records()
            ],
            "requests": [e.as_dict() for e in self.requests()],
        }

    # -- internals ---------------------------------------------------------------

    def _begin(self, action: str) -> RequestEntry:
        entry = RequestEntry(
            id=next(self._ids),
            action=action[:40],
            started=time.perf_counter(),
            lock=self.settings.lock,
        )
        with self._guard:
            self._log.append(entry)
        self._touch()
        return entry

    def _finish(self, entry: RequestEntry, response: Response, outcome: Outcome) -> None:
        entry.status = response.status
        entry.outcome = outcome
        if response.status < 300:
            entry.charge_id = json.loads(response.body).get("id")
        else:
            entry.problem = json.loads(response.body).get("title")
        entry.finished = time.perf_counter()
        self._touch()

    def _touch(self) -> None:
        self.version = next(self._changes)


def _gateway_failed(exc: GatewayError) -> Response:
    problem = Problem(
        502,
        "gateway-error",
        "Payment gateway failed",
        f"The gateway failed before charging ({exc}). "
        "The key was released: retry with the same key.",
    )
    return Response.of_problem(problem)


def _key_busy() -> Response:
    problem = Problem(
        409,
        "key-in-use",
        "Idempotency key in use",
        "Another request with this key is still running. Retry in a moment.",
    )
    return Response.of_problem(problem, ("Retry-After", "1"))


# ---------------------------------------------------------------------------
# The registry of labs
# ---------------------------------------------------------------------------


class LabRegistry:
    """Every lab of the process, bounded: idle labs expire, and past ``max_labs`` the
    least recently used lab is evicted.

    :param max_labs: at most this many labs at once (a workshop of 100 fits twice over).
    :param idle_s: a lab unused for this many seconds is dropped.
    :param make_lab: builds a new lab from its id.
    :param clock: seconds, ``time.monotonic`` by default.
    """

    def __init__(
        self,
        *,
        max_labs: int = 200,
        idle_s: float = 2 * 3600,
        make_lab: Callable[[str], Lab] = Lab,
        clock: Clock = time.monotonic,
    ) -> None:
        self.max_labs = max_labs
        self.idle_s = idle_s
        self._make_lab = make_lab
        self._clock = clock
        self._labs: OrderedDict[str, tuple[Lab, float]] = OrderedDict()
        self._guard = threading.Lock()

    @staticmethod
    def new_id() -> str:
        """A fresh, unguessable lab id (16 random bytes, URL-safe)."""
        return secrets.token_urlsafe(16)

    @staticmethod
    def valid_id(lab_id: str) -> bool:
        """True for 1-64 characters of ``[A-Za-z0-9_-]``."""
        return LAB_ID.fullmatch(lab_id) is not None

    def get(self, lab_id: str) -> Lab:
        """The lab with this id, created if needed; marks it used.

        :raises Problem: 404 when the id is not 1-64 characters of ``[A-Za-z0-9_-]``.
        """
        if not self.valid_id(lab_id):
            raise Problem(
                404,
                "bad-lab-id",
                "No such lab",
                "A lab id is 1-64 characters of letters, digits, '-' and '_'.",
            )
        now = self._clock()
        with self._guard:
            self._expire(now)
            lab = self._labs.pop(lab_id, (None, now))[0] or self._make_lab(lab_id)
            self._labs[lab_id] = (lab, now)
            while len(self._labs) > self.max_labs:
                self._labs.popitem(last=False)
            return lab

    def __len__(self) -> int:
        with self._guard:
            self._expire(self._clock())
            return len(self._labs)

    def _expire(self, now: float) -> None:
        # Least recently used first, so stop at the first lab still in use.
        while self._labs:
            _, (_, used) = next(iter(self._labs.items()))
            if now - used < self.idle_s:
                break
            self._labs.popitem(last=False)
