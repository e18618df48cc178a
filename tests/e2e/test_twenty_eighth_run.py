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
    expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
    card = page.locator("#lesson")
    pointer = page.locator("#to-achieved")
    card.get_by_role("button", name="Storm", exact=True).click()
    expect(card.locator(".checks li").first).to_have_class("met")
    expect(pointer).to_be_hidden()  # not achieved yet: nothing to point to
    card.get_by_role("button", name="Apply the fix", exact=True).click()
    expect(card.locator(".fix-state")).to_have_text("fix ON: full jitter")
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
    expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
    page.locator("#lesson").get_by_role("button", name="Next step").click()
    expect(page.locator("[data-step-label=A]")).to_be_enabled()
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    b_before = page.locator("[data-step-label=B]").bounding_box()
    page.get_by_role("button", name="Run A to the end").click()
    ended = page.locator("#step .lane-A .ended")
    expect(ended).to_be_visible()
    expect(ended).to_have_text("✓ ran to its end")
    assert page.locator("[data-step-label=B]").bounding_box() == b_before


def test_retry_under_a_key_the_store_never_saw_is_not_called_safe(
    page: Page, live_server: Any, errors: Any
) -> None:
    """A keyless request from outside the page charged order 79 (amount 1); the form took
    order 79 and said "Retry sends this order's stable key: t1:u7:pay:order-79:v1 (amount
    1)", as if Retry would replay, while that key had never been sent: Retry charged again."""
    lab_id = f"e2e-nu28k-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}")
    line = page.locator("#key-next")
    expect(line).to_contain_text("Retry sends this order's stable key: t1:u7:pay:order-42:v1")
    live_server.lab(lab_id).payments.create_charge([], b'{"order_id": "79", "amount": 1}')
    page.reload()  # the page's form takes the lab's order: the last request's
    expect(page.locator("#order-id")).to_have_value("79")
    expect(line).to_contain_text("t1:u7:pay:order-79:v1 (amount 1)")
    expect(line).to_contain_text("(amount 1). The store has no record of it, though the order")
    page.get_by_role("button", name="Pay", exact=True).click()  # the key goes out: kept now
    expect(page.locator("#store tr[data-key='t1:u7:pay:order-79:v1']")).to_have_count(1)
    expect(line).not_to_contain_text("The store has no record of it")


