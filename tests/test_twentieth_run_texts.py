"""The twentieth new-user run, in both languages: the first screen says which of its two
dark buttons a newcomer wants, the key's "version" is explained, the operations lab's
first steps say one press runs all the attempts, and the retry lab explains its 402 and
what GAVE UP and FINAL ERROR mean."""

from __future__ import annotations

import gettext
import html as html_lib
import io
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from demo.natural.scenarios import SCENARIOS as OPERATIONS_LESSONS
from demo.retries.scenarios import SCENARIOS as RETRY_LESSONS
from demo.web.i18n import MISSING, TRANSLATIONS

EN = {"Accept-Language": "en"}
VI = {"Accept-Language": "vi"}
HTMX = {"HX-Request": "true"}
VI_TEXT = gettext.GNUTranslations(
    io.BytesIO((TRANSLATIONS / "vi/LC_MESSAGES/messages.mo").read_bytes())
)
NEW_HERE = "New here? Start with the lessons"


# The shared app and client fixtures (conftest.py), with untranslated texts marked.
APP_CONFIG = {"I18N_MARK_MISSING": True}


def text_of(client: FlaskClient, url: str, headers: dict[str, str]) -> str:
    answer = client.get(url, headers=headers)
    assert answer.status_code == 200
    assert MISSING not in answer.text
    return html_lib.unescape(answer.text)


def test_the_first_screen_says_which_dark_button_a_newcomer_wants(client: FlaskClient) -> None:
    """Start the lessons and Pay were both dark: the tester did not know where to begin."""
    html = text_of(client, "/lab/nu20-first", EN)
    assert NEW_HERE in html and "Pay and the form's other buttons are free play" in html
    vi = text_of(client, "/lab/nu20-first", VI)
    assert "Lần đầu dùng? Hãy bắt đầu với các bài học" in vi
    # Once something was sent, the lab is in use: the line is gone.
    pay = client.post(
        "/lab/nu20-first/api/charges",
        json={"order_id": "42", "amount": 100000},
        headers={"Idempotency-Key": "t1:u7:pay:order-42:v1"},
    )
    assert pay.status_code == 201
    assert NEW_HERE not in text_of(client, "/lab/nu20-first", EN)


def test_the_key_fields_label_says_what_its_version_is_for(client: FlaskClient) -> None:
    html = text_of(client, "/lab/nu20-key", EN)
    assert "order:version; v2: a new intent)" in html
    assert "version; v2: ý định mới)" in text_of(client, "/lab/nu20-key", VI)


def test_the_operations_labs_first_steps_say_one_press_runs_every_attempt() -> None:
    """The step said: Retry “SET balance = 100” 3 times. The tester pressed Retry it three
    times, and ran nine attempts."""
    for name in ("set-vs-add", "which-are-natural"):
        lesson = OPERATIONS_LESSONS[name]
        for step in (*lesson.steps_for(False), *lesson.steps_for(True)):
            if "Retry" in step:
                assert "once" in step and "3 times" not in step.replace("(3) times", ""), step
                assert VI_TEXT.gettext(step) != step, step
    assert "Retry it" in OPERATIONS_LESSONS["set-vs-add"].steps[0]


def test_the_retry_policy_fix_keeps_the_plan_and_names_the_402() -> None:
    """The fix turned the plan's 400s into 402s: the tester asked why (the twentieth run),
    then read it as the fix changing the fault rather than the policy (the twenty-first).
    The fix keeps the 400 plan; its second step runs a declined card."""
    lesson = RETRY_LESSONS["retry-policy"]
    assert lesson.faults_for(True) == lesson.faults_for(False) == (400, 400, 400, 400)
    first, second = lesson.steps_for(True)
    assert "400" in first and "402" in second
    for step in (first, second):
        assert VI_TEXT.gettext(step) != step


@pytest.mark.parametrize(
    ("plan", "outcome", "meaning", "vi"),
    [
        (
            "400, 400, 400, 400",
            "gave_up",
            "still failing when the policy's attempts ran out",
            "vẫn thất bại khi đã hết số lần thử",
        ),
        (
            "402",
            "final_error",
            "stopped at an answer the policy does not retry",
            "dừng ở một phản hồi mà chính sách không thử lại",
        ),
    ],
)
def test_the_last_run_says_what_its_outcome_word_means(
    client: FlaskClient, plan: str, outcome: str, meaning: str, vi: str
) -> None:
    """GAVE UP and FINAL ERROR were never defined on the page."""
    form = {
        "max_attempts": "4",
        "strategy": "none",
        "base_ms": "10",
        "cap_ms": "100",
        "retry_on": ["network", "400", "500"],
        "same_key": "on",
        "faults_choice": "custom",
        "faults": plan,
    }
    for headers, said in ((EN, meaning), (VI, vi)):
        answer = client.post("/lab/nu20-run/retries/run", data=form, headers={**HTMX, **headers})
        assert answer.status_code == 200
        html = html_lib.unescape(answer.text)
        assert f'data-outcome="{outcome}"' in html and said in html


