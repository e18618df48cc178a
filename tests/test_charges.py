"""The charge endpoint's input rules: body validation and the Idempotency-Key header."""

from __future__ import annotations

import json
import re
import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from demo.engine.problems import Problem
from demo.payments.charges import (
    BLANK_QUOTED_KEY_PATTERN,
    KEY_FIELD_PATTERN,
    MAX_KEY_FIELD_LENGTH,
    ORDER_ID_PATTERN,
    ChargeRequest,
    parse_charge,
    parse_idempotency_key,
)
from demo.payments.idempotency import fingerprint


def fp(body: bytes) -> str:
    return fingerprint("POST", "/api/charges", parse_charge(body).as_dict())


def test_valid_body() -> None:
    assert parse_charge(
        b'{"order_id": "42", "amount": 100000, "currency": "VND"}'
    ) == ChargeRequest("42", 100000, "VND")


def test_currency_defaults_and_the_default_is_fingerprinted() -> None:
    assert fp(b'{"order_id": "42", "amount": 5}') == fp(
        b'{"order_id": "42", "amount": 5, "currency": "VND"}'
    )


def test_reordered_keys_and_whitespace_are_the_same_request() -> None:
    a = b'{"order_id":"42","amount":100000,"currency":"VND"}'
    b = b'{\n  "currency" : "VND",\t"amount": 100000 ,  "order_id": "42"\n}'
    assert fp(a) == fp(b)


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        (
            b'{"order_id": "42", "amount": 100000.0}',
            422,
            "amount",
        ),  # the number rule: integers only
        (b'{"order_id": "42", "amount": 100000.5}', 422, "amount"),
        (b'{"order_id": "42", "amount": "100000"}', 422, "amount"),
        (b'{"order_id": "42", "amount": true}', 422, "amount"),  # true is not 1
        (b'{"order_id": "42", "amount": 0}', 422, "amount"),
        (b'{"order_id": "42", "amount": -5}', 422, "amount"),
        (b'{"order_id": "42", "amount": 1000000000000001}', 422, "amount"),  # over 10**15
        (b'{"order_id": "42", "amount": 1e400}', 422, "amount"),
        (b'{"order_id": 42, "amount": 1}', 422, "order_id"),
        (b'{"order_id": "", "amount": 1}', 422, "order_id"),
        (b'{"order_id": " 42", "amount": 1}', 422, "order_id"),
        (b'{"order_id": "4\\n2", "amount": 1}', 422, "order_id"),
        (b'{"order_id": "42\\u00a0", "amount": 1}', 422, "order_id"),  # a no-break space
        (b'{"order_id": "4\\u202e2", "amount": 1}', 422, "order_id"),  # a bidi override
        (b'{"order_id": "4\\u200b2", "amount": 1}', 422, "order_id"),  # a zero-width space
        (b'{"amount": 1}', 422, "order_id"),
        (b'{"order_id": "42", "amount": 1, "currency": "vnd"}', 422, "currency"),
        (b'{"order_id": "42", "amount": 1, "tip": 5}', 422, "tip"),  # unknown fields are rejected
        (b"[1, 2]", 422, "body"),
        (b'"hello"', 422, "body"),
    ],
)
def test_invalid_bodies_are_422_with_the_field_named(body: bytes, status: int, field: str) -> None:
    with pytest.raises(Problem) as caught:
        parse_charge(body)
    assert caught.value.status == status
    assert field in caught.value.extra["errors"]


def test_max_amount_is_accepted() -> None:
    assert parse_charge(b'{"order_id": "1", "amount": 1000000000000000}').amount == 10**15


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{",
        b"not json",
        b'{"order_id": "42", "amount": NaN}',
        b'{"order_id": "42", "amount": Infinity}',
        b'{"order_id": "42", "amount": 1, "amount": 2}',  # a repeated member is ambiguous
        b"\xff\xfe",
        '{"order_id": "4", "amount": 1}'.encode("utf-16"),  # RFC 8259 §8.1: UTF-8 only
        '{"order_id": "4", "amount": 1}'.encode("utf-32-le"),
        b"[" * 100_000 + b"]" * 100_000,
        b'{"order_id": "42", "amount": ' + b"9" * 5000 + b"}",
    ],
)
def test_unreadable_bodies_are_400(body: bytes) -> None:
    with pytest.raises(Problem) as caught:
        parse_charge(body)
    assert caught.value.status == 400
    assert caught.value.to_dict()["type"] == "/problems/malformed-json"


