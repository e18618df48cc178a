"""What a new user's run through the ten lessons still tripped on (issue 10, part L), in
both languages: the empty state names the card's buttons (lesson 2), a hint adds to the
steps, lesson 9's settings line and second case, the shortcut notice in the overlay, the
skip links, the end of the path, and a link's offer that names every change it makes."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient

from demo.lessons import CHAPTERS, LESSONS, PATH, Progress
from demo.payments.scenarios import SCENARIOS
from demo.registry import LabRegistry
from demo.web.i18n import MISSING
from demo.workspace import Workspace

EN = {"Accept-Language": "en"}
VI = {"Accept-Language": "vi"}
BODY = {"order_id": "42", "amount": 100000}


# The shared app and client fixtures (conftest.py), with untranslated texts marked.
APP_CONFIG = {"I18N_MARK_MISSING": True}


def lab(app: Flask, lab_id: str) -> Workspace:
    registry: LabRegistry = app.extensions["labs"]
    return registry.get(lab_id)


def page(client: FlaskClient, url: str, headers: dict[str, str]) -> str:
    answer = client.get(url, headers=headers)
    assert answer.status_code == 200
    text = answer.get_data(as_text=True)
    assert MISSING not in text
    return html_lib.unescape(text)


def section(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}".*?</(section|form|div)>', html, re.S)
    assert found, element_id
    return found.group(0)


def test_lesson_2_empty_state_names_no_button_the_card_does_not(
    app: Flask, client: FlaskClient
) -> None:
    """L3: the card says "Retry with a new key"; the empty state must not say "Retry"."""
    the_lab = lab(app, "l3-lost")
    the_lab.open_lesson("lost-response")
    explain = section(page(client, "/lab/l3-lost", EN), "explain")
    assert "Press Pay, then follow the steps on the card" in explain
    assert "Retry" not in explain
    vi = section(page(client, "/lab/l3-lost", VI), "explain")
    assert "làm theo các bước trên khung bài học" in vi and "Thử lại" not in vi
    # Free play still explains Retry: there is no card to follow.
    assert "press Retry" in section(page(client, "/lab/l3-free", EN), "explain")


def test_no_hint_repeats_a_step_and_lesson_2s_first_hint_adds_the_ledger() -> None:
    """L4: a hint adds something, and names only what is on screen."""
    for lesson in CHAPTERS["payments"]:  # the payment lab's chapter: its scenarios' steps
        scenario = SCENARIOS[lesson.name]
        name = lesson.name
        steps = {*scenario.steps_for(False), *scenario.steps_for(True)}
        for hint in lesson.hints:
            assert hint not in steps, (name, hint)
            assert "strategy" not in hint, (name, hint)
    first = LESSONS["lost-response"].hints[0]
    assert "Ledger" in first and "Press Pay" not in first


def test_lesson_2s_first_hint_in_the_page(app: Flask, client: FlaskClient) -> None:
    the_lab = lab(app, "l4-hint")
    the_lab.open_lesson("lost-response")
    client.post("/lab/l4-hint/lessons/lost-response/hint")
    html = page(client, "/lab/l4-hint", EN)
    assert "The Ledger shows the first charge although the page got no answer" in html
    assert "Ledger đã ghi lần trừ tiền đầu tiên" in page(client, "/lab/l4-hint", VI)


def test_lesson_9_settings_line_shows_the_gateway_declines(app: Flask, client: FlaskClient) -> None:
    """L5: the setting the lesson is about is on the "Settings now" line."""
    the_lab = lab(app, "l5-settings")
    the_lab.open_lesson("decline")
    mode = section(page(client, "/lab/l5-settings", EN), "explain")
    assert "the gateway declines cards (402)" in mode
    assert "gateway từ chối thẻ (402)" in section(page(client, "/lab/l5-settings", VI), "explain")
    the_lab.apply_scenario("decline", fixed=True)  # the second case: no declines
    assert "declines cards" not in section(page(client, "/lab/l5-settings", EN), "explain")


def test_lesson_9_second_case_go_further_is_a_note_not_a_step(
    app: Flask, client: FlaskClient
) -> None:
    the_lab = lab(app, "l5-note")
    the_lab.open_lesson("decline")
    the_lab.apply_scenario("decline", fixed=True)
    key = {"Idempotency-Key": "t1:u7:pay:order-42:v1"}
    body = {"order_id": "42", "amount": 100000}
    assert client.post("/lab/l5-note/api/charges", json=body, headers=key).status_code == 502
    html = page(client, "/lab/l5-note", EN)
    steps = re.search(r'<ol class="lesson-steps">(.*?)</ol>', html, re.S)
    assert steps and "Timeout after the charge" not in steps.group(1)
    assert steps.group(1).count("<li>") == 2
    assert re.search(r'class="fix-note"><b>Go further:</b> This 502 came before the charge', html)
    assert "Đi xa hơn:" in page(client, "/lab/l5-note", VI)


def test_lesson_9_retry_after_the_502_is_the_same_keys_retry(
    app: Flask, client: FlaskClient
) -> None:
    """L5: after the 502 released the key, the retry is not a "new" key."""
    the_lab = lab(app, "l5-retry")
    the_lab.open_lesson("decline")
    the_lab.apply_scenario("decline", fixed=True)
    key = {"Idempotency-Key": "t1:u7:pay:order-42:v1"}
    first = client.post("/lab/l5-retry/api/charges", json=BODY, headers=key)
    assert first.status_code == 502
    second = client.post("/lab/l5-retry/api/charges", json=BODY, headers=key)
    assert second.status_code == 201
    explain = section(page(client, "/lab/l5-retry", EN), "explain")
    assert "was new" not in explain
    assert "The same key t1:u7:pay:order-42:v1, retried: #1 failed before the gateway" in explain
    assert "(502)" in explain
    vi = section(page(client, "/lab/l5-retry", VI), "explain")
    assert "Cùng key t1:u7:pay:order-42:v1, được thử lại" in vi


def test_the_shortcuts_overlay_says_a_plain_x_does_not_reset(client: FlaskClient) -> None:
    """L6: where the shortcuts are explained, not only in the client column's notice."""
    overlay = section(page(client, "/lab/l6-x", EN), "shortcuts")
    assert "(a plain x does not reset" in overlay
    assert "(chỉ bấm x thì không đặt lại" in section(page(client, "/lab/l6-x", VI), "shortcuts")


