"""The ninth new-user run through the ten payment lessons, in a real browser at 1280×720:
the pointer to an answer off screen, the lesson card's buttons above the fold, presenter
mode's Step mode switch, lesson 3's second case from the keyboard, and "." once too often."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from measure import box_of
from playwright.sync_api import Page, expect
from test_presenter_proof import PROJECTOR

from demo.lessons.payments import PATH

pytestmark = pytest.mark.e2e


def _box(page: Page, selector: str) -> dict[str, float]:
    return box_of(page.locator(selector).first)


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def test_the_pointer_to_an_answer_is_whole_covers_no_result_and_goes_with_a_scroll(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """The pointer read "↑ DOUBLE CHARGE — order 42, after the…" (cut short) over the
    ledger's tally, and stayed there while the reader scrolled."""  # noqa: RUF002
    page.set_viewport_size(PROJECTOR)
    open_link(page, f"{live_server.url}/lab/e2e-nu9-ptr-{secrets.token_hex(4)}?lesson=ttl-expiry")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("CHARGED")
    page.locator("#settings").get_by_role("button", name="+25 h").click()
    expect(page.locator("#clock-now")).to_contain_text("+25h")
    page.evaluate("window.scrollTo(0, 420)")
    page.get_by_role("button", name="Retry", exact=True).click()
    pointer = page.locator("#to-outcome")
    expect(pointer).to_have_text("↑ DOUBLE CHARGE — see the answer")
    assert pointer.evaluate("el => el.scrollWidth <= el.clientWidth")  # not cut short
    # Clear of the lesson card and of what it points to (it sits over the timeline's end).
    for clear in ("#lesson", "#explain", "#ledger"):
        assert not _overlap(_box(page, "#to-outcome"), _box(page, clear)), clear
    page.mouse.wheel(0, 120)  # the reader scrolls on: the pointer goes
    expect(pointer).to_be_hidden()
    assert page.evaluate("window.scrollY") > 420  # down, not to the answer: it is theirs


def test_every_lessons_buttons_start_above_a_projectors_fold(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Normal mode at 1280x720: lesson 6's buttons began at the fold."""
    page.set_viewport_size(PROJECTOR)
    lab = f"{live_server.url}/lab/e2e-nu9-fold-{secrets.token_hex(4)}"
    for lesson in PATH:
        open_link(page, f"{lab}?lesson={lesson.name}")
        expect(page.locator("#lesson")).to_have_attribute("data-lesson", lesson.name)
        actions = _box(page, "#lesson .lesson-actions")
        assert actions["y"] + actions["height"] <= PROJECTOR["height"], lesson.name


def test_presenter_modes_step_mode_switch_is_the_size_of_the_lock(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    page.set_viewport_size(PROJECTOR)
    lab = f"{live_server.url}/lab/e2e-nu9-sw-{secrets.token_hex(4)}"
    open_link(page, f"{lab}?lesson=slow-motion&present=1")
    lock, step = _box(page, "#lock"), _box(page, "input[name=step_mode]")
    assert (step["width"], step["height"]) == (lock["width"], lock["height"])
    page.get_by_role("switch", name="Step mode").uncheck()
    expect(page.locator("#step")).to_have_count(0)  # the server has step mode off


def test_lesson_3s_second_case_walks_by_next_step_and_one_press_too_many_asks(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Lesson 3's second case: Pay, New order, Pay (no "resend" for a first request). Once
    achieved, a press of "." too many asks on the card rather than leaving the lesson."""
    page.set_viewport_size(PROJECTOR)
    lab_id = f"e2e-nu9-l3-{secrets.token_hex(4)}"
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=key-reuse")
    page.locator("#lesson").click(position={"x": 5, "y": 5})  # the keys go to the page
    page.keyboard.press(".")  # Pay
    expect(page.locator("#explain .headline")).to_contain_text("CHARGED")
    page.keyboard.press(".")  # Change amount & resend: the refusal
    expect(page.locator("#explain .headline")).to_contain_text("409")
    expect(page.locator("[data-check=refused]")).to_have_class("met")
    page.keyboard.press(".")  # onward: the second case
    expect(page.locator("#lesson .fix-state")).to_have_text("second case")
    expect(page.locator("#lesson .lesson-steps li").nth(2)).to_contain_text(
        "Press Pay: the new order's first request"
    )
    headline = page.locator("#explain .headline")
    page.keyboard.press(".")  # Pay: the first order, under its own key
    expect(headline).to_contain_text("CHARGED — ch_0001 for order 42")
    page.keyboard.press(".")  # New order: a new intent, a new key (no request)
    expect(page.locator("#order-id")).to_have_value("43")
    page.keyboard.press(".")  # Pay: the new order's first request
    expect(headline).to_contain_text("CHARGED — ch_0002 for order 43")
    expect(page.locator("#lesson .achieved")).to_be_visible(timeout=10_000)
    assert live_server.lab(lab_id).achieved() == {"key-reuse"}
    page.keyboard.press(".")  # one press too many
    expect(page.locator("#lesson .onward-ask")).to_be_visible()
    expect(page.locator("#lesson-title")).to_contain_text("Same key, another body")