class TestIdempotencyKey:
    def test_absent_is_none(self) -> None:
        assert parse_idempotency_key([]) is None

    @pytest.mark.parametrize("key", ["a", "order-42-pay-v1", "x" * 255, "with inner space", "!~{}"])
    def test_valid(self, key: str) -> None:
        assert parse_idempotency_key([key]) == key

    def test_structured_field_string_names_the_same_key(self) -> None:
        assert parse_idempotency_key(['"abc"']) == "abc"
        assert parse_idempotency_key(['"a\\"b"']) == 'a"b'

    @pytest.mark.parametrize(
        ("raw", "key"),
        [
            ("pay-1   ", "pay-1"),  # trailing spaces: RFC 9110 §5.5, not part of the value
            ("pay-1\t", "pay-1"),  # a trailing tab is not a 400
            ("  \tpay-1 \t", "pay-1"),
            ('"pay-1" ', "pay-1"),  # quoted, then a space
            ('\t"pay-1"', "pay-1"),
            ('" pay-1"', " pay-1"),  # inside quotes spaces count
            ('"pay-1 "', "pay-1 "),
            ("pay 1", "pay 1"),  # inner spaces count
        ],
    )
    def test_spaces_and_tabs_around_the_value_are_not_part_of_it(self, raw: str, key: str) -> None:
        assert parse_idempotency_key([raw]) == key

    @pytest.mark.parametrize(
        "raw",
        [
            "",
            "   ",
            "x" * 256,
            "tab\there",
            "new\nline",
            "caf\xe9",
            "\x00",
            '""',
            "\u20ac",
            "del\x7f",
            '" "',  # a quoted key of spaces only
            "\t",
        ],
    )
    def test_invalid_is_400(self, raw: str) -> None:
        with pytest.raises(Problem) as caught:
            parse_idempotency_key([raw])
        assert caught.value.status == 400
        assert caught.value.slug == "bad-idempotency-key"

    @pytest.mark.parametrize(
        "values",
        [
            ["a", "b"],
            ["a, b"],
            ['"a", "b"'],
            ['"a, b"'],  # lines '"a' and 'b"' joined by waitress or the test client
            ['"a,b"'],  # the same lines joined by Werkzeug's development server
            ["a,"],  # 'a' and an empty line
            ['"a,b" '],
        ],
    )
    def test_repeated_header_is_400(self, values: list[str]) -> None:
        # A server may hand repeated headers over as a list, or joined with commas: no key
        # holds a comma, quoted or not, so a joined value is always refused.
        with pytest.raises(Problem) as caught:
            parse_idempotency_key(values)
        assert caught.value.status == 400
        assert caught.value.slug == "bad-idempotency-key"


def test_order_ids_are_compared_exactly_without_unicode_normalisation() -> None:
    nfc, nfd = unicodedata.normalize("NFC", "Café"), unicodedata.normalize("NFD", "Café")
    assert nfc != nfd
    charges = [parse_charge(json.dumps({"order_id": o, "amount": 5}).encode()) for o in (nfc, nfd)]
    assert [c.order_id for c in charges] == [nfc, nfd]
    assert fp(json.dumps({"order_id": nfc, "amount": 5}).encode()) != fp(
        json.dumps({"order_id": nfd, "amount": 5}).encode()
    )


def _key_allowed(raw: str) -> bool:
    try:
        return parse_idempotency_key([raw]) is not None
    except Problem:
        return False


def _documented_key(raw: str) -> bool:
    # What the OpenAPI document says of a value with no spaces or tabs around it.
    return (
        len(raw) <= MAX_KEY_FIELD_LENGTH
        and re.search(KEY_FIELD_PATTERN, raw) is not None
        and re.search(BLANK_QUOTED_KEY_PATTERN, raw) is None
    )


key_like = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=8),
    st.text(alphabet=' "\\,ab\t', max_size=8),
    st.text(alphabet=' "\\,ab', max_size=8).map(lambda s: f'"{s}"'),
    st.sampled_from(['"' + '\\"' * 255 + '"', '"' + '\\"' * 256 + '"', "x" * 255, "x" * 256]),
)


@given(raw=key_like)
def test_the_documented_key_pattern_is_the_parser_rule(raw: str) -> None:
    raw = raw.strip(" \t")  # the document describes the value without what is around it
    assert _documented_key(raw) == _key_allowed(raw), raw


def test_the_longest_key_on_the_wire_is_512_characters() -> None:
    # 255 quotes, each escaped as two characters, inside one pair of quotes.
    raw = '"' + '\\"' * 255 + '"'
    assert len(raw) == MAX_KEY_FIELD_LENGTH == 512
    assert parse_idempotency_key([raw]) == '"' * 255
    assert _documented_key(raw)


def _order_allowed(order_id: str) -> bool:
    try:
        parse_charge(json.dumps({"order_id": order_id, "amount": 1}).encode())
    except Problem:
        return False
    return True


@given(order_id=st.text(min_size=1, max_size=6))
def test_the_documented_order_id_pattern_is_the_parser_rule(order_id: str) -> None:
    assert (re.search(ORDER_ID_PATTERN, order_id) is not None) == _order_allowed(order_id)


def test_order_ids_refuse_what_is_not_printable_but_unassigned_and_private_use() -> None:
    invisible = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in
                 ("Cc", "Cf", "Zl", "Zp", "Zs")]  # fmt: skip
    assert len(invisible) > 200
    for code in invisible:
        assert _order_allowed(f"a{chr(code)}b") == (code == 0x20), hex(code)
    for code in (0xE000, 0xF8FF, 0xF0000, 0x10FFFD, 0x0378, 0x50000):  # private use, unassigned
        assert _order_allowed(f"a{chr(code)}b"), hex(code)
    for code in (0xD800, 0xDFFF):  # lone surrogates
        assert not _order_allowed(f"a{chr(code)}b"), hex(code)
