"""The thirty-third session: what run K found, checked in the lab's words."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_thirtieth_run_texts import EN
from test_thirty_first_run_texts import _queue_card

from demo.registry import LabRegistry


def _next_step_form(card: str) -> str:
    form = re.search(r'<form[^>]*queue/next"[^>]*>.*?</form>', card, re.S)
    assert form is not None, "no Next step"
    return form.group(0)


def enqueue_twice_by_hand(queue: Any) -> None:
    """The open scenario's first press (Enqueue) twice, by hand: the second leaves the steps."""
    assert queue.scenario is not None
    click, arg = queue.scenario.clicks[0]
    for _ in range(2):
        queue.by_hand(click, arg)
        queue._click(click, arg)


def test_queue_next_step_after_a_press_off_the_script_starts_the_case_afresh(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 1, Enqueue pressed twice by hand: the second press left the steps, and
    Next step applied the fix (the lab afresh, the fix on) with the first check unmet."""
    queue, card = _queue_card(app, client, "nu33-q1", "redelivery")
    enqueue_twice_by_hand(queue)
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


def test_lesson_5_says_why_one_charge_as_expected_leaves_its_check_open(
    app: Flask, client: FlaskClient
) -> None:
    """Run K: lesson 5, the lock on, A stepped to its end before B: "Charges expected 1
    actual 1, as expected", the last check unticked, and nothing on the card said why."""
    from test_step_mode import requests

    from demo.lessons import LESSONS
    from demo.lessons.engine import Progress

    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu33-l5")
    lab.open_lesson("slow-motion")
    lab.progress["slow-motion"] = Progress({LESSONS["slow-motion"].checks[0].id: 0.0})
    lab.apply_scenario("slow-motion", fixed=True)

    def card() -> str:
        html = client.get("/lab/nu33-l5", headers=EN).get_data(as_text=True)
        return html[html.index('id="lesson"') :]

    assert "unmet-note" not in card()  # nothing run yet
    with requests(lab, 2) as results:
        assert "unmet-note" not in card()  # paused: not over yet
    assert sorted(r[1].outcome for r in results) == ["charged", "replayed"]
    now = card()
    assert "as expected" in now and "slow-motion" not in lab.achieved()
    assert "If A ran to its end first, B found A&#39;s record" in now


@pytest.mark.parametrize("page", ["", "/natural", "/queue", "/retries"])
def test_a_refused_link_of_an_existing_lab_leads_back_to_it(
    app: Flask, client: FlaskClient, page: str
) -> None:
    """Run L: ``/lab/<id>?lesson=nope`` showed "404 — No such lesson" whose only link was
    "Open a fresh lab": no way back to the attendee's own lab."""
    html = {"Accept": "text/html", **EN}
    app.extensions["labs"].get("nu33-back")  # the attendee's lab, in use
    answer = client.get(f"/lab/nu33-back{page}?lesson=nope", headers=html)
    assert answer.status_code == 404
    assert f'<a href="/lab/nu33-back{page}" class="back-to-lab">Back to your lab</a>' in (
        answer.get_data(as_text=True)
    )
    stranger = client.get(f"/lab/nu33-none{page}?lesson=nope", headers=html)
    assert stranger.status_code == 404 and "Back to your lab" not in stranger.get_data(as_text=True)
    assert app.extensions["labs"].peek("nu33-none") is None


def test_lesson_1_says_which_requests_its_first_check_asks_for(
    app: Flask, client: FlaskClient
) -> None:
    """Run L: lesson 1, Pay pressed twice by hand (no key): "Charges expected 1 actual 2
    MISMATCH" in red, the first check unticked, and no word that it asks for two
    requests at once."""
    registry: LabRegistry = app.extensions["labs"]
    registry.get("nu33-l1").open_lesson("double-click")
    for _ in range(2):
        client.post("/lab/nu33-l1/api/charges", json={"order_id": "42", "amount": 100000})
    html = client.get("/lab/nu33-l1", headers=EN).get_data(as_text=True)
    assert "double-click" not in registry.get("nu33-l1").achieved()
    assert 'class="hint case-note"' in html and "press Double-submit" in html


def test_a_poison_messages_last_receive_says_it_goes_to_the_dead_letter_queue(
    app: Flask, client: FlaskClient
) -> None:
    """Run L: queue lesson 6 with the fix, the third failed receive of 3: "it comes back
    after the visibility timeout" beside a queue panel already showing it dead."""
    from demo.queue.explain import explain

    queue, _card = _queue_card(app, client, "nu33-q6", "poison-message")
    queue.apply_scenario("poison-message", fixed=True)
    said: list[str] = []
    while len([e for e in queue.entries() if e.error]) < 3:
        queue.play_next()
    failed = [e for e in queue.entries() if e.error]
    said = [str(s) for s in explain(failed[-1])]
    assert any("receive 3 of 3: its last" in s and "dead-letter queue" in s for s in said)
    assert not any("it comes back after the visibility timeout" in s for s in said)
    assert any("it comes back" in str(s) for s in explain(failed[0]))


def test_a_link_to_a_fresh_lab_that_cannot_open_is_refused_at_once(client: FlaskClient) -> None:
    """Run L: ``/?lesson=nope`` sent the browser on to a new lab's address, to say 404
    there: a lab id made for a link that could not open."""
    for query, status in (("lesson=nope", 404), ("present=2", 422), ("lab=nope", 404)):
        answer = client.get(f"/?{query}")
        assert answer.status_code == status and "Location" not in answer.headers
    assert client.get("/?lesson=race").status_code == 303


def test_queue_dedup_ticked_before_the_case_lists_the_cases_steps(
    app: Flask, client: FlaskClient
) -> None:
    """Run L: queue lesson 1, Dedup ticked by hand: "set that back first", then a list
    headed "The steps, with the fix:" that the attendee was told not to follow."""
    queue, card = _queue_card(app, client, "nu33-q1d", "redelivery")
    queue.update_settings({"dedup": True})
    now = card()
    assert "set that back first" in now
    assert "The steps, with the fix:" not in now
    assert "Choose the job send-invoice-42 and press Enqueue." in now  # the case's steps
