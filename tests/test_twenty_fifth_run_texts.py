"""The twenty-fifth session: what the twenty-fourth run left, checked in the lab's words."""

from __future__ import annotations

import json

import pytest
from flask import Flask
from flask.testing import FlaskClient

EN = {"Accept-Language": "en"}
CHARGES = "/lab/nu25-body/api/charges"


@pytest.mark.parametrize(
    ("order_id", "said"),
    [
        ("4\u200f2", "holds U+200F, a control or invisible character"),
        ("42\u2028", "holds U+2028, a control or invisible character"),
        (" 42", "must not begin or end with a space"),
        ("\ue000 ", "must not begin or end with a space"),  # private use is printable here
    ],
)
def test_an_order_id_is_told_what_is_wrong_with_it(
    client: FlaskClient, order_id: str, said: str
) -> None:
    """An ``order_id`` with an invisible right-to-left mark inside was told "must be
    printable, without leading or trailing spaces": it had no space, and looked printable."""
    answer = client.post(
        CHARGES,
        data=json.dumps({"order_id": order_id, "amount": 100000}),
        content_type="application/json",
        headers={**EN, "Idempotency-Key": "k1"},
    )
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert said in answer.json["errors"]["order_id"]


def test_a_link_with_a_present_that_is_neither_0_nor_1_is_refused(
    app: Flask, client: FlaskClient
) -> None:
    """``POST /lab/<id>?present=2`` answered a quiet 303, as if it had done something."""
    answer = client.post("/lab/nu25-link?present=2", headers=EN)
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert "present must be 1" in answer.json["detail"] and "not 2" in answer.json["detail"]
    assert app.extensions["labs"].peek("nu25-link") is None  # no lab made for it
    assert client.post("/lab/nu25-link?present=1", headers=EN).status_code == 303


def test_a_history_sent_as_plain_text_is_415(client: FlaskClient) -> None:
    """``POST /replay`` with ``text/plain`` was a 400 "not valid JSON" for a valid file."""
    client.post(CHARGES, json={"order_id": "1", "amount": 5}, headers={"Idempotency-Key": "h"})
    exported = client.get("/lab/nu25-body/history.json").data
    plain = client.post("/replay", data=exported, content_type="text/plain", headers=EN)
    assert plain.status_code == 415 and plain.mimetype == "application/problem+json"
    assert "not text/plain" in plain.json["detail"]
    assert client.post("/replay", data=exported, content_type="application/json").status_code == 303
