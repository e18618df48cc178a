"""The thirty-third session: what run K found, checked in the lab's words."""

from __future__ import annotations

import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_thirty_first_run_texts import _queue_card


def _next_step_form(card: str) -> str:
    form = re.search(r'<form[^>]*queue/next"[^>]*>.*?</form>', card, re.S)
    assert form is not None, "no Next step"
    return form.group(0)


def test_queue_next_step_after_a_press_off_the_script_starts_the_case_afresh(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 1, Enqueue pressed twice by hand: the second press left the steps, and
    Next step applied the fix (the lab afresh, the fix on) with the first check unmet."""
    queue, card = _queue_card(app, client, "nu33-q1", "redelivery")
    assert queue.scenario is not None
    click, arg = queue.scenario.clicks[0]
    for _ in range(2):
        queue.by_hand(click, arg)
        queue._click(click, arg)
    form = _next_step_form(card())
    assert 'name="fixed" value="0"' in form
    assert "The case afresh, step 1 of 4" in form


def test_the_retry_labs_run_button_reads_chay_in_vietnamese() -> None:
    """Run K: "Chạy thử" (a trial run, a dry run) named the button that runs the policy for
    real; every hint that names it must say the button's own word."""
    from babel.messages.pofile import read_po

    from demo.web.i18n import TRANSLATIONS

    with open(TRANSLATIONS / "vi" / "LC_MESSAGES" / "messages.po", "rb") as po:
        catalog = read_po(po)
    run = catalog.get("Run")
    assert run is not None and run.string == "Chạy"
    assert not [m.id for m in catalog if m.id and "Chạy thử" in str(m.string)]


@pytest.mark.parametrize("page", ["", "/natural", "/queue", "/retries"])
@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("lesson=race&lesson=ttl-expiry", "lesson is given more than once"),
        ("scenario=race&scenario=ttl-expiry", "scenario is given more than once"),
        ("lesson=race&fixed=2", "fixed must be 1 or 0"),
        ("lesson=race&run=yes", "run must be 1 or 0"),
    ],
)
def test_a_link_argument_given_twice_differently_is_refused(
    app: Flask, client: FlaskClient, page: str, query: str, said: str
) -> None:
    """Run K: ``?lesson=race&lesson=ttl-expiry`` opened the first without a word, and
    ``fixed=2`` ran the case without the fix: the link did not say what it meant."""
    for answer in (
        client.get(f"/lab/nu33-link{page}?{query}", follow_redirects=True),
        client.post(f"/lab/nu33-link?{query}&lab={page.strip('/') or 'payments'}"),
    ):
        assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
        assert said in answer.json["detail"]
    assert app.extensions["labs"].peek("nu33-link") is None
    same = client.get(f"/lab/nu33-link{page}?lesson=race&lesson=race", follow_redirects=True)
    assert same.status_code == 200
