"""The tenth new-user run through the ten payment lessons, in a real browser at 1280×720:
an answer from another tab, "." once too often in a scenario, a blocked lane's key, the
step card in free play, and presenter mode's shortcuts list in Vietnamese."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from test_fourth_run import projector
from test_presenter_proof import PROJECTOR, settled
from test_sixth_run import press_and_wait, step_by_keys

pytestmark = pytest.mark.e2e


def test_an_answer_from_another_tab_does_not_promise_this_tabs_retry_replays_it(
    browser: Browser, live_server: Any
) -> None:
    """Tab 1's form held order 44 while tab 2's Pay for order 45 was shown in tab 1 with "A
    Retry from here … would replay this response"; its Retry replayed order 44."""
    context = browser.new_context(viewport=PROJECTOR)
    first, second = context.new_page(), context.new_page()
    try:
        url = f"{live_server.url}/lab/e2e-nu10-tabs-{secrets.token_hex(4)}"
        first.goto(url)
        second.goto(url)
        first.get_by_role("button", name="Pay", exact=True).click()
        advice = first.locator("#explain [data-about-order]")
        expect(advice).to_have_text(
            "A Retry from here sends the same key and body: it would replay this response, "
            "not charge again."
        )
        second.get_by_role("button", name="New order").click()
        expect(second.locator("#order-id")).to_have_value("43")
        second.get_by_role("button", name="Pay", exact=True).click()
        expect(second.locator("#explain .headline")).to_contain_text("for order 43")
        first.locator("#panels").evaluate("() => htmx.trigger(document.body, 'lab-refresh')")
        expect(first.locator("#explain .headline")).to_contain_text("for order 43")
        expect(advice).to_have_text(
            "This answer is for order 43, the lab's latest request (from another tab, or before "
            "your form changed); your form holds order 42, so a Retry from here "
            "sends order 42's key and body, not this request's."
        )
        first.locator("#order-id").fill("43")  # the form now holds that order: true again
        expect(advice).to_contain_text("A Retry from here sends the same key and body")
    finally:
        context.close()


def test_one_press_too_many_at_the_end_of_a_scenario_asks_before_leaving_it(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Presenter mode, "Timeout after the charge": one "." after its fixed run left the
    scenario for the lessons path, its result gone."""
    run_timeout_scenario_and_press_once_more(
        page, open_link, f"{live_server.url}/lab/e2e-nu10-scen-{secrets.token_hex(4)}", "&present=1"
    )
    expect(page.locator("#lesson .onward-ask")).to_have_text(
        "The steps are done. Press Next step (.) again to go on: Start the lessons"
    )
    expect(page.locator("#lesson-title")).to_contain_text("Timeout after the charge")
    page.wait_for_timeout(700)  # later than a bounce (600 ms)
    page.keyboard.press(".")
    expect(page.locator("#lesson-title")).to_contain_text("Lesson: Double-click without a key")


def run_timeout_scenario_and_press_once_more(
    page: Page, open_link: Any, lab_url: str, query: str = ""
) -> None:
    """Open "Timeout after the charge" with its fix, walk it by "." (Pay, Retry: RECOVERED),
    then press "." once more: going on would leave the scenario."""
    page.set_viewport_size(PROJECTOR)
    open_link(page, f"{lab_url}?scenario=gateway-timeout&fixed=1{query}")
    page.locator("header h1").click()  # nothing focused: the single keys are shortcuts
    press_and_wait(page, ".")  # Pay
    press_and_wait(page, ".")  # Retry
    expect(page.locator("#explain .headline")).to_contain_text("RECOVERED")
    page.keyboard.press(".")


def test_the_key_of_a_blocked_lane_says_why_it_cannot_step(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Lesson 5 after the fix: "b" on B blocked at A's lock did nothing, and said nothing."""
    page.set_viewport_size(PROJECTOR)
    lab = f"{live_server.url}/lab/e2e-nu10-blk-{secrets.token_hex(4)}"
    open_link(page, f"{lab}?scenario=slow-motion&fixed=1")
    step_by_keys(page, "aabb")
    expect(page.locator(".lane-B .where")).to_contain_text("blocked", timeout=20_000)
    expect(page.locator("[data-step-label=B][data-blocked-by=A]")).to_be_disabled()
    page.keyboard.press("b")
    expect(page.locator("#notice")).to_have_text(
        "B is blocked: it waits for A's lock. Step A (key a) to go on.", timeout=10_000
    )
    page.get_by_role("button", name="Release all").click()
    expect(page.locator("#step [data-step-label]")).to_have_count(0)


def test_free_plays_step_card_stays_beside_the_results_as_the_page_scrolls(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Step mode ticked on the server card, down the page: the middle column was blank (the
    short step card far above, the results in the right column)."""
    page.set_viewport_size(PROJECTOR)
    page.goto(f"{live_server.url}/lab/e2e-nu10-free-{secrets.token_hex(4)}")
    for _ in range(3):  # a timeline longer than the screen
        page.get_by_role("button", name="New order").click()
        page.get_by_role("button", name="Pay", exact=True).click()
        expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
        settled(page)
    page.locator("#settings").scroll_into_view_if_needed()
    page.locator("input[name=step_mode]").check()
    expect(page.locator("#step")).to_contain_text("No request is paused")
    page.evaluate("window.scrollTo(0, 700)")
    expect(page.locator("#step")).to_be_in_viewport(ratio=1)


def test_presenter_modes_shortcuts_list_fits_the_screen_in_vietnamese(
    browser: Browser, live_server: Any, open_link: Any
) -> None:
    page = projector(browser, "vi")
    try:
        lab = f"{live_server.url}/lab/e2e-nu10-keys-{secrets.token_hex(4)}"
        open_link(page, f"{lab}?lesson=slow-motion&present=1")
        page.locator("header h1").click()
        page.keyboard.press("?")
        card = page.locator("#shortcuts .card")
        expect(card).to_be_visible()
        box = card.bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= PROJECTOR["height"]
        expect(page.locator("#shortcuts-title")).to_be_in_viewport(ratio=1)
        close = page.locator("[data-close-shortcuts]")
        close.scroll_into_view_if_needed()  # the list scrolls inside its card
        expect(close).to_be_in_viewport(ratio=1)
    finally:
        page.context.close()
