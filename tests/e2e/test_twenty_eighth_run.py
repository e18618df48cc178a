"""What runs 30 to 34 left or found, in a real browser."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from test_fourth_run import projector

pytestmark = pytest.mark.e2e


def test_a_storm_that_achieves_the_lesson_points_to_it(browser: Browser, live_server: Any) -> None:
    """Retry lesson 4 at 1280x720: the Storm that achieved the lesson brought its charts on
    screen and left "Lesson achieved" above it, unseen."""
    page = projector(browser, "en")
    page.goto(f"{live_server.url}/lab/e2e-nu28s-{secrets.token_hex(4)}/retries?lesson=jitter")
    card = page.locator("#lesson")
    pointer = page.locator("#to-achieved")
    card.get_by_role("button", name="Storm", exact=True).click()
    expect(card.locator(".checks li").first).to_have_class("met")
    expect(pointer).to_be_hidden()  # not achieved yet: nothing to point to
    card.get_by_role("button", name="Apply the fix", exact=True).click()
    expect(card.locator(".fix-state")).to_have_text("fix ON")
    card.get_by_role("button", name="Storm", exact=True).click()
    expect(pointer).to_be_visible()
    expect(pointer).to_have_text("↑ Lesson achieved")
    expect(page.locator("#lesson .achieved")).not_to_be_in_viewport()
    pointer.click()
    expect(page.locator("#lesson .achieved")).to_be_in_viewport(ratio=1)
    expect(pointer).to_be_hidden()
    page.context.close()


def test_a_lane_that_ran_to_its_end_says_so_in_its_buttons_room(
    page: Page, live_server: Any
) -> None:
    """Lesson 5, Run A to the end while B is paused: lane A kept an empty row beside its "A"
    where its buttons had been (kept so that B's buttons stay put)."""
    page.goto(f"{live_server.url}/lab/e2e-nu28l-{secrets.token_hex(4)}?lesson=slow-motion")
    page.locator("#lesson").get_by_role("button", name="Next step").click()
    expect(page.locator("[data-step-label=A]")).to_be_enabled()
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    b_before = page.locator("[data-step-label=B]").bounding_box()
    page.get_by_role("button", name="Run A to the end").click()
    ended = page.locator("#step .lane-A .ended")
    expect(ended).to_be_visible()
    expect(ended).to_have_text("✓ ran to its end")
    assert page.locator("[data-step-label=B]").bounding_box() == b_before
