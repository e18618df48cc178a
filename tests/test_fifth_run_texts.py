"""The fifth new-user run through the ten payment lessons: what it found in the words of
the lesson cards (both languages)."""

from __future__ import annotations

import gettext
import io
import re

import pytest
from flask.testing import FlaskClient
from test_step_mode import make, quiet, requests, step

from demo import create_app
from demo.engine.stepping import PAUSED_MS
from demo.engine.text import translate
from demo.engine.timeline import Step
from demo.lessons.engine import Progress
from demo.lessons.payments import PATH
from demo.payments.explain.doubles import _how_both_charged
from demo.payments.requests import RequestEntry
from demo.payments.scenarios import SCENARIOS
from demo.registry import LabRegistry
from demo.web.i18n import TRANSLATIONS
from demo.web.payments.lanes import step_context

VI = gettext.GNUTranslations(io.BytesIO((TRANSLATIONS / "vi/LC_MESSAGES/messages.mo").read_bytes()))


@pytest.mark.parametrize("name", [lesson.name for lesson in PATH])
def test_every_lesson_badge_names_what_the_fix_switched(name: str) -> None:
    """Finding 2: lesson 4's badge said only "fix ON" after Apply the fix (lesson 1's says
    "fix ON: a stable key"). A defence's badge says "second case" instead."""
    scenario = SCENARIOS[name]
    if scenario.defence:
        return
    off, on = scenario.badge_for(False), scenario.badge_for(True)
    assert on.startswith("fix ON: ") and len(on) > len("fix ON: ")
    assert off.startswith("fix OFF: ") and len(off) > len("fix OFF: ")
    assert VI.gettext(on).startswith("cách sửa: BẬT, ")
    assert VI.gettext(off).startswith("cách sửa: TẮT, ")


def test_lesson_4_badge_says_the_lock_is_on() -> None:
    assert SCENARIOS["race"].badge_for(True) == "fix ON: Lock on"
    assert VI.gettext("fix ON: Lock on") == "cách sửa: BẬT, Lock bật"


def _card(client: FlaskClient, lab_id: str, language: str) -> str:
    answer = client.get(f"/lab/{lab_id}", headers={"Accept-Language": language})
    assert answer.status_code == 200
    found = re.search(r'<section id="lesson".*?</section>', answer.get_data(as_text=True), re.S)
    assert found
    return found.group(0)


def _apply_fix_button(card: str) -> str:
    found = re.search(r'<button type="submit" form="lesson-apply-fix"[^>]*>', card)
    assert found
    return found.group(0)


@pytest.mark.parametrize("language", ["en", "vi"])
def test_apply_the_fix_is_primary_only_once_the_first_check_is_met(language: str) -> None:
    """Findings 1 and 3: before step 1, "Apply the fix" was the dark primary button; and
    after a reload the page must know from the server that the case's steps are done."""
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu5-primary")
    lab.open_lesson("race")
    client = app.test_client()
    card = _card(client, lab.id, language)
    assert 'data-steps-done="false"' in card
    assert "primary" not in _apply_fix_button(card)
    assert "data-apply-fix" in _apply_fix_button(card)
    lab.progress["race"] = Progress(met_at={"lock-off-double": 0.0})
    card = _card(client, lab.id, language)
    assert 'data-steps-done="true"' in card
    assert 'class="primary"' in _apply_fix_button(card)


def test_the_race_explanation_says_how_much_of_its_time_you_paused() -> None:
    """Finding 4: lesson 5's explanation gave "+29897 ms" for a record save the attendee
    had held up for 29.9 s: the think time is named, as the timeline's "paused by you"."""
    first = RequestEntry(1, "Double-submit", started=10.0, key="k")
    first.steps += [
        Step("lookup", 3.0, {"hit": False}),
        Step("charging", 5.0, {PAUSED_MS: 29_880.0}),
        Step("record save", 29_897.0, {}),
    ]
    second = RequestEntry(2, "Double-submit", started=10.001, key="k")
    second.steps += [Step("lookup", 4.0, {"hit": False})]
    text = _how_both_charged(first, second)
    english = translate(text)
    assert "(+3 ms and +5 ms)" in english
    assert "(+29,897 ms, 29,880 ms of it paused by you)" in english
    vietnamese = translate(text, VI.gettext)
    assert "29,880 ms" in vietnamese and "paused by you" not in vietnamese


def test_lane_b_says_it_is_about_to_wait_for_as_lock() -> None:
    """Finding 4: after A took the lock and B's first step, lane B read "stopped after lock
    wait" although B only blocks on its next step: the card names the lock's holder."""
    lab = make(lock=True)
    with requests(lab, 2):
        step(lab, "A")  # lookup -> lock wait
        step(lab, "A")  # -> lock acquire: A holds the lock
        step(lab, "B")  # lookup -> lock wait: not blocked yet
        quiet(lab)
        lanes = {p["label"]: p for p in step_context(lab)["paused"]}
        assert lanes["B"]["step"] == "lock wait" and lanes["B"]["waiting"]
        assert lanes["B"]["lock_holder"] == "A" and lanes["B"]["blocked_by"] is None
        assert lanes["A"]["lock_holder"] is None
        while step(lab, "A"):
            pass  # A runs to its end and lets the lock go
        step(lab, "B")
        lanes = {p["label"]: p for p in step_context(lab)["paused"]}
        assert "A" not in lanes and lanes["B"]["lock_holder"] is None
    msgid = "stopped at <b>%(step)s</b>: about to wait for %(label)s's lock"
    assert "sắp phải chờ lock của" in VI.gettext(msgid)


def test_lesson_3_second_case_and_lesson_8_say_why() -> None:
    """Finding 6: lesson 3's second case read as a resend on the new key, its step 1 had no
    purpose; lesson 8's Retry did not say why i2 serves it."""
    steps = SCENARIOS["key-reuse"].steps_for(True)
    assert "first order" in steps[0] and "first request" in steps[2]
    assert "a different amount, under the new key" not in " ".join(steps)
    retry = SCENARIOS["multi-instance"].steps_for(False)[1]
    assert "round robin" in retry and "i2" in retry
    for text in (*steps, retry):
        assert VI.gettext(text) != text
    assert "round robin" in VI.gettext(retry)


@pytest.mark.parametrize(("language", "words"), [("en", "Go further:"), ("vi", "Đi xa hơn:")])
def test_the_wrap_up_points_to_the_other_labs(language: str, words: str) -> None:
    """Finding 5: the wrap-up after ten of ten names the workspace's other labs."""
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu5-wrap")
    for lesson in PATH:
        lab.progress[lesson.name] = Progress(met_at={c.id: 0.0 for c in lesson.checks})
    answer = app.test_client().get(f"/lab/{lab.id}", headers={"Accept-Language": language})
    html = answer.get_data(as_text=True)
    wrap_up = html[
        html.index("data-wrap-up") : html.index("</details>", html.index("data-wrap-up"))
    ]
    assert words in wrap_up
    for page in ("natural", "retries", "queue"):
        assert f'href="/lab/{lab.id}/{page}" data-go-further-lab="{page}"' in wrap_up
    assert 'data-go-further-lab="payments"' not in wrap_up
