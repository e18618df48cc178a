"""The eighteenth new-user run through the payment lessons, in a real browser: what it
found in step mode across a reload."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect
from test_keyboard import open_lab, paused_pair, settled

pytestmark = pytest.mark.e2e


def test_next_step_after_a_reload_steps_the_other_lane(
    page: Page, live_server: Any, errors: Any
) -> None:
    """ "." stepped A, the tab reloaded, and "." stepped A again: the lane stepped last lived
    in the page's memory only, so the interleaving the lesson teaches (A, B, A, …) broke."""
    lab_id = open_lab(page, live_server, "nu18-reload")
    paused_pair(page, live_server, lab_id, lock=False)
    page.keyboard.press(".")
    expect(page.locator(".lane-A")).to_contain_text("stopped at charging")
    settled(page)
    page.reload()
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    page.locator("header h1").click()  # nothing focused: "." is next step
    page.keyboard.press(".")
    expect(page.locator(".lane-B")).to_contain_text("stopped at charging")
    expect(page.locator(".lane-A")).to_contain_text("stopped at charging")
    page.get_by_role("button", name="Release all").click()
    expect(page.locator("#step [data-step-label]")).to_have_count(0)
    settled(page)
    # No request paused: the next pair (a new order, so the pair is not replayed) starts
    # from A again.
    page.get_by_role("button", name="New order").click()
    settled(page)
    page.get_by_role("button", name="Double-submit").click()
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    settled(page)
    page.keyboard.press(".")
    expect(page.locator(".lane-A")).to_contain_text("stopped at charging")
    expect(page.locator(".lane-B")).to_contain_text("stopped after lookup")
    page.get_by_role("button", name="Release all").click()
