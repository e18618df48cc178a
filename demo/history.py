"""A lab's history as JSON: export it, and re-open it as a read-only replay lab.

An instructor prepares a demo at home, downloads its history, and projects the replay
in the room: the same timeline, ledger and explanations, with nothing left to run.
Times are relative (ms after the first request), so a replay draws the same timeline.

Plain Python, no web framework.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard, cast, get_args

from .charges import ChargeRequest, parse_charge
from .gateway import Charge
from .lab import STEP_NAMES, Email, Lab, Outcome, RequestEntry, Settings, Step
from .problems import Problem, canonical_json
from .text import N_, Text

KEY = re.compile(r"[\x20-\x7e]{1,255}")

FORMAT = "idempotency-demo/history"
VERSION = 1
MAX_BYTES = 1024 * 1024
"""An uploaded history may be this large (200 requests with their steps fit easily)."""

MAX_STEPS = 40
OUTCOMES = frozenset(get_args(Outcome))


def export(lab: Lab) -> dict[str, Any]:
    """The lab's history: settings, scenario, requests with their steps, charges, e-mails.

    Shape: ``{"format", "version", "settings", "scenario", "fixed", "clock_offset_s",
    "requests": [{..., "started_ms", "duration_ms", "steps": [{"step", "at_ms", ...}]}],
    "charges": [...], "emails": [...]}``; times in ms after the first request.
    """
    entries = [e for e in lab.requests() if e.finished is not None]
    origin = entries[0].started if entries else 0.0
    return {
        "format": FORMAT,
        "version": VERSION,
        "settings": lab.settings.as_dict(),
        "scenario": lab.scenario.name if lab.scenario else None,
        "fixed": lab.fixed,
        "clock_offset_s": lab.clock_offset_s(),
        "requests": [
            {
                **e.as_dict(),
                # Unrounded, so the replay orders and places every step as the original.
                "started_ms": (e.started - origin) * 1000,
                "duration_ms": e.duration_ms,
                "steps": [{"step": s.name, "at_ms": s.at_ms, **s.detail} for s in e.steps],
                "at": e.at,
                "problem_detail": e.problem_detail,
                "raw_key": e.raw_key,
                "settings": (e.settings or lab.settings).as_dict(),
            }
            for e in entries
        ],
        "charges": [c.as_dict() for c in lab.gateway.ledger()],
        "emails": [m.as_dict() for m in lab.emails()],
    }


@dataclass(frozen=True)
class History:
    """A validated history, ready to become a replay lab (:meth:`load_into`)."""

    settings: Settings
    entries: list[RequestEntry]
    charges: list[Charge]
    emails: list[Email]
    clock_offset_s: float

    def load_into(self, lab: Lab) -> None:
        """Make the fresh ``lab`` a read-only replay of this history."""
        lab.load_history(
            self.settings, self.entries, self.charges, self.emails, self.clock_offset_s
        )


def read(data: object, *, max_requests: int = 200) -> History:
    """Validate an exported history (parsed JSON) before any lab is made of it.

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
    entries = [_entry(r, f"requests[{i}]", now, settings) for i, r in enumerate(requests)]
    if len({e.id for e in entries}) < len(entries):
        raise _bad("requests", N_("two requests have the same id"))
    offset = data.get("clock_offset_s", 0)
    if not _number(offset) or not 0 <= offset <= 10**9:
        raise _bad("clock_offset_s", N_("must be a number of seconds"))
    return History(settings, entries, charges, emails, float(offset))


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


def _text(value: object) -> bool:
    """A string the page can show and the server can encode: at most 300 characters,
    no lone surrogates, no control characters."""
    if not isinstance(value, str) or len(value) > 300:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in value)


def _str(item: Mapping[str, Any], name: str, where: str, *, optional: bool = False) -> Any:
    value = item.get(name)
    if value is None and optional:
        return None
    if not _text(value):
        raise _bad(
            f"{where}.{name}", N_("must be a string of at most 300 characters, no control ones")
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
    )


def _entry(item: object, where: str, now: float, default: Settings) -> RequestEntry:
    if not isinstance(item, Mapping):
        raise _bad(where, N_("must be an object"))
    started_ms, duration_ms, at = (item.get(n) for n in ("started_ms", "duration_ms", "at"))
    if not (_number(started_ms) and 0 <= started_ms <= 10**9):
        raise _bad(f"{where}.started_ms", N_("must be a number of ms"))
    if duration_ms is not None and not (_number(duration_ms) and 0 <= duration_ms <= 10**9):
        raise _bad(f"{where}.duration_ms", N_("must be a number of ms"))
    outcome, status = item.get("outcome"), item.get("status")
    if outcome not in OUTCOMES or outcome == "in_flight":  # an export holds finished ones
        raise _bad(f"{where}.outcome", N_("unknown outcome"))
    if status is not None and (not isinstance(status, int) or not 100 <= status <= 599):
        raise _bad(f"{where}.status", N_("must be an HTTP status code"))
    body = item.get("body")
    charge: ChargeRequest | None = None
    if body is not None:
        charge = _charge_body(body, f"{where}.body")
    steps = item.get("steps", [])
    if not isinstance(steps, list) or len(steps) > MAX_STEPS:
        raise _bad(f"{where}.steps", Text("must be a list of at most %(n)s steps", n=MAX_STEPS))
    start = now - 3600 + float(started_ms) / 1000  # in the past: every lane is finished
    entry = RequestEntry(
        id=_int(item.get("id"), f"{where}.id"),
        action=_str(item, "action", where)[:40],
        started=start,
        at=float(at) if _number(at) else 0.0,
        instance=_str(item, "instance", where)[:8],
        key=_key(item, "idempotency_key", where),
        charge=charge,
        fingerprint=_str(item, "fingerprint", where, optional=True),
        steps=[_step(s, f"{where}.steps[{i}]") for i, s in enumerate(steps)],
        finished=start + float(duration_ms or 0) / 1000,
        status=status,
        outcome=cast(Outcome, outcome),
        charge_id=_str(item, "charge_id", where, optional=True),
        problem=_str(item, "problem", where, optional=True),
        problem_detail=_str(item, "problem_detail", where, optional=True),
        raw_key=_str(item, "raw_key", where, optional=True),
        lock=item.get("lock") is not False,
        delivered=item.get("delivered") is not False,
        settings=_settings(item["settings"], f"{where}.settings")
        if "settings" in item
        else default,
    )
    return entry


def _int(value: object, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 10**9:
        raise _bad(where, N_("must be a positive integer"))
    return value


def _step(item: object, where: str) -> Step:
    if not isinstance(item, Mapping):
        raise _bad(where, N_("must be an object"))
    name, at_ms = item.get("step"), item.get("at_ms")
    if name not in STEP_NAMES or not (_number(at_ms) and 0 <= at_ms <= 10**9):
        raise _bad(where, N_("must name a known step and its at_ms"))
    detail = {
        k: v
        for k, v in item.items()
        if k not in ("step", "at_ms")
        and _text(k)
        and len(k) <= 40
        and (v is None or isinstance(v, bool) or _number(v) or _text(v))
        and not (isinstance(v, str) and len(v) > 100)
        and not (_number(v) and not isinstance(v, bool) and abs(v) > 10**9)
    }
    return Step(name, float(at_ms), detail)
