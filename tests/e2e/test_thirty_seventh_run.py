"""The thirty-seventh session: what the last runs left, in the browser."""

from __future__ import annotations

import re
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


def test_the_simulator_lesson_follows_the_mode_chosen(page: Page, live_server: Any) -> None:
    """Run V: queue lesson 5 with the idempotent consumer chosen in the simulator before
    Simulate: the badge said "fix OFF: no dedup" and the steps at-least-once."""
    import secrets

    page.goto(f"{live_server.url}/lab/e2e-nu37s-{secrets.token_hex(4)}/queue")
    page.goto(page.url + "?lesson=delivery-semantics")
    expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
    card = page.locator("#lesson")
    badge, undo = card.locator(".fix-state"), card.locator("li.undo-first")
    expect(badge).to_have_text("fix OFF: the simulator's Mode, at-least-once")  # run AD
    expect(undo).to_be_hidden()
    page.select_option("#sim-mode", "idempotent")
    expect(badge).to_have_text("fix ON: an idempotent consumer (set by hand)")
    expect(undo).to_be_visible()
    page.select_option("#sim-mode", "at_least_once")
    expect(undo).to_be_hidden()
    page.locator("#simulator button[type=submit]").first.click()
    expect(card.locator("li[data-check].met")).to_have_count(1)
    steps = card.locator("ol.lesson-steps").first
    fix_step = steps.get_by_text("In the simulator: at-least-once + idempotent consumer")
    case_step = steps.get_by_text("In the simulator: at-least-once, 10,000")
    expect(fix_step).to_be_hidden()
    page.select_option("#sim-mode", "idempotent")
    expect(fix_step).to_be_visible()
    expect(case_step).to_be_hidden()


def test_apply_the_fix_is_not_the_next_press_once_its_box_holds_it(
    page: Page, live_server: Any
) -> None:
    """Run W: retry lesson 2 after its case, same_key ticked: Apply the fix stayed the
    highlighted button, while the next press was the card's Run."""
    from test_retries_browser import open_retries

    open_retries(page, live_server, "?lesson=lost-response-retry")
    page.locator("#policy-form button[type='submit']", has_text="Run").first.click()
    card = page.locator("#lesson")
    expect(card.locator("li[data-check].met")).to_have_count(1)
    apply_fix = card.get_by_role("button", name="Apply the fix", exact=True)
    run = card.locator("[data-card-action]")
    expect(apply_fix).to_have_class(re.compile(r"\bprimary\b"))
    expect(run).not_to_have_class(re.compile(r"\bprimary\b"))
    page.locator("#policy-form input[name='same_key']").check()
    expect(apply_fix).not_to_have_class(re.compile(r"\bprimary\b"))
    expect(run).to_have_class(re.compile(r"\bprimary\b"))
    run.click()  # the server's card, drawn again, says the same
    expect(card.locator(".fix-state")).to_contain_text("(set by hand)")
    expect(apply_fix).not_to_have_class(re.compile(r"\bprimary\b"))


def test_operations_apply_the_fix_is_not_highlighted_once_dedup_is_ticked(
    page: Page, live_server: Any
) -> None:
    """Run W: operations lesson 1 after its case, Dedup ticked: Apply the fix stayed the
    highlighted button."""
    import secrets

    page.goto(f"{live_server.url}/lab/e2e-nu37o-{secrets.token_hex(4)}/natural?lesson=set-vs-add")
    expect(page.locator("#offer")).to_have_count(0)
    card = page.locator("#natural-lesson")
    for _ in range(2):
        card.locator("[data-next-step]").click()
    expect(card.locator("li[data-check].met")).to_have_count(1)
    apply_fix = card.get_by_role("button", name="Apply the fix", exact=True)
    expect(apply_fix).to_have_class(re.compile(r"\bprimary\b"))
    page.locator("#ops-dedup").check()
    expect(apply_fix).not_to_have_class(re.compile(r"\bprimary\b"))
    page.locator("#ops-dedup").uncheck()
    expect(apply_fix).to_have_class(re.compile(r"\bprimary\b"))


def test_a_keys_bracket_stays_with_it_on_the_line(page: Page, live_server: Any) -> None:
    """The key line kept a key whole, but not its "(": a phone's line could end with "("
    and the stable key begin the next, the bracket read as a stray mark."""
    import secrets

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/lab/e2e-nu37k-{secrets.token_hex(4)}")
    page.get_by_role("button", name="Retry with a new key", exact=True).click()
    kept = page.locator("#key-next .key-keep")
    expect(kept.filter(has_text="t1:u7")).to_have_text("(t1:u7:pay:order-42:v1):")
    expect(kept.locator(".key-whole").filter(has_text="t1:u7")).to_have_text(
        "t1:u7:pay:order-42:v1"
    )
    box = kept.filter(has_text="t1:u7").bounding_box()
    line_height = page.evaluate(
        "parseFloat(getComputedStyle(document.getElementById('key-next')).lineHeight) || 20"
    )
    assert box is not None and box["height"] < 1.5 * line_height


