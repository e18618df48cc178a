"""The eleventh new-user run through the ten payment lessons, in a real browser at
1280×720: "." on the closing slide, requests paused from down the page, the wrap-up after a
lost response, and (the twelfth run) a lane run to its end below the fold."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from test_presenter_proof import PROJECTOR
from test_sixth_run import step_by_keys

from demo.lessons import PATH, Progress

pytestmark = pytest.mark.e2e


def _all_achieved(live_server: Any, lab_id: str) -> None:
    lab = live_server.lab(lab_id)
    for lesson in PATH:
        lab.progress[lesson.name] = Progress(met_at={c.id: 0.0 for c in lesson.checks})


def test_a_press_on_the_closing_slide_asks_before_starting_the_path_again(
    page: Page, live_server: Any, errors: Any
) -> None:
    """ "." on the wrap-up opened lesson 1, and the next "." double-charged on the projector."""
    page.set_viewport_size(PROJECTOR)
    lab_id = f"e2e-nu11-end-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}")
    _all_achieved(live_server, lab_id)
    page.reload()
    expect(page.locator("[data-wrap-up]")).to_be_visible()
    page.locator("header h1").click()
    page.keyboard.press(".")
    expect(page.locator("#notice")).to_have_text(
        "The steps are done. Press Next step (.) again to go on: Go through the lessons again"
    )
    expect(page.locator("#lesson")).to_have_count(0)  # still the closing slide
    page.wait_for_timeout(700)  # later than a bounce (600 ms)
    page.keyboard.press(".")
    expect(page.locator("#lesson")).to_have_attribute("data-lesson", "double-click")


def test_requests_paused_from_down_the_page_are_pointed_to(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Step mode ticked on the server card, then "p" there: the lanes were above the screen
    with nothing pointing to them."""
    page.set_viewport_size(PROJECTOR)
    page.goto(f"{live_server.url}/lab/e2e-nu11-lanes-{secrets.token_hex(4)}")
    page.locator("input[name=step_mode]").check()
    expect(page.locator("#step")).to_contain_text("No request is paused")
    page.evaluate("document.activeElement.blur(); window.scrollTo(0, 900)")
    expect(page.locator("#step h2")).not_to_be_in_viewport()
    page.keyboard.press("p")
    pointer = page.locator("#to-outcome")
    expect(pointer).to_have_text("↑ Requests paused: step them here")
    pointer.click()
    expect(page.locator("#step h2")).to_be_in_viewport(ratio=1)
    expect(pointer).to_be_hidden()
    page.get_by_role("button", name="Release all").click()
    expect(page.locator("#step [data-step-label]")).to_have_count(0)


def test_a_lost_responses_answer_folds_the_wrap_up_as_any_answer_does(
    page: Page, live_server: Any, errors: Any
) -> None:
    """After Lose the response and Pay, the wrap-up stayed open and pushed "NO RESPONSE"
    to the foot of the screen."""
    page.set_viewport_size(PROJECTOR)
    lab_id = f"e2e-nu11-wrap-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}")
    _all_achieved(live_server, lab_id)
    page.evaluate("window.localStorage.clear()")  # the wrap-up as first seen: open
    page.reload()
    wrap_up = page.locator("[data-wrap-up]")
    expect(wrap_up).to_have_attribute("open", "")
    live_server.lab(lab_id).payments.update_settings({"fault": "lose_response"})
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("NO RESPONSE")
    expect(wrap_up).not_to_have_attribute("open", "")
    expect(page.locator("#explain .headline")).to_be_in_viewport(ratio=1)


def test_a_lane_run_to_its_end_below_the_fold_is_pointed_to_and_told_as_the_race(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Twelfth run, lesson 5 at 1280x720: after Run A to the end (B still paused past its
    charge) the answer sat below the fold with no pointer, and blamed "another key"."""
    page.set_viewport_size(PROJECTOR)
    lab = f"{live_server.url}/lab/e2e-nu12-runa-{secrets.token_hex(4)}"
    open_link(page, f"{lab}?scenario=slow-motion")
    step_by_keys(page, "abab")
    expect(page.locator(".lane-B .where")).to_contain_text("the money moved", timeout=20_000)
    page.evaluate("window.scrollTo(0, 0)")
    page.locator(".lane-A button.quiet").click()  # Run A to the end
    expect(page.locator(".lane-A.finished")).to_contain_text("CHARGED", timeout=20_000)
    headline = page.locator("#explain .headline")
    expect(headline).to_have_text("DOUBLE CHARGE — two requests with one key both charged order 42")
    # B still paused: no floating pointer (it sat on the Lock switch), a link in A's lane.
    expect(page.locator("#to-outcome")).to_be_hidden()
    page.locator(".lane-A").get_by_role("link", name="What just happened ↓").click()
    expect(headline).to_be_in_viewport(ratio=1)
    page.get_by_role("button", name="Release all").click()
    expect(page.locator("#step [data-step-label]")).to_have_count(0)
