"""The layout at 1280×800 (issue 10 §5): with a lesson card open, the result of a click
(the outcome, the ledger's tally, the timeline's top) shows without scrolling; the lesson's
buttons sit in even rows; and the next key and the views of §4 are on screen."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from measure import box_of
from playwright.sync_api import Browser, Page, expect

pytestmark = pytest.mark.e2e

VIEWPORT = {"width": 1280, "height": 800}

# lesson, the clicks its steps ask for, what the outcome then says
LESSONS = [
    ("double-click", ["Double-submit"], "DOUBLE CHARGE"),
    ("key-reuse", ["Pay", "Change amount & resend"], ""),
    ("crash-window", ["Pay", "Retry"], "DOUBLE CHARGE"),
    ("email-once", ["Pay", "Retry"], ""),
]


def _in_view(page: Page, selector: str) -> dict[str, float]:
    box = box_of(page.locator(selector).first)
    assert box["y"] >= 0 and box["x"] >= 0, (selector, box)
    assert box["y"] + box["height"] <= VIEWPORT["height"], (selector, box)
    assert box["x"] + box["width"] <= VIEWPORT["width"], (selector, box)
    return box


@pytest.mark.parametrize(("lesson", "clicks", "outcome"), LESSONS)
def test_the_result_of_a_click_shows_without_scrolling_beside_the_lesson_card(
    browser: Browser, live_server: Any, open_link: Any, lesson: str, clicks: list[str], outcome: str
) -> None:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        url = f"{live_server.url}/lab/e2e-fold-{secrets.token_hex(4)}"
        open_link(page, f"{url}?lesson={lesson}")
        expect(page.locator("#lesson")).to_be_visible()
        for n, name in enumerate(clicks, 1):
            page.get_by_role("button", name=name, exact=True).click()
            expect(page.locator(".lane")).to_have_count(
                n + (1 if name == "Double-submit" else 0), timeout=10_000
            )
        expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
        if outcome:
            expect(page.locator("#explain .headline")).to_contain_text(outcome)
        assert page.evaluate("window.scrollY") == 0
        _in_view(page, "#explain .headline")
        _in_view(page, "#ledger .tally")
        _in_view(page, "#timeline h2")
        _in_view(page, "#timeline .lane header")  # the newest request's lane
        _in_view(page, "#lesson [data-next-step]")  # the lesson's next move, too
        # The lesson card's buttons: even rows (every button of a row equally wide).
        widths: dict[float, set[float]] = {}
        for box in page.locator("#lesson .lesson-actions button").all():
            b = box.bounding_box()
            assert b is not None
            widths.setdefault(round(b["y"]), set()).add(round(b["width"]))
        # Four rows at most: Reset this lesson joined the grid (the twenty-sixth run).
        assert len(widths) <= 4 and all(len(w) == 1 for w in widths.values()), widths
    finally:
        context.close()


def test_after_retry_with_a_new_key_the_page_says_which_key_retry_sends(
    page: Page, live_server: Any
) -> None:
    page.goto(f"{live_server.url}/lab/e2e-key-{secrets.token_hex(4)}")
    stable = page.locator("#idempotency-key").input_value()
    amount = page.locator("#amount").input_value()
    expect(page.locator("#key-next")).to_have_text(
        f"Retry sends this order's stable key: {stable} (amount {int(amount):,})"
    )
    page.get_by_role("button", name="Retry with a new key", exact=True).click()
    expect(page.locator(".lane")).to_have_count(1)
    fresh = page.locator("#idempotency-key").input_value()
    assert fresh != stable
    expect(page.locator("#key-next")).to_contain_text(
        f"Pay and Retry send the key in the field: {fresh}"
    )
    expect(page.locator("#key-next")).to_contain_text(f"not this order's stable key ({stable})")
    page.get_by_role("button", name="Retry", exact=True).click()
    expect(page.locator(".lane")).to_have_count(2)
    # What the page said is what went out: the retry replayed the new key's charge.
    expect(page.locator(".lane").first.locator(".key")).to_have_text(fresh)
    expect(page.locator("#explain .headline")).to_contain_text("REPLAYED")


def test_quiet_buttons_read_as_enabled(page: Page, live_server: Any, open_link: Any) -> None:
    open_link(page, f"{live_server.url}/lab/e2e-quiet-{secrets.token_hex(4)}?lesson=double-click")
    quiet = page.get_by_role("button", name="Leave the lesson", exact=True)
    normal = page.get_by_role("button", name="Run the steps", exact=True)
    style = "el => [getComputedStyle(el).color, getComputedStyle(el).opacity]"
    assert quiet.evaluate(style) == normal.evaluate(style)


def test_step_mode_and_the_lab_clock_show_above_the_fold_and_the_clock_answers_beside_it(
    browser: Browser, live_server: Any
) -> None:
    """Issue 10, L1: at 1280×800 with no lesson open, the step-mode switch and the lab
    clock's +25 h are on screen, and +25 h says where the clock is now, beside itself."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/lab/e2e-fold-free-{secrets.token_hex(4)}")
        expect(page.locator("#explain .headline")).to_have_text("Nothing sent yet")
        _in_view(page, "input[name=step_mode]")
        _in_view(page, "button[data-action='+25 h']")
        _in_view(page, "#clock-now")
        expect(page.locator("#clock-now")).to_have_text("Now: real time; a key lives 24h 00m.")
        page.get_by_role("button", name="+25 h", exact=True).click()
        expect(page.locator("#clock-now")).to_have_text("Now +25h 00m; a key lives 24h 00m.")
        assert page.evaluate("window.scrollY") == 0
        _in_view(page, "#clock-now")
        page.get_by_role("button", name="+1 h", exact=True).click()
        expect(page.locator("#clock-now")).to_have_text("Now +26h 00m; a key lives 24h 00m.")
        # Step mode switched on from there: its panel shows without scrolling too.
        page.locator("input[name=step_mode]").check()
        expect(page.locator("#step")).to_be_visible()
        _in_view(page, "#step h2")  # its top, where it says what to do
    finally:
        context.close()
    # In Vietnamese too (longer labels).
    context = browser.new_context(viewport=VIEWPORT, extra_http_headers={"Accept-Language": "vi"})
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/lab/e2e-fold-vi-{secrets.token_hex(4)}")
        expect(page.locator("#explain .headline")).to_have_text("Chưa gửi gì")
        page.get_by_role("button", name="+25 h", exact=True).click()
        expect(page.locator("#clock-now")).to_have_text("Hiện tại +25h 00m; một key sống 24h 00m.")
        assert page.evaluate("window.scrollY") == 0
        for selector in ("input[name=step_mode]", "button[data-action='+25 h']", "#clock-now"):
            _in_view(page, selector)
    finally:
        context.close()


