"""What run K named, in a real browser on the projector's 1280×720."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def test_next_step_after_reset_mid_lesson_arms_the_fault_and_starts_over(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Payments lesson 2: Pay (the response lost), then Reset. The fault had fired, so the
    lab was left without it, the card said nothing, and Next step pressed Retry with a new
    key on an empty lab: a first charge, no lost response anywhere."""
    open_link(page, f"{live_server.url}/lab/e2e-nu33r-{secrets.token_hex(4)}?lesson=lost-response")
    card = page.locator("#lesson")
    lanes = page.locator("#timeline .lane")
    card.locator("[data-next-step]").click()  # Pay: charged, the response lost
    expect(lanes).to_have_count(1, timeout=10_000)
    expect(page.locator("#outcome-announce")).to_contain_text("No response", timeout=10_000)
    expect(card.locator("li.arm-first")).to_have_count(0)
    page.locator("button[data-action='Reset']").click()
    expect(lanes).to_have_count(0)
    arm = card.locator("li.arm-first")
    expect(arm).to_contain_text("press “Lose the response” before the first step")
    card.locator("[data-next-step]").click()  # arms it
    expect(arm).to_have_count(0)
    expect(page.locator(".armed-now")).not_to_contain_text("No fault armed")
    card.locator("[data-next-step]").click()  # Pay again, not Retry with a new key
    expect(lanes).to_have_count(1, timeout=10_000)
    expect(lanes.first).to_contain_text("Pay")
    expect(page.locator("#outcome-announce")).to_contain_text("No response")


def test_the_queue_next_step_button_says_to_undo_a_fix_set_mid_case(
    page: Page, live_server: Any
) -> None:
    """Queue lesson 6, three steps in, then Max attempts 3 by hand: the card said to set it
    back first, yet its Next step button played the rest of the steps, which could never
    meet the first check ("failed on one job four times")."""
    page.goto(f"{live_server.url}/lab/e2e-nu33p-{secrets.token_hex(4)}/queue?lesson=poison-message")
    expect(page.locator("#offer")).to_have_count(0)
    card = page.locator("#lesson")
    button = card.locator("button[data-next-step-server]")
    for n in range(1, 4):
        button.click()
        expect(button).to_have_attribute("title", f"Step {n + 1} of 8")
    page.select_option("select[name=max_attempts]", "3")
    expect(card.locator("li.undo-first")).to_be_visible()
    button.click()
    expect(card.locator(".onward-ask")).to_contain_text("so set that back first")
    page.wait_for_timeout(500)  # a press that went through would have answered by now
    expect(button).to_have_attribute("title", "Step 4 of 8")


@pytest.mark.parametrize(
    ("path", "lesson", "card"),
    [
        ("natural", "set-vs-add", "#natural-lesson"),
        ("retries", "retry-after", "#lesson"),
    ],
)
def test_next_step_after_a_language_switch_goes_on(
    page: Page, live_server: Any, path: str, lesson: str, card: str
) -> None:
    """Run K: one Next step, then the language switched (the page loads again): the next
    Next step ran the first step again, on the operations and retry labs, whose steps the
    page forgot on loading: only the payment lab's timeline said they had run."""
    lab = f"e2e-nu33l-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab}/{path}?lesson={lesson}")
    expect(page.locator("#offer")).to_have_count(0)
    page.locator(f"{card} [data-next-step]").click()
    expect(page.locator(card)).to_have_attribute("data-ran", "true")
    page.locator("#language-select").select_option("vi")
    with page.expect_navigation(wait_until="load"):
        page.locator(".language button[type=submit]").click()
    expect(page.locator("html")).to_have_attribute("lang", "vi")
    page.locator(f"{card} [data-next-step]").click()
    if path == "natural":
        # Step 2, Retry it on balance += 100: its row ran; step 1 again would not run it.
        expect(page.locator("tr[data-operation='add_balance'][data-times]")).to_have_count(1)
    else:
        # The last step done: the next press applies the fix (the lab afresh, fix on).
        expect(page.locator("#lesson [data-unfix]")).to_be_visible()


def test_space_in_free_play_with_work_on_it_asks_before_a_lesson_wipes_it(
    page: Page, live_server: Any
) -> None:
    """Run L: free play, two orders paid, then Space pressed to scroll: lesson 1 opened on a
    fresh lab, "charged 0", without a word."""
    page.goto(f"{live_server.url}/lab/e2e-nu33f-{secrets.token_hex(4)}")
    lanes = page.locator("#timeline .lane")
    page.locator("button[data-action='Pay']").first.click()
    expect(lanes).to_have_count(1, timeout=10_000)
    page.locator("h1").first.click()  # an empty spot: no control has the focus
    page.keyboard.press(" ")
    expect(page.locator("#notice")).to_contain_text("starts this lab afresh")
    page.wait_for_timeout(300)
    expect(page.locator("#lesson")).to_have_count(0)
    expect(lanes).to_have_count(1)
    page.wait_for_timeout(500)  # past a bounced press: the second press goes on
    page.keyboard.press(" ")
    expect(page.locator("#lesson")).to_have_attribute("data-lesson", "double-click")


def test_next_step_after_reset_with_the_first_check_met_applies_the_fix(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Run L: lesson 2, its case done (the first check ticked), then Reset: the card said
    "the next check needs the fix, so press Apply the fix", and Next step armed the lost
    response again and paid the case once more."""
    open_link(page, f"{live_server.url}/lab/e2e-nu33a-{secrets.token_hex(4)}?lesson=lost-response")
    card = page.locator("#lesson")
    lanes = page.locator("#timeline .lane")
    for n in (1, 2):
        card.locator("[data-next-step]").click()
        expect(lanes).to_have_count(n, timeout=10_000)
        expect(page.locator("#outcome-announce")).not_to_contain_text("in flight", timeout=10_000)
    expect(card.locator("li[data-check]").first).to_have_class("met")
    page.locator("button[data-action='Reset']").click()
    expect(lanes).to_have_count(0)
    expect(card).to_contain_text("the next check needs the fix, so press Apply the fix")
    expect(card.locator("li.arm-first")).to_have_count(0)
    with page.expect_navigation(wait_until="load"):
        card.locator("[data-next-step]").click()
    expect(page.locator("#lesson [data-unfix]")).to_be_visible()


def test_a_second_tab_goes_on_from_the_steps_the_first_took(browser: Any, live_server: Any) -> None:
    """Run L: lesson 2, Pay (the response lost) in one tab, then the same lab opened in a
    new tab: its Next step pressed Pay again, a replay the card never mentions."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    first = context.new_page()
    first.goto(f"{live_server.url}/lab/e2e-nu33t-{secrets.token_hex(4)}?lesson=lost-response")
    expect(first.locator("#offer")).to_have_count(0)
    first.locator("#lesson [data-next-step]").click()  # Pay
    expect(first.locator("#outcome-announce")).to_contain_text("No response", timeout=10_000)
    second = context.new_page()
    second.goto(first.url)
    expect(second.locator("#timeline .lane")).to_have_count(1)
    second.locator("#lesson [data-next-step]").click()  # Retry with a new key, not Pay
    lanes = second.locator("#timeline .lane")
    expect(lanes).to_have_count(2, timeout=10_000)
    expect(lanes.first).to_contain_text("Retry with a new key")
    context.close()
