"""The thirty-sixth session: what the last runs left, checked in the lab's words."""

from __future__ import annotations

import html

import pytest
from flask.testing import FlaskClient
from test_pages import BODY, hx_pay


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", "(amount 100,000 → 101,000, currency 'VND' → 'EUR')"),
        ("vi", "(amount 100.000 → 101.000, currency 'VND' → 'EUR')"),
    ],
)
def test_the_409_writes_the_changed_amount_as_the_ledger_does(
    client: FlaskClient, language: str, said: str
) -> None:
    """Lesson 3's 409 read "amount 100000 → 101000" (a repr), while the ledger, the key's
    line and every other sentence write 100,000 (100.000 in Vietnamese)."""
    assert hx_pay(client).status_code == 201
    conflict = client.post(
        "/lab/p1/api/charges",
        json={**BODY, "amount": 101000, "currency": "EUR"},
        headers={
            "HX-Request": "true",
            "Idempotency-Key": "k1",
            "X-Lab-Action": "Change amount",
            "Accept-Language": language,
        },
    )
    assert conflict.status_code == 409
    assert said in html.unescape(conflict.get_data(as_text=True))
