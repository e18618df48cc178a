"""The thirty-fourth session: what run M found, checked in the lab's words."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_thirtieth_run_texts import EN
from test_thirty_first_run_texts import _queue_card
from test_thirty_third_run_texts import _next_step_form, enqueue_twice_by_hand


def test_queue_fix_applied_before_the_case_says_the_checks_count_in_order(
    app: Flask, client: FlaskClient
) -> None:
    """Queue lesson 6, Apply the fix before the case: "as expected", both checks open, no
    word why, and no Next step left on the card."""
    queue, card = _queue_card(app, client, "nu34-q6", "poison-message")
    queue.play("poison-message", fixed=True)
    html = card()
    assert "The checks count in order: the first is not met yet" in html
    assert "Press Run again without the fix and see it go wrong first." in html
    form = _next_step_form(html)
    assert 'name="fixed" value="0"' in form
    assert "The case afresh, step 1 of 8" in form


def test_an_idle_work_call_beside_a_dead_letter_does_not_call_the_queue_empty(
    app: Flask, client: FlaskClient
) -> None:
    """Run M: "the queue is empty" above "The queue (messages: 1)" holding the dead letter."""
    queue, _ = _queue_card(app, client, "nu34-q6e", "poison-message")
    queue.play("poison-message", fixed=True)
    queue._click("work", None)
    page = client.get("/lab/nu34-q6e/queue", headers=EN).get_data(as_text=True)
    assert "nothing is left to deliver" in page
    assert "a dead-lettered one waits in the dead-letter queue" in page
    assert "the queue is empty" not in page


def test_apply_the_fix_keeps_the_attempts_the_attendee_chose(
    app: Flask, client: FlaskClient
) -> None:
    """Run M: operations lesson 1 with Attempts 5: Apply the fix put the field back to 3
    without a word, and the goal spoke of "three attempts"."""
    registry = app.extensions["labs"]
    lab = registry.get("nu34-ops")
    lab.open_lesson("set-vs-add")
    lab.natural.apply({"operation": "add_balance", "times": 5, "dedup": False})
    lab.apply_scenario("set-vs-add", fixed=True, lab="natural")
    page = client.get("/lab/nu34-ops/natural", headers=EN).get_data(as_text=True)
    assert (
        'id="ops-times" name="times" autocomplete="off" type="number" min="1" max="10" value="5"'
        in page
    )
    assert "three attempts" not in page


def test_queue_presses_off_the_steps_are_no_mismatch(app: Flask, client: FlaskClient) -> None:
    """Run M: queue lesson 1, Enqueue pressed twice by hand and no Work yet: a red
    "E-mails for one key … MISMATCH" under "fix OFF", and the fix's steps offered."""
    queue, card = _queue_card(app, client, "nu34-q1", "redelivery")
    enqueue_twice_by_hand(queue)
    html = card()
    assert (
        "off the steps: a button pressed out of their order, so Next step starts the case afresh"
        in html
    )
    assert "MISMATCH" not in html
    assert 'class="fix-steps"' not in html
    queue.play_next()  # Next step: back on the steps
    assert "off the steps" not in card()


@pytest.mark.parametrize("page", ["natural", "queue", "retries"])
def test_a_replay_says_its_other_labs_are_empty(app: Flask, client: FlaskClient, page: str) -> None:
    """Run N: in a replay, the Operations, Retries and Queue tabs showed empty labs ("Nothing
    yet: press Enqueue") with no word that an export holds the payment lab only."""
    registry = app.extensions["labs"]
    registry.get("nu34-ro")
    registry.peek("nu34-ro").read_only = True
    html = client.get(f"/lab/nu34-ro/{page}", headers=EN).get_data(as_text=True)
    assert "an export holds the payment lab only, so this lab is empty here" in html
    assert 'href="/lab/nu34-ro">The exported history, in the payment lab →</a>' in html
    fresh = client.get(f"/lab/nu34-rw/{page}", headers=EN).get_data(as_text=True)
    assert "an export holds the payment lab only" not in fresh


def test_a_pixel_window_chosen_by_hand_says_the_steps_are_for_30_minutes(
    app: Flask, client: FlaskClient
) -> None:
    """Run N: operations lesson 4 with the 1-minute window chosen by hand: the steps said a
    reload after +10 min was "not counted either", and it was counted."""
    registry = app.extensions["labs"]
    lab = registry.get("nu34-px")
    lab.open_lesson("tracking-pixel")
    lab.apply_scenario("tracking-pixel", fixed=True, lab="natural")
    page = client.get("/lab/nu34-px/natural", headers=EN).get_data(as_text=True)
    assert "counts are for 30 minutes" not in page  # the fix's own window
    lab.natural.update_settings({"pixel_dedup_window_s": 60})
    page = client.get("/lab/nu34-px/natural", headers=EN).get_data(as_text=True)
    assert "the steps' counts are for 30 minutes, so yours may differ" in page


def test_a_bad_fault_plan_item_is_counted_from_1(client: FlaskClient) -> None:
    """Run N: "faults[1] must be one of…" flagged the second item, counted from 0."""
    answer = client.post(
        "/lab/nu34-f/retries/api/run", json={"faults": ["ok", 418]}, headers=EN
    ).get_json()
    assert answer["detail"].startswith("Fix the fault plan: item 2 must be one of")
    assert "faults[1]" in answer["errors"]  # the API's own path stays


def test_a_body_too_large_says_so_in_plain_words(client: FlaskClient) -> None:
    """Run N: a long fault plan got only "413 Request Entity Too Large: The body is larger
    than 16384 bytes"."""
    answer = client.post(
        "/lab/nu34-big/retries/api/run", json={"faults": ["ok"] * 5000}, headers=EN
    )
    assert answer.status_code == 413
    body = answer.get_json()
    assert body["title"] == "Request too large"
    assert body["detail"].endswith("the most the lab takes: nothing was run or changed.")


def test_a_case_afresh_never_starts_from_one_attempt(app: Flask, client: FlaskClient) -> None:
    """Run O: operations lesson 1 with Attempts 1: Next step started the case afresh, still
    with one attempt, which retries nothing, press after press."""
    lab = app.extensions["labs"].get("nu34-a1")
    lab.open_lesson("set-vs-add")
    lab.natural.apply({"operation": "add_balance", "times": 1, "dedup": False})
    lab.apply_scenario("set-vs-add", lab="natural")
    page = client.get("/lab/nu34-a1/natural", headers=EN).get_data(as_text=True)
    assert 'min="1" max="10" value="3"' in page


def test_the_queue_chapters_last_lesson_achieved_leads_back_to_the_payment_lab(
    app: Flask, client: FlaskClient
) -> None:
    """Run O: queue lesson 6 achieved: no Next step and no way on ("." did nothing)."""
    queue, card = _queue_card(app, client, "nu34-q6d", "poison-message")
    queue.play("poison-message")
    queue.play("poison-message", fixed=True)
    html = card()
    assert "Lesson achieved" in html
    assert 'href="/lab/nu34-q6d" data-next-step-server data-onward' in html
    assert "Back to the payment lab&#39;s lessons →" in html or (
        "Back to the payment lab's lessons →" in html
    )
