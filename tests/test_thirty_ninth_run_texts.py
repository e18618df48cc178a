"""The thirty-ninth session: what run AC named, checked in the lab's words."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient
from test_newcomer_texts import EN


@pytest.mark.parametrize(
    ("amount", "quoted"),
    [(2.5, "not 2.5"), ("abc", 'not "abc"'), (True, "not true"), ("100000", 'not "100000"')],
)
def test_an_amount_that_is_not_whole_is_quoted_as_sent(
    client: FlaskClient, amount: object, quoted: str
) -> None:
    """Run AC typed 2.5, and sent "abc", true and "100000": each 422 said "not 1.5", as if
    it had read the amount wrong."""
    answer = client.post(
        "/lab/nu39-amount/api/charges",
        json={"order_id": "42", "amount": amount},
        headers={"Idempotency-Key": "k-amount", **EN},
    )
    assert answer.status_code == 422
    said = answer.get_json()["errors"]["amount"]
    assert said.endswith(quoted)
    assert "1.5" not in said
