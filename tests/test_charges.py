"""The charge endpoint's input rules: body validation and the Idempotency-Key header."""

from __future__ import annotations

import pytest

from demo.charges import ChargeRequest, parse_charge, parse_idempotency_key
from demo.idempotency import fingerprint
from demo.problems import Problem


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
        assert parse_idempotency_key(['"a,b"']) == "a,b"  # a comma only inside quotes

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
        ],
    )
    def test_invalid_is_400(self, raw: str) -> None:
        with pytest.raises(Problem) as caught:
            parse_idempotency_key([raw])
        assert caught.value.status == 400
        assert caught.value.slug == "bad-idempotency-key"

    @pytest.mark.parametrize("values", [["a", "b"], ["a, b"], ['"a", "b"']])
    def test_repeated_header_is_400(self, values: list[str]) -> None:
        # A server may hand repeated headers over as a list, or joined with commas.
        with pytest.raises(Problem) as caught:
            parse_idempotency_key(values)
        assert caught.value.status == 400
