"""The thirty-seventh session: what the last runs left, in the browser."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

APPLY = "Then press Apply the fix and follow the steps again."
FIX_STEP = "retries with the same key, and the server replays the first charge"


def test_retry_steps_follow_the_fix_ticked_before_run(page: Page, live_server: Any) -> None:
    """Run V: retry lesson 2, the case seen, then same_key ticked in the form: the badge
    read "fix ON (set by hand)", and the steps still said "Then press Apply the fix"."""
    from test_retries_browser import open_retries

    open_retries(page, live_server, "?lesson=lost-response-retry")
    page.locator("#policy-form button[type='submit']", has_text="Run").first.click()
    expect(page.locator("#lesson li[data-check].met")).to_have_count(1)
    steps = page.locator("#lesson ol.lesson-steps")
    expect(steps).to_contain_text(APPLY)
    box = page.locator("#policy-form input[name='same_key']")
    box.check()
    expect(page.locator("#lesson .fix-state")).to_contain_text("(set by hand)")
    expect(steps.get_by_text(APPLY)).to_be_hidden()
    expect(steps.get_by_text(FIX_STEP)).to_be_visible()
    box.uncheck()
    expect(steps.get_by_text(APPLY)).to_be_visible()
    expect(steps.get_by_text(FIX_STEP)).to_be_hidden()
