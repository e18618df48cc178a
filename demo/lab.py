"""A lab: one attendee's world (settings, clock, instances, stores, gateway, mailbox,
request log), and the registry that keeps the number of labs bounded.

No web framework here: the web layer hands a lab the raw header values and body bytes,
and sends back the :class:`~demo.payments.idempotency.Response` it gets, unless the lab says the
response never left (a lost response or a crashed instance).
"""

from __future__ import annotations

import itertools
import json
import math
import re
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal

from .engine.problems import Problem, canonical_json
from .engine.text import N_, Reasons, Text
from .lessons import LESSONS, Lesson, Progress, evidence, observe
from .payments.charges import ChargeRequest, parse_charge, parse_idempotency_key
from .payments.gateway import (
    MAX_LATENCY_MS,
    CardDeclined,
    Charge,
    FakeGateway,
    GatewayError,
    summarise,
)
from .payments.idempotency import (
    PROFILES,
    Clock,
    IdempotencyStore,
    KeyBusy,
    OutcomeUnknown,
    Record,
    Response,
    StoreFull,
    Trace,
    execute,
    fingerprint,
    in_use_problem,
)
from .payments.scenarios import SCENARIOS, Scenario

CHARGES_PATH = "/api/charges"
"""The path the fingerprint covers: the same in every lab, since labs never share a store."""

LAB_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_TTL_S = 30 * 24 * 3600
MAX_ADVANCE_S = 30 * 24 * 3600
IN_PROGRESS_S = 30
"""How long an in-progress record is presumed alive (its deadline), in seconds."""

PAUSE_TIMEOUT_S = 120.0
"""In step mode, a request left paused this long runs on by itself, so none waits for ever."""

MAX_PAUSED_PER_LAB = 8
"""Requests a lab may have in step mode at once (each holds one of the server's threads)."""

MAX_PAUSED = 24
"""Requests in step mode at once across every lab sharing one budget: half of the
server's 48 threads, so paused requests never starve the others."""

PAIR_WINDOW_S = 1.0
"""Two Double-submit requests arriving this close (s) are one pair: the first is A."""

STEP_POINTS = frozenset(
    {"no key", "lookup", "fingerprint check", "lock wait", "lock acquire", "reclaim", "reserve",
     "charging", "gateway replay", "gateway charge", "gateway timeout", "in doubt", "release",
     "outbox enqueue", "email send", "record save", "response lost", "respond"}
)  # fmt: skip
"""The step boundaries where step mode pauses: every ``trace`` point of a charge request
but ``validate`` (the request stops first after its lookup, or, with no key, after ``no
key``), so one Step never runs past a point unseen; ``charging`` is the stop right before
the gateway is called, so the Step that moves the money is a Step of its own. What happens
inside the gateway call (its replayed answer, an inline e-mail) is told right after the
call's own stop, and the outbox message right after ``record save``, which writes it."""


@dataclass(frozen=True)
class Detail:
    """One member a step's detail may hold: ``valid(value)``, and what it must be (words
    for the error an imported history gets when it is not)."""

    what: str
    valid: Callable[[object], bool]


def _is_ms(value: object) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= 10**9
    )


_BOOL = Detail(N_("must be true or false"), lambda v: isinstance(v, bool))
_MS = Detail(N_("must be a number of ms"), _is_ms)


@dataclass(frozen=True)
class StepKind:
    """What the lab writes for one step name: its ``detail`` members (each optional),
    and how often one request can pass it (the look-again passes two steps twice)."""

    detail: Mapping[str, Detail]
    at_most: int = 1


STEPS: Mapping[str, StepKind] = {
    "validate": StepKind({"ok": _BOOL}),
    "no key": StepKind({}),
    "lookup": StepKind(
        {
            "hit": _BOOL,
            "state": Detail(
                N_('must be null, "in_progress", "completed" or "in_doubt"'),
                lambda v: v in (None, "in_progress", "completed", "in_doubt"),
            ),
            "again": _BOOL,
        },
        at_most=2,
    ),
    "fingerprint check": StepKind({"match": _BOOL}, at_most=2),
    "lock wait": StepKind({}),
    "lock acquire": StepKind({"waited_ms": _MS}),
    "reclaim": StepKind({}),
    "reserve": StepKind({}),
    "charging": StepKind({}),
    "gateway replay": StepKind(
        {"charge_id": Detail(N_("must be a charge id"), lambda v: _is_charge_id(v))}
    ),
    "gateway charge": StepKind({"ms": _MS}),
    "gateway timeout": StepKind({"ms": _MS}),
    "in doubt": StepKind({}),
    "release": StepKind({}),
    "outbox enqueue": StepKind(
        {"charge_id": Detail(N_("must be a charge id"), lambda v: _is_charge_id(v))}
    ),
    "email send": StepKind(
        {
            "email": Detail(
                N_("must be an e-mail id"),
                lambda v: isinstance(v, str) and re.fullmatch(r"em_[0-9]{4,12}", v) is not None,
            ),
            "via": Detail(N_('must be "inline" or "outbox"'), lambda v: v in ("inline", "outbox")),
            "key": Detail(
                N_("must be an idempotency key or null"),
                lambda v: v is None or (isinstance(v, str) and _is_shown_key(v)),
            ),
        },
        at_most=2,
    ),
    "record save": StepKind({}),
    "response lost": StepKind({}),
    "respond": StepKind(
        {
            "status": Detail(
                N_("must be an HTTP status code"),
                lambda v: type(v) is int and 100 <= v <= 599,
            )
        }
    ),
    "crash": StepKind(
        {"after": Detail(N_("must name a known step"), lambda v: isinstance(v, str) and v in STEPS)}
    ),
    "step timeout": StepKind({}),
}
"""Every step a request's log can hold, with the detail its ``trace(step, **detail)`` call
passes: the one table the lab's trace calls follow (a test reads them in the source) and
an imported history is checked against, so the two cannot drift apart."""

PAUSED_MS = "paused_ms"
"""In step mode, the detail member of the step a request stopped after: how long it stood
there until the attendee stepped it on, in ms (wall clock spent by the attendee, not by
the server). Any step may carry it."""
STEPS = {
    name: replace(kind, detail={**kind.detail, PAUSED_MS: _MS}) for name, kind in STEPS.items()
}

STEP_NAMES = frozenset(STEPS)
"""Every step a request's log can hold (an imported history may name no other)."""


def _is_shown_key(value: str) -> bool:
    return 0 < len(value) <= 255 and value.isprintable()


