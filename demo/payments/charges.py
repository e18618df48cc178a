"""The charge endpoint's input rules: the request body and the ``Idempotency-Key`` header.

Validation comes first and stores nothing, so a corrected retry with the same key goes
through. Errors are :class:`~demo.engine.problems.Problem` with status 400 (unreadable) or
422 (readable, but not a valid charge).
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from dataclasses import dataclass
from typing import Any

from ..engine.problems import Problem
from ..engine.text import N_, Reasons, Text

MAX_AMOUNT = 10**15
"""The largest amount accepted, in minor units."""

MAX_AMOUNT_TEXT = Text(N_("1,000,000,000,000,000"))
""":data:`MAX_AMOUNT` as a person reads it, grouped by thousands as each language groups
them (Vietnamese with dots, as the page's amounts are)."""

MAX_KEY_LENGTH = 255
"""Stripe's limit for an idempotency key, in characters (the key, not its quoted form)."""

MAX_KEY_FIELD_LENGTH = 2 * MAX_KEY_LENGTH + 2
"""The longest ``Idempotency-Key`` field value that can hold a valid key: 512 characters,
a quoted key of 255 characters that are all ``"`` or ``\\`` (each sent escaped, as two)."""

MAX_ORDER_ID_LENGTH = 64
"""The longest ``order_id``, in characters (code points)."""

ALLOWED_FIELDS = ("order_id", "amount", "currency")
CURRENCY_PATTERN = "[A-Z]{3}"
_CURRENCY = re.compile(CURRENCY_PATTERN)
_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]+")
_SF_STRING = re.compile(r'"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"')

OWS = " \t"
"""Optional whitespace around a header field value: no part of the value (RFC 9110 §5.5)."""

# The key as a header value, after OWS is stripped: bare (printable ASCII, no comma, not
# starting with a quote), or one structured-field string of 1-255 characters (RFC 8941
# §3.3.3), no comma either way. The OpenAPI document carries this same pattern.
_END = r"(?!\n)$"
"""The end of the value: Python's ``$`` would also match before a final newline."""
_BARE_FIRST = r"[\x21\x23-\x2b\x2d-\x7e]"
_BARE_INNER = r"[\x20-\x2b\x2d-\x7e]"
_BARE_LAST = r"[\x21-\x2b\x2d-\x7e]"
_QUOTED_CHAR = r'(?:[\x20\x21\x23-\x2b\x2d-\x5b\x5d-\x7e]|\\["\\])'
KEY_FIELD_PATTERN = (
    f"^(?:{_BARE_FIRST}(?:{_BARE_INNER}{{0,{MAX_KEY_LENGTH - 2}}}{_BARE_LAST})?"
    f'|"{_QUOTED_CHAR}{{1,{MAX_KEY_LENGTH}}}"){_END}'
)
"""A regular expression (Python and ECMA-262 alike) for a valid ``Idempotency-Key`` value,
its surrounding spaces and tabs stripped. A quoted key of spaces only is refused too."""

BLANK_QUOTED_KEY_PATTERN = '^" *"$'
"""A quoted key of spaces only: refused as empty, though :data:`KEY_FIELD_PATTERN` fits."""


def _not_printable() -> str:
    """A character class body for what is not printable in an order id: Unicode control
    (Cc), format (Cf) and separator (Zl, Zp, Zs but U+0020) characters, the invisible
    ones. Unassigned code points (a newer Unicode may assign them) and private-use ones
    (a font may draw them) are allowed. Built from this Python's ``unicodedata``, so the
    document and the check share one Unicode version."""
    refused = {"Cc", "Cf", "Zl", "Zp", "Zs"}
    category = unicodedata.category
    codes = [c for c in range(sys.maxunicode + 1) if category(chr(c)) in refused and c != 0x20]
    ranges: list[list[int]] = []
    for code in codes:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return "".join(_class_range(low, high) for low, high in ranges)


def _class_range(low: int, high: int) -> str:
    # \uXXXX reads the same in Python and ECMA-262; an astral character is written as
    # itself, which both read as one character (with the ``u`` flag in ECMA-262).
    def one(code: int) -> str:
        return f"\\u{code:04x}" if code <= 0xFFFF else chr(code)

    return one(low) if low == high else f"{one(low)}-{one(high)}"


def _order_id_pattern(refused: str) -> str:
    return f"^[^ {refused}](?:[^{refused}]*[^ {refused}])?{_END}"