def test_a_key_typed_under_the_no_key_strategy_is_said_not_sent(
    page: Page, live_server: Any
) -> None:
    """Run X: lesson 1, a key typed in the field while Key strategy (below the fold) was "no
    key": two more charges marked "no key", the field still showing the key."""
    import secrets

    page.goto(f"{live_server.url}/lab/e2e-nu37n-{secrets.token_hex(4)}")
    page.select_option("#key-strategy", "none")
    line = page.locator("#key-next")
    expect(line).to_have_text("Pay and Retry send no key.")
    page.locator("#idempotency-key").fill("t1:u7:pay:order-42:v1")
    expect(line).to_contain_text("Key strategy (in this column, under The server) is “no key”")
    page.select_option("#key-strategy", "stable")
    expect(line).not_to_contain_text("Key strategy")


def test_lesson_1_achieved_by_hand_keeps_the_steps_of_the_key_it_holds(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Run X: lesson 1 achieved with a stable key chosen by hand: the badge read "fix ON: a
    stable key", its first step still "… with no key"."""
    import secrets

    open_link(page, f"{live_server.url}/lab/e2e-nu37d-{secrets.token_hex(4)}?lesson=double-click")
    page.locator("#lesson [data-next-step]").click()  # the case: two charges, no key
    expect(page.locator("#lesson li[data-check]").first).to_have_class("met", timeout=10_000)
    page.select_option("#key-strategy", "stable")
    page.locator("button[data-action='Double-submit']").first.click()
    expect(page.locator("#lesson .achieved")).to_be_visible(timeout=10_000)
    steps = page.locator("#lesson ol.lesson-steps")
    expect(steps.get_by_text("with the same stable key").first).to_be_visible()
    expect(steps.get_by_text("with no key")).to_be_hidden()


@pytest.mark.parametrize("width", [390, 1280])
def test_a_long_order_id_keeps_the_ledger_inside_its_card(
    page: Page, live_server: Any, width: int
) -> None:
    """Run X: a 64-character order id (the field's most) pushed the ledger's Key column past
    the card's right edge, where it was cut off."""
    import secrets

    page.set_viewport_size({"width": width, "height": 844})
    page.goto(f"{live_server.url}/lab/e2e-nu37l-{secrets.token_hex(4)}")
    page.locator("#order-id").fill("o" * 64)
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#ledger td.order")).to_have_text("o" * 64)
    ledger = page.locator("#ledger")
    assert ledger.evaluate("el => el.scrollWidth <= el.clientWidth + 1")


def test_the_jitter_badge_follows_the_storms_strategy(page: Page, live_server: Any) -> None:
    """Run X: retry lesson 4, the storm form's Strategy set to full_jitter: the badge stayed
    "fix OFF: no jitter" until Storm was pressed (lesson 1's follows its box at once)."""
    from test_retries_browser import open_retries

    open_retries(page, live_server, "?lesson=jitter")
    badge = page.locator("#lesson .fix-state")
    menu = page.locator("#storm-form select[name='strategy']")
    expect(badge).to_have_text("fix OFF: no jitter")
    for choice in ("full_jitter", "all"):
        menu.select_option(choice)
        expect(badge).to_have_text("fix ON: full jitter (set by hand)")
    menu.select_option("exponential")
    expect(badge).to_have_text("fix OFF: no jitter")


def test_the_ledger_and_store_fit_a_phones_cards(page: Page, live_server: Any) -> None:
    """Run Y: on a 390 px phone the ledger's and the store's tables were wider than their
    cards (403 px in 362), the key cut at the card's edge with no sign it scrolls."""
    import secrets

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/lab/e2e-nu37p-{secrets.token_hex(4)}")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#ledger tbody tr")).to_have_count(1)
    page.get_by_role("button", name="Retry with a new key", exact=True).click()
    expect(page.locator("#ledger tbody tr")).to_have_count(2)
    expect(page.locator("#store tr[data-key]")).to_have_count(2)
    for card in ("#ledger", "#store"):
        assert page.locator(card).evaluate("el => el.scrollWidth <= el.clientWidth + 1"), card