def _is_charge_id(value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(r"ch_[0-9]{4,12}", value) is not None


def shown(text: str, limit: int = 300) -> str:
    """``text`` as the page shows it and a history keeps it: each character that is not
    printable (a control character, a tab, DEL, a lone surrogate) written as its escape
    (``\\x7f``), then cut to ``limit`` characters (the last one ``…``).

    Recorded this way, every text of the request log is printable, so the lab's own
    history re-imports and re-exports unchanged: ``shown(shown(t)) == shown(t)``.
    """
    if not text.isprintable():
        text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


DEFAULT_CLIENT: Mapping[str, Any] = {"key_strategy": "stable", "guard": False}
"""The page's client switches: a stable key per intent, no client-side guard."""

Outcome = Literal[
    "charged",
    "recovered",
    "replayed",
    "conflict",
    "in_use",
    "in_doubt",
    "declined",
    "error",
    "invalid",
    "crashed",
    "in_flight",
]


class InstanceCrash(BaseException):
    """The instance serving a request died at a step boundary (a fault the lab injects).

    A ``BaseException``, like ``SystemExit``: no ``except Exception`` clean-up runs, as
    none would in a process that died.
    """

    def __init__(self, step: str) -> None:
        super().__init__(step)
        self.step = step


# ---------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------

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
        handler until it is stepped (:meth:`Lab.step`), or for at most 120 s.
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
        errors: dict[str, str | Text] = {}
        for name, value in changes.items():
            if name not in self.__dataclass_fields__:
                errors[str(name)] = N_("unknown setting")
            elif isinstance(getattr(self, name), bool):
                if not isinstance(value, bool):
                    errors[name] = N_("must be true or false")
            elif name in RANGES:
                low, high = RANGES[name]
                if (
                    isinstance(value, bool)
                    or not isinstance(value, int)
                    or not low <= value <= high
                ):
                    errors[name] = Text(
                        "must be an integer from %(low)s to %(high)s", low=low, high=high
                    )
            elif value not in CHOICES[name]:
                errors[name] = Text(
                    "must be one of %(choices)s",
                    choices=", ".join(f'"{c}"' for c in CHOICES[name]),
                )
        if not errors:
            patched = replace(self, **changes)
            if patched.in_flight == "reject" and patched.ttl_s < IN_PROGRESS_S:
                # A key that expires while its request still runs cannot be "in flight": the
                # duplicate would find nothing, wait for the lock and replay instead of a 409.
                name = "ttl_s" if "ttl_s" in changes else "in_flight"
                errors[name] = Text(
                    "must leave ttl_s at least %(deadline)s s (the in-progress deadline) under "
                    'in_flight "reject"',
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


# ---------------------------------------------------------------------------
# The request log: the timeline's data
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """One step boundary a request passed: ``at_ms`` after it arrived, with ``detail``."""

    name: str
    at_ms: float
    detail: Mapping[str, Any]


@dataclass
class RequestEntry:
    """One HTTP request to the charge endpoint, as the timeline shows it.

    ``started`` and ``finished`` are ``time.perf_counter()`` seconds, comparable across
    the requests of one process; ``at`` is the lab's (virtual) clock at arrival, in s.
    ``status`` is ``None`` while in flight, and when the response never reached the
    client (``delivered`` is ``False``).
    """

    id: int
    action: str
    started: float
    at: float = 0.0
    instance: str = "i1"
    key: str | None = None
    charge: ChargeRequest | None = None
    fingerprint: str | None = None
    steps: list[Step] = field(default_factory=list)
    finished: float | None = None
    status: int | None = None
    outcome: Outcome = "in_flight"
    charge_id: str | None = None
    problem: str | None = None
    problem_detail: str | None = None
    raw_key: str | None = None
    lock: bool = True
    delivered: bool = True
    settings: Settings | None = None
    """The lab's settings when the request arrived (what the lessons' checks look at)."""

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
            "instance": self.instance,
            "idempotency_key": self.key,
            "body": self.charge.as_dict() if self.charge else None,
            "fingerprint": self.fingerprint,
            "lock": self.lock,
            "status": self.status,
            "outcome": self.outcome,
            "delivered": self.delivered,
            "charge_id": self.charge_id,
            "problem": self.problem,
            "duration_ms": None if self.duration_ms is None else round(self.duration_ms, 1),
            "steps": [{"step": s.name, "at_ms": round(s.at_ms, 1), **s.detail} for s in self.steps],
        }


@dataclass(frozen=True)
class Email:
    """A receipt e-mail that left: one more in the customer's inbox."""

    id: str
    idempotency_key: str | None
    order_id: str
    charge_id: str
    sent_at: float = 0.0
    """When it left, in seconds on the lab's clock (0.0 when an old history did not say)."""
    via: str = "inline"
    """``"inline"`` (the handler sent it itself) or ``"outbox"`` (the relay sent it once)."""

    def as_dict(self) -> dict[str, Any]:
        """The e-mail as JSON-ready values."""
        return asdict(self)


@dataclass
class Pause:
    """A request in step mode: where it stands, and the event that lets it go on."""

    entry: RequestEntry
    label: str
    step: str = "arrived"
    occurrence: int = 0  # the 2nd "lookup" is the look-again under the lock
    parks: int = 0  # how many step points it has stopped at
    waiting: bool = False
    to_end: bool = False
    go: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class _World:
    """What a request writes to, taken when it arrives: a reset replaces these, so a
    request still in flight then finishes in the old world, not in the fresh lab."""

    gateway: FakeGateway
    mailbox: deque[Email]


@dataclass(frozen=True)
class Instance:
    """One server instance behind the lab's balancer, with the store it talks to."""

    name: str
    store: IdempotencyStore


# ---------------------------------------------------------------------------
# The lab
# ---------------------------------------------------------------------------


class VirtualClock:
    """A clock in seconds: a base clock plus ``offset_s``, which a lab moves forward.

    The store and the gateway hold this, not the lab, so a lab holds no reference cycle
    and its memory goes back the moment the registry drops it.
    """

    def __init__(self, base: Clock) -> None:
        self.base = base
        self.offset_s = 0.0

    def __call__(self) -> float:
        return self.base() + self.offset_s


class Lab:
    """One isolated lab: settings, instances and their stores, gateway, mailbox, log.

    :param lab_id: 1-64 characters of ``[A-Za-z0-9_-]``.
    :param clock: seconds, for record expiry and charge times (``time.time`` by default);
        :meth:`advance` moves the lab's own virtual clock on top of it.
    :param max_log: the request log is a ring buffer of this many requests.
    :param max_paused: requests in step mode at once in this lab; one more gets 429.
    :param paused_slots: the budget of requests in step mode shared by every lab of the
        process (one slot per request, taken without waiting); ``None``: no shared budget.
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
        max_paused: int = MAX_PAUSED_PER_LAB,
        paused_slots: threading.BoundedSemaphore | None = None,
    ) -> None:
        self.id = lab_id
        self.settings = settings or Settings()
        self.clock = VirtualClock(clock)
        self._max_records = max_records
        self._max_ledger = max_ledger
        self._max_log = max_log
        self.store = self._new_store()  # the shared store
        self.instances: tuple[Instance, ...] = ()
        self.gateway = FakeGateway(
            latency_ms=self.settings.gateway_latency_ms, max_ledger=max_ledger, clock=self.clock
        )
        self._mailbox: deque[Email] = deque(maxlen=max_ledger)
        self._email_sent: OrderedDict[str, None] = OrderedDict()
        self._log: deque[RequestEntry] = deque(maxlen=max_log)
        self._ids = itertools.count(1)
        self._emails = itertools.count(1)
        self._round_robin = itertools.count()
        self._changes = itertools.count(1)  # next() is atomic, so concurrent bumps never collide
        self.version = 0
        self.settings_version = 0
        """Bumped whenever the settings change, so every open page can catch up."""
        self._guard = threading.RLock()
        self._next_order = 42
        self.current_order = "42"
        """The order the page shows: the intent being paid, shared by every tab."""
        self.crash_at: str | int | None = None
        """Where every request's instance crashes, for tests (the UI arms ``fault``): a step
        name, or the index of the step boundary within the request (0 = the first)."""
        self._paused: OrderedDict[int, Pause] = OrderedDict()
        self._max_paused = max_paused
        self._paused_slots = paused_slots
        self._stepping = 0
        """Requests in step mode still running, from before a reset too (each holds a thread)."""
        self._base_settings = self.settings
        self.scenario: Scenario | None = None
        self.fixed = False
        self.client: dict[str, Any] = dict(DEFAULT_CLIENT)
        self.lesson: Lesson | None = None
        """The lesson open on the path, if any; its checks run after every request."""
        self.progress: dict[str, Progress] = {}
        """Progress per lesson name: kept across resets, until that lesson is reset."""
        self.present = False
        """Presenter mode: large type, high contrast, secondary panels collapsed."""
        self.read_only = False
        """A replay of an exported history: it shows, it never runs requests."""
        self.language: str | None = None
        """The page's language (``"en"``, ``"vi"``), once chosen with the switch."""
        self._build_instances()

    def now(self) -> float:
        """The lab's clock, in seconds: the real clock plus what :meth:`advance` added."""
        return self.clock()

    def advance(self, seconds: float) -> float:
        """Move the lab's virtual clock forward (to show TTL expiry); returns the offset in s.

        :raises Problem: 422 unless 1 <= ``seconds`` <= 30 days.
        """
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int)
            or not 1 <= seconds <= MAX_ADVANCE_S
        ):
            raise Problem(
                422,
                "invalid-clock",
                N_("Invalid clock change"),
                Text("advance_s must be an integer from 1 to %(limit)s.", limit=MAX_ADVANCE_S),
                errors={"advance_s": f"must be an integer from 1 to {MAX_ADVANCE_S}"},
            )
        with self._guard:
            self.clock.offset_s += seconds
        self._touch()
        return self.clock.offset_s

    # -- the charge endpoint ---------------------------------------------------

    def create_charge(
        self, key_header: list[str], body: bytes, *, action: str = "API"
    ) -> tuple[Response, RequestEntry]:
        """Handle ``POST /api/charges``: validate, then charge at most once per key.

        :param key_header: every ``Idempotency-Key`` header value sent (usually 0 or 1).
        :param body: the raw JSON body.
        :param action: the button that sent it, for the timeline only (``"Pay"``, ``"Retry"``…).
        :returns: the response and the request's log entry. Status 201 (charged), the
            stored status (replayed), 400/422 (invalid, nothing stored), 409 (key reused
            with another body, or in use; 422 or 400 under other profiles), 402 (declined,
            stored), 502 (gateway failed, key released), 503 ``store-full`` with
            ``Retry-After`` (every record of the store is in progress within its
            deadline). When ``entry.delivered`` is ``False`` the client must get no
            response at all.
        :raises Problem: 429 in step mode past the caps on paused requests
            (:meth:`_take_step_slot`); nothing is logged or run then.
        """
        settings = self.settings  # one consistent snapshot for the whole request
        if settings.step_mode:
            self._take_step_slot()  # 429 past the caps: before anything is logged or run
        try:
            return self._create_charge(settings, key_header, body, action)
        finally:
            if settings.step_mode:
                self._give_step_slot()

    def _create_charge(
        self, settings: Settings, key_header: list[str], body: bytes, action: str
    ) -> tuple[Response, RequestEntry]:
        with self._guard:
            instance = self.instances[next(self._round_robin) % len(self.instances)]
            world = _World(self.gateway, self._mailbox)
        entry = self._begin(action, settings, instance)
        pause = self._pause_for(entry) if settings.step_mode else None

        replays: list[Any] = []  # charge ids the gateway gave back
        # What happens inside the charge call, told once the call (traced as it ends) is
        # told: the gateway's answer, and an e-mail sent right after it; and the outbox
        # message, which is written with the record, so told after "record save".
        after_charge: list[tuple[str, dict[str, Any]]] = []
        with_record: list[Any] = []  # charge ids of the receipts in the outbox

        def trace(step: str, /, **detail: Any) -> None:
            if step == "gateway replay":
                # The gateway's answer arrives when its call returns, and that call is traced
                # as "gateway charge" once it ends: tell the replay after it, as it happened.
                replays.append(detail.get("charge_id"))
                return
            if step == "email send" and detail.get("via") == "inline":
                after_charge.append((step, detail))
                return
            if step == "outbox enqueue":
                with_record.append(detail.get("charge_id"))
                return
            entry.steps.append(Step(step, (time.perf_counter() - entry.started) * 1000, detail))
            index = len(entry.steps) - 1
            if step == "gateway charge":
                for charge_id in replays:
                    at = (time.perf_counter() - entry.started) * 1000
                    entry.steps.append(Step("gateway replay", at, {"charge_id": charge_id}))
                replays.clear()
                for name, told in after_charge:
                    at = (time.perf_counter() - entry.started) * 1000
                    entry.steps.append(Step(name, at, told))
                after_charge.clear()
            if step == "record save":
                for charge_id in with_record:
                    at = (time.perf_counter() - entry.started) * 1000
                    entry.steps.append(Step("outbox enqueue", at, {"charge_id": charge_id}))
                with_record.clear()
            self._touch()
            if self.crash_at in (step, index) or (
                step == "gateway charge" and self._claim_fault("crash_after_charge", world)
            ):
                raise InstanceCrash(step)
            if pause is not None and step in STEP_POINTS:
                self._park(pause, step)

        try:
            response, outcome = self._handle(
                entry, instance, world, settings, trace, key_header, body
            )
        except InstanceCrash as crash:
            # The process died: nothing more runs, and its memory (a per-instance store) is gone.
            entry.steps.append(
                Step("crash", (time.perf_counter() - entry.started) * 1000, {"after": crash.step})
            )
            if settings.store_scope == "per_instance":
                instance.store.clear()
            entry.delivered = False
            response, outcome = no_response(), "crashed"
        except Exception:
            # A bug of ours: the web layer answers 500, and the request still ends here, so
            # the page never shows it in flight for ever.
            self._finish(entry, Response.of_problem(_internal_error()), "invalid")
            raise
        finally:
            if pause is not None:
                with self._guard:
                    # Only its own pause: after a reset, ids start at 1 again, and a
                    # request from before it must not remove the new #1's pause.
                    if self._paused.get(entry.id) is pause:
                        del self._paused[entry.id]
        self._finish(entry, response, outcome)
        return response, entry

    def _handle(
        self,
        entry: RequestEntry,
        instance: Instance,
        world: _World,
        settings: Settings,
        trace: Trace,
        key_header: list[str],
        body: bytes,
    ) -> tuple[Response, Outcome]:
        outcome: Outcome
        entry.raw_key = shown(key_header[0][:64]) if key_header else None  # shown when invalid
        try:
            # Validate first: an invalid request is answered and stores nothing.
            key = entry.key = parse_idempotency_key(key_header)
            if key is None and settings.require_key:
                raise _missing_key()
            charge = entry.charge = parse_charge(body)
            self.current_order = charge.order_id  # every tab's page follows the intent
            trace("validate", ok=True)
            if key is None:
                # No key, no protection: every call charges.
                trace("no key")
                trace("charging")
                started = time.perf_counter()
                response = self._charge(None, charge, settings, world, trace)
                trace("gateway charge", ms=round((time.perf_counter() - started) * 1000, 1))
                outcome = "charged"
            else:
                entry.fingerprint = fingerprint("POST", CHARGES_PATH, charge.as_dict())
                done = execute(
                    instance.store,
                    key,
                    entry.fingerprint,
                    lambda: self._charge(key, charge, settings, world, trace),
                    lock=settings.lock,
                    in_flight=settings.in_flight,  # type: ignore[arg-type]
                    profile=PROFILES[settings.profile],
                    trace=trace,
                    # In step mode the holder may sit paused at every step: wait it out.
                    lock_timeout_s=PAUSE_TIMEOUT_S * 10 if settings.step_mode else 30.0,
                    rerun_safe=settings.recovery == "downstream_key",
                )
                response, outcome = done.response, done.outcome
            if outcome == "charged" and response.status == 402:
                outcome = "declined"
            elif outcome == "charged" and entry.step("gateway replay"):
                outcome = "recovered"  # the gateway returned an earlier charge: no new money
        except Problem as problem:
            response, outcome = Response.of_problem(problem), "invalid"
            trace("validate", ok=False)
        except GatewayError as exc:
            response, outcome = _gateway_failed(exc), "error"
        except OutcomeUnknown:
            response, outcome = _gateway_timed_out(entry), "error"
        except KeyBusy:
            busy = in_use_problem(PROFILES[settings.profile], 1)
            response, outcome = Response.of_problem(busy, ("Retry-After", "1")), "in_use"
        except StoreFull as full:
            # Refused before anything ran, like an invalid request: nothing stored or charged.
            retry = ("Retry-After", str(full.retry_after_s))
            response, outcome = Response.of_problem(_store_full(), retry), "invalid"
        self._relay_outbox(trace)
        if outcome == "charged" and self._claim_fault("lose_response", world):
            entry.delivered = False
            trace("response lost")
        else:
            trace("respond", status=response.status)
        return response, outcome

    def _charge(
        self,
        key: str | None,
        charge: ChargeRequest,
        settings: Settings,
        world: _World,
        trace: Trace,
    ) -> Response:
        """The side effect: charge through the gateway, and build the business response.

        With ``recovery="downstream_key"`` the idempotency key goes on to the gateway, so a
        re-run after a crash gets the first charge back instead of a second one.

        :raises GatewayError: the armed ``gateway_error`` fault, before charging.
        :raises OutcomeUnknown: the armed ``gateway_timeout`` fault, after charging.
        """
        started = time.perf_counter()
        if self._claim_fault("gateway_error", world):
            raise GatewayError(N_("connection reset before the charge reached the gateway"))
        try:
            done = world.gateway.charge(
                order_id=charge.order_id,
                amount=charge.amount,
                currency=charge.currency,
                idempotency_key=key,
                downstream_key=key if settings.recovery == "downstream_key" else None,
                decline=settings.gateway_decline,
            )
        except CardDeclined:
            declined = Problem(
                402,
                "card-declined",
                N_("Card declined"),
                N_("The gateway declined the card. Retrying will not change the answer."),
                code="card_declined",
            )
            return Response.of_problem(declined)
        if done.replayed:
            trace("gateway replay", charge_id=done.id)
        if self._claim_fault("gateway_timeout", world):
            # The money moved; the answer is lost on the way back. The server cannot tell.
            trace("gateway timeout", ms=round((time.perf_counter() - started) * 1000, 1))
            raise OutcomeUnknown(done.id)
        body = {
            "id": done.id,
            "object": "charge",
            "order_id": done.order_id,
            "amount": done.amount,
            "currency": done.currency,
            "status": "succeeded",
            "created": int(done.created_at),
        }
        outbox: tuple[str, ...] = ()
        if settings.email == "inline" or (settings.email == "outbox" and key is None):
            # A second side effect, run on every execution.
            sent = self._send_receipt(world, key, done)
            trace("email send", email=sent.id, via="inline", key=key)
        elif settings.email == "outbox":
            outbox = (canonical_json({"receipt": done.id, "order_id": done.order_id}).decode(),)
            # Written with the record, in the same save: sent once it is committed.
            trace("outbox enqueue", charge_id=done.id)
        return Response(
            201, canonical_json(body), (("Content-Type", "application/json"),), outbox=outbox
        )

    def _send_receipt(self, world: _World, key: str | None, charge: Charge) -> Email:
        with self._guard:
            email = Email(
                f"em_{next(self._emails):04d}", key, charge.order_id, charge.id, self.now()
            )
            world.mailbox.append(email)
        return email

    def _relay_outbox(self, trace: Trace) -> None:
        """Send the committed outbox messages, at most once per key (``email_sent(key)``);
        each e-mail sent is traced (``email send``) on the request that sent it."""
        for store in self._stores():
            for key, message in store.drain_outbox():
                payload = json.loads(message)
                with self._guard:
                    if key in self._email_sent:
                        continue
                    self._email_sent[key] = None
                    if len(self._email_sent) > self._max_records:
                        self._email_sent.popitem(last=False)
                    email = Email(
                        f"em_{next(self._emails):04d}",
                        key,
                        payload["order_id"],
                        payload["receipt"],
                        self.now(),
                        "outbox",
                    )
                    self._mailbox.append(email)
                # Outside the guard: in step mode the request stops here.
                trace("email send", email=email.id, via="outbox", key=key)

    def _claim_fault(self, fault: str, world: _World) -> bool:
        """Fire a one-shot fault: True once if it is armed, and disarm it. A request from
        before a reset (an older world) never fires the fresh lab's fault."""
        with self._guard:
            if self.settings.fault != fault or world.gateway is not self.gateway:
                return False
            self.settings = replace(self.settings, fault="none")
            self.settings_version += 1
        self._touch()
        return True

    # -- step mode -------------------------------------------------------------------

    def _take_step_slot(self) -> None:
        """Count one more request in step mode, within the lab's cap and the shared one.

        :raises Problem: 429 ``too-many-paused`` when the lab has ``max_paused`` requests
            in step mode, or every slot of the shared budget is taken (with
            ``Retry-After``: slots free up as requests are stepped or time out).
        """
        with self._guard:
            if self._stepping >= self._max_paused:
                raise Problem(
                    429, "too-many-paused", N_("Too many paused requests"),
                    Text("This lab has reached its limit of %(count)s requests in step mode. "
                         "Step them or press Release all, then send more.",
                         count=self._max_paused),
                )  # fmt: skip
            if self._paused_slots is not None and not self._paused_slots.acquire(blocking=False):
                raise Problem(
                    429, "too-many-paused", N_("Too many paused requests"),
                    N_("The server holds as many paused requests as it can, across all labs. "
                       "Step or release yours, or try again in a few seconds."),
                    retry_after_s=5,
                )  # fmt: skip
            self._stepping += 1

    def _give_step_slot(self) -> None:
        with self._guard:
            self._stepping -= 1
            if self._paused_slots is not None:
                self._paused_slots.release()

    def _pause_for(self, entry: RequestEntry) -> Pause:
        with self._guard:
            used = {p.label for p in self._paused.values()}
            label = next(lane_label(n) for n in itertools.count() if lane_label(n) not in used)
            pause = self._paused[entry.id] = Pause(entry, label)
        return pause

    def _park(self, pause: Pause, step: str) -> None:
        """Wait at a step point until stepped, or run on after ``PAUSE_TIMEOUT_S``."""
        if pause.to_end:
            return
        with self._guard:
            pause.step, pause.waiting = step, True
            pause.parks += 1
            pause.occurrence = sum(1 for s in pause.entry.steps if s.name == step)
        self._touch()
        stopped = time.perf_counter()
        stepped = pause.go.wait(PAUSE_TIMEOUT_S)
        with self._guard:
            pause.go.clear()
            pause.waiting = False
            # The time the attendee took to press Step is theirs, not the server's: the
            # step it stood at says so, and the timeline shows it as "paused by you".
            paused_ms = round((time.perf_counter() - stopped) * 1000, 1)
            steps = pause.entry.steps
            at = next((n for n in range(len(steps) - 1, -1, -1) if steps[n].name == step), None)
            if at is not None:
                steps[at] = replace(steps[at], detail={**steps[at].detail, PAUSED_MS: paused_ms})
            if not stepped:
                pause.to_end = True
                pause.entry.steps.append(
                    Step("step timeout", (time.perf_counter() - pause.entry.started) * 1000, {})
                )
        self._touch()

    def step(self, request_id: object, *, to_end: object = False) -> int:
        """Let paused request ``request_id`` go on to its next step point (or to its end);
        returns how many step points it had stopped at (for :meth:`settle`).

        :raises Problem: 422 for a malformed id or ``to_end``; 404 when no such request is
            in step mode; 409 when it is not waiting at a step point (it is running, or
            blocked on a lock another request holds).
        """
        if isinstance(request_id, bool) or not isinstance(request_id, int):
            raise Problem(
                422, "invalid-step", N_("Invalid step"),
                N_("request must be a request id (an integer)."),
                errors={"request": "must be an integer"},
            )  # fmt: skip
        if not isinstance(to_end, bool):
            raise Problem(
                422, "invalid-step", N_("Invalid step"), N_("to_end must be true or false."),
                errors={"to_end": "must be true or false"},
            )  # fmt: skip
        with self._guard:
            pause = self._paused.get(request_id)
            if pause is None:
                raise Problem(
                    404, "not-paused", N_("No such paused request"),
                    Text("Request #%(id)s is not in step mode (finished, or never paused).",
                         id=request_id),
                )  # fmt: skip
            if not pause.waiting:
                raise Problem(
                    409, "not-at-a-step", N_("Not at a step"),
                    Text("Request #%(id)s is running or blocked on a lock; step it when it "
                         "stops at its next step.", id=request_id),
                )  # fmt: skip
            pause.to_end = to_end
            pause.waiting = False  # it is on its way: no second step until it stops again
            pause.go.set()
            return pause.parks

    def settle(self, request_id: int, parks: int, timeout_s: float = 1.0) -> None:
        """Wait (at most ``timeout_s``) until a request stepped after ``parks`` stops
        stands at its next step point, is blocked on a lock, or has finished: so the page
        shows where it went."""
        deadline = time.monotonic() + timeout_s
        with self._guard:
            known = self._paused.get(request_id)
        while time.monotonic() < deadline:
            time.sleep(0.005)
            with self._guard:
                pause = self._paused.get(request_id)
                # A request leaves the paused list just before it is logged as finished:
                # wait for that too, so the page shows its answer, not "in flight".
                if pause is None and (known is None or known.entry.finished is not None):
                    return
                if pause is not None and pause.parks > parks:
                    return
            if any(p["request"] == request_id and p["blocked_by"] for p in self.paused()):
                return

    def release_all(self) -> int:
        """Let every paused request run to its end; returns how many there were."""
        with self._guard:
            pauses = list(self._paused.values())
            for pause in pauses:
                pause.to_end = True
                pause.go.set()
        self._touch()
        return len(pauses)

    def paused(self) -> list[dict[str, Any]]:
        """The requests in step mode, oldest first: where each stands, and whom it waits for."""
        with self._guard:
            pauses = [p for p in self._paused.values() if not p.to_end]  # to_end: let go
        holders = {
            p.entry.key: p.label
            for p in pauses
            if p.entry.step("lock acquire") is not None and p.entry.finished is None
        }
        listing = []
        for p in pauses:
            holder = holders.get(p.entry.key)
            blocked = not p.waiting and p.step == "lock wait" and holder not in (None, p.label)
            listing.append(
                {
                    "request": p.entry.id,
                    "label": p.label,
                    "action": p.entry.action,
                    "idempotency_key": p.entry.key,
                    "step": p.step,
                    "occurrence": p.occurrence,
                    "waiting": p.waiting,
                    "blocked_by": holder if blocked else None,
                }
            )
        return listing

    # -- scenarios ------------------------------------------------------------------

    def apply_scenario(self, name: str, *, fixed: bool = False) -> Scenario:
        """Start scenario ``name`` afresh: its settings (with its fix if ``fixed``), an
        empty lab, and the client switches the page should use.

        :raises Problem: 404 for an unknown scenario name.
        """
        scenario = SCENARIOS.get(name)
        if scenario is None:
            raise Problem(
                404,
                "unknown-scenario",
                N_("No such scenario"),
                Text("Scenarios are: %(names)s.", names=", ".join(SCENARIOS)),
            )
        changes = {**scenario.settings, **(scenario.fix if fixed else {})}
        self.update_settings(self._base_settings.patched(changes).as_dict())
        self.reset()
        with self._guard:
            self.scenario, self.fixed = scenario, fixed
            if self.lesson is not None and self.lesson.name != name:
                self.lesson = None
            self.client = {
                **DEFAULT_CLIENT,
                **scenario.client,
                **(scenario.fix_client if fixed else {}),
            }
        self._touch()
        return scenario

    def set_view(self, *, present: bool | None = None, language: str | None = None) -> None:
        """Switch presenter mode or the page's language; every open tab follows."""
        with self._guard:
            if present is not None:
                self.present = present
            if language is not None:
                self.language = language
        self._touch()

    def load_history(
        self,
        settings: Settings,
        entries: list[RequestEntry],
        charges: list[Charge],
        emails: list[Email],
        clock_offset_s: float,
        *,
        scenario: Scenario | None = None,
        fixed: bool = False,
    ) -> None:
        """Become a read-only replay of an exported history (see :mod:`demo.history`)."""
        self.reset()
        with self._guard:
            self.settings = settings
            self.scenario, self.fixed = scenario, fixed
            self._log.extend(entries[-self._max_log :])
            self.gateway.restore(charges)
            self._mailbox.extend(emails)
            # The order the lab was on: the last request's, as a live lab follows it.
            orders = [e.charge.order_id for e in self._log if e.charge is not None]
            orders = orders or [c.order_id for c in charges]
            self.current_order = orders[-1] if orders else self.current_order
            self.clock.offset_s = clock_offset_s
            self.read_only = True
            self.settings_version += 1
        self._touch()

    @property
    def max_log(self) -> int:
        """How many requests the log keeps (a ring buffer)."""
        return self._max_log

    def open_lesson(self, name: str) -> Lesson:
        """Open lesson ``name`` of the path: its scenario afresh, fix off; progress kept.

        :raises Problem: 404 for an unknown lesson.
        """
        lesson = self._lesson_named(name)
        self.apply_scenario(name)
        with self._guard:
            self.lesson = lesson
            self.progress.setdefault(name, Progress())
        self._touch()
        return lesson

    def show_hint(self, name: str) -> int:
        """Reveal the next hint of lesson ``name``; returns how many are shown now.

        :raises Problem: 404 for an unknown lesson.
        """
        lesson = self._lesson_named(name)
        with self._guard:
            progress = self.progress.setdefault(name, Progress())
            progress.hints = min(progress.hints + 1, len(lesson.hints))
        self._touch()
        return progress.hints

    def reset_lesson(self, name: str) -> None:
        """Forget lesson ``name``'s progress (checks met, hints shown), not the others'.

        :raises Problem: 404 for an unknown lesson.
        """
        self._lesson_named(name)
        with self._guard:
            self.progress[name] = Progress()
        if self.lesson is not None and self.lesson.name == name:
            self.open_lesson(name)  # and its scenario afresh
        self._touch()

    def achieved(self) -> set[str]:
        """The names of the lessons this lab has achieved."""
        with self._guard:
            return {
                name for name, progress in self.progress.items() if progress.achieved(LESSONS[name])
            }

    def _lesson_named(self, name: str) -> Lesson:
        lesson = LESSONS.get(name)
        if lesson is None:
            raise Problem(
                404,
                "unknown-lesson",
                N_("No such lesson"),
                Text("Lessons are: %(names)s.", names=", ".join(LESSONS)),
            )
        return lesson

    def leave_scenario(self) -> None:
        """Back to the free lab: default settings and client, results kept."""
        self.update_settings(self._base_settings.as_dict())
        with self._guard:
            self.scenario, self.fixed = None, False
            self.lesson = None
            self.client = dict(DEFAULT_CLIENT)
        self._touch()

    # -- settings, reset, orders -------------------------------------------------

    def update_settings(self, changes: object) -> Settings:
        """Apply a settings patch (see :meth:`Settings.patched`) and return the new settings.

        Changing ``instances`` or ``store_scope`` starts the instances afresh.

        :raises Problem: 422 for unknown settings or bad values; nothing changes then.
        """
        with self._guard:
            old = self.settings
            self.settings = old.patched(changes)
            if old.step_mode and not self.settings.step_mode:
                self.release_all()
            self.gateway.latency_ms = self.settings.gateway_latency_ms
            if (old.instances, old.store_scope) != (
                self.settings.instances,
                self.settings.store_scope,
            ):
                self._build_instances()
            for store in self._stores():
                store.ttl_s = self.settings.ttl_s
            self.settings_version += 1
        self._touch()
        return self.settings

    def reset(self) -> None:
        """Start afresh: new stores, ledger, mailbox and log; keep the settings (an armed
        fault stays armed). Requests still in flight finish in the old ones."""
        self.release_all()
        with self._guard:
            self._paused.clear()  # they finish in the old lab
            self.store = self._new_store()
            self._build_instances()
            self.gateway = FakeGateway(
                latency_ms=self.settings.gateway_latency_ms,
                max_ledger=self._max_ledger,
                clock=self.clock,
            )
            self._mailbox = deque(maxlen=self._max_ledger)
            self._email_sent = OrderedDict()
            self._log = deque(maxlen=self._max_log)
            self._ids = itertools.count(1)
            self._emails = itertools.count(1)
            self._round_robin = itertools.count()
            self.clock.offset_s = 0.0
            self._next_order = 42
            self.current_order = "42"
        self._touch()

    def new_order_id(self, after: str = "") -> str:
        """Move the page's order on to one unused in this lab (after ``after`` if it is a
        number): a new intent. Every tab of the lab then shows it."""
        with self._guard:
            used = {e.charge.order_id for e in self._log if e.charge} | {after}
            if re.fullmatch(r"[0-9]{1,15}", after):
                self._next_order = max(self._next_order, int(after) + 1)
            while str(self._next_order) in used:
                self._next_order += 1
            self.current_order = str(self._next_order)
        self._touch()
        return self.current_order

    def latest_charge(self) -> ChargeRequest | None:
        """The body of the most recent valid charge request, or ``None``."""
        with self._guard:
            return next((e.charge for e in reversed(self._log) if e.charge), None)

    # -- reading ---------------------------------------------------------------

    def is_blank(self) -> bool:
        """True while the lab holds nothing a fresh lab would not: no request, charge,
        e-mail, lesson progress, scenario, changed setting or view choice. Dropping a
        blank lab loses nothing, so the registry evicts blank labs first."""
        with self._guard:
            return (
                not self._log
                and not self.gateway.ledger()
                and not self._mailbox
                and not self.progress
                and self.scenario is None
                and self.lesson is None
                and self.settings == self._base_settings
                and not self.present
                and self.language is None
                and self.current_order == "42"
                and self.client == DEFAULT_CLIENT
                and not self.clock.offset_s
                and not self.read_only
            )

    def is_current(self, entry: RequestEntry) -> bool:
        """False for a request that began before the last reset (it finished in the old lab)."""
        with self._guard:
            return any(e is entry for e in self._log)

    def requests(self) -> list[RequestEntry]:
        """The logged requests, oldest first (a ring buffer of ``max_log``)."""
        with self._guard:
            return list(self._log)

    def emails(self) -> list[Email]:
        """The receipt e-mails sent, oldest first (a ring buffer)."""
        with self._guard:
            return list(self._mailbox)

    def outbox(self) -> list[tuple[str, str]]:
        """The outbox messages committed with a record and not yet relayed, as
        ``(key, message)`` pairs; empty between requests unless an instance died first."""
        return [m for store in self._stores() for m in store.pending_outbox()]

    def records(self) -> list[tuple[str, Record]]:
        """Every live record as ``(store name, record)``: ``"shared"`` or an instance's name."""
        if self.settings.store_scope == "shared":
            return [("shared", r) for r in self.store.records()]
        return [(i.name, r) for i in self.instances for r in i.store.records()]

    def clock_offset_s(self) -> float:
        """How far :meth:`advance` has moved the lab's clock, in seconds."""
        return self.clock.offset_s

    def state(self) -> dict[str, Any]:
        """Everything the lab holds, as JSON-ready values (``GET /api/state``)."""
        now = self.now()
        charges = self.gateway.ledger()
        summary = summarise(charges)
        return {
            "lab": self.id,
            "settings": self.settings.as_dict(),
            "clock": {"now": now, "offset_s": self.clock.offset_s},
            "charges": [
                {
                    **c.as_dict(),
                    "created": int(c.created_at),
                    "double_charge": c.order_id in summary.doubled,
                }
                for c in charges
            ],
            "summary": {
                "charged": summary.charged,
                "intended": summary.intended,
                "emails": len(self._mailbox),
            },
            "emails": [e.as_dict() for e in self.emails()],
            "records": [
                {
                    "store": where,
                    "idempotency_key": r.key,
                    "fingerprint": r.fingerprint,
                    "state": r.state.value,
                    "status": r.response.status if r.response else None,
                    "created": r.created_at,
                    "expires_in_s": round(r.expires_at - now, 1),
                }
                for where, r in self.records()
            ],
            "requests": [e.as_dict() for e in self.requests()],
            "paused": self.paused(),
            "read_only": self.read_only,
            "lesson": self.lesson.name if self.lesson else None,
            "lessons": {
                name: {
                    "achieved": progress.achieved(LESSONS[name]),
                    "met": sorted(progress.met),
                    "hints_shown": progress.hints,
                }
                for name, progress in sorted(self.progress.items())
            },
        }

    # -- internals ---------------------------------------------------------------

    def _new_store(self) -> IdempotencyStore:
        return IdempotencyStore(
            ttl_s=self.settings.ttl_s,
            max_records=self._max_records,
            in_progress_s=IN_PROGRESS_S,
            clock=self.clock,
        )

    def _build_instances(self) -> None:
        shared = self.settings.store_scope == "shared"
        self.instances = tuple(
            Instance(f"i{n}", self.store if shared else self._new_store())
            for n in range(1, self.settings.instances + 1)
        )

    def _stores(self) -> list[IdempotencyStore]:
        return [self.store, *(i.store for i in self.instances if i.store is not self.store)]

    def _begin(self, action: str, settings: Settings, instance: Instance) -> RequestEntry:
        with self._guard:
            if action in ("Double-submit A", "Double-submit B"):
                # The two requests of a Double-submit race to the server: the first to
                # arrive is A (and gets the lower id), so lanes always read #n A, #n+1 B.
                # An A left alone (the client guard dropped its B) pairs with nothing later.
                last = self._log[-1] if self._log else None
                paired = (
                    last is not None
                    and last.action == "Double-submit A"
                    and time.perf_counter() - last.started < PAIR_WINDOW_S
                )
                action = "Double-submit B" if paired else "Double-submit A"
            entry = RequestEntry(
                id=next(self._ids),
                action=shown(action, 40),
                started=time.perf_counter(),
                at=self.now(),
                instance=instance.name,
                lock=settings.lock,
                settings=settings,
            )
            self._log.append(entry)
        self._touch()
        return entry

    def _finish(self, entry: RequestEntry, response: Response, outcome: Outcome) -> None:
        entry.outcome = outcome
        if entry.delivered:
            entry.status = response.status
        body = json.loads(response.body) if response.body else {}
        if response.status < 300:
            entry.charge_id = body.get("id")
        elif outcome != "crashed":
            title, detail = body.get("title"), body.get("detail")
            entry.problem = shown(title) if isinstance(title, str) else None
            entry.problem_detail = shown(detail) if isinstance(detail, str) else None
        entry.finished = time.perf_counter()
        self._observe()
        self._touch()

    def _observe(self) -> None:
        """Run the open lesson's checks on the lab's real state (see :mod:`demo.lessons`)."""
        lesson = self.lesson
        if lesson is None:
            return
        with self._guard:
            ev = evidence(list(self._log), self.gateway.ledger(), list(self._mailbox))
            progress = self.progress.setdefault(lesson.name, Progress())
            observe(lesson, progress, ev, time.perf_counter())

    def _touch(self) -> None:
        self.version = next(self._changes)


