"""The twenty-third run, in a real browser: Next step never presses ahead of the last
step's answer."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, Route, expect
from test_fourth_run import projector
from test_keyboard import open_lab, paused_pair
from test_retries_browser import open_retries
from test_sixth_run import press_and_wait
from test_thirty_fourth_run import first_check_met

pytestmark = pytest.mark.e2e

ANSWERED = "() => !document.querySelector('.htmx-request')"


def assert_choices_fit(menu: Locator, pad: int) -> None:
    """Each choice of ``menu``, once chosen, fits the closed menu's box with ``pad`` px to
    spare for its arrow and padding: no choice is shown cut off."""
    for index in range(menu.locator("option").count()):
        width = menu.evaluate(
            """(m, i) => { const c = document.createElement('canvas').getContext('2d');
            c.font = getComputedStyle(m).font;
            return c.measureText(m.options[i].text).width; }""",
            index,
        )
        assert width + pad <= menu.evaluate("m => m.clientWidth"), (
            menu.locator("option").nth(index).inner_text()
        )


def test_next_step_waits_for_new_orders_form_before_paying(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Lesson 3's fix is Pay, New order, Pay. A "." pressed while New order's answer was
    on its way pressed Pay at once, with the old order still in the form: a replay, and
    the new order never paid."""
    lab_id = f"e2e-nu23-form-{secrets.token_hex(4)}"
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=key-reuse")
    first_check_met(live_server, lab_id, "key-reuse")
    with page.expect_navigation():
        page.locator("[data-apply-fix]").click()  # the second case: Pay, New order, Pay
    page.locator("header h1").click()  # nothing focused: "." is next step
    press_and_wait(page, ".")  # Pay
    page.wait_for_function(ANSWERED, timeout=20_000)
    ledger = live_server.lab(lab_id).payments.gateway.ledger
    assert len(ledger()) == 1
    held: list[Route] = []

    def hold(route: Route) -> None:
        held.append(route)  # New order's request waits here, unanswered

    page.route("**/new-order", hold)
    page.keyboard.press(".")  # New order
    page.wait_for_function(
        "() => document.querySelector('#order-form.htmx-request, "
        '[data-action="New order"].htmx-request\') !== null'
    )
    page.keyboard.press(".")  # Pay, once New order has answered
    page.wait_for_timeout(300)
    for route in held:
        route.continue_()
    page.unroute("**/new-order")
    expect(page.locator("#order-id")).to_have_value("43")
    for _ in range(200):  # the queued press goes out on its next tick (100 ms)
        if len(ledger()) == 2:
            break
        page.wait_for_timeout(100)
    charges = ledger()
    assert len(charges) == 2
    assert [c.order_id for c in charges] == ["42", "43"]  # not a replay of order 42


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_the_retry_labs_menus_show_their_choice_whole_and_its_path_comes_first(
    browser: Browser, live_server: Any, lang: str
) -> None:
    """At 1280 px the fault preset ("lose_response, 503, ok — an answer lost…"), the storm's
    model and strategy menus were cut off; in a lesson the lessons path sat below the card
    and the run, where the other labs have it above."""
    page = projector(browser, lang)
    open_retries(page, live_server, "?lesson=retry-after")
    for name in ("faults_choice", "model", "strategy"):
        for menu in page.locator(f"select[name={name}]").all():
            assert_choices_fit(menu, pad=30)
    order = page.evaluate(
        "() => [...document.querySelectorAll('#retries-panels > [id]')].map(e => e.id)"
    )
    assert order.index("path") < order.index("lesson"), order


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_the_operations_verdicts_and_the_cards_buttons_are_on_screen(
    browser: Browser, live_server: Any, lang: str
) -> None:
    """Operations lesson 2 at 1280×720: after Retry them all the table was 916 px wide in an
    862 px card, its Verdict column cut ("naturall / idempot"); the card's Next step and
    Apply the fix sat at the bottom edge or below it."""
    page = projector(browser, lang)
    lab_id = f"e2e-nu23-ops-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}/natural?lesson=which-are-natural")
    expect(page.locator("#offer")).to_have_count(0)
    buttons = ("#natural-lesson .next-step", "#natural-lesson [data-apply-fix]")
    for button in buttons:
        expect(page.locator(button)).to_be_in_viewport(ratio=1)
    page.locator("tr[data-operation=set_balance] button").click()
    expect(page.locator("#natural-lesson .numbers")).to_have_count(1)
    for button in buttons:  # the numbers come under the buttons, not above them
        expect(page.locator(button)).to_be_in_viewport(ratio=1)
    page.locator("[data-retry-all]").click()
    rows = page.locator("table.ops tbody tr[data-times]")
    expect(rows).to_have_count(9)
    table = page.locator("table.ops")
    widths = table.evaluate("t => [t.scrollWidth, t.parentElement.clientWidth]")
    assert widths[0] <= widths[1], widths
    for badge in page.locator("table.ops .verdict .badge").all():
        box, card = badge.bounding_box(), page.locator("#natural-operations").bounding_box()
        assert box is not None and card is not None
        assert box["x"] + box["width"] <= card["x"] + card["width"]