KEY_60 = "t1:user-0123456789:pay:order-20261130-ABCDEFGHIJKLMNOPQR:v12"


def test_a_60_character_key_is_read_whole_in_the_key_field(
    browser: Browser, live_server: Any
) -> None:
    """Issue 10, L2: the key field wraps a long key and grows with it; nothing is cut."""
    assert len(KEY_60) == 60
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/lab/e2e-key60-{secrets.token_hex(4)}")
        field = page.locator("#idempotency-key")
        one_line = field.bounding_box()
        field.fill(KEY_60)
        field.press("Enter")  # one line: Enter adds no break
        assert field.input_value() == KEY_60
        box = _in_view(page, "#idempotency-key")
        assert one_line is not None and box["height"] > one_line["height"]  # it grew
        clipped = field.evaluate(
            "el => [el.scrollWidth > el.clientWidth, el.scrollHeight > el.clientHeight]"
        )
        assert clipped == [False, False]
        page.get_by_role("button", name="Pay", exact=True).click()
        expect(page.locator(".lane")).to_have_count(1)
        expect(page.locator(".lane .key")).to_have_text(KEY_60)
        expect(page.locator("#explain .headline")).to_contain_text("CHARGED")
        # The timeline shows it whole too (wrapped, not cut).
        lane_key = page.locator(".lane .key")
        assert lane_key.evaluate("el => el.scrollWidth <= el.clientWidth")
    finally:
        context.close()
