"""The thirty-fifth session: what run O left, checked in the lab's words."""

from __future__ import annotations

import io

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_retries_page import POLICY, preset
from test_thirtieth_run_texts import EN

from demo.registry import LabRegistry


def _retry_card(client: FlaskClient, lab_id: str) -> str:
    page = client.get(f"/lab/{lab_id}/retries", headers=EN).get_data(as_text=True)
    return page[page.index('id="lesson"') : page.index("</section>", page.index('id="lesson"'))]


@pytest.mark.parametrize("max_attempts", ["1", "2"])
def test_a_run_with_one_attempt_says_nothing_was_retried(
    app: Flask, client: FlaskClient, max_attempts: str
) -> None:
    """Run O: retry lesson 1 with max_attempts 1 showed a green "as expected" (Attempts 1)
    beside a red "MISMATCH" (Outcome GAVE UP), and no word why."""
    registry: LabRegistry = app.extensions["labs"]
    lab_id = f"nu35-one-{max_attempts}"
    registry.get(lab_id).open_lesson("retry-policy")
    plan = {
        **POLICY,
        "max_attempts": max_attempts,
        "strategy": "exponential",  # the case's own
        "retry_on": [*POLICY["retry_on"], "400"],
        "faults_choice": preset(400),
    }
    assert client.post(f"/lab/{lab_id}/retries/run", data=plan).status_code == 303
    card = _retry_card(client, lab_id)
    said = "Nothing was retried: max_attempts is 1, so the client gave up after its first"
    if max_attempts == "1":
        assert said in card
        assert "MISMATCH" not in card and "as expected" not in card
        assert card.count('class="numbers pending"') == 2
    else:  # a retry happened: the card's own verdicts stand
        assert said not in card and "the failure you caused, kept as evidence" in card


@pytest.mark.parametrize(
    ("here", "lesson", "other", "tab"),
    [
        ("", "slow-motion", "set-vs-add", "Operations"),
        ("/retries", "retry-policy", "redelivery", "Queue"),
        ("/natural", "set-vs-add", "double-click", "Payments"),
    ],
)
def test_a_lesson_closed_by_one_in_another_lab_says_why_it_is_a_scenario(
    app: Flask, client: FlaskClient, here: str, lesson: str, other: str, tab: str
) -> None:
    """Run P: a lesson came back as "Scenario: … Run as a scenario, it ticks none of the
    lesson's checks" after a lesson was started in another lab, with no word why."""
    registry: LabRegistry = app.extensions["labs"]
    lab_id = f"nu35-elsewhere-{tab}"
    lab = registry.get(lab_id)
    lab.open_lesson(lesson)
    said = f"One lesson is open at a time, and the open one is now in the {tab} lab"
    page = client.get(f"/lab/{lab_id}{here}", headers=EN).get_data(as_text=True)
    assert said not in page
    lab.open_lesson(other)
    page = client.get(f"/lab/{lab_id}{here}", headers=EN).get_data(as_text=True)
    assert said in page
    assert "Run as a scenario, it ticks none of the" in page


def test_the_two_tab_step_says_a_tab_open_before_new_order_holds_the_old_one(
    app: Flask, client: FlaskClient
) -> None:
    """Run P: a second tab opened before New order still held order 42 while the first held
    43; paying both charged each once, and the guard seemed to hold across tabs."""
    registry: LabRegistry = app.extensions["labs"]
    registry.get("nu35-guard").apply_scenario("client-guard")
    html = client.get("/lab/nu35-guard", headers=EN).get_data(as_text=True)
    assert "Press New order, then open a second tab on this lab (a tab already open" in html
    assert "holds the old order: reload it), and press Pay in both tabs within 2 s." in html


def test_a_run_that_kept_the_failure_away_by_hand_says_so(app: Flask, client: FlaskClient) -> None:
    """Run P: retry lesson 3 with a fixed 4 s backoff set by hand: "as expected" twice under
    two open checks, and no word why."""
    registry: LabRegistry = app.extensions["labs"]
    registry.get("nu35-missed").open_lesson("retry-after")
    plan = {
        **POLICY,
        "strategy": "fixed",
        "base_ms": "4000",
        "faults_choice": preset(429, "ok"),
    }
    plan.pop("respect_retry_after")  # an unticked box is not sent
    assert client.post("/lab/nu35-missed/retries/run", data=plan).status_code == 303
    card = _retry_card(client, "nu35-missed")
    assert card.count("as expected") == 2 and 'class="met"' not in card
    assert "This run went as the fix expects, but without the fix: what you set by hand" in card
    case = {**plan, "strategy": POLICY["strategy"], "base_ms": POLICY["base_ms"]}
    assert client.post("/lab/nu35-missed/retries/run", data=case).status_code == 303
    card = _retry_card(client, "nu35-missed")  # the case itself: the early retry seen
    assert 'class="met"' in card and "went as the fix expects, but without" not in card


def test_producer_retry_waits_for_a_first_send(client: FlaskClient) -> None:
    """Run P: "Producer retry sends the last job again", pressed before any Enqueue, sent
    send-invoice-42 as if it were a retry of something."""
    html = client.get("/lab/nu35-retry/queue", headers=EN).get_data(as_text=True)
    button = html[
        html.index('id="producer-retry"') : html.index(
            "</button>", html.index('id="producer-retry"')
        )
    ]
    assert " disabled>" in button and "Nothing is sent yet: press Enqueue first." in html
    client.post("/lab/nu35-retry/queue/enqueue", data={"job": "42"}, headers=EN)
    html = client.get("/lab/nu35-retry/queue", headers=EN).get_data(as_text=True)
    button = html[
        html.index('id="producer-retry"') : html.index(
            "</button>", html.index('id="producer-retry"')
        )
    ]
    assert " disabled" not in button and "Nothing is sent yet" not in html