def lane_label(n: int) -> str:
    """The label of step-mode lane ``n`` (0-based): A-Z, then AA, AB… like spreadsheet
    columns, so every paused request has a label of its own whatever their number."""
    label = ""
    n += 1
    while n:
        n, digit = divmod(n - 1, 26)
        label = chr(ord("A") + digit) + label
    return label


def _gateway_failed(exc: GatewayError) -> Response:
    problem = Problem(
        502,
        "gateway-error",
        N_("Payment gateway failed"),
        Text(
            "The gateway failed before charging (%(why)s). "
            "The key was released: retry with the same key.",
            why=Text(str(exc)),  # the reason was marked where it was raised
        ),
    )
    return Response.of_problem(problem)


def _gateway_timed_out(entry: RequestEntry) -> Response:
    """504: the gateway may have charged. What a retry does depends on the key's fate."""
    if entry.key is None:
        detail = N_(
            "The gateway did not answer in time, after the charge had left: it may have "
            "charged. No key was sent, so nothing stops a retry from charging again."
        )
    else:
        detail = _timed_out_with_key(entry.step("release") is not None)
    return Response.of_problem(
        Problem(504, "gateway-timeout", N_("Payment gateway timed out"), detail)
    )


def _timed_out_with_key(released: bool) -> str:
    return (
        N_(
            "The gateway did not answer in time, after the charge had left: it may have "
            "charged. The key went on to the gateway, so it was released: a retry with the "
            "same key gets the first charge back, never a second one."
        )
        if released
        else N_(
            "The gateway did not answer in time, after the charge had left: it may have "
            "charged. The key is kept, marked in doubt: a retry with it charges nothing until "
            "the outcome is known."
        )
    )


