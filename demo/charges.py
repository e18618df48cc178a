"""The charge endpoint's input rules: the request body and the ``Idempotency-Key`` header.

Validation comes first and stores nothing, so a corrected retry with the same key goes
through. Errors are :class:`~demo.problems.Problem` with status 400 (unreadable) or
422 (readable, but not a valid charge).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .problems import Problem
from .text import N_, Reasons, Text

MAX_AMOUNT = 10**15
"""The largest amount accepted, in minor units."""

MAX_KEY_LENGTH = 255
"""Stripe's limit for an idempotency key."""

ALLOWED_FIELDS = ("order_id", "amount", "currency")
_CURRENCY = re.compile(r"[A-Z]{3}")
_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]+")
_SF_STRING = re.compile(r'"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"')


@dataclass(frozen=True)
class ChargeRequest:
    """A valid charge request.

    :param amount: a positive integer in minor currency units, at most 10**15.
    :param currency: ISO 4217 code, upper case; ``"VND"`` when left out.
    """

    order_id: str
    amount: int
    currency: str = "VND"

    def as_dict(self) -> dict[str, Any]:
        """The canonical body, defaults filled in: what the fingerprint covers."""
        return {"order_id": self.order_id, "amount": self.amount, "currency": self.currency}


def parse_json(body: bytes) -> Any:
    """Parse a JSON body strictly: no repeated member names, no ``NaN`` or ``Infinity``,
    no lone surrogate (``"\\ud800"``) in a member name or a string: RFC 8259 §8.2 leaves
    such a string's meaning open, and UTF-8 cannot carry it, so no answer, record or
    exported history could hold it.

    :raises Problem: 400 ``/problems/malformed-json``, saying where the body went wrong.
    """
    try:
        value = json.loads(body, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
        if _holds_lone_surrogate(value):
            raise _Refused(Text("a string in it holds a lone surrogate, which UTF-8 cannot carry"))
        return value
    except json.JSONDecodeError as exc:
        # The parser's own words stay English; the sentence around them is translated.
        why: str | Text = Text(
            "%(msg)s at line %(line)s, column %(column)s",
            msg=exc.msg,
            line=exc.lineno,
            column=exc.colno,
        )
    except UnicodeDecodeError:
        why = Text("it is not UTF-8")
    except RecursionError:
        why = Text("it is nested too deeply")
    except ValueError as exc:
        # Our own hooks' messages, or a number with thousands of digits.
        why = exc.reason if isinstance(exc, _Refused) else Text("a number in it is too long")
    raise Problem(
        400,
        "malformed-json",
        N_("Malformed JSON"),
        Text("The body is not valid JSON: %(why)s.", why=why),
    )


class _Refused(ValueError):
    """JSON that parses, but that the lab refuses to guess about."""

    def __init__(self, reason: Text) -> None:
        super().__init__(str(reason))
        self.reason = reason


def parse_charge(body: bytes) -> ChargeRequest:
    """Parse and validate a JSON charge body, e.g. ``{"order_id": "42", "amount": 100000}``.

    Number rule: ``amount`` must be a JSON integer. ``100000.0`` is refused with 422
    rather than read as ``100000``; ``true`` is not 1.

    :raises Problem: 400 when the body is not JSON (or repeats a member), 422 when it is
        JSON but not a valid charge; ``errors`` lists each field's problem.
    """
    value = parse_json(body)
    if not isinstance(value, dict):
        raise _invalid({"body": N_("must be a JSON object")})

    errors: dict[str, str | Text] = {}
    for name in value:
        if name not in ALLOWED_FIELDS:
            errors[str(name)] = N_("unknown field")

    order_id = value.get("order_id")
    if not isinstance(order_id, str) or not 1 <= len(order_id) <= 64:
        errors["order_id"] = N_("must be a string of 1-64 characters")
    elif not order_id.isprintable() or order_id.strip() != order_id:
        errors["order_id"] = N_("must be printable, without leading or trailing spaces")

    amount = value.get("amount")
    if isinstance(amount, bool) or not isinstance(amount, int):
        errors["amount"] = N_(
            'must be an integer in minor units (100000, not 100000.0 or "100000")'
        )
    elif not 1 <= amount <= MAX_AMOUNT:
        errors["amount"] = Text("must be between 1 and %(max)s", max=MAX_AMOUNT)

    currency = value.get("currency", "VND")
    if not isinstance(currency, str) or not _CURRENCY.fullmatch(currency):
        errors["currency"] = N_("must be a 3-letter upper-case code such as VND")

    if errors:
        raise _invalid(errors)
    assert isinstance(order_id, str) and isinstance(amount, int)  # checked above
    return ChargeRequest(order_id=order_id, amount=amount, currency=currency)


def parse_idempotency_key(values: list[str]) -> str | None:
    """The key from the ``Idempotency-Key`` header values, or ``None`` when there is none.

    A key is 1-255 printable ASCII characters, without a comma when sent bare: HTTP
    joins repeated headers with commas, so a bare comma cannot be told from two
    headers (quote the key to include one). The IETF draft sends it as a
    structured-field string (``"abc"``) and Stripe sends it bare (``abc``); both name
    the same key ``abc``, so a client of either style gets the same record.

    :raises Problem: 400 when the header is repeated, empty, too long, or holds
        control or non-ASCII characters.
    """
    if not values:
        return None
    if len(values) > 1:
        raise _bad_key(N_("Send one Idempotency-Key header, not several."))
    raw = values[0]
    quoted = _SF_STRING.fullmatch(raw)
    if not quoted and raw.startswith('"'):
        raise _bad_key(N_('A quoted key must be one structured-field string, e.g. "abc".'))
    if not quoted and "," in raw:
        raise _bad_key(
            N_(
                "A bare key may not hold a comma: repeated Idempotency-Key headers arrive "
                "joined by commas. Send one header, and quote a key that holds a comma."
            )
        )
    key = re.sub(r"\\(.)", r"\1", quoted.group(1)) if quoted else raw
    if not key.strip():
        raise _bad_key(N_("The Idempotency-Key header is empty."))
    if len(key) > MAX_KEY_LENGTH:
        raise _bad_key(
            Text(
                "The key is %(length)s characters long; at most %(limit)s are allowed.",
                length=len(key),
                limit=MAX_KEY_LENGTH,
            )
        )
    if not _PRINTABLE_ASCII.fullmatch(key):
        raise _bad_key(
            N_(
                "The key may hold printable ASCII characters only (no control or non-ASCII "
                "characters)."
            )
        )
    return key


_SURROGATE = re.compile("[\ud800-\udfff]")


def _holds_lone_surrogate(value: Any) -> bool:
    # Any surrogate left after parsing is a lone one: the parser joins the valid pairs.
    # A loop, not recursion: the parser's own nesting limit is deeper than Python's.
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            todo.extend(item)
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return False


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise _Refused(Text("a member name is repeated"))
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise _Refused(Text("%(name)s is not a JSON number", name=name))


def _invalid(errors: dict[str, str | Text]) -> Problem:
    reasons = Reasons(errors)
    # The sentence is translated; the machine-readable ``errors`` member stays English.
    return Problem(
        422,
        "invalid-charge",
        N_("Invalid charge request"),
        Text("Fix the body: %(fields)s.", fields=reasons),
        errors=reasons.english(),
    )


def _bad_key(detail: str | Text) -> Problem:
    return Problem(400, "bad-idempotency-key", N_("Bad Idempotency-Key header"), detail)