def test_the_queue_lab_points_to_an_answer_below_the_screen(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Queue lessons by "." at 1280×720: What just happened, the queue and the mailbox sat
    below the fold, and screenshots after each step differed only in "actual 0/1/2". The
    payment lab's pointer ("↓ … — see the answer") now shows there too."""
    page.set_viewport_size({"width": 1280, "height": 720})
    lab_id = f"e2e-nu23-queue-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}/queue?lesson=redelivery")
    expect(page.locator("#offer")).to_have_count(0)
    page.locator("header h1").click()  # nothing focused: "." is next step
    pointer = page.locator("#to-outcome")
    page.keyboard.press(".")  # Enqueue
    # The card's two columns keep the answer on a 720 px screen: no pointer needed.
    expect(page.locator("#explain .headline")).to_contain_text("Enqueue: job send-invoice-42")
    expect(page.locator("#explain .headline")).to_be_in_viewport(ratio=1)
    expect(pointer).to_be_hidden()
    page.set_viewport_size({"width": 1280, "height": 560})  # a smaller screen: below it
    page.keyboard.press(".")  # Work: the worker crashes before the ack
    expect(pointer).to_have_text("↓ worker-1: CRASHED, NOT ACKED — see the answer")
    expect(page.locator("#explain .headline")).not_to_be_in_viewport()
    pointer.click()
    expect(page.locator("#explain .headline")).to_be_in_viewport()
    expect(pointer).to_be_hidden()


def test_lane_bs_buttons_keep_their_place_when_a_finishes(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Lesson 5 at 1280×720: when A ran to its end ("finished: CHARGED ch_0001"), lane B's
    Step B and Run B to the end jumped up from y=348 to y=296, under the pointer."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_link(
        page, f"{live_server.url}/lab/e2e-nu23-lanes-{secrets.token_hex(4)}?lesson=slow-motion"
    )
    page.locator("#double-submit").click()
    step_b = page.locator("[data-step-label=B]")
    expect(step_b).to_be_enabled(timeout=20_000)
    expect(page.locator("[data-step-label=A]")).to_be_enabled(timeout=20_000)
    page.wait_for_function("() => !document.querySelector('.htmx-swapping, .htmx-settling')")
    before = step_b.bounding_box()
    page.get_by_role("button", name="Run A to the end").click()
    expect(page.locator("#step .step-lane.finished")).to_have_count(1, timeout=20_000)
    page.wait_for_function("() => !document.querySelector('.htmx-swapping, .htmx-settling')")
    after = step_b.bounding_box()
    assert before is not None and after is not None
    assert abs(after["y"] - before["y"]) < 1, (before, after)


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_the_queue_labs_menus_show_their_choice_whole(
    browser: Browser, live_server: Any, lang: str
) -> None:
    """At 1280 px the queue's Delivery and Crash menus (159 px beside their labels) showed
    "at-least-once (ack af…" and "relay: after send, before m…"; the poison job was cut too."""
    page = projector(browser, lang)
    page.goto(f"{live_server.url}/lab/e2e-nu23-qmenus-{secrets.token_hex(4)}/queue")
    for menu in page.locator("#queue-settings select, #job-select").all():
        assert_choices_fit(menu, pad=20)


def test_a_press_waiting_its_turn_is_not_sent_into_a_lab_reset_since(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Step mode, Double-submit paused, "d" pressed again (it waits its turn), then another
    tab resets the lab: the waiting pair went out into the fresh lab, which then showed a
    "#1 Double-submit" nobody had pressed after the reset."""
    lab_id = open_lab(page, live_server, "nu23-reset-queued")
    paused_pair(page, live_server, lab_id, lock=False)
    page.locator("header h1").click()  # nothing focused: the single keys are shortcuts
    page.keyboard.press("d")
    expect(page.locator("#notice")).to_contain_text("waits its turn")
    reset = page.request.post(f"{live_server.url}/lab/{lab_id}/api/reset")  # another tab
    assert reset.ok
    expect(page.locator("#notice")).to_contain_text(
        "Double-submit, waiting its turn, was not sent: the lab was reset since it was pressed",
        timeout=20_000,
    )
    page.wait_for_function(ANSWERED, timeout=20_000)
    page.wait_for_timeout(500)  # a press sent late would have arrived by now
    assert live_server.lab(lab_id).payments.requests() == []


def test_a_key_the_browser_cannot_send_is_refused_without_scrolling(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Pay with the key "zz-😀" at 1280×720: "NOT SENT — the client refused the key", and
    the page scrolled 53 px on its own, the pointer now on Change amount & resend."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_lab(page, live_server, "nu23-emoji")
    page.locator("#idempotency-key").fill("zz-😀")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("NOT SENT")
    assert page.evaluate("window.scrollY") == 0
