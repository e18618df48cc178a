"""The thirty-sixth session: what the last runs left, checked in the lab's words."""

from __future__ import annotations

import html

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_newcomer_texts import EN, VI, lab, page, section
from test_pages import BODY, hx_pay

from demo.payments.scenarios import SCENARIOS


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


@pytest.mark.parametrize("name", [n for n, s in SCENARIOS.items() if not s.defence])
def test_every_fix_badge_names_what_it_switches(name: str) -> None:
    """Key-per-click, gateway-timeout and client-guard read a bare "fix OFF", while every
    other card's badge says what is off ("fix OFF: Lock off")."""
    scenario = SCENARIOS[name]
    assert scenario.badge_for(False).startswith("fix OFF: ")
    assert scenario.badge_for(True).startswith("fix ON: ")


@pytest.mark.parametrize(
    ("name", "en", "vi"),
    [
        ("client-guard", "fix OFF: Lock off", "cách sửa: TẮT, Lock tắt"),
        ("gateway-timeout", "fix OFF: the key is kept in doubt", "key bị giữ vì chưa rõ kết quả"),
        ("key-per-click", "fix OFF: a new key per click", "key mới mỗi lần bấm"),
    ],
)
def test_the_badge_names_its_switch_on_the_card(
    app: Flask, client: FlaskClient, name: str, en: str, vi: str
) -> None:
    the_lab = lab(app, f"badge-{name}")
    the_lab.apply_scenario(name)
    assert en in section(page(client, the_lab.id, EN), "lesson")
    assert vi in section(page(client, the_lab.id, VI), "lesson")