def _store_full() -> Problem:
    return Problem(
        503,
        "store-full",
        N_("Idempotency store full"),
        N_(
            "Every record of this lab's store is a request still in progress. Retry with the "
            "same key once the oldest one's deadline has passed."
        ),
    )


def _internal_error() -> Problem:
    return Problem(
        500,
        "internal-error",
        N_("Internal error"),
        N_("Something went wrong in the lab itself."),
    )


def _missing_key() -> Problem:
    return Problem(
        400,
        "missing-idempotency-key",
        N_("Idempotency-Key required"),
        N_(
            "This endpoint requires an Idempotency-Key header (IETF draft: 400 when it is missing)."
        ),
    )


def no_response() -> Response:
    """What a server without a socket to close sends instead of no response at all."""
    problem = Problem(
        502,
        "no-response",
        N_("No response"),
        N_("The connection closed before any response: the client cannot tell whether it charged."),
    )
    return Response.of_problem(problem)


# ---------------------------------------------------------------------------
# The registry of labs
# ---------------------------------------------------------------------------


@dataclass
class _Slot:
    """A lab in the registry, with what eviction needs to know about it."""

    lab: Lab
    source: str
    """Who created it: the client address (see :class:`LabRegistry`)."""
    created: float
    used: float
    proven: bool = False
    """Used again at least :data:`PROVEN_AFTER_S` after its creation: a person's page."""