def test_the_pointer_to_the_answer_leaves_the_stepped_code_uncovered(
    page: Page, live_server: Any
) -> None:
    """Lesson 5 at 1280x720, A run to its end while B is paused: "↓ CHARGED — see the
    answer" sat at the bottom right, over the step card's code; moved to the left, it sat
    on the server's Lock and Step mode switches. While a lane is paused there is none: A's
    lane shows its own answer."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{live_server.url}/lab/e2e-nu28p-{secrets.token_hex(4)}?lesson=slow-motion")
    expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
    page.locator("#lesson").get_by_role("button", name="Next step").click()
    expect(page.locator("[data-step-label=A]")).to_be_enabled()
    page.get_by_role("button", name="Run A to the end").click()
    expect(page.locator("#step .lane-A .ended")).to_be_visible()
    expect(page.locator("#step .lane-A")).to_contain_text("finished: CHARGED")
    page.locator("#step pre.code").scroll_into_view_if_needed()
    page.locator("#lock").scroll_into_view_if_needed()
    pointer = page.locator("#to-outcome")
    expect(pointer).to_be_hidden()
    on_top = page.evaluate(
        """() => { const b = document.getElementById("lock").getBoundingClientRect();
                   const e = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
                   return e.closest("label, input") !== null; }"""
    )
    assert on_top, "something lies on top of the Lock switch"
    page.get_by_role("button", name="Run B to the end").click()
    expect(page.locator("[data-step-label]")).to_have_count(0)
    expect(page.locator("#explain .headline")).to_contain_text("DOUBLE CHARGE")
    expect(page.locator("#explain .headline")).to_be_in_viewport()


def test_lesson_10s_fix_stays_on_screen_with_a_hint_shown(
    browser: Browser, live_server: Any
) -> None:
    """Lesson 10 at 1280x720, after Show a hint and the steps: "Apply the fix" was cut by
    the screen's bottom edge (the hint list's own 1em margins)."""
    page = projector(browser, "en")
    page.goto(f"{live_server.url}/lab/e2e-nu28h-{secrets.token_hex(4)}?lesson=email-once")
    expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
    card = page.locator("#lesson")
    card.get_by_role("button", name="Show a hint").click()
    expect(card.locator(".hints li")).to_have_count(1)
    card.get_by_role("button", name="Run the steps").click()
    expect(card.locator(".checks li").first).to_have_class("met")
    expect(card.get_by_role("button", name="Apply the fix", exact=True)).to_be_in_viewport(ratio=1)
    page.context.close()


def test_a_charge_under_the_forms_key_is_no_charge_under_another(
    page: Page, live_server: Any
) -> None:
    """Lesson 5, lock off, both lanes stopped after their charges: the line said "The store
    has no record of it, though the order has a charge (made under another key, or none)",
    though both charges were made under this very key (the record is saved later)."""
    page.goto(f"{live_server.url}/lab/e2e-nu28u-{secrets.token_hex(4)}?lesson=slow-motion")
    expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
    page.locator("#lesson").get_by_role("button", name="Next step").click()  # Double-submit
    for _ in range(3):
        expect(page.locator("[data-step-label=A]")).to_be_enabled()
        page.locator("[data-step-label=A]").click()
        expect(page.locator("[data-step-label=B]")).to_be_enabled()
        page.locator("[data-step-label=B]").click()
    expect(page.locator("#ledger tr[data-order='42']")).to_have_count(2)
    expect(page.locator("#store tr[data-key]")).to_have_count(0)
    expect(page.locator("#key-next")).not_to_contain_text("The store has no record")


def test_the_job_preview_shows_the_chosen_job(page: Page, live_server: Any) -> None:
    """The queue's job preview read send-invoice-42 whatever job was chosen or sent."""
    page.goto(f"{live_server.url}/lab/e2e-nu28j-{secrets.token_hex(4)}/queue")
    shown = page.locator("#queue-producer pre.job:visible")
    expect(shown).to_have_count(1)
    expect(shown).to_contain_text('"id": "send-invoice-42"')
    page.locator("#job-select").select_option("poison")
    expect(shown).to_contain_text('"id": "send-invoice-x"')
    page.locator("#enqueue").click()  # the card is drawn again: the same job stays shown
    # The whole lab is swapped in with the queue's new message: choose on that card, not
    # on the one it replaces (under load the choice went to the old card).
    expect(page.locator("#queue")).to_contain_text("m-1")
    expect(page.locator("#queue-producer pre.job:visible")).to_contain_text('"invoice_id": "x"')
    page.locator("#job-select").select_option("43")
    expect(page.locator("#queue-producer pre.job:visible")).to_contain_text("send-invoice-43")


def test_the_queue_cards_next_step_asks_before_leaving_a_lesson_just_achieved(
    page: Page, live_server: Any
) -> None:
    """Queue lesson 2, achieved: Next step, clicked 2 s later, went straight on to lesson 3,
    while the README (and the other labs' cards) ask first within 10 s."""
    page.goto(f"{live_server.url}/lab/e2e-nu28n-{secrets.token_hex(4)}/queue?lesson=redelivery")
    expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
    card = page.locator("#lesson")
    card.get_by_role("button", name="Run the steps").click()
    expect(card.locator(".checks li").first).to_have_class("met")
    card.get_by_role("button", name="Apply the fix and run again").click()
    expect(card.locator(".achieved")).to_be_visible()
    card.locator("button.next-step").click()
    expect(card.locator(".onward-ask")).to_contain_text("again to go on")
    page.wait_for_timeout(800)  # a deliberate press comes later than a bounce (600 ms)
    expect(page.locator("#lesson-title")).to_contain_text("Redelivery after a crash")
    card.locator("button.next-step").click()
    expect(page.locator("#lesson-title")).to_contain_text("The producer enqueues the same job")
