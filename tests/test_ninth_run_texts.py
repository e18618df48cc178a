"""The ninth new-user run through the ten payment lessons: what it left, in the page's
words and order (both languages): lesson 3's second case, the advice under a charge, the
failure lab after a lesson, the server card's switches and the lesson card's order."""

from __future__ import annotations

import json
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_advice_stays_true import EN, VI, lab, page, pay, section
from test_sixth_run_texts import VI as VI_CATALOGUE

from demo.payments.explain.charged import RETRY
from demo.payments.scenarios import SCENARIOS

# The pages' untranslated texts are marked (see conftest's ``app``).
APP_CONFIG = {"I18N_MARK_MISSING": True}


def test_lesson_3s_second_case_sends_the_new_orders_first_request_with_pay() -> None:
    """Two testers stopped on "Change amount & resend" sending a new order's first request:
    its name says resend. The second case now says New order, then Pay."""
    scenario = SCENARIOS["key-reuse"]
    assert scenario.clicks(True) == ("Pay", "New order", "Pay")
    steps = " ".join(scenario.steps_for(True))
    assert "Change amount" not in steps and "resend" not in steps
    assert scenario.fix_text.startswith(
        "A different intent gets a new key: Pay, then New order, then Pay again"
    )
    for text in (*scenario.steps_for(True), scenario.fix_text, scenario.goal_for(True, "")):
        translated = VI_CATALOGUE.gettext(text)
        assert translated != text and "gửi lại" not in translated
    # The first case still shows the refusal with Change amount & resend.
    assert scenario.clicks(False) == ("Pay", "Change amount")


def test_lesson_3s_second_case_is_achieved_by_its_own_steps(
    app: Flask, client: FlaskClient
) -> None:
    the_lab = lab(app, "nu9-l3")
    the_lab.open_lesson("key-reuse")
    assert pay(client, the_lab.id, amount=100000).status_code == 201
    assert pay(client, the_lab.id, amount=101000, action="Change amount").status_code == 409
    the_lab.apply_scenario("key-reuse", fixed=True)
    assert pay(client, the_lab.id).status_code == 201  # step 1: Pay
    new_key = "t1:u7:pay:order-43:v1"  # step 2: New order; step 3: Pay
    assert pay(client, the_lab.id, key=new_key, order_id="43").status_code == 201
    assert the_lab.achieved() == {"key-reuse"}


def test_the_advice_under_a_charge_tells_what_a_retry_would_do_without_asking_for_one(
    app: Flask, client: FlaskClient
) -> None:
    """Lesson 3 achieved, and the outcome still said "Press Retry: …", as if one more step
    were due. It now says what a Retry from here would do."""
    assert not RETRY.startswith("Press")
    the_lab = lab(app, "nu9-advice")
    pay(client, the_lab.id)
    assert RETRY in section(page(client, the_lab.id, EN), "explain")
    vi = section(page(client, the_lab.id, VI), "explain")
    assert VI_CATALOGUE.gettext(RETRY) in vi and not VI_CATALOGUE.gettext(RETRY).startswith("Bấm")


def _failures_open(client: FlaskClient, lab_id: str) -> bool:
    html = page(client, lab_id, EN)
    found = re.search(r'<details id="failure-lab" class="failures"( open)?>', html)
    assert found
    return found.group(1) is not None


def test_the_failure_lab_stays_open_in_free_play_after_a_lesson(
    app: Flask, client: FlaskClient
) -> None:
    """In free play the failure lab was folded, though it was open during the lesson just
    left: free play goes on from there. A first visit keeps it folded."""
    the_lab = lab(app, "nu9-free")
    assert not _failures_open(client, the_lab.id)  # a first visit: folded
    the_lab.open_lesson("double-click")
    assert _failures_open(client, the_lab.id)
    pay(client, the_lab.id, key="")
    the_lab.leave_scenario()
    assert the_lab.payments.scenario is None
    assert _failures_open(client, the_lab.id)
    # A fault armed by hand in a fresh lab opens it too (its armed line says so).
    other = lab(app, "nu9-armed")
    other.payments.update_settings({"fault": "gateway_error"})
    assert _failures_open(client, other.id)


@pytest.mark.parametrize("headers", [EN, VI])
def test_step_mode_is_a_switch_like_the_lock(
    app: Flask,
    client: FlaskClient,
    headers: dict[str, str],
) -> None:
    """Presenter mode: the Step mode checkbox was small beside the Lock's switch. It is a
    switch of the same kind and size, its hint under both."""
    html = page(client, "nu9-switch", headers)
    switch = (
        r'<label class="switch step-mode"><input type="checkbox" name="step_mode" role="switch" '
        r'aria-describedby="step-mode-hint"[^>]*>\s*<span class="switch-label">([^<]+)</span>'
    )
    found = re.search(switch, html)
    assert found
    assert found.group(1) == ("Step mode" if headers is EN else "Chế độ từng bước")
    hint = "(each request stops at every step until you step it)"
    said = hint if headers is EN else VI_CATALOGUE.gettext(hint)
    assert f'id="step-mode-hint" class="step-mode-hint">{said}<' in html


def test_the_lesson_cards_buttons_come_before_its_why_and_fix(
    app: Flask, client: FlaskClient
) -> None:
    """At 1280x720 lesson 6's buttons began at the fold: the why and the fix (read best once
    the case has run) now come after them."""
    the_lab = lab(app, "nu9-order")
    the_lab.open_lesson("crash-window")
    card = section(page(client, the_lab.id, EN), "lesson")
    actions = card.index('class="lesson-actions"')
    assert actions < card.index('class="why"') and actions < card.index('class="fix-text"')
    assert card.index('class="checks"') < actions


def test_leaving_an_achieved_lesson_by_its_key_asks_in_both_languages(
    app: Flask, client: FlaskClient
) -> None:
    """Extra presses of "." after "Lesson achieved" went on into the next lesson: the page
    now asks first, in the page's language (the script's words come from the server)."""
    for headers, words in (
        (EN, "The steps are done. Press Next step (.) again to go on: {button}"),
        (VI, "Các bước đã xong. Bấm Bước tiếp (.) lần nữa để đi tiếp: {button}"),
    ):
        html = page(client, "nu9-ask", headers)
        found = re.search(r'<script type="application/json" id="i18n-strings">(.*?)</script>',
                          html, re.S)  # fmt: skip
        assert found and json.loads(found.group(1))["leave_ask"] == words
