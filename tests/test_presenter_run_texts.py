"""Texts a presenter-mode run through the ten lessons found wrong, in both languages: the
last headline once the lesson is left (the wrap-up), and where a request past the
handler's code stands in the code view."""

from __future__ import annotations

import html as html_lib

from flask import Flask
from flask.testing import FlaskClient

from demo.web.i18n import MISSING

EN = {"Accept-Language": "en"}
VI = {"Accept-Language": "vi"}
KEY = ["t1:u7:pay:order-42:v1"]
BODY = b'{"order_id": "42", "amount": 100000}'


# The shared app and client fixtures (conftest.py), with untranslated texts marked.
APP_CONFIG = {"I18N_MARK_MISSING": True}


def page(client: FlaskClient, lab_id: str, headers: dict[str, str]) -> str:
    answer = client.get(f"/lab/{lab_id}", headers=headers)
    assert answer.status_code == 200
    text = answer.get_data(as_text=True)
    assert MISSING not in text
    return html_lib.unescape(text)


def headline(html: str) -> str:
    start = html.index('<p class="headline">') + len('<p class="headline">')
    return html[start : html.index("</p>", start)]


def test_the_last_headline_stays_as_shown_once_lesson_10_is_left(
    app: Flask, client: FlaskClient
) -> None:
    """The wrap-up, after lesson 10 was left, read "RECOVERED — ch_0001, charged once"
    while the lesson's page had said "…, one receipt e-mail": leaving a lesson resets the
    settings (e-mail off), and the headline was told from the settings of now."""
    from demo.registry import LabRegistry

    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("l10-left")
    lab.apply_scenario("email-once", fixed=True)
    lab.payments.create_charge(KEY, BODY)  # the crash
    lab.payments.create_charge(KEY, BODY)  # the retry: the outbox sends one e-mail
    shown = {"en": "RECOVERED — ch_0001, charged once, one receipt e-mail",
             "vi": "ĐÃ KHÔI PHỤC — ch_0001, chỉ trừ tiền một lần, một email biên lai"}  # fmt: skip
    assert headline(page(client, "l10-left", EN)) == shown["en"]
    assert headline(page(client, "l10-left", VI)) == shown["vi"]
    lab.leave_scenario()
    assert lab.payments.settings.email == "off"
    assert headline(page(client, "l10-left", EN)) == shown["en"]
    assert headline(page(client, "l10-left", VI)) == shown["vi"]


def test_an_inline_double_email_stays_told_after_the_lesson_is_left(
    app: Flask, client: FlaskClient
) -> None:
    """The same for the first case of lesson 10: two e-mails sent inline stay "CHARGED ONCE
    — but the receipt e-mail went out 2 times", not a plain recovery."""
    from demo.registry import LabRegistry

    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("l10-inline")
    lab.apply_scenario("email-once")
    lab.payments.create_charge(KEY, BODY)
    lab.payments.create_charge(KEY, BODY)
    before = headline(page(client, "l10-inline", EN))
    assert before == "CHARGED ONCE — but the receipt e-mail went out 2 times"
    lab.leave_scenario()
    assert headline(page(client, "l10-inline", EN)) == before
