"""The retry lab's chapter: each lesson achieved by doing what it asks, on the real lab
(its scenario, then its fix), and not achieved by the fix alone."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask.testing import FlaskClient

from demo.lessons import CHAPTERS, EVIDENCE, LESSONS
from demo.retries.scenarios import SCENARIOS
from demo.workspace import Workspace

LAB = "/lab/rl1"


def press(client: FlaskClient, action: str) -> None:
    """The scenario's button, with the settings the scenario set (the lab's own)."""
    if action == "run":
        answer = client.post(f"{LAB}/retries/api/run", json={})
    else:
        lab_state = client.get(f"{LAB}/retries/api/state").get_json()
        answer = client.post(f"{LAB}/retries/api/storm", json=lab_state["storm_request"])
    assert answer.status_code == 200, answer.get_json()


def open_lesson(client: FlaskClient, name: str) -> None:
    answer = client.post(f"{LAB}?lesson={name}")
    assert answer.status_code == 303
    assert answer.headers["Location"].endswith(f"{LAB}/retries")


def apply_fix(client: FlaskClient, name: str) -> None:
    answer = client.post(f"{LAB}?scenario={name}&fixed=1&lab=retries")
    assert answer.status_code == 303


def test_the_chapter_is_the_lab_s_scenarios() -> None:
    assert [lesson.name for lesson in CHAPTERS["retries"]] == list(SCENARIOS)
    assert all(LESSONS[name].lab == "retries" for name in SCENARIOS)
    assert "retries" in EVIDENCE


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_each_lesson_is_achieved_by_its_steps_then_its_fix(
    client: FlaskClient, lab_of: Callable[[str], Workspace], name: str
) -> None:
    open_lesson(client, name)
    scenario = SCENARIOS[name]
    for action in scenario.script:
        press(client, action)
    lesson = LESSONS[name]
    progress = lab_of("rl1").progress[name]
    assert progress.met == {lesson.checks[0].id}, "the failure shows first"
    apply_fix(client, name)
    for action in scenario.script:
        press(client, action)
    assert progress.achieved(lesson)
    assert name in lab_of("rl1").achieved()
    page = client.get(f"{LAB}/retries").text
    assert "Lesson achieved" in page and "1 of 5 achieved" in page


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_fix_alone_does_not_achieve_a_lesson(
    client: FlaskClient, lab_of: Callable[[str], Workspace], name: str
) -> None:
    open_lesson(client, name)
    apply_fix(client, name)
    for action in SCENARIOS[name].script:
        press(client, action)
    assert not lab_of("rl1").progress[name].achieved(LESSONS[name])


def test_a_storm_from_before_the_lesson_does_not_count(
    client: FlaskClient, lab_of: Callable[[str], Workspace]
) -> None:
    client.post(f"{LAB}/retries/api/storm", json={"model": "contention", "strategy": "exponential"})
    open_lesson(client, "jitter")
    apply_fix(client, "jitter")
    # Full jitter alone (the fix storms every strategy): no storm without jitter in this lesson.
    storm = {"model": "contention", "clients": 100, "strategy": "full_jitter", "seed": 1}
    assert client.post(f"{LAB}/retries/api/storm", json=storm).status_code == 200
    assert lab_of("rl1").progress["jitter"].met == set()


def test_a_hint_shows_on_the_retry_page(client: FlaskClient) -> None:
    open_lesson(client, "retry-after")
    answer = client.post(f"{LAB}/retries/lessons/retry-after/hint", headers={"HX-Request": "true"})
    assert answer.status_code == 200
    assert LESSONS["retry-after"].hints[0] in answer.text
    reset = client.post(f"{LAB}/retries/lessons/retry-after/reset")
    assert reset.status_code == 303 and reset.headers["Location"].endswith(f"{LAB}/retries")


def test_the_payment_page_keeps_to_its_own_chapter(
    client: FlaskClient, lab_of: Callable[[str], Workspace]
) -> None:
    open_lesson(client, "lost-response-retry")
    for fixed in (False, True):
        if fixed:
            apply_fix(client, "lost-response-retry")
        press(client, "run")
    assert "lost-response-retry" in lab_of("rl1").achieved()
    # The payment lab's page, with a lesson of another lab open: no 500, its own count.
    for path in (LAB, f"{LAB}/panels"):
        page = client.get(path)
        assert page.status_code == 200
        assert "0 of 10 achieved" in page.text
    assert "1 of 5 achieved" in client.get(f"{LAB}/retries").text


def test_no_hint_repeats_a_step() -> None:
    """A hint adds something the card does not say already."""
    for lesson in CHAPTERS["retries"]:
        steps = set(SCENARIOS[lesson.name].steps)
        assert not steps & set(lesson.hints), lesson.name
