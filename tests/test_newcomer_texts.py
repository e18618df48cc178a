"""Texts that must agree with what just happened, in both languages: lesson steps before
and after the fix, the empty-state hint, "what protects you" framing, the settings label,
the profiles table and the wrap-up after the last lesson."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient

from demo.lessons import PATH
from demo.payments.scenarios import SCENARIOS
from demo.registry import LabRegistry
from demo.web.i18n import MISSING
from demo.workspace import Workspace

EN = {"Accept-Language": "en"}
VI = {"Accept-Language": "vi"}


# The shared app and client fixtures (conftest.py), with untranslated texts marked.
APP_CONFIG = {"I18N_MARK_MISSING": True}


def lab(app: Flask, lab_id: str) -> Workspace:
    registry: LabRegistry = app.extensions["labs"]
    return registry.get(lab_id)


def page(client: FlaskClient, lab_id: str, headers: dict[str, str]) -> str:
    answer = client.get(f"/lab/{lab_id}", headers=headers)
    assert answer.status_code == 200
    text = answer.get_data(as_text=True)
    assert MISSING not in text
    return html_lib.unescape(text)


def section(html: str, element_id: str) -> str:
    end = "</nav>" if element_id == "path" else "</section>"
    found = re.search(rf'id="{element_id}".*?{end}', html, re.S)
    assert found, element_id
    return found.group(0)


def steps(html: str) -> str:
    found = re.search(r'<ol class="lesson-steps">(.*?)</ol>', html, re.S)
    assert found
    return found.group(1)


# Each lesson named in the issue: what the steps said after the fix, and what they say.
STALE = {
    "double-click": ("with no key", "with the same stable key", "với cùng một key ổn định"),
    "ttl-expiry": ("past the 24 h TTL", "still within the 72 h TTL", "vẫn trong TTL 72 h"),
    "decline": ("the gateway declines (402)", "fails before charging (502)", "(502)"),
    "email-once": (
        "the receipt e-mail goes out, then",
        "no e-mail goes out",
        "không email nào được gửi đi",
    ),
}


@pytest.mark.parametrize("name", sorted(STALE))
def test_lesson_steps_describe_the_lab_before_and_after_the_fix(
    app: Flask, client: FlaskClient, name: str
) -> None:
    stale, fixed_en, fixed_vi = STALE[name]
    the_lab = lab(app, f"steps-{name}")
    the_lab.open_lesson(name)
    before = steps(page(client, the_lab.id, EN))
    assert stale in before and fixed_en not in before
    the_lab.apply_scenario(name, fixed=True)
    assert the_lab.lesson is not None and the_lab.payments.fixed
    after_en = steps(page(client, the_lab.id, EN))
    assert stale not in after_en and fixed_en in after_en
    assert fixed_vi in steps(page(client, the_lab.id, VI))


def test_every_fixed_scenario_with_other_settings_has_its_own_steps_where_they_differ() -> None:
    for name in STALE:
        scenario = SCENARIOS[name]
        assert scenario.steps_for(True) != scenario.steps_for(False), name


def test_the_empty_state_hint_follows_the_lessons_first_button(
    app: Flask, client: FlaskClient
) -> None:
    the_lab = lab(app, "hint-double")
    the_lab.open_lesson("double-click")
    explain = section(page(client, the_lab.id, EN), "explain")
    assert "Press Double-submit" in explain and "Press Pay" not in explain
    assert "Bấm Gửi hai lần" in section(page(client, the_lab.id, VI), "explain")
    the_lab.open_lesson("lost-response")
    explain = section(page(client, the_lab.id, EN), "explain")
    assert "Press Pay" in explain and "Double-submit" not in explain
    # Free play begins with Pay too.
    assert "Press Pay" in section(page(client, "hint-free", EN), "explain")


def test_the_empty_timeline_names_the_lessons_first_button(app: Flask, client: FlaskClient) -> None:
    the_lab = lab(app, "timeline-double")
    the_lab.open_lesson("double-click")
    timeline = section(page(client, the_lab.id, EN), "timeline")
    assert "Press <strong>Double-submit</strong>." in timeline
    assert "<strong>Pay</strong>" not in timeline
    vi = section(page(client, the_lab.id, VI), "timeline")
    assert "Bấm <strong>Gửi hai lần</strong>." in vi
    the_lab.open_lesson("lost-response")
    assert "Press <strong>Pay</strong>." in section(page(client, the_lab.id, EN), "timeline")


@pytest.mark.parametrize("name", ["key-reuse", "decline", "profiles"])
def test_a_defence_at_work_is_framed_as_what_protects_you(
    app: Flask, client: FlaskClient, name: str
) -> None:
    the_lab = lab(app, f"defence-{name}")
    the_lab.apply_scenario(name)
    for fixed in (False, True):
        the_lab.apply_scenario(name, fixed=fixed)
        card = section(page(client, the_lab.id, EN), "lesson")
        assert "What protects you:" in card and "fix OFF" not in card
        assert "Why it goes wrong without the fix" not in card and "The fix:" not in card
        vi = section(page(client, the_lab.id, VI), "lesson")
        assert "Điều gì bảo vệ bạn:" in vi and "đã sửa" not in vi
    assert ">Try the second case<" not in card and "Back to the first case" in card


def test_a_bug_with_a_fix_keeps_its_fix_framing(app: Flask, client: FlaskClient) -> None:
    the_lab = lab(app, "bug-race")
    the_lab.apply_scenario("race")
    card = section(page(client, the_lab.id, EN), "lesson")
    assert "fix OFF" in card and "What protects you" not in card


def test_the_settings_line_is_labelled_as_the_current_settings(
    app: Flask, client: FlaskClient
) -> None:
    explain = section(page(client, "settings-label", EN), "explain")
    assert re.search(r"Settings now, for the next request:</b> Lock is <strong>ON", explain)
    vi = section(page(client, "settings-label", VI), "explain")
    assert "Thiết lập hiện tại, cho yêu cầu tiếp theo:" in vi


def test_the_race_sentence_speaks_of_the_requests_settings() -> None:
    from demo.payments.explain import explain
    from demo.payments.gateway import summarise
    from demo.payments.settings import Settings

    race = Workspace("race-words", settings=Settings(lock=False, gateway_latency_ms=50))
    import threading

    barrier = threading.Barrier(2)

    def send() -> None:
        barrier.wait()
        race.payments.create_charge(["k"], b'{"order_id": "42", "amount": 100000}')

    threads = [threading.Thread(target=send) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    race.payments.update_settings({"lock": True})
    said = explain(
        race.payments.requests(),
        summarise(race.payments.gateway.ledger()),
        None,
        race.payments.settings,
    )
    assert said.tone == "double"
    assert "these requests ran with the Lock off" in " ".join(str(s) for s in said.sentences)


def test_the_profiles_table_says_which_profile_is_in_use(app: Flask, client: FlaskClient) -> None:
    the_lab = lab(app, "profiles-live")
    the_lab.apply_scenario("profiles")
    table = page(client, the_lab.id, EN)
    assert "(live)" not in table
    assert "ietf (in use)" in table
    assert "highlighted: the profile this lab answers with now" in table
    assert "profile mà lab đang dùng để trả lời" in page(client, the_lab.id, VI)


def test_after_all_ten_lessons_a_wrap_up_lists_the_rules(app: Flask, client: FlaskClient) -> None:
    the_lab = lab(app, "ten-of-ten")
    html = page(client, the_lab.id, EN)
    assert "Start the lessons" in html and 'class="wrap-up"' not in html
    for lesson in PATH[:3]:
        the_lab.progress[lesson.name] = _done(lesson)
    html = page(client, the_lab.id, EN)
    assert "Continue the lessons" in html and "Start the lessons" not in html
    # The button opens the first lesson not yet achieved.
    assert f"lesson={PATH[3].name}" in section(html, "path").split('class="start"')[1]
    for lesson in PATH:
        the_lab.progress[lesson.name] = _done(lesson)
    path = section(page(client, the_lab.id, EN), "path")
    assert "10 of 10 achieved" in path
    assert "All ten lessons achieved" in path and "Start the lessons" not in path
    assert "Go through the lessons again" in path
    for lesson in PATH:
        assert lesson.takeaway in path
    assert "Read next:" in path and "draft-ietf-httpapi-idempotency-key-header" in path
    vi = section(page(client, the_lab.id, VI), "path")
    assert "Đã hoàn thành cả mười bài học" in vi and "Đọc tiếp:" in vi


def test_after_all_ten_the_wrap_up_is_where_the_path_ends_not_above_a_lesson(
    app: Flask, client: FlaskClient
) -> None:
    """Last round, F1 1: after 10 of 10 the 490 px wrap-up sat above every lesson's card,
    pushing the card and the result of a click below the fold."""
    the_lab = lab(app, "wrap-where")
    for lesson in PATH:
        the_lab.progress[lesson.name] = _done(lesson)
    the_lab.open_lesson("race")
    for headers in (EN, VI):
        path = section(page(client, the_lab.id, headers), "path")
        assert 'class="wrap-up"' not in path
        assert "10 of 10 achieved" in path or "10/10" in path
    the_lab.apply_scenario("key-reuse")  # a scenario without a lesson: no wrap-up above it
    assert 'class="wrap-up"' not in section(page(client, the_lab.id, EN), "path")
    the_lab.leave_scenario()  # the path's end
    assert 'class="wrap-up"' in section(page(client, the_lab.id, EN), "path")
    assert "Đã hoàn thành cả mười bài học" in section(page(client, the_lab.id, VI), "path")


def test_an_achieved_lesson_pill_keeps_its_number_and_name(app: Flask, client: FlaskClient) -> None:
    """Last round, F1 5: an achieved lesson was a bare ✓ pill, with no number or name."""
    the_lab = lab(app, "pill-number")
    the_lab.progress[PATH[0].name] = _done(PATH[0])
    the_lab.open_lesson(PATH[2].name)
    path = section(page(client, the_lab.id, EN), "path")
    pills = re.findall(r'<span class="n">(.*?)</span> <span class="title">([^<]*)</span>', path)
    assert len(pills) == len(PATH)
    assert pills[0] == ('<span class="tick">✓</span> 1', SCENARIOS[PATH[0].name].title)
    assert pills[1] == ("2", SCENARIOS[PATH[1].name].title)
    assert f'title="{SCENARIOS[PATH[0].name].title}"' in path


def _done(lesson):  # type: ignore[no-untyped-def]
    from demo.lessons import Progress

    return Progress(met_at={c.id: 0.0 for c in lesson.checks})
