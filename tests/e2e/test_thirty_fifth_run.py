"""What run O and run P named, in a real browser on the projector's 1280×720."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def test_a_key_strategy_chosen_by_hand_after_the_case_turns_the_steps_too(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Run O: Payments lesson 1, the double charge seen, then "stable key per intent" chosen
    by hand: the badge said "fix ON: a stable key (set by hand)" over a step that still
    said "… with no key"."""
    open_link(page, f"{live_server.url}/lab/e2e-nu35k-{secrets.token_hex(4)}?lesson=double-click")
    card = page.locator("#lesson")
    card.locator("[data-next-step]").click()  # the case: two charges, no key
    expect(card.locator("li[data-check]").first).to_have_class("met", timeout=10_000)
    shown = card.locator("ol.lesson-steps li:visible")
    expect(shown.first).to_contain_text("with no key")
    page.select_option("#key-strategy", "stable")
    expect(card.locator(".fix-state")).to_have_text("fix ON: a stable key (set by hand)")
    expect(shown).to_have_count(1)
    expect(shown.first).to_contain_text("with the same stable key")
    page.select_option("#key-strategy", "none")
    expect(shown.first).to_contain_text("with no key")
    expect(shown.last).to_have_text("Then press Apply the fix and follow the steps again.")
