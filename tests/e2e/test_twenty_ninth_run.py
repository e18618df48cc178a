"""What runs 37 and 38 found, in a real browser."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def test_the_operations_badge_follows_dedup_ticked_by_hand(page: Page, live_server: Any) -> None:
    """Operations lesson 1: with Dedup ticked by hand the badge kept "fix OFF: no dedup"
    over a lesson achieved with it."""
    page.goto(f"{live_server.url}/lab/e2e-nu29b-{secrets.token_hex(4)}/natural?lesson=set-vs-add")
    badge = page.locator("#natural-lesson .fix-state")
    expect(badge).to_have_text("fix OFF: no dedup")
    page.locator("#ops-dedup").check()
    expect(badge).to_have_text("fix ON: dedup (set by hand)")
    expect(badge).to_have_class("fix-state on")
    page.locator("#ops-dedup").uncheck()
    expect(badge).to_have_text("fix OFF: no dedup")