_NOT_PRINTABLE = _not_printable()
ORDER_ID_PATTERN = _order_id_pattern(_NOT_PRINTABLE)
"""``order_id`` is printable, without a space at either end: the pattern in the OpenAPI
document. Lone surrogates are refused too (a JSON Schema string cannot hold one)."""
_ORDER_ID = re.compile(_order_id_pattern(_NOT_PRINTABLE + r"\ud800-\udfff"))
_ORDER_ID_REFUSED = re.compile(f"[{_NOT_PRINTABLE}\\ud800-\\udfff]")


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


PARSER_WORDS = frozenset(
    {
        N_("Expecting value"),
        N_("Expecting property name enclosed in double quotes"),
        N_("Expecting ':' delimiter"),
        N_("Expecting ',' delimiter"),
        N_("Unterminated string starting at"),
        N_("Invalid control character at"),
        N_("Invalid \\escape"),
        N_("Invalid \\uXXXX escape"),
        N_("Extra data"),
    }
)
"""What Python's JSON parser says (``JSONDecodeError.msg``), marked so a page in another
language says it in that language too; any other message stays in English."""


def parse_json(body: bytes) -> Any:
    """Parse a JSON body strictly: no repeated member names, no ``NaN`` or ``Infinity``,
    no lone surrogate (``"\\ud800"``) in a member name or a string: RFC 8259 §8.2 leaves
    such a string's meaning open, and UTF-8 cannot carry it, so no answer, record or
    exported history could hold it.

    :raises Problem: 400 ``/problems/malformed-json``, saying where the body went wrong.
    """
    try:
        # UTF-8 only (RFC 8259 §8.1): json.loads would also guess UTF-16 or UTF-32 from bytes.
        text = body.decode("utf-8")
        if text.startswith("\ufeff"):
            # RFC 8259 §8.1: a JSON text sent over a network carries no byte order mark.
            raise _Refused(
                Text(
                    "it starts with a byte order mark (U+FEFF), which JSON sent over HTTP must "
                    "not carry"
                )
            )
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
        if _holds_lone_surrogate(value):
            raise _Refused(Text("a string in it holds a lone surrogate, which UTF-8 cannot carry"))
        return value
    except json.JSONDecodeError as exc:
        why: str | Text = Text(
            "%(msg)s at line %(line)s, column %(column)s",
            msg=Text(exc.msg) if exc.msg in PARSER_WORDS else exc.msg,
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

    ``order_id`` (1-64 characters, :data:`ORDER_ID_PATTERN`) is kept exactly as sent, with
    no Unicode normalisation: ``Café`` in NFC and in NFD are two different orders, so
    the two bodies under one key answer 409.

    :raises Problem: 400 when the body is not JSON (or repeats a member), 422 when it is
        JSON but not a valid charge; ``errors`` lists each field's problem.
    """
    value = parse_json(body)
    if not isinstance(value, dict):
        raise _invalid({"body": N_("must be a JSON object")})

    errors: dict[str, str | Text] = {}
    for name in value:
        if name not in ALLOWED_FIELDS:
            errors[str(name)] = N_("is not a known field")

    order_id = value.get("order_id")
    if not isinstance(order_id, str) or not 1 <= len(order_id) <= MAX_ORDER_ID_LENGTH:
        errors["order_id"] = N_("must be a string of 1-64 characters")
    elif not _ORDER_ID.fullmatch(order_id):
        errors["order_id"] = _order_id_problem(order_id)

    amount = value.get("amount")
    if amount is None:
        errors["amount"] = N_(
            "is required: a whole number in minor units, such as 100000 (VND has no decimals: "
            "its minor unit is 1 VND)"
        )
    elif isinstance(amount, str) and not amount.strip():
        # The page's Amount field: left empty, or holding a number the browser cannot read
        # (1e400), which a number field gives as "" (run X: "is required" under a number).
        errors["amount"] = N_(
            "is empty, or holds a number the browser could not read (such as 1e400): type a "
            "whole number in minor units, such as 100000"
        )
    elif isinstance(amount, float) and not 1 <= amount <= MAX_AMOUNT:
        # Out of range first: a browser sends a huge integer typed in a number field as a
        # float (999999999999999999999999 as 1e+24), and the range is what is wrong with it.
        errors["amount"] = Text("must be between 1 and %(max)s", max=MAX_AMOUNT_TEXT)
    elif isinstance(amount, bool) or not isinstance(amount, int):
        errors["amount"] = _not_whole(amount)
    elif not 1 <= amount <= MAX_AMOUNT:
        errors["amount"] = Text("must be between 1 and %(max)s", max=MAX_AMOUNT_TEXT)

    currency = value.get("currency", "VND")
    if not isinstance(currency, str) or not _CURRENCY.fullmatch(currency):
        errors["currency"] = N_("must be a 3-letter upper-case code such as VND")

    if errors:
        raise _invalid(errors)
    assert isinstance(order_id, str) and isinstance(amount, int)  # checked above
    return ChargeRequest(order_id=order_id, amount=amount, currency=currency)


def _not_whole(amount: object) -> Text:
    """The problem of an ``amount`` that is not a whole number (2.5, ``"100000"``, ``true``),
    quoting it as sent, in JSON (run AC read "not 1.5" under a 2.5 it had typed)."""
    sent = json.dumps(amount, ensure_ascii=False)
    return Text(
        "must be a whole number in minor units, such as 100000 (VND has no decimals), not %(sent)s",
        sent=sent if len(sent) <= 40 else sent[:39] + "…",
    )


def _order_id_problem(order_id: str) -> str | Text:
    """What is wrong with an ``order_id`` that fails :data:`ORDER_ID_PATTERN`: a space at
    an end, or the first character that is not printable, by its code point (an invisible
    mark pasted with the id cannot be seen in the field that holds it)."""
    bad = _ORDER_ID_REFUSED.search(order_id)
    if bad is None:
        return N_("must not begin or end with a space")
    return Text(
        "holds U+%(code)s, a control or invisible character: type the id without it",
        code=f"{ord(bad.group()):04X}",
    )


# Spaces typed in the page's key field are sent as typed: the answer says how to send none.
_EMPTY_KEY = N_(
    "The Idempotency-Key header is empty, or only spaces: send a key, or no header at all (in "
    "the page, an empty key field sends none)."
)


def parse_idempotency_key(values: list[str]) -> str | None:
    """The key from the ``Idempotency-Key`` header values, or ``None`` when there is none.

    Spaces and tabs around the value are no part of it (RFC 9110 §5.5): ``pay-1   `` and
    ``"pay-1" `` name the key ``pay-1``; inside quotes spaces count (``" pay-1"`` is
    another key). A key is 1-255 printable ASCII characters without a comma. The IETF
    draft sends it as a structured-field string (``"abc"``, RFC 8941 §3.3.3) and Stripe
    sends it bare (``abc``); both name the same key ``abc``, so a client of either style
    gets the same record.

    Repeated header lines: a WSGI server hands the app one value, the lines joined by
    ``","`` (Werkzeug's development server) or ``", "`` (waitress, Werkzeug's test
    client), so a comma is the only trace of a second line. No key may hold a comma,
    quoted or not, so every repeated header is refused, under any of those servers
    (``"a`` and ``b"`` join into ``"a, b"``: refused). A list of several values (a caller
    that keeps the lines apart) is refused too.

    :raises Problem: 400 when the header is repeated, holds a comma, is empty, too long,
        or holds control or non-ASCII characters.
    """
    if not values:
        return None
    if len(values) > 1:
        raise _bad_key(N_("Send one Idempotency-Key header, not several."))
    raw = values[0].strip(OWS)
    if "," in raw:
        raise _bad_key(
            N_(
                "The Idempotency-Key value holds a comma. Servers join repeated "
                "Idempotency-Key headers into one value with commas, so a comma cannot be "
                "told from a second header: send one header, with a key without commas."
            )
        )
    quoted = _SF_STRING.fullmatch(raw)
    if not quoted and raw.startswith('"'):
        raise _bad_key(N_('A quoted key must be one structured-field string, e.g. "abc".'))
    key = re.sub(r"\\(.)", r"\1", quoted.group(1)) if quoted else raw
    if not key.strip():
        raise _bad_key(_EMPTY_KEY)
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


BAD_KEY_TITLE = N_("Bad Idempotency-Key header")
"""The title of the 400 for a key the header cannot carry (the log keeps it as is)."""


def _bad_key(detail: str | Text) -> Problem:
    return Problem(400, "bad-idempotency-key", BAD_KEY_TITLE, detail)
