"""What the twenty-sixth run found at 1280x720, in a real browser: the lesson card's last
buttons, and the button that brings an order's stable key back."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from measure import box_of
from playwright.sync_api import Browser, Page, expect
from test_fourth_run import projector

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    ("lesson", "first"),
    [("double-click", "Double-submit"), ("lost-response", "Pay"), ("crash-window", "Pay")],
)
def test_every_button_of_the_lesson_card_is_on_the_first_screen(
    browser: Browser, live_server: Any, open_link: Any, lesson: str, first: str
) -> None:
    """Reset this lesson stood on its own under Why and The fix: on the bottom edge of a
    720 px screen, or under it. It is in the card's grid now, as in the other labs, once
    there is something to reset: a fresh card keeps its three rows above the fold."""
    page = projector(browser, "en")
    open_link(page, f"{live_server.url}/lab/e2e-nu26-{secrets.token_hex(4)}?lesson={lesson}")
    reset = page.locator("#lesson .lesson-actions button[form=lesson-reset]")
    expect(reset).to_have_count(0)  # a fresh lesson: nothing to reset
    for button in page.locator("#lesson .lesson-actions button").all():
        box = box_of(button)
        assert box["y"] + box["height"] <= 720, (button.inner_text(), box)
    page.get_by_role("button", name=first, exact=True).click()
    expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
    expect(page.locator(".lane")).not_to_have_count(0)
    expect(reset).to_be_visible()  # in the grid, beside the card's other buttons
    page.context.close()


def test_the_stable_key_button_shows_after_retry_with_a_new_key(
    browser: Browser, live_server: Any, open_link: Any
) -> None:
    """Lesson 2's step 2 (Retry with a new key): the warning under the key took five lines,
    and the button it pointed to, "Use this order's stable key", was cut at the bottom."""
    page = projector(browser, "en")
    open_link(page, f"{live_server.url}/lab/e2e-nu26k-{secrets.token_hex(4)}?lesson=lost-response")
    stable = page.locator("#idempotency-key").input_value()
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator(".lane")).to_have_count(1)
    page.get_by_role("button", name="Retry with a new key", exact=True).click()
    expect(page.locator(".lane")).to_have_count(2)
    expect(page.locator("#key-next")).to_contain_text(f"not this order's stable key ({stable})")
    restore = page.locator("[data-restore-key]")
    expect(restore).to_be_in_viewport(ratio=1)
    restore.click()
    expect(page.locator("#idempotency-key")).to_have_value(stable)
    page.context.close()


def test_a_key_the_browser_cannot_send_is_told_by_its_character(
    page: Page, live_server: Any, errors: Any
) -> None:
    """ "ключ-1": "cannot be sent in an HTTP header (control or non-Latin-1 characters).
    Keys are printable ASCII." Two rules, and "café" (Latin-1) then went out and came back
    400. The page names the character, and which rule is whose."""
    lab_id = f"e2e-nu26h-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}")
    key, explain = page.locator("#idempotency-key"), page.locator("#explain")
    for typed, named in (("ключ-1", "carry “к” (U+043A)."), ("zz-😀", "carry “😀” (U+1F600).")):
        key.fill(typed)
        expect(page.locator("#key-next")).to_have_text(
            f"Pay and Retry send nothing with this key: no HTTP header can {named}"
        )
        page.get_by_role("button", name="Pay", exact=True).click()
        expect(explain).to_contain_text(f"a header cannot {named}")
        # Told once in full, in the panel: not again in a notice under the buttons.
        expect(page.locator("#notice")).to_be_hidden()
        expect(explain).to_contain_text(
            "a Latin-1 key such as “café” does leave the page, and the server refuses it with 400"
        )
    # A control character goes out, and the server in front of the lab refuses the whole
    # request with a plain-text 400 the page could not explain: the page keeps it too.
    key.fill("a\x07b")
    expect(page.locator("#key-next")).to_have_text(
        "Pay and Retry send nothing with this key: the lab's server refuses a header holding "
        "U+0007 before the lab reads it."
    )
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(explain).to_contain_text("This key holds U+0007, a control character")
    assert live_server.lab(lab_id).payments.requests() == []
    key.fill("café")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(explain.locator(".headline")).to_contain_text("400")
    expect(explain).to_contain_text("printable ASCII")
    errors.clear()  # the 400 in the console is the point


def test_a_slow_answer_is_said_to_be_on_its_way_above_the_last_one(
    browser: Browser, live_server: Any
) -> None:
    """At 3000 ms gateway latency the box at the top kept the last answer ("CHARGED —
    ch_0003 … Pay charges it once") for 3 s after Pay: nothing above the fold said that
    this press had no answer yet."""
    page = projector(browser, "en")
    lab_id = f"e2e-nu26s-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("CHARGED")
    live_server.lab(lab_id).payments.update_settings({"gateway_latency_ms": 3000})
    page.get_by_role("button", name="New order", exact=True).click()
    expect(page.locator("#order-id")).to_have_value("43")
    page.get_by_role("button", name="Pay", exact=True).click()
    on_its_way = page.locator("#explain .in-flight-now")
    expect(on_its_way).to_contain_text("#2 Pay is on its way: no answer yet")
    expect(on_its_way).to_be_in_viewport(ratio=1)
    expect(page.locator("#explain .headline")).to_contain_text("for order 42")  # the last one
    expect(on_its_way).to_have_count(0, timeout=15_000)  # the answer came: said no more
    expect(page.locator("#explain .headline")).to_contain_text("for order 43")
    page.context.close()


def test_the_operations_card_keeps_its_buttons_on_the_first_screen(
    browser: Browser, live_server: Any
) -> None:
    """Operations lesson 1 at 1280x720: "Reset this lesson", on a fresh card, wrapped to
    two lines and was cut in half at the bottom edge."""
    page = projector(browser, "en")
    lab_id = f"e2e-nu26o-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}/natural?lesson=set-vs-add")
    reset = page.locator("#natural-lesson button[form=natural-reset]")
    # The link's offer is pressed by the page, which then loads again: measure that one.
    expect(page.locator("#offer")).to_have_count(0)
    expect(page.locator("#natural-lesson")).to_have_attribute("data-lesson", "set-vs-add")
    expect(page.locator("#natural-lesson [data-next-step]")).to_be_visible()
    expect(reset).to_have_count(0)  # nothing to reset yet
    for button in page.locator("#natural-lesson .lesson-actions button").all():
        box = box_of(button)
        assert box["y"] + box["height"] <= 720, (button.inner_text(), box)
    page.locator("#natural-lesson [data-next-step]").click()  # the first step's Retry it
    expect(reset).to_be_visible()
    # One step of two has run: not "Not run yet" (it had), and no numbers before the case's.
    expect(page.locator("#natural-lesson")).to_contain_text(
        "Not over yet: the numbers come once the steps have run."
    )
    page.context.close()


def test_a_page_leaving_for_the_next_lesson_is_not_told_another_tab_did_it(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Next lesson → from lesson 6: lesson 7 opened saying "another tab (or client) opened a
    lesson or scenario in this lab", with no other tab. A swap of the panels had landed
    while the page was leaving, showing the lesson its own press had opened."""
    lab_id = f"e2e-nu26l-{secrets.token_hex(4)}"
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=crash-window")
    page.evaluate("window.stillThisPage = true")
    page.evaluate("window.dispatchEvent(new Event('beforeunload'))")  # the press, leaving
    live_server.lab(lab_id).open_lesson("ttl-expiry")  # what that press does on the server
    page.evaluate("htmx.trigger(document.body, 'lab-refresh')")  # a swap lands meanwhile
    expect(page.locator("#panels")).to_have_attribute("data-scenario", "ttl-expiry")
    assert page.evaluate("window.stillThisPage === true")  # not reloaded as stale
    assert page.evaluate("sessionStorage.getItem('lab-started-afresh-elsewhere')") is None


def test_a_press_paused_in_step_mode_is_said_above_the_last_answer(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Free play, step mode on, Pay: the box at the top kept "400 — refused before anything
    ran", the answer before, with nothing saying this press stood paused."""
    lab_id = f"e2e-nu26p-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("CHARGED")
    live_server.lab(lab_id).payments.update_settings({"step_mode": True})
    page.get_by_role("button", name="New order", exact=True).click()
    expect(page.locator("#order-id")).to_have_value("43")
    page.get_by_role("button", name="Pay", exact=True).click()
    line = page.locator("#explain .in-flight-now")
    expect(line).to_contain_text("#2 Pay is paused in step mode: step it on the Step through card")
    page.get_by_role("button", name="Release all").click()
    expect(line).to_have_count(0)
    expect(page.locator("#explain .headline")).to_contain_text("for order 43")
