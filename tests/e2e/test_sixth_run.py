"""The sixth new-user run through the ten payment lessons, in a real browser at 1280×720:
the code's markers while stepping in presenter mode, the buttons that stay under the
pointer, the answer pointed to when it lands off screen, presenter mode's menu, and the
lanes' names in Vietnamese."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from measure import box_of
from playwright.sync_api import Page, expect
from test_presenter_proof import PROJECTOR, settled

pytestmark = pytest.mark.e2e


def header_bottom(page: Page) -> float:
    box = box_of(page.locator("header.top"))
    return box["y"] + box["height"]


def on_screen_below_header(page: Page, selector: str) -> None:
    """Whole on screen, and not under presenter mode's header (which stays on screen)."""
    expect(page.locator(selector).first).to_be_in_viewport(ratio=1)
    box = box_of(page.locator(selector).first)
    assert box["y"] >= header_bottom(page) - 1, (selector, box)


def press_and_wait(page: Page, key: str) -> None:
    before = page.locator("#panels").get_attribute("data-version") or ""
    page.keyboard.press(key)
    expect(page.locator("#panels")).not_to_have_attribute("data-version", before, timeout=20_000)
    settled(page)


def step_by_keys(page: Page, keys: str) -> None:
    """Double-submit ("d"), then step the lanes by their keys ("aabb"), each once it can."""
    page.locator("header h1").click()  # nothing focused: the single keys are shortcuts
    press_and_wait(page, "d")
    for key in keys:
        # On a loaded machine a stepped lane can take seconds to stand at its next step.
        expect(page.locator(f"[data-step-label={key.upper()}]")).to_be_enabled(timeout=20_000)
        press_and_wait(page, key)


def test_presenter_stepping_keeps_the_lanes_and_the_marked_line_on_screen(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Finding 1: the code view's ◀ A ◀ B markers were below the 720 px fold while stepping."""
    page.set_viewport_size(PROJECTOR)
    open_link(
        page,
        f"{live_server.url}/lab/e2e-nu6-p5-{secrets.token_hex(4)}?lesson=slow-motion&present=1",
    )
    page.locator("h1").first.click()  # nothing focused: the single keys are shortcuts
    press_and_wait(page, "d")
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    for key in "abab":
        expect(page.locator(f"[data-step-label={key.upper()}]")).to_be_enabled()
        press_and_wait(page, key)
        on_screen_below_header(page, "#step .step-lanes")
        on_screen_below_header(page, f"#step pre.code .line:has(.chip-{key.upper()})")


def test_presenter_answer_scrolls_the_results_not_the_buttons(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Finding 4: after an answer the page scrolled ~90 px under the pointer, which then sat
    over another button; the client column now stays put while the results scroll."""
    page.set_viewport_size(PROJECTOR)
    open_link(
        page,
        f"{live_server.url}/lab/e2e-nu6-p2-{secrets.token_hex(4)}?lesson=lost-response&present=1",
    )
    retry = page.get_by_role("button", name="Retry", exact=True)
    before = retry.bounding_box()
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("NO RESPONSE")
    settled(page)
    retry.click()
    expect(page.locator("#explain .headline")).to_contain_text("REPLAYED")
    settled(page)
    assert page.evaluate("window.scrollY") > 0  # the proof was brought on screen
    on_screen_below_header(page, "#explain .headline")
    assert retry.bounding_box() == before  # the button under the pointer did not move


def test_an_answer_landing_off_screen_is_pointed_to(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Finding 5: lesson 7, after +25 h (the server card's, down the page) and Retry, the
    outcome headline was above the screen with nothing saying so."""
    page.set_viewport_size(PROJECTOR)
    open_link(page, f"{live_server.url}/lab/e2e-nu6-l7-{secrets.token_hex(4)}?lesson=ttl-expiry")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("CHARGED")
    pointer = page.locator("#to-outcome")
    expect(pointer).to_be_hidden()  # the headline is on screen: nothing to point to
    page.locator("#settings").get_by_role("button", name="+25 h").click()
    expect(page.locator("#clock-now")).to_contain_text("+25h")
    page.evaluate("window.scrollTo(0, 420)")
    page.get_by_role("button", name="Retry", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("DOUBLE CHARGE")
    expect(pointer).to_be_visible()
    expect(pointer).to_contain_text("↑ DOUBLE CHARGE")
    pointer.click()
    expect(page.locator("#explain .headline")).to_be_in_viewport(ratio=1)
    expect(pointer).to_be_hidden()


def test_presenter_menu_holds_the_scenario_the_language_and_the_shortcuts(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Finding 8: presenter mode hid Language, Scenario and Shortcuts; one small Menu in its
    one-row header holds them."""
    page.set_viewport_size(PROJECTOR)
    open_link(
        page, f"{live_server.url}/lab/e2e-nu6-menu-{secrets.token_hex(4)}?lesson=race&present=1"
    )
    assert header_bottom(page) < 70  # one row
    expect(page.locator("#language-select")).to_be_hidden()
    page.get_by_text("Menu", exact=True).click()
    for control in ("#scenario-select", "#language-select", ".shortcuts-button"):
        expect(page.locator(control)).to_be_visible()
    page.locator(".shortcuts-button").click()
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    page.locator("#language-select").select_option("vi")
    page.locator(".language button[type=submit]").click()
    expect(page.locator("html")).to_have_attribute("lang", "vi")
    expect(page.locator("#page")).to_have_class("present")


def test_a_vietnamese_lane_names_its_request_on_one_line(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Finding 9: beside the lesson card, the lane's title wrapped a word or two per line
    ("#1 Gửi hai" / "lần A")."""
    page.set_viewport_size(PROJECTOR)
    page.context.set_extra_http_headers({"Accept-Language": "vi"})
    open_link(page, f"{live_server.url}/lab/e2e-nu6-vi-{secrets.token_hex(4)}?lesson=slow-motion")
    page.locator("h1").first.click()  # nothing focused: a neutral spot, never a button
    press_and_wait(page, "d")
    for label in "AB":
        name = page.locator(f"#step .lane-{label} > .req")
        expect(name).to_contain_text(f"lần {label}")
        box, button = name.bounding_box(), page.locator(f"[data-step-label={label}]").bounding_box()
        assert box and button
        line = float(name.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)"))
        assert box["height"] < 1.5 * line, box  # one line
        assert box["y"] >= button["y"] + button["height"] - 1  # under its buttons