PROVEN_AFTER_S = 1.0
"""A lab used again this long after its creation is a person's (an open page polls every
2 s); a flood writes once to each id, so its labs never are."""


class LabRegistry:
    """Every lab of the process, bounded, where an attendee's lab is never the victim.

    Only a write makes a lab (:meth:`get`); reading an id that has none (:meth:`find`,
    :meth:`view`) never takes a slot. A lab lives until it has been idle for ``idle_s``.
    When ``max_labs`` labs exist and a new one is needed, the victim is, in this order:

    1. a lab idle for ``idle_s`` (expired);
    2. the least recently used *blank* lab (:meth:`Lab.is_blank`): nothing is lost;
    3. the least recently used *unproven* lab older than ``fresh_s``: one that no request
       used again :data:`PROVEN_AFTER_S` or more after it was made (a flood writes once
       per id; a person's page polls every 2 s, so their lab is proven within seconds);
    4. when the source (client address) holding the most labs holds more than its fair
       share (``max_labs`` / the number of sources, the newcomer included, rounded up)
       and is not the newcomer's own, that source's least recently used lab, unproven
       ones first;

    else the new lab is refused with 503 and ``Retry-After`` (when the next victim of
    rule 3 or 1 will exist). So a flood from one client only ever replaces its own labs
    once they are ``fresh_s`` old, never another source's lab with data used within
    ``idle_s``; a newcomer from another address gets a slot at once, and a new lab is
    never dropped in its first ``fresh_s`` by its own address's flood. Replays of
    exported histories have their own quota (``max_replays``, least recently used
    replay dropped) and never take a slot.

    :param max_labs: attendees' labs at once: a blank lab is about 7 KiB, one full to every
        cap (1,000 records, 200 requests, 500 charges) about 1.6 MiB, so 300 labs stay
        under 0.5 GiB even so.
    :param idle_s: a lab unused for this many seconds expires (2 h by default).
    :param fresh_s: how long a new lab is spared by rule 3 before its page proves it, s.
    :param max_replays: replay labs at once.
    :param make_lab: builds a new lab from its id.
    :param clock: seconds, ``time.monotonic`` by default (injected by tests).
    """

    def __init__(
        self,
        *,
        max_labs: int = 300,
        idle_s: float = 2 * 3600,
        fresh_s: float = 5.0,
        max_replays: int = 20,
        make_lab: Callable[[str], Lab] = Lab,
        clock: Clock = time.monotonic,
    ) -> None:
        self.max_labs = max_labs
        self.idle_s = idle_s
        self.fresh_s = fresh_s
        self.max_replays = max_replays
        self._make_lab = make_lab
        self._clock = clock
        # Least recently used first: a use moves a lab to the end.
        self._labs: OrderedDict[str, _Slot] = OrderedDict()
        self._replays: OrderedDict[str, _Slot] = OrderedDict()
        self._guard = threading.Lock()

    @staticmethod
    def new_id() -> str:
        """A fresh, unguessable lab id (16 random bytes, URL-safe)."""
        return secrets.token_urlsafe(16)

    @staticmethod
    def valid_id(lab_id: str) -> bool:
        """True for 1-64 characters of ``[A-Za-z0-9_-]``."""
        return LAB_ID.fullmatch(lab_id) is not None

    def get(self, lab_id: str, *, source: str = "") -> Lab:
        """The lab with this id, created if needed (for a write); marks it used.

        :param source: who asks (the client address), for the fair share of rule 4.
        :raises Problem: 404 when the id is not 1-64 characters of ``[A-Za-z0-9_-]``;
            503 with ``Retry-After`` when a new lab is needed and no slot may be freed.
        """
        self._check(lab_id)
        now = self._clock()
        with self._guard:
            self._expire(now)
            found = self._use(lab_id, now)
            if found is not None:
                return found
            if len(self._labs) >= self.max_labs:
                victim = self._victim(now, source)
                if victim is None:
                    raise _too_many_labs(self._retry_after(now))
                del self._labs[victim]
            lab = self._make_lab(lab_id)
            self._labs[lab_id] = _Slot(lab, source, now, now)
            return lab

    def find(self, lab_id: str) -> Lab | None:
        """The lab with this id if it exists (marked used), else ``None``: never creates.

        :raises Problem: 404 for a bad id.
        """
        self._check(lab_id)
        now = self._clock()
        with self._guard:
            self._expire(now)
            return self._use(lab_id, now)

    def view(self, lab_id: str) -> Lab:
        """What a read shows: the lab if it exists (marked used), else a blank lab that is
        not kept, so a GET of any id shows an empty lab without taking a slot.

        :raises Problem: 404 for a bad id.
        """
        return self.find(lab_id) or self._make_lab(lab_id)

    def create_replay(self) -> Lab:
        """A new lab under a fresh id in the replays' own quota: past ``max_replays`` the
        least recently used replay is dropped; attendees' labs are never touched."""
        now = self._clock()
        lab_id = self.new_id()
        with self._guard:
            self._expire(now)
            while len(self._replays) >= self.max_replays:
                self._replays.popitem(last=False)
            lab = self._make_lab(lab_id)
            self._replays[lab_id] = _Slot(lab, "", now, now)
            return lab

    def active(self, within_s: float, *, in_use: bool = False) -> list[Lab]:
        """The labs used in the last ``within_s`` seconds (an open page polls, so it counts).

        :param in_use: only labs a person uses: proven (used again :data:`PROVEN_AFTER_S`
            after creation, as an open page does) and not blank, so the labs a flood writes
            once, or leaves empty, are not counted (the instructor's "active labs").
        """
        now = self._clock()
        with self._guard:
            slots = [*self._labs.values(), *self._replays.values()]
            recent = [s for s in slots if now - s.used < within_s]
            if in_use:
                recent = [s for s in recent if s.proven]
        labs = [s.lab for s in recent]
        # is_blank takes the lab's own lock: asked outside the registry's guard.
        return [lab for lab in labs if not lab.is_blank()] if in_use else labs

    def peek(self, lab_id: str) -> Lab | None:
        """The lab with this id if it exists; never creates one or marks it used."""
        with self._guard:
            found = self._labs.get(lab_id) or self._replays.get(lab_id)
        return found.lab if found else None

    def __len__(self) -> int:
        with self._guard:
            self._expire(self._clock())
            return len(self._labs) + len(self._replays)

    def _check(self, lab_id: str) -> None:
        if not self.valid_id(lab_id):
            raise Problem(
                404,
                "bad-lab-id",
                N_("No such lab"),
                N_("A lab id is 1-64 characters of letters, digits, '-' and '_'."),
            )

    def _use(self, lab_id: str, now: float) -> Lab | None:
        for pool in (self._labs, self._replays):
            slot = pool.get(lab_id)
            if slot is not None:
                slot.used = now
                slot.proven = slot.proven or now - slot.created >= PROVEN_AFTER_S
                pool.move_to_end(lab_id)
                return slot.lab
        return None

    def _victim(self, now: float, source: str) -> str | None:
        """The id of the lab to drop for a new one (rules 2-4 above), or ``None``."""
        slots = self._labs
        for lab_id, slot in slots.items():
            if slot.lab.is_blank():
                return lab_id
        for lab_id, slot in slots.items():
            if not slot.proven and now - slot.created >= self.fresh_s:
                return lab_id
        held: dict[str, int] = {source: 0}
        for slot in slots.values():
            held[slot.source] = held.get(slot.source, 0) + 1
        greedy = max(held, key=lambda s: held[s])
        if greedy == source or held[greedy] <= math.ceil(self.max_labs / len(held)):
            return None
        own = [(lab_id, slot) for lab_id, slot in slots.items() if slot.source == greedy]
        return next((i for i, s in own if not s.proven), own[0][0])

    def _retry_after(self, now: float) -> int:
        """Seconds until rule 3 or expiry will free a slot, at least 1."""
        young = [s.created for s in self._labs.values() if not s.proven]
        if young:
            wait = min(young) + self.fresh_s - now
        else:
            wait = min(s.used for s in self._labs.values()) + self.idle_s - now
        return max(1, math.ceil(wait))

    def _expire(self, now: float) -> None:
        # Least recently used first, so stop at the first lab still in use.
        for pool in (self._labs, self._replays):
            while pool:
                slot = next(iter(pool.values()))
                if now - slot.used < self.idle_s:
                    break
                pool.popitem(last=False)


def _too_many_labs(retry_after_s: int) -> Problem:
    return Problem(
        503,
        "too-many-labs",
        N_("Too many labs"),
        Text(
            "Every lab slot holds a lab in use. Try again in %(seconds)s s.",
            seconds=retry_after_s,
        ),
        retry_after_s=retry_after_s,
    )
