"""The sixth new-user run through the ten payment lessons: what it found in step mode's
lanes, the lesson card's words and free play after a lesson (both languages)."""

from __future__ import annotations

import gettext
import io
import re
import threading

import pytest
from flask import Flask
from test_fifth_run_texts import _card
from test_step_mode import BODY, KEY, make, quiet, requests, step

from demo import create_app
from demo.lessons.engine import Progress
from demo.lessons.payments import PATH
from demo.payments.scenarios import SCENARIOS
from demo.registry import LabRegistry
from demo.web.i18n import TRANSLATIONS
from demo.web.payments.lanes import step_context
from demo.workspace import Workspace

VI = gettext.GNUTranslations(io.BytesIO((TRANSLATIONS / "vi/LC_MESSAGES/messages.mo").read_bytes()))


def stepping_lab(name: str, *, lock: bool) -> tuple[Flask, Workspace]:
    """An app and its lab ``name`` in step mode (gateway latency 0), for the step card."""
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get(name)
    lab.payments.update_settings({"step_mode": True, "lock": lock, "gateway_latency_ms": 0})
    return app, lab


def test_a_finished_lane_stays_with_its_answer_and_the_next_round_starts_at_a() -> None:
    """Finding 2: after "Run A to the end" A's lane vanished, with no word of how it ended."""
    lab = make(lock=True)
    with requests(lab, 2):
        step(lab, "A")  # lookup -> lock wait
        step(lab, "A")  # -> lock acquire: A holds the lock
        step(lab, "B")  # -> lock wait
        step(lab, "B")  # blocked on A's lock
        a = next(p for p in quiet(lab) if p["label"] == "A")
        lab.payments.stepper.step(a["request"], to_end=True)
        quiet(lab)
        context = step_context(lab)
        assert [f["label"] for f in context["finished"]] == ["A"]
        assert context["finished"][0]["entry"].outcome == "charged"
        assert [p["label"] for p in context["paused"]] == ["B"]  # B keeps its letter
    assert [f["label"] for f in lab.payments.stepper.finished()] == ["A", "B"]
    # A new round (no lane paused) forgets them and starts at A again.
    results: list[object] = []
    thread = threading.Thread(target=lambda: results.append(lab.payments.create_charge(KEY, BODY)))
    thread.start()
    try:
        assert [p["label"] for p in quiet(lab)] in ([], ["A"])
        while not lab.payments.stepper.paused():
            quiet(lab)
        assert [p["label"] for p in lab.payments.stepper.paused()] == ["A"]
        assert lab.payments.stepper.finished() == []
    finally:
        lab.payments.stepper.release_all()
        thread.join(10)
    lab.reset()
    assert lab.payments.stepper.finished() == []


@pytest.mark.parametrize(("language", "words"), [("en", "finished:"), ("vi", "đã xong:")])
def test_the_step_card_says_how_a_finished_lane_ended(language: str, words: str) -> None:
    app, lab = stepping_lab(f"nu6-finished-{language}", lock=False)
    with requests(lab, 2):
        while step(lab, "A"):
            pass  # A runs to its end: charged
        page = (
            app.test_client()
            .get(f"/lab/{lab.id}", headers={"Accept-Language": language})
            .get_data(as_text=True)
        )
    found = re.search(r'<li class="step-lane lane-A finished">.*?</li>', page, re.S)
    assert found, page[page.find('id="step"') :][:2000]
    assert words in found.group(0) and "ch_0001" in found.group(0)
    assert "data-step-label" not in found.group(0)  # nothing left to step


def test_lesson_5_second_case_says_b_takes_the_lock_as_a_ends() -> None:
    """Finding 3: "Run A to its end, then step B on: it takes the lock" while B had taken it
    the moment A let go (the lane said "stopped after lock acquire")."""
    text = SCENARIOS["slow-motion"].steps_for(True)[3]
    assert text.startswith("Run A to its end: B takes the lock the moment A lets go")
    assert "then step B on: it takes the lock" not in text
    assert "B lấy được lock ngay khi A nhả" in VI.gettext(text)


