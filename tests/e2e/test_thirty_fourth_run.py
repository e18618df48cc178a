"""What run M and CI's session-33 run named, in a real browser on the projector's 1280×720."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    ("path", "lesson", "card", "switch", "press"),
    [
        ("queue", "redelivery", "#lesson", "#set-dedup", "button[data-next-step-server]"),
        ("natural", "set-vs-add", "#natural-lesson", "#ops-dedup", "[data-next-step]"),
        ("", "race", "#lesson", "#lock", "[data-next-step]"),
    ],
)
def test_next_step_pressed_again_sets_a_fix_set_by_hand_back(
    page: Page, live_server: Any, path: str, lesson: str, card: str, switch: str, press: str
) -> None:
    """Run M: the fix ticked by hand before the case: each press of Next step said "set
    that back first" again, and a presenter remote cannot untick a box."""
    lab_id = f"e2e-nu34u-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}{'/' + path if path else ''}?lesson={lesson}")
    expect(page.locator("#offer")).to_have_count(0)
    page.locator(switch).check()
    undo = page.locator(f"{card} li.undo-first")
    expect(undo).to_be_visible()
    expect(undo.locator("button[data-set-back]")).to_have_text("Set it back")
    page.locator(f"{card} {press}").click()
    expect(page.locator(f"{card} .onward-ask")).to_contain_text(
        "Press Next step (.) again to set it back"
    )
    page.wait_for_timeout(700)  # a second, deliberate press, not a bounce
    with page.expect_navigation(wait_until="load"):
        page.locator(f"{card} {press}").click()
    expect(undo).to_be_hidden()
    expect(page.locator(switch)).not_to_be_checked()
    expect(page.locator(card)).to_have_attribute("data-lesson", lesson)  # still the lesson
    expect(page.locator(f"{card} .fix-state")).to_contain_text("fix OFF")


def test_the_queue_card_offers_no_run_again_before_anything_ran(
    page: Page, live_server: Any
) -> None:
    """Run M: Dedup ticked by hand on a fresh lesson 1 offered "Run again without the fix"
    though nothing had run."""
    page.goto(f"{live_server.url}/lab/e2e-nu34r-{secrets.token_hex(4)}/queue?lesson=redelivery")
    expect(page.locator("#offer")).to_have_count(0)
    page.locator("#set-dedup").check()
    unfix = page.locator("#lesson #unfix-scenario")
    expect(unfix).to_have_text("Run the steps without the fix")
    unfix.click()
    expect(page.locator("#lesson li[data-check]").first).to_have_class("met", timeout=10_000)
    page.locator("#set-dedup").check()
    expect(page.locator("#lesson #unfix-scenario")).to_have_text("Run again without the fix")