def test_a_refused_replay_file_leads_back_to_the_lab_it_came_from(
    app: Flask, client: FlaskClient
) -> None:
    """Run P: a bad replay file's error page offered only "Open a fresh lab"."""
    app.extensions["labs"].get("nu35-home")  # a lab in use
    page = client.get("/lab/nu35-home", headers=EN).get_data(as_text=True)
    assert 'action="/replay?from=nu35-home"' in page
    bad = {"history": (io.BytesIO(b"not json"), "history.json")}
    answer = client.post("/replay?from=nu35-home", data=bad, headers={**EN, "Accept": "text/html"})
    assert answer.status_code == 400
    assert '<a href="/lab/nu35-home" class="back-to-lab">Back to your lab</a>' in answer.text
    unknown = {"history": (io.BytesIO(b"not json"), "history.json")}
    answer = client.post(
        "/replay?from=nobody-here", data=unknown, headers={**EN, "Accept": "text/html"}
    )
    assert "Back to your lab" not in answer.text  # only a lab that exists


def test_numbers_from_a_case_changed_by_hand_are_not_called_its_failure(
    app: Flask, client: FlaskClient
) -> None:
    """Run P: retry lesson 4 stormed with 1,000 clients and full jitter by hand: "Calls
    expected with the fix ≤ 1,000, actual 16,914: the failure you caused, kept as evidence"
    under "Lesson achieved"."""
    from test_retries_page import storm_form

    registry: LabRegistry = app.extensions["labs"]
    registry.get("nu35-storm").open_lesson("jitter")
    case = storm_form(strategy="exponential")
    assert client.post("/lab/nu35-storm/retries/storm", data=case).status_code == 303
    card = _retry_card(client, "nu35-storm")
    assert "its settings were changed by hand" not in card and 'class="met"' in card
    more = storm_form(strategy="full_jitter", clients="1000")
    assert client.post("/lab/nu35-storm/retries/storm", data=more).status_code == 303
    card = _retry_card(client, "nu35-storm")
    assert "s numbers: its settings were changed by hand" in card
    assert "the failure you caused" not in card and "MISMATCH" not in card
    fewer = storm_form(strategy="full_jitter", clients="50")  # run Q: fewer calls, not the case's
    assert client.post("/lab/nu35-storm/retries/storm", data=fewer).status_code == 303
    card = _retry_card(client, "nu35-storm")
    assert "s numbers: its settings were changed by hand" in card and "as expected" not in card


def test_the_step_mode_check_names_no_lane_as_the_holder() -> None:
    """Run Q: B stepped first held the lock and A waited, yet the check that ticked said
    "B waited for A's lock while A held it"; the check counts either lane as the holder."""
    from demo.lessons import LESSONS

    label = LESSONS["slow-motion"].checks[-1].label
    assert "one request waited for the other's lock while it was held" in label
    assert "B waited for A" not in label


def test_a_retry_lesson_leaves_the_payment_labs_scenario_for_free_play(
    app: Flask, client: FlaskClient
) -> None:
    """Run Q: payment lesson 3 left open as a scenario while the retry chapter ran: back on
    the payment lab its card read "Charges expected 9 actual 10: 1 extra, the failure you
    caused", the extra charge being the retry lab's new-key double charge."""
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu35-left")
    lab.open_lesson("key-reuse")
    lab.open_lesson("lost-response-retry")
    assert lab.payments.scenario is None
    page = client.get("/lab/nu35-left", headers=EN).get_data(as_text=True)
    assert 'data-scenario-open="key-reuse"' not in page


def test_the_dead_letter_line_quotes_no_setting_changed_since(
    app: Flask, client: FlaskClient
) -> None:
    """Run Q: Max attempts set to 3 after a message was received 4 times: "the broker gave
    up on after 3 receives" beside "4 / 3" in the table."""
    from test_thirty_first_run_texts import _queue_card

    queue, _ = _queue_card(app, client, "nu35-dead", "poison-message")
    queue.play("poison-message", fixed=True)
    before = queue.settings.max_attempts
    queue.update_settings({"max_attempts": before - 1})
    page = client.get("/lab/nu35-dead/queue", headers=EN).get_data(as_text=True)
    line = page[
        page.index('class="dead-letters"') : page.index("</p>", page.index('class="dead-letters"'))
    ]
    assert "gave up on once received Max attempts times (the setting then)" in line
    assert f"after {before - 1} receives" not in line


def test_the_dedup_switch_says_it_is_sent_with_each_retry(client: FlaskClient) -> None:
    """Run R: Dedup unticked, then the page reloaded: the box was ticked again (the last
    value sent), with nothing saying that an untick counts only once a Retry sends it."""
    page = client.get("/lab/nu35-ops/natural", headers=EN).get_data(as_text=True)
    label = page[
        page.index('id="ops-dedup"') : page.index("</label>", page.index('id="ops-dedup"'))
    ]
    assert (
        "(sent along with each Retry, not saved on its own: after a reload it shows what the "
        "last Retry sent)"
    ) in label