def test_skip_links_come_first(app: Flask, client: FlaskClient) -> None:
    """L7: the first focusable elements skip the header and the client column."""
    html = page(client, "/lab/l7-free", EN)
    body = html.split("<body>", 1)[1]
    first = re.search(r"<(a|button|input|select)\b[^>]*>", body)
    assert first and 'href="#order-form"' in first.group(0)
    assert "Skip to the lesson" not in body  # no lesson card to skip to
    the_lab = lab(app, "l7-lesson")
    the_lab.open_lesson("double-click")
    body = page(client, "/lab/l7-lesson", EN).split("<body>", 1)[1]
    links = re.findall(r'<a class="skip-link" href="(#[\w-]+)">([^<]+)</a>', body)
    assert links == [("#lesson", "Skip to the lesson"), ("#order-form", "Skip to the lab")]
    assert 'id="lesson"' in body and 'id="order-form"' in body
    vi = page(client, "/lab/l7-lesson", VI)
    assert "Nhảy tới bài học" in vi and "Nhảy tới phòng lab" in vi


def test_after_the_last_lesson_next_goes_to_the_end_of_the_path(
    app: Flask, client: FlaskClient
) -> None:
    """L8: the last lesson's onward button (which Next step presses) leaves for the path's
    end, the wrap-up once all ten are achieved: never nothing."""
    last = PATH[-1].name
    the_lab = lab(app, "l8-last")
    the_lab.open_lesson(last)
    the_lab.apply_scenario(last, fixed=True)
    card = section(page(client, "/lab/l8-last", EN), "lesson")
    onward = re.search(r"<button[^>]*data-next-lesson[^>]*>([^<]*)</button>", card)
    assert onward and 'form="lesson-leave"' in onward.group(0)
    assert onward.group(1).strip() == "End of the path →"
    for item in PATH:
        the_lab.progress[item.name] = Progress(met_at={c.id: 0.0 for c in item.checks})
    card = section(page(client, "/lab/l8-last", EN), "lesson")
    assert re.search(r"data-next-lesson data-path-end>The wrap-up →</button>", card)
    assert "Tổng kết →" in page(client, "/lab/l8-last", VI)
    # Leaving shows the wrap-up.
    client.post("/lab/l8-last?scenario=none")
    assert "All ten lessons achieved" in page(client, "/lab/l8-last", EN)


@pytest.mark.parametrize(
    ("query", "en", "vi"),
    [
        ("lesson=race&present=1", "It also switches this lab to presenter mode.",
         "Liên kết này cũng chuyển phòng lab sang chế độ trình chiếu."),
        ("scenario=race&present=0", "It also switches presenter mode off.",
         "Liên kết này cũng tắt chế độ trình chiếu."),
    ],
)  # fmt: skip
def test_a_link_with_a_lesson_and_presenter_mode_names_both(
    client: FlaskClient, query: str, en: str, vi: str
) -> None:
    """L9: the offer names every change the link makes."""
    offer = section(page(client, f"/lab/l9-both?{query}", EN), "offer")
    assert ("This link opens lesson 4" in offer or "starts the scenario" in offer) and en in offer
    assert vi in section(page(client, f"/lab/l9-both?{query}", VI), "offer")
    alone = section(page(client, "/lab/l9-both?lesson=race", EN), "offer")
    assert "presenter" not in alone