@pytest.mark.parametrize("language", ["en", "vi"])
def test_an_empty_lab_under_ticked_checks_does_not_say_not_run_yet(language: str) -> None:
    """Finding 6: an achieved lesson (or lesson 1 after Apply the fix) showed "Not run yet"
    under its ticked checks."""
    say = (lambda s: s) if language == "en" else VI.gettext
    not_run = say("Not run yet: follow the steps, or press Run the steps.")
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
    registry: LabRegistry = app.extensions["labs"]
    client = app.test_client()
    lab = registry.get(f"nu6-empty-{language}")
    lab.open_lesson("double-click")
    assert not_run in _card(client, lab.id, language)
    lab.progress["double-click"] = Progress(met_at={"keyless-double": 0.0})
    lab.apply_scenario("double-click", fixed=True)
    card = _card(client, lab.id, language)
    assert not_run not in card
    assert say("The first check is met (✓ above); the lab starts empty for the next: "
               "follow the steps, or press Run the steps.") in card  # fmt: skip
    checks = [c.id for c in next(x for x in PATH if x.name == "double-click").checks]
    lab.progress["double-click"] = Progress(met_at=dict.fromkeys(checks, 0.0))
    card = _card(client, lab.id, language)
    assert say("Achieved already: press Run the steps to see it again.") in card
    assert not_run not in card


@pytest.mark.parametrize("language", ["en", "vi"])
def test_free_play_says_the_answer_shown_came_from_the_lesson_left(language: str) -> None:
    """Finding 7: the wrap-up (free play after lesson 10) sat above lesson 10's big outcome
    box, as if that answer were free play's."""
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
    registry: LabRegistry = app.extensions["labs"]
    client = app.test_client()
    lab = registry.get(f"nu6-left-{language}")
    lab.open_lesson("lost-response")
    lab.payments.create_charge(KEY, BODY)
    lab.leave_scenario()
    page = client.get(f"/lab/{lab.id}", headers={"Accept-Language": language})
    text = page.get_data(as_text=True)
    title = SCENARIOS["lost-response"].title
    shown = title if language == "en" else VI.gettext(title)
    assert re.search(r'<p class="from-scenario">[^<]*' + re.escape(shown), text)
    lab.payments.create_charge(KEY, BODY)  # free play's own request: no caption
    text = client.get(f"/lab/{lab.id}", headers={"Accept-Language": language}).get_data(
        as_text=True
    )
    assert 'class="from-scenario"' not in text


@pytest.mark.parametrize("page", ["", "/natural", "/retries", "/queue"])
@pytest.mark.parametrize("present", [False, True])
def test_every_lab_page_keeps_scenario_language_and_presenter_switch_in_its_header(
    page: str, present: bool
) -> None:
    """Finding 8: presenter mode hid Language, Scenario and Shortcuts; it folds them under
    one small Menu button instead, on every lab's page."""
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get(f"nu6-header{page.replace('/', '-')}-{present}")
    lab.present = present
    text = app.test_client().get(f"/lab/{lab.id}{page}").get_data(as_text=True)
    header = re.search(r'<header class="top">.*?</header>', text, re.S)
    assert header
    tools = re.search(r'<(details|div) class="view-tools">(.*?)</\1>', header.group(0), re.S)
    assert tools and tools.group(1) == ("details" if present else "div")
    assert ("<summary" in tools.group(2)) is present
    for control in ('id="scenario-select"', 'id="language-select"'):
        assert tools.group(2).count(control) == 1
    # The shortcuts on every lab's page (the twenty-first run: only the payment lab had them).
    assert tools.group(2).count("data-shortcuts") == 1
    assert header.group(0).count('class="present-switch"') == 1
