"""The seventh new-user run through the ten payment lessons, in a real browser at 1280×720:
presenter mode's client column shows every button a lesson names and the notice under
them, no row of the lesson's buttons is left half under the header, the pointer to an
answer points to answers only, and the wrap-up on a laptop keeps the path's heading."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from measure import box_of
from playwright.sync_api import Page, expect
from test_fourth_run import all_achieved
from test_presenter_proof import PROJECTOR, settled
from test_sixth_run import header_bottom, press_and_wait, step_by_keys

pytestmark = pytest.mark.e2e


def test_presenter_client_column_shows_every_button_and_the_notice(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Finding 1: in presenter mode lesson 2's "Retry with a new key" (and New order, Reset)
    sat below the client column's bottom edge, under the intro paragraph. Finding 6: x's
    hint appeared there too, off screen."""
    page.set_viewport_size(PROJECTOR)
    lab = f"{live_server.url}/lab/e2e-nu7-col-{secrets.token_hex(4)}"
    open_link(page, f"{lab}?lesson=lost-response&present=1")
    for button in page.locator("#order-form .buttons button").all():
        expect(button).to_be_in_viewport(ratio=1)
    page.locator("h1").first.click()  # nothing focused: a neutral spot, never a button
    page.keyboard.press("x")
    expect(page.locator("#notice")).to_contain_text("Shift+X")
    expect(page.locator("#notice")).to_be_in_viewport(ratio=1)


def test_presenter_proof_leaves_no_row_of_buttons_under_the_header(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Lesson 4's top row of buttons sat half under the sticky header after the scroll to
    the proof."""
    page.set_viewport_size(PROJECTOR)
    lab = f"{live_server.url}/lab/e2e-nu7-l4-{secrets.token_hex(4)}"
    open_link(page, f"{lab}?lesson=race&present=1")
    page.locator("h1").first.click()  # nothing focused: a neutral spot, never a button
    page.keyboard.press(".")
    expect(page.locator("#ledger .tally .charged")).to_contain_text("2")
    expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
    settled(page)
    edge = header_bottom(page)
    expect(page.locator("#explain .headline")).to_be_in_viewport(ratio=1)
    for button in page.locator("#lesson .lesson-actions button").all():
        box = box_of(button)
        assert box["y"] + box["height"] <= edge + 1 or box["y"] >= edge - 1, box


def test_the_pointer_points_to_a_request_s_answer_only(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Findings 3 and 9: the clock's +1 h, pressed down the page, brought up "↑ RECOVERED…",
    the earlier request's headline; in step mode "↓ STEP MODE…" covered the lesson card."""
    page.set_viewport_size(PROJECTOR)
    lab = f"{live_server.url}/lab/e2e-nu7-ptr-{secrets.token_hex(4)}"
    open_link(page, f"{lab}?lesson=ttl-expiry")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("CHARGED")
    page.evaluate("window.scrollTo(0, 420)")
    page.locator("#settings").get_by_role("button", name="+1 h").click()
    expect(page.locator("#clock-now")).to_contain_text("+1h")
    settled(page)
    expect(page.locator("#to-outcome")).to_be_hidden()
    # Step mode: the paused lanes are the answer, and are on screen.
    open_link(page, f"{lab}?lesson=slow-motion")
    page.locator("header h1").click()  # nothing focused: "d" is a shortcut
    press_and_wait(page, "d")
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    expect(page.locator("#to-outcome")).to_be_hidden()


def test_the_wrap_up_on_a_laptop_keeps_the_path_heading_in_view(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Finding 8: reached from lesson 10 in normal mode, the wrap-up opened with the path's
    "10 of 10 achieved" cut off above the screen."""
    page.set_viewport_size(PROJECTOR)
    lab_id = f"e2e-nu7-wrap-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}")
    all_achieved(live_server, lab_id)
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=email-once")
    page.locator("[data-path-end]").click()
    expect(page.locator("[data-wrap-up]")).to_have_attribute("open", "")
    expect(page.locator("#path h2")).to_contain_text("10 of 10")
    expect(page.locator("#path h2")).to_be_in_viewport(ratio=1)
    expect(page.locator("#wrap-up-title")).to_be_in_viewport(ratio=1)


def test_presenter_server_link_scrolls_the_client_column_only(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """The other seventh-run tester: in presenter mode the client column ended at its
    buttons, with nothing saying that Lock, step mode and the clock were further down."""
    page.set_viewport_size(PROJECTOR)
    lab = f"{live_server.url}/lab/e2e-nu7-srv-{secrets.token_hex(4)}"
    open_link(page, f"{lab}?lesson=lost-response&present=1")
    link = page.locator(".to-server")
    expect(link).to_be_in_viewport(ratio=1)
    expect(page.locator("#lock")).not_to_be_in_viewport()
    scrolled = page.evaluate("window.scrollY")
    link.click()
    expect(page.locator("#lock")).to_be_in_viewport(ratio=1)
    assert page.evaluate("window.scrollY") == scrolled  # the results column stayed


def test_a_blocked_lane_s_buttons_both_look_disabled_and_the_pointer_clears_the_card(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """The other seventh-run tester: a blocked lane's Run B to the end kept black text; the
    pointer to an answer covered the check that had just ticked."""
    page.set_viewport_size(PROJECTOR)
    lab = f"{live_server.url}/lab/e2e-nu7-dis-{secrets.token_hex(4)}"
    open_link(page, f"{lab}?scenario=slow-motion&fixed=1")
    step_by_keys(page, "aabb")
    expect(page.locator(".lane-B .where")).to_contain_text("blocked", timeout=20_000)
    step_b = page.locator("[data-step-label=B]")
    run_b = page.locator(".lane-B button.quiet")
    expect(step_b).to_be_disabled()
    expect(run_b).to_be_disabled()
    colour = "e => getComputedStyle(e).color"
    assert run_b.evaluate(colour) == step_b.evaluate(colour)
    page.get_by_role("button", name="Release all").click()
    expect(page.locator("#step [data-step-label]")).to_have_count(0)
    # Off screen, a new answer is pointed to from the top right, clear of the lesson card.
    page.locator("input[name=step_mode]").uncheck()
    expect(page.locator("#step")).to_have_count(0)  # the server has step mode off
    page.evaluate("document.activeElement.blur(); window.scrollTo(0, 420)")
    page.keyboard.press("r")  # Retry, without scrolling its button into view
    expect(page.locator(".lane").filter(has_text="#3 Retry")).to_contain_text("REPLAYED")
    pointer = page.locator("#to-outcome")
    expect(pointer).to_be_visible()
    box, card = pointer.bounding_box(), page.locator("#lesson").bounding_box()
    assert box and card and box["x"] >= card["x"] + card["width"], (box, card)