def test_the_legend_does_not_call_a_double_click_both_one_and_two_at_once(
    client: FlaskClient,
) -> None:
    """Pay's line said a real double click sends one request after the other; Double-submit's
    said it was "like a double click": the tester read two answers to one question."""
    html = text_of(client, "/lab/nu20-legend", EN)
    legend = html[html.index('id="legend"') : html.index("</section>", html.index('id="legend"'))]
    assert "a real double click sends one request after the other" in legend
    assert "like a double click" not in legend and "a client that does not wait" in legend
    vi = text_of(client, "/lab/nu20-legend", VI)
    assert "như cú bấm đúp từ một client không chờ" in vi


def test_every_queue_scenario_lists_the_clicks_its_run_makes_as_steps(
    app: Flask, client: FlaskClient
) -> None:
    """The queue lab's card said "do its steps with the buttons" and listed none."""
    from demo.engine.text import translate
    from demo.queue.scenarios import SCENARIOS as QUEUE_SCENARIOS
    from demo.web.queue.steps import scenario_steps

    for scenario in QUEUE_SCENARIOS.values():
        for fixed in (False, True):
            steps = [str(step) for step in scenario_steps(scenario, fixed)]
            clicks = scenario.fix_clicks if fixed and scenario.fix_clicks else scenario.clicks
            assert sum(2 if s.endswith("twice.") else 1 for s in steps) == len(clicks)
            for step in scenario_steps(scenario, fixed):
                assert translate(step, VI_TEXT.gettext) != str(step), step
    outbox = [str(s) for s in scenario_steps(QUEUE_SCENARIOS["outbox"], True)]  # the fix's case
    assert outbox[4] == "Set Crash (once) to “relay: sent, not yet marked sent”, in the settings."
    app.extensions["labs"].get("nu20-queue").open_lesson("redelivery")
    html = text_of(client, "/lab/nu20-queue/queue", EN)
    assert "<li>Choose the job send-invoice-42 and press Enqueue.</li><li>Press Work.</li>" in html


def _charger(n: int, started: float, charge_id: str, outcome: str = "charged") -> Any:
    from demo.payments.charges import ChargeRequest
    from demo.payments.requests import RequestEntry

    entry = RequestEntry(n, "Pay", started=started, key="k", finished=started + 0.3)
    entry.outcome = outcome  # type: ignore[assignment]
    entry.charge_id = charge_id
    entry.status = 200 if outcome == "replayed" else 201
    entry.charge = ChargeRequest(order_id="42", amount=100, currency="VND")
    return entry


@pytest.mark.parametrize("language", ["en", "vi"])
def test_a_replay_after_a_race_says_why_it_names_the_second_charge(language: str) -> None:
    """Lesson 4, the Lock ticked by hand after the race, then Retry: REPLAYED ch_0002. The
    tester asked why not ch_0001, the first charge."""
    from demo.engine.text import translate
    from demo.payments.explain.replayed import replayed
    from demo.payments.gateway import LedgerSummary

    summary = LedgerSummary(charged=2, intended=1, doubled=frozenset({"42"}))
    race = [_charger(1, 10.0, "ch_0001"), _charger(2, 10.01, "ch_0002")]
    retry = _charger(3, 20.0, "ch_0002", "replayed")
    lookup = VI_TEXT.gettext if language == "vi" else None
    sentences = replayed(retry, [*race, retry], summary).sentences
    told = " ".join(translate(s, lookup) for s in sentences)
    if language == "en":
        assert "the later save overwrote ch_0001" in told
        assert "ch_0002 is what replays" in told
    else:
        assert "ch_0001" in told and "ghi đè" in told
    # A record that expired and was charged afresh raced nothing: not told as overwritten.
    later = [_charger(1, 10.0, "ch_0001"), _charger(2, 100.0, "ch_0002")]
    retry = _charger(3, 120.0, "ch_0002", "replayed")
    told = " ".join(translate(s) for s in replayed(retry, [*later, retry], summary).sentences)
    assert "overwrote" not in told
