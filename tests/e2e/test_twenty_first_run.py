"""The twenty-first new-user run, in a real browser: a press that waits its turn sends what
was pressed, not what the form holds by the time it leaves."""

from __future__ import annotations

import re
import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from test_keyboard import open_lab, paused_pair, settled
from test_presenter_proof import PROJECTOR
from test_retries_browser import open_retries
from test_twentieth_run import in_view

pytestmark = pytest.mark.e2e

ALL_ANSWERED = """() => !document.querySelector('.htmx-request')
    && !document.querySelector('[data-step-label]')"""


def test_a_queued_double_submit_sends_the_amount_it_was_pressed_with(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Double-submit pressed while its pair was paused, then another amount typed: the queued
    pair went out with the new amount (htmx reads the form only when it sends)."""
    lab_id = open_lab(page, live_server, "nu21-queued-body")
    lab = live_server.lab(lab_id)
    paused_pair(page, live_server, lab_id, lock=False)
    pressed_with = int(page.locator("#amount").input_value())
    page.keyboard.press("d")
    expect(page.locator("#notice")).to_contain_text("waits its turn")
    page.locator("#amount").fill(str(pressed_with + 5000))
    page.get_by_role("button", name="Release all").click()
    page.wait_for_function("() => document.querySelectorAll('[data-step-label]').length === 2")
    expect(page.locator("[data-step-label=B]")).to_be_enabled(timeout=20_000)
    settled(page)
    page.get_by_role("button", name="Release all").click()
    page.wait_for_function(ALL_ANSWERED, timeout=20_000)
    amounts = [entry.charge.amount for entry in lab.payments.requests() if entry.charge]
    assert amounts == [pressed_with] * 4
    # The next press sends the form as it is now.
    page.locator("input[name=step_mode]").uncheck()
    expect(page.locator("#step")).to_be_hidden()
    page.get_by_role("button", name="Pay", exact=True).click()
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    last = lab.payments.requests()[-1].charge
    assert last is not None and last.amount == pressed_with + 5000


def test_a_queued_press_new_order_replaced_says_it_was_not_sent(
    page: Page, live_server: Any, errors: Any
) -> None:
    """New order while a press waited its turn: the press vanished without a word."""
    lab_id = open_lab(page, live_server, "nu21-queued-gone")
    lab = live_server.lab(lab_id)
    paused_pair(page, live_server, lab_id, lock=False)
    page.keyboard.press("d")
    expect(page.locator("#notice")).to_contain_text("waits its turn")
    page.get_by_role("button", name="New order").click()
    notice = page.locator("#notice")
    expect(notice).to_contain_text("was not sent: New order replaced the order")
    page.get_by_role("button", name="Release all").click()
    page.wait_for_function(ALL_ANSWERED, timeout=20_000)
    assert len(lab.payments.requests()) == 2


def test_back_and_forward_show_the_scenario_the_lab_is_in(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Back, then Forward: the header's Scenario menu showed a choice never opened (the
    browser restored it), beside the card of the scenario the lab was in."""
    open_lab(page, live_server, "nu21-back")
    page.select_option("#scenario-select", "race")
    page.locator(".scenario-menu button").click()
    expect(page.locator("#lesson")).to_contain_text("The race")
    page.select_option("#scenario-select", "ttl-expiry")  # chosen, not opened
    page.go_back()
    expect(page.locator("#scenario-select")).to_have_value("race")
    page.go_forward()
    expect(page.locator("#lesson")).to_contain_text("The race")
    expect(page.locator("#scenario-select")).to_have_value("race")


def test_a_retry_lesson_run_keeps_its_checks_and_its_headline_on_screen(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Run, pressed under the policy at 1280×720: the page scrolled the run's table into
    view, the lesson's checks and numbers above the top edge (the answer-in-view script
    listened for a settle that came before the request's end)."""
    page.set_viewport_size(PROJECTOR)
    open_retries(page, live_server, "?lesson=retry-policy")
    page.locator("#policy-form button[data-action='run']").click()
    expect(page.locator("#run .run-headline")).to_be_visible()
    checks = page.locator("#lesson .checks").bounding_box()
    headline = page.locator("#run .run-headline").bounding_box()
    assert checks is not None and headline is not None
    assert checks["y"] >= 0 and headline["y"] + headline["height"] <= PROJECTOR["height"]


def test_a_key_of_spaces_is_told_before_it_goes(page: Page, live_server: Any, errors: Any) -> None:
    """A key of three spaces: the line under the field read "Retry sends the key in the
    field:    . It is not this order's stable key", as if a key were there."""
    lab_id = open_lab(page, live_server, "nu21-spaces")
    page.locator("#idempotency-key").fill("   ")
    expect(page.locator("#key-next")).to_contain_text("holds only spaces")
    expect(page.locator("#key-next")).not_to_contain_text("Pay and Retry send the key in the field")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("400")
    assert live_server.lab(lab_id).payments.gateway.ledger() == []
    errors.clear()  # the 400 in the console is the point


def test_the_queue_lesson_steps_with_the_dot_key_as_the_others_do(
    page: Page, live_server: Any, errors: Any
) -> None:
    """The queue card had no Next step, and "." did nothing there."""
    lab_id = f"e2e-nu21-qdot-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}/queue?lesson=redelivery")
    expect(page.locator("#offer")).to_have_count(0)
    next_step = page.locator("#next-step")
    expect(next_step).to_have_attribute("title", "Step 1 of 4")
    page.locator("header h1").click()  # nothing focused: "." is next step
    for title in ("Step 2 of 4", "Step 3 of 4", "Step 4 of 4", "The fix, step 1 of 4"):
        page.keyboard.press(".")
        expect(next_step).to_have_attribute("title", title)
    expect(page.locator("[data-check=redelivered-twice]")).to_have_class("met")
    for title in ("Step 2 of 4", "Step 3 of 4", "Step 4 of 4"):
        page.keyboard.press(".")
        expect(next_step).to_have_attribute("title", title)
    page.keyboard.press(".")
    expect(page.locator("#lesson .achieved")).to_be_visible()
    queue = live_server.lab(lab_id).queue
    assert queue.fixed and queue.measure("emails_per_key") == 1
    page.keyboard.press(".")  # right after the achievement: it asks first
    expect(page.locator("#lesson .onward-ask")).to_contain_text("Next lesson")
    page.wait_for_timeout(700)  # a second press within 600 ms is the first one, bounced
    page.keyboard.press(".")
    expect(page.locator("#lesson-title")).to_contain_text("The producer enqueues the same job")


def test_the_shortcuts_list_opens_on_every_lab_page(
    page: Page, live_server: Any, errors: Any
) -> None:
    """ "?" and the Shortcuts button did nothing outside the payment lab."""
    lab_id = f"e2e-nu21-keys-{secrets.token_hex(4)}"
    for path in ("/queue", "/retries", "/natural"):
        page.goto(f"{live_server.url}/lab/{lab_id}{path}")
        page.locator("header h1").click()
        page.keyboard.press("?")
        expect(page.locator("#shortcuts")).to_be_visible()
        page.keyboard.press("Escape")
        expect(page.locator("#shortcuts")).to_be_hidden()
        page.get_by_role("button", name="Shortcuts").click()
        expect(page.locator("#shortcuts")).to_be_visible()
        page.get_by_role("button", name="Close").click()
        expect(page.locator("#shortcuts")).to_be_hidden()


def test_an_operations_row_from_other_settings_says_so(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Attempts changed after a run: the old rows still read as the new setting's answers."""
    page.goto(f"{live_server.url}/lab/e2e-nu21-stale-{secrets.token_hex(4)}/natural")
    row = page.locator("tr[data-operation=set_balance]")
    row.get_by_role("button", name="Retry it").click()
    expect(row).to_have_attribute("data-times", "3")
    note = row.locator(".stale-note")
    expect(note).to_be_hidden()
    page.locator("#ops-times").fill("5")
    expect(note).to_be_visible()
    expect(note).to_contain_text("from 3 attempts, dedup off")
    expect(row).to_have_class(re.compile(r"\bstale\b"))
    page.locator("#ops-times").fill("3")
    expect(note).to_be_hidden()
    page.locator("#ops-dedup").check()
    expect(note).to_be_visible()
    row.get_by_role("button", name="Retry it").click()
    expect(row).to_have_attribute("data-dedup", "true")
    expect(row.locator(".stale-note")).to_be_hidden()


def test_a_vietnamese_order_id_gets_a_key_the_page_can_send(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Order id "đơn-hàng-1": the page built the key t1:u7:pay:order-đơn-hàng-1:v1 by itself,
    then refused to send it ("NOT SENT — the client refused the key")."""
    lab_id = open_lab(page, live_server, "nu21-vi-order")
    page.locator("#order-id").fill("đơn-hàng-1")
    key = "t1:u7:pay:order-%C4%91%C6%A1n-h%C3%A0ng-1:v1"
    expect(page.locator("#idempotency-key")).to_have_value(key)
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("CHARGED")
    charge = live_server.lab(lab_id).payments.gateway.ledger()[0]
    assert charge.order_id == "đơn-hàng-1"
    assert live_server.lab(lab_id).payments.requests()[-1].raw_key == key


def test_one_click_puts_the_orders_stable_key_back(
    page: Page, live_server: Any, errors: Any
) -> None:
    """After Retry with a new key the line said "New order brings that back": New order
    makes another order, with another key."""
    open_lab(page, live_server, "nu21-restore")
    restore = page.get_by_role("button", name="Use this order's stable key")
    expect(restore).to_be_hidden()
    page.get_by_role("button", name="Retry with a new key").click()
    expect(page.locator("#key-next")).to_contain_text("the button below brings it back")
    expect(restore).to_be_visible()
    restore.click()
    expect(page.locator("#idempotency-key")).to_have_value("t1:u7:pay:order-42:v1")
    expect(restore).to_be_hidden()
    expect(page.locator("#key-next")).to_contain_text("Retry sends this order's stable key")


def test_a_reset_in_another_tab_is_told(page: Page, live_server: Any, errors: Any) -> None:
    """Tab 1 paused a Pay in step mode; tab 2 pressed Reset: tab 1 emptied itself without a
    word ("Nothing sent yet"), the paused request gone."""
    lab_id = open_lab(page, live_server, "nu21-reset")
    page.locator("input[name=step_mode]").check()
    expect(page.locator("#step")).to_be_visible()
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("[data-step-label]")).to_have_count(1)
    other = page.context.new_page()
    other.goto(f"{live_server.url}/lab/{lab_id}")
    other.get_by_role("button", name="Reset", exact=True).click()
    expect(other.locator("#explain .headline")).to_have_text("Nothing sent yet")
    expect(other.locator("#notice")).to_be_hidden()  # its own Reset: nothing to tell
    notice = page.locator("#notice")
    expect(notice).to_contain_text("Another tab reset this lab", timeout=10_000)
    expect(notice).to_contain_text("a paused one too")
    other.close()


def test_a_refused_run_marks_the_last_run_as_earlier(
    page: Page, live_server: Any, errors: Any
) -> None:
    """A plan of 50 items refused (422) beside a green "CHARGED … 1 charge" from the run
    before, with nothing marking that run as old."""
    open_retries(page, live_server)
    page.locator("#policy-form button[data-action='run']").click()
    expect(page.locator("#run .run-headline")).to_be_visible()
    page.locator("[data-fault-plan]").fill(", ".join(["ok"] * 50))
    page.locator("#policy-form button[data-action='run']").click()
    # The refusal first, then what the run shown is (run AC read its first words as the refusal's).
    note = page.locator("#run .stale-run-note")
    expect(note).to_contain_text("Your last Run was refused, and charged nothing: 422")
    expect(note).to_contain_text("Below: the Run before it.")
    page.locator("[data-fault-plan]").fill("ok")
    page.locator("#policy-form button[data-action='run']").click()
    expect(page.locator("#run .stale-run-note")).to_have_count(0)
    errors.clear()  # the 422 in the console is the point


def test_the_operations_lesson_steps_with_the_dot_key(
    page: Page, live_server: Any, errors: Any
) -> None:
    """In the operations lab "." applied the fix at once, the steps skipped, and its card had
    no Next step."""
    lab_id = f"e2e-nu21-ndot-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}/natural?lesson=set-vs-add")
    expect(page.locator("#offer")).to_have_count(0)
    expect(page.locator("#natural-lesson .next-step")).to_be_visible()
    page.locator("header h1").click()  # nothing focused: "." is next step
    first = page.locator("#natural-lesson [data-check]").first
    page.keyboard.press(".")  # Retry it on SET
    expect(page.locator("tr[data-operation=set_balance]")).to_have_attribute("data-times", "3")
    lab = live_server.lab(lab_id)
    assert not lab.natural.fixed  # a step, not the fix
    page.keyboard.press(".")  # Retry it on +=
    expect(first).to_have_class("met")
    page.keyboard.press(".")  # the fix
    expect(page.locator("#natural-lesson .fix-state.on")).to_be_visible()
    page.keyboard.press(".")  # Retry it on += with dedup
    expect(page.locator("#natural-lesson .achieved")).to_be_visible()


def test_a_refusal_of_the_cards_run_is_said_on_the_card(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Run pressed on the lesson card was refused: the reason appeared under the policy
    form, cut at the bottom edge, and the card said nothing."""
    page.set_viewport_size(PROJECTOR)
    open_retries(page, live_server, "?lesson=retry-policy")
    page.locator("[data-fault-plan]").fill(", ".join(["ok"] * 50))
    page.locator("#lesson [data-card-action=run]").click()
    line = page.locator("#lesson .card-problem")
    expect(line).to_contain_text("422")
    assert in_view(page, "#lesson .card-problem")
    page.locator("[data-fault-plan]").fill("400, 400, 400, 400")
    page.locator("#lesson [data-card-action=run]").click()
    expect(page.locator("#run .run-headline")).to_be_visible()
    expect(line).to_have_count(0)
    errors.clear()  # the 422 in the console is the point
