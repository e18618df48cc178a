"""What run H named, in a real browser on the projector's 1280×720."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def test_dedup_ticked_after_the_failure_shows_the_fixs_steps_at_once(
    page: Page, live_server: Any
) -> None:
    """Operations lesson 1, its case done, then Dedup ticked: the badge said "fix ON: dedup
    (set by hand)" while the steps still ended "… ends at 300. Then press Apply the fix"."""
    lab = f"e2e-nu31d-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab}/natural?lesson=set-vs-add")
    expect(page.locator("#offer")).to_have_count(0)
    card = page.locator("#natural-lesson")
    expect(card).to_have_attribute("data-lesson", "set-vs-add")
    for _ in range(2):
        card.locator("[data-next-step]").click()
    expect(card.locator("li[data-check]").first).to_have_class("met")
    shown = card.locator("ol.lesson-steps li:visible")
    expect(shown.last).to_have_text("Then press Apply the fix and follow the steps again.")
    page.locator("#ops-dedup").check()
    expect(shown).to_have_count(1)
    expect(shown).to_contain_text("With dedup on, press Retry it on “balance += 100”")
    page.locator("#ops-dedup").uncheck()
    expect(shown).to_have_count(3)
    expect(shown.last).to_have_text("Then press Apply the fix and follow the steps again.")


def test_next_step_after_the_fix_with_the_first_check_unmet_goes_back_to_the_case(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Payments lesson 1, Apply the fix first ("The checks count in order … Press Back to
    the first case"): Next step sent the Double-submit, then opened lesson 2 with lesson 1
    unachieved, and no question asked."""
    lab_id = f"e2e-nu31n-{secrets.token_hex(4)}"
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=double-click")
    with page.expect_navigation(wait_until="load"):
        page.locator("[data-apply-fix]").click()
    expect(page.locator("#lesson .checks-order")).to_be_visible()
    # Run O: not the fix's steps first, which tick nothing: back to the case at once.
    with page.expect_navigation(wait_until="load"):
        page.locator("#lesson [data-next-step]").click()
    expect(page.locator("#timeline .lane")).to_have_count(0)
    card = page.locator("#lesson")
    expect(card).to_have_attribute("data-lesson", "double-click")
    expect(card.locator(".checks-order")).to_have_count(0)
    expect(card.locator("[data-apply-fix]")).to_be_visible()


def test_next_step_with_the_fix_ticked_before_the_case_says_to_undo_it(
    page: Page, live_server: Any
) -> None:
    """Run I: Operations lesson 1, Dedup ticked, then Next step: the fixed case ran twice
    and lesson 2 opened, lesson 1's checks unmet and nothing asked."""
    lab = f"e2e-nu31u-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab}/natural?lesson=set-vs-add")
    expect(page.locator("#offer")).to_have_count(0)
    card = page.locator("#natural-lesson")
    expect(card).to_have_attribute("data-lesson", "set-vs-add")
    page.locator("#ops-dedup").check()
    for _ in range(4):
        card.locator("[data-next-step]").click()
    expect(card.locator(".onward-ask")).to_contain_text("so set that back first")
    expect(card).to_have_attribute("data-lesson", "set-vs-add")
    expect(page.locator("tr[data-operation][data-times]")).to_have_count(0)  # nothing ran
    page.locator("#ops-dedup").uncheck()
    card.locator("[data-next-step]").click()
    expect(page.locator("tr[data-operation][data-times]")).to_have_count(1)


def test_payments_lock_ticked_before_the_case_says_to_undo_it(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Run I: Payments lesson 4, Lock ticked before the first case: "if this order already
    has its record, press New order first", and Double-submit with the lock on can never
    tick the first check."""
    lab_id = f"e2e-nu31l-{secrets.token_hex(4)}"
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=race")
    page.locator("#lock").check()
    first = page.locator("#lesson ol.lesson-steps li").first
    expect(first).to_contain_text("so set that back first")
    page.locator("#lesson [data-next-step]").click()
    page.wait_for_timeout(500)
    assert live_server.lab(lab_id).payments.requests() == []
    page.locator("#lock").uncheck()
    expect(first).to_contain_text("Press Double-submit")


def test_next_step_after_the_steps_with_a_check_still_open_asks_first(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Run J: Payments lesson 2, Apply the fix, Pay, Retry, then Retry with a new key (the
    first check ticks) and Next step: lesson 3 opened, lesson 2 unachieved, no word said.
    It asks first; then (run P) it runs the fix's steps afresh rather than leave."""
    lab_id = f"e2e-nu32a-{secrets.token_hex(4)}"
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=lost-response")
    with page.expect_navigation(wait_until="load"):
        page.locator("[data-apply-fix]").click()
    card = page.locator("#lesson")
    lanes = page.locator("#timeline .lane")
    for n, button in enumerate(("Pay", "Retry", "Retry with a new key"), start=1):
        page.locator(f"button[data-action='{button}']").first.click()
        expect(lanes).to_have_count(n, timeout=10_000)
    expect(card.locator("li[data-check]").first).to_have_class("met")
    page.wait_for_timeout(300)  # the last answer's swap settles
    card.locator("[data-next-step]").click()
    expect(card.locator(".onward-ask")).to_contain_text("a check above is still open")
    expect(card).to_have_attribute("data-lesson", "lost-response")
    page.wait_for_timeout(700)  # past a bounced press
    with page.expect_navigation(wait_until="load"):
        card.locator("[data-next-step]").click()
    # Run P: the fix's steps afresh, the lesson still open (Next lesson → goes on).
    expect(page.locator("#lesson")).to_have_attribute("data-lesson", "lost-response")
    expect(lanes).to_have_count(0)


def test_the_key_strategy_chosen_by_hand_turns_the_badge_and_the_first_step(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Run J: Payments lesson 1, Key strategy "stable key per intent" chosen by hand: the
    badge still said "fix OFF: no key sent" while every request carried a key, and the
    lesson ended achieved under it."""
    open_link(page, f"{live_server.url}/lab/e2e-nu32k-{secrets.token_hex(4)}?lesson=double-click")
    badge = page.locator("#lesson .fix-state")
    undo = page.locator("#lesson li.undo-first")
    expect(badge).to_have_text("fix OFF: no key sent")
    expect(undo).to_be_hidden()
    page.select_option("#key-strategy", "stable")
    expect(badge).to_have_text("fix ON: a stable key (set by hand)")
    expect(undo).to_be_visible()
    page.select_option("#key-strategy", "none")
    expect(badge).to_have_text("fix OFF: no key sent")
    page.locator("#lesson [data-next-step]").click()  # the case: two charges, no key
    expect(page.locator("#lesson li[data-check]").first).to_have_class("met", timeout=10_000)
    page.select_option("#key-strategy", "stable")
    page.locator("button[data-action='Double-submit']").first.click()
    expect(page.locator("#lesson .achieved")).to_be_visible(timeout=10_000)
    expect(badge).to_have_text("fix ON: a stable key (set by hand)")  # drawn again, kept
