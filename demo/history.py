"""A lab's history as JSON: export it, and re-open it as a read-only replay lab.

An instructor prepares a demo at home, downloads its history, and projects the replay
in the room: the same timeline, ledger and explanations, with nothing left to run.
Times are relative (ms after the first request), so a replay draws the same timeline.

A lab's own history always opens again, and exports again byte for byte the same: every
text the lab logs is printable (:func:`demo.engine.text.shown`), every step detail follows the
one table the lab writes them from (:data:`demo.payments.steps.STEPS`), and a request's start and
duration are exported as whole microseconds, which survive the trip exactly.

Plain Python, no web framework.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard, cast, get_args

from .engine.clock import MAX_OFFSET_S
from .engine.problems import Problem, canonical_json
from .engine.text import N_, Text
from .engine.timeline import Step
from .payments.charges import ChargeRequest, parse_charge
from .payments.gateway import Charge
from .payments.requests import Email, Outcome, RequestEntry
from .payments.scenarios import SCENARIOS, Scenario
from .payments.settings import Settings
from .payments.steps import STEPS
from .workspace import Workspace

KEY = re.compile(r"[\x20-\x7e]{1,255}")

FORMAT = "idempotency-demo/history"
VERSION = 1
MAX_BYTES = 1024 * 1024
"""An uploaded history may be this large (200 requests with their steps fit easily)."""

MAX_STEPS = 40
OUTCOMES = frozenset(get_args(Outcome))


def export(lab: Workspace) -> dict[str, Any]:
    """The lab's history: settings, scenario, requests with their steps, charges, e-mails.

    Shape: ``{"format", "version", "settings", "scenario", "fixed", "clock_offset_s",
    "requests": [{..., "started_ms", "duration_ms", "steps": [{"step", "at_ms", ...}]}],
    "charges": [...], "emails": [...]}``. ``started_ms`` (after the earliest request) and
    ``duration_ms`` are whole microseconds written in ms (``12.345``): a float computed
    again from them on import rounds back to the same microsecond, so the round trip is
    exact. A step's ``at_ms`` is kept unrounded, so the replay orders every step as the
    original did.
    """
    entries = [e for e in lab.payments.requests() if e.finished is not None]
    # The earliest start, not the first logged: two concurrent requests may be logged in
    # the other order, and no request may start before the origin.
    origin = min((e.started for e in entries), default=0.0)
    return {
        "format": FORMAT,
        "version": VERSION,
        "settings": lab.payments.settings.as_dict(),
        "scenario": lab.payments.scenario.name if lab.payments.scenario else None,
        "fixed": lab.payments.fixed,
        "clock_offset_s": lab.clock_offset_s(),
        "requests": [
            {
                **e.as_dict(),
                "started_ms": _whole_us(e.started - origin),
                "duration_ms": _whole_us(cast(float, e.finished) - e.started),
                "steps": [{"step": s.name, "at_ms": s.at_ms, **s.detail} for s in e.steps],
                "at": e.at,
                "problem_detail": e.problem_detail,
                "raw_key": e.raw_key,
                "settings": (e.settings or lab.payments.settings).as_dict(),
            }
            for e in entries
        ],
        "charges": [c.as_dict() for c in lab.payments.gateway.ledger()],
        "emails": [m.as_dict() for m in lab.payments.emails()],
    }


def _whole_us(seconds: float) -> float:
    """``seconds`` in ms, rounded to a whole microsecond."""
    return round(seconds * 1_000_000) / 1000


@dataclass(frozen=True)
class History:
    """A validated history, ready to become a replay lab (:meth:`load_into`)."""

    settings: Settings
    entries: list[RequestEntry]
    charges: list[Charge]
    emails: list[Email]
    clock_offset_s: float
    scenario: Scenario | None = None
    fixed: bool = False

    def load_into(self, lab: Workspace) -> None:
        """Make the fresh ``lab`` a read-only replay of this history."""
        lab.load_history(
            self.settings,
            self.entries,
            self.charges,
            self.emails,
            self.clock_offset_s,
            scenario=self.scenario,
            fixed=self.fixed,
        )


def read(data: object, *, max_requests: int = 200) -> History:
    """Validate an exported history (parsed JSON) before any lab is made of it.

    Every field gets the type the pages expect: known step names, each with the detail
    members the lab writes for it (``waited_ms`` a number of ms, ``hit`` true or false,
    ...) and no more often than one request can pass it; outcomes the lab knows; printable
    texts of bounded length; numbers where numbers belong.

    :raises Problem: 422 naming the first thing wrong when ``data`` is not a history
        this version wrote, or is out of the lab's bounds.
    """
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise _bad(
            "format", Text('This is not a lab history (format "%(format)s").', format=FORMAT)
        )
    version = data.get("version")
    if type(version) is not int or version != VERSION:
        raise _bad(
            "version", Text("Only version %(version)s histories open here.", version=VERSION)
        )
    settings = _settings(data.get("settings"), "settings")
    requests = _list(data, "requests", max_requests)
    charges = [_charge(c, f"charges[{i}]") for i, c in enumerate(_list(data, "charges", 500))]
    emails = [_email(m, f"emails[{i}]") for i, m in enumerate(_list(data, "emails", 500))]
    now = time.perf_counter()
    shared = _Shared()
    entries = [_entry(r, f"requests[{i}]", now, settings, shared) for i, r in enumerate(requests)]
    if len({e.id for e in entries}) < len(entries):
        raise _bad("requests", N_("two requests have the same id"))
    if len({c.id for c in charges}) < len(charges):  # one charge listed twice
        raise _bad("charges", N_("two charges have the same id"))
    offset = data.get("clock_offset_s", 0)
    if not _number(offset) or not 0 <= offset <= MAX_OFFSET_S:
        raise _bad("clock_offset_s", N_("must be a number of seconds"))
    name = data.get("scenario")
    if name is not None and (not isinstance(name, str) or name not in SCENARIOS):
        raise _bad("scenario", N_("unknown scenario"))
    fixed = data.get("fixed", False)
    if not isinstance(fixed, bool):
        raise _bad("fixed", N_("must be true or false"))
    scenario = SCENARIOS[name] if name is not None else None
    return History(settings, entries, charges, emails, float(offset), scenario, fixed)


class _Shared:
    """Equal settings and equal step details of an import, kept once: a history of 200
    requests holds a few thousand steps, mostly alike."""

    def __init__(self) -> None:
        self.settings: dict[Settings, Settings] = {}
        self.details: dict[tuple[tuple[str, type, object], ...], Mapping[str, Any]] = {}

    def setting(self, settings: Settings) -> Settings:
        return self.settings.setdefault(settings, settings)

    def detail(self, detail: dict[str, Any]) -> Mapping[str, Any]:
        # The type is part of the key: 0 and 0.0 (and False) are equal, yet export differently.
        key = tuple((k, type(v), v) for k, v in detail.items())
        return self.details.setdefault(key, detail)


# -- validation ------------------------------------------------------------------


def _bad(where: str, why: str | Text) -> Problem:
    return Problem(
        422,
        "invalid-history",
        N_("Not a lab history"),
        Text(
            "The file could not be opened: %(where)s: %(why)s",
            where=where,
            why=why if isinstance(why, Text) else Text(why),
        ),
        errors={where: str(why)},
    )


def _number(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _list(data: Mapping[str, Any], name: str, limit: int) -> list[Any]:
    value = data.get(name, [])
    if not isinstance(value, list):
        raise _bad(name, N_("must be a list"))
    if len(value) > limit:
        raise _bad(name, Text("at most %(limit)s entries", limit=limit))
    return value


def _text(value: object, limit: int = 300) -> TypeGuard[str]:
    """A string as the lab logs it (:func:`demo.engine.text.shown`): printable (no control
    characters, no lone surrogates), at most ``limit`` characters."""
    return isinstance(value, str) and len(value) <= limit and value.isprintable()


def _str(
    item: Mapping[str, Any], name: str, where: str, *, optional: bool = False, limit: int = 300
) -> Any:
    value = item.get(name)
    if value is None and optional:
        return None
    if not _text(value, limit):
        raise _bad(
            f"{where}.{name}",
            Text("must be a printable string of at most %(limit)s characters", limit=limit),
        )
    return value


def _key(item: Mapping[str, Any], name: str, where: str) -> str | None:
    """An idempotency key as the lab keeps it: 1-255 printable ASCII characters."""
    value = item.get(name)
    if value is not None and not (isinstance(value, str) and KEY.fullmatch(value)):
        raise _bad(f"{where}.{name}", N_("must be 1-255 printable ASCII characters"))
    return value


def _settings(value: object, where: str) -> Settings:
    try:
        return Settings().patched(value)
    except Problem as problem:
        raise _bad(where, problem.detail) from None


def _charge(item: object, where: str) -> Charge:
    if not isinstance(item, Mapping):
        raise _bad(where, N_("must be an object"))
    created = item.get("created")
    if not (_number(created) and 0 <= created <= 10**11):
        raise _bad(f"{where}.created", N_("must be a number of seconds"))
    body = _charge_body(
        {k: item.get(k) for k in ("order_id", "amount", "currency")}, f"{where}.amount"
    )
    return Charge(
        id=_str(item, "id", where),
        idempotency_key=_key(item, "idempotency_key", where),
        order_id=body.order_id,
        amount=body.amount,
        currency=body.currency,
        created_at=float(created),
    )


def _charge_body(body: object, where: str) -> ChargeRequest:
    """The same rules as ``POST /api/charges``: a positive integer amount, and so on."""
    if not isinstance(body, Mapping) or not all(
        v is None or isinstance(v, (str, int, float)) for v in body.values()
    ):
        raise _bad(where, N_("must be a valid charge body"))
    try:
        return parse_charge(canonical_json(body))
    except (Problem, TypeError, ValueError):
        raise _bad(where, N_("must be a valid charge body")) from None


def _email(item: object, where: str) -> Email:
    if not isinstance(item, Mapping):
        raise _bad(where, N_("must be an object"))
    return Email(
        _str(item, "id", where),
        _key(item, "idempotency_key", where),
        _str(item, "order_id", where),
        _str(item, "charge_id", where),
        _sent_at(item, where),
        "outbox" if item.get("via") == "outbox" else "inline",
    )


def _sent_at(item: Mapping[str, Any], where: str) -> float:
    """``sent_at``: optional (an older history has none), else a number of seconds."""
    value = item.get("sent_at", 0.0)
    if not _number(value):
        raise _bad(f"{where}.sent_at", N_("must be a number"))
    return float(value)


def _entry(
    item: object, where: str, now: float, default: Settings, shared: _Shared
) -> RequestEntry:
    if not isinstance(item, Mapping):
        raise _bad(where, N_("must be an object"))
    started_ms, duration_ms, at = (item.get(n) for n in ("started_ms", "duration_ms", "at"))
    if not (_number(started_ms) and 0 <= started_ms <= 10**9):
        raise _bad(f"{where}.started_ms", N_("must be a number of ms"))
    if duration_ms is not None and not (_number(duration_ms) and 0 <= duration_ms <= 10**9):
        raise _bad(f"{where}.duration_ms", N_("must be a number of ms"))
    if at is not None and not (_number(at) and 0 <= at <= 10**11):
        raise _bad(f"{where}.at", N_("must be a number of seconds"))
    outcome, status = item.get("outcome"), item.get("status")
    # An export holds finished requests only, never one "in_flight".
    if not isinstance(outcome, str) or outcome not in OUTCOMES or outcome == "in_flight":
        raise _bad(f"{where}.outcome", N_("unknown outcome"))
    if status is not None and (type(status) is not int or not 100 <= status <= 599):
        raise _bad(f"{where}.status", N_("must be an HTTP status code"))
    for flag in ("lock", "delivered"):
        if not isinstance(item.get(flag, True), bool):
            raise _bad(f"{where}.{flag}", N_("must be true or false"))
    body = item.get("body")
    charge: ChargeRequest | None = None
    if body is not None:
        charge = _charge_body(body, f"{where}.body")
    steps = item.get("steps", [])
    if not isinstance(steps, list) or len(steps) > MAX_STEPS:
        raise _bad(f"{where}.steps", Text("must be a list of at most %(n)s steps", n=MAX_STEPS))
    passed: dict[str, int] = {}
    settings = _settings(item["settings"], f"{where}.settings") if "settings" in item else default
    start = now - 3600 + float(started_ms) / 1000  # in the past: every lane is finished
    return RequestEntry(
        id=_int(item.get("id"), f"{where}.id"),
        action=_str(item, "action", where, limit=40),
        started=start,
        at=float(at) if at is not None else 0.0,
        instance=_str(item, "instance", where, limit=8),
        key=_key(item, "idempotency_key", where),
        charge=charge,
        fingerprint=_str(item, "fingerprint", where, optional=True),
        steps=[_step(s, f"{where}.steps[{i}]", passed, shared) for i, s in enumerate(steps)],
        finished=start + float(duration_ms or 0) / 1000,
        status=status,
        outcome=cast(Outcome, outcome),
        charge_id=_str(item, "charge_id", where, optional=True),
        problem=_str(item, "problem", where, optional=True),
        problem_detail=_str(item, "problem_detail", where, optional=True),
        raw_key=_str(item, "raw_key", where, optional=True),
        lock=item.get("lock", True),
        delivered=item.get("delivered", True),
        settings=shared.setting(settings),
    )


def _int(value: object, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 10**9:
        raise _bad(where, N_("must be a positive integer"))
    return value


def _step(item: object, where: str, passed: dict[str, int], shared: _Shared) -> Step:
    """One step as the lab writes it: a known name, at most as often as one request can
    pass it, and only the detail members :data:`demo.payments.steps.STEPS` gives it, each
    of its type."""
    if not isinstance(item, Mapping):
        raise _bad(where, N_("must be an object"))
    name, at_ms = item.get("step"), item.get("at_ms")
    kind = STEPS.get(name) if isinstance(name, str) else None
    if not isinstance(name, str) or kind is None or not (_number(at_ms) and 0 <= at_ms <= 10**9):
        raise _bad(where, N_("must name a known step and its at_ms"))
    passed[name] = passed.get(name, 0) + 1
    if passed[name] > kind.at_most:
        raise _bad(where, Text("a request passes %(step)s at most %(n)s times", step=name,
                               n=kind.at_most))  # fmt: skip
    detail: dict[str, Any] = {}
    for member, value in item.items():
        if member in ("step", "at_ms"):
            continue
        rule = kind.detail.get(member)
        if rule is None:
            raise _bad(where, Text("%(step)s has no detail %(member)s", step=name,
                                   member=repr(member)[:40]))  # fmt: skip
        if not rule.valid(value):
            raise _bad(f"{where}.{member}", rule.what)
        detail[member] = value
    return Step(name, float(at_ms), shared.detail(detail))
