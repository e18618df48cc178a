"""The keyboard: a focused control keeps its own keys, shortcuts only act when nothing is
focused, a swap keeps the focus, and the shortcuts list is a real modal dialog."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def open_lab(page: Page, live_server: Any, prefix: str) -> str:
    lab_id = f"e2e-{prefix}-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}")
    expect(page.locator("#explain .headline")).to_have_text("Nothing sent yet")
    return lab_id


def settled(page: Page) -> None:
    page.wait_for_function("() => !document.querySelector('.htmx-swapping, .htmx-settling')")


def focused(page: Page) -> str:
    """What has the focus, as `tag#id[data-step-label]` (body when nothing does)."""
    return str(
        page.evaluate(
            """() => { const e = document.activeElement;
                 return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
                   + (e.dataset && e.dataset.stepLabel ? '[' + e.dataset.stepLabel + ']' : '')
                   + (e.dataset && e.dataset.action ? '{' + e.dataset.action + '}' : ''); }"""
        )
    )


def paused_pair(page: Page, live_server: Any, lab_id: str, lock: bool) -> None:
    page.locator("input[name=step_mode]").check()
    expect(page.locator("#step")).to_be_visible()
    switch = page.get_by_role("switch", name="Lock")
    if switch.is_checked() != lock:
        switch.click()
    expect(page.locator("#explain .mode")).to_contain_text(f"Lock is {'ON' if lock else 'OFF'}")
    page.get_by_role("button", name="Double-submit").click()  # the mouse
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    expect(page.locator("[data-step-label=A]")).to_be_enabled()
    settled(page)


def test_space_on_a_focused_step_button_steps_that_lane_and_keeps_the_focus(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id = open_lab(page, live_server, "space-b")
    paused_pair(page, live_server, lab_id, lock=False)
    expect(page.locator(".lane-A")).to_contain_text("stopped after lookup")
    page.locator("[data-step-label=B]").focus()
    page.keyboard.press(" ")
    expect(page.locator(".lane-B")).to_contain_text("stopped at charging")
    expect(page.locator(".lane-A")).to_contain_text("stopped after lookup")  # A untouched
    settled(page)
    # The swap replaced the button: the focus is on its replacement, not on <body>.
    page.wait_for_function("() => document.activeElement.dataset.stepLabel === 'B'")
    page.keyboard.press("Enter")  # and its own key again steps B
    expect(page.locator(".lane-B")).to_contain_text("stopped after gateway charge")
    expect(page.locator(".lane-A")).to_contain_text("stopped after lookup")
    page.get_by_role("button", name="Release all").click()
    expect(page.locator("#step [data-step-label]")).to_have_count(0)


def test_a_lane_that_runs_to_its_end_hands_the_focus_to_the_next_lane(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id = open_lab(page, live_server, "run-end")
    paused_pair(page, live_server, lab_id, lock=False)
    page.get_by_role("button", name="Run B to the end").focus()
    page.keyboard.press("Enter")
    expect(page.locator("[data-step-label=B]")).to_have_count(0)
    settled(page)
    page.wait_for_function("() => document.activeElement.dataset.stepLabel === 'A'")
    page.get_by_role("button", name="Release all").click()


def test_the_lock_switch_toggles_from_the_keyboard_while_requests_are_paused(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id = open_lab(page, live_server, "lock-key")
    lab = live_server.lab(lab_id)
    paused_pair(page, live_server, lab_id, lock=False)
    switch = page.get_by_role("switch", name="Lock")
    switch.focus()
    page.keyboard.press(" ")
    expect(page.locator("#explain .mode")).to_contain_text("Lock is ON")
    assert lab.payments.settings.lock is True
    # Space went to the switch, not to "next step": A and B are where they were.
    expect(page.locator(".lane-A")).to_contain_text("stopped after lookup")
    expect(page.locator(".lane-B")).to_contain_text("stopped after lookup")
    settled(page)
    page.wait_for_function("() => document.activeElement.id === 'lock'")
    page.keyboard.press(" ")
    expect(page.locator("#explain .mode")).to_contain_text("Lock is OFF")
    assert lab.payments.settings.lock is False
    page.get_by_role("button", name="Release all").click()


def test_after_a_mouse_click_space_is_next_step_not_the_button_again(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id = open_lab(page, live_server, "mouse")
    lab = live_server.lab(lab_id)
    paused_pair(page, live_server, lab_id, lock=False)  # Double-submit pressed by mouse
    assert focused(page) == "body"
    page.keyboard.press(" ")  # next step: the oldest paused request, A
    expect(page.locator(".lane-A")).to_contain_text("stopped at charging")
    expect(page.locator(".lane-B")).to_contain_text("stopped after lookup")
    assert (
        len(lab.payments.requests()) == 2
    )  # no third request: Double-submit was not pressed again
    page.get_by_role("button", name="Release all").click()


def test_no_single_key_shortcut_fires_on_a_focused_control(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id = open_lab(page, live_server, "focus")
    lab = live_server.lab(lab_id)
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("CHARGED")
    page.get_by_role("button", name="Retry", exact=True).focus()
    for key in ("p", "d", "x", "X", "m", "?"):
        page.keyboard.press(key)
    expect(page.locator("#shortcuts")).to_be_hidden()
    assert [e.action for e in lab.payments.requests()] == ["Pay"]
    assert len(lab.payments.gateway.ledger()) == 1
    expect(page.locator("#page")).not_to_have_class("present")


def test_reset_needs_shift_x(page: Page, live_server: Any, errors: Any) -> None:
    lab_id = open_lab(page, live_server, "reset")
    lab = live_server.lab(lab_id)
    page.keyboard.press("p")
    expect(page.locator("#ledger .tally")).to_contain_text("charged 1")
    page.keyboard.press("x")  # one plain key: a hint, nothing lost
    expect(page.locator("#notice")).to_have_text(
        "To reset the lab from the keyboard, press Shift+X."
    )
    assert len(lab.payments.gateway.ledger()) == 1
    page.keyboard.press("Shift+X")
    expect(page.locator("#ledger .tally")).to_contain_text("charged 0")
    # The tip was about the lab before the reset: done, it goes.
    expect(page.locator("#notice")).to_be_hidden()


def test_a_switch_turns_single_key_shortcuts_off_and_it_is_remembered(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id = open_lab(page, live_server, "off")
    lab = live_server.lab(lab_id)
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    # The modal takes the focus, and Tab stays inside it.
    assert page.evaluate("document.getElementById('shortcuts').contains(document.activeElement)")
    for _ in range(4):
        page.keyboard.press("Tab")
        assert page.evaluate(
            "document.getElementById('shortcuts').contains(document.activeElement)"
        )
    toggle = dialog.get_by_role("switch", name="Single-key shortcuts")
    expect(toggle).to_be_checked()
    toggle.focus()
    page.keyboard.press(" ")
    expect(toggle).not_to_be_checked()
    expect(dialog).to_be_visible()  # space went to the switch
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert focused(page) == "body"  # back where it was: nothing focused
    page.keyboard.press("p")
    page.keyboard.press("?")
    expect(dialog).to_be_hidden()
    page.reload()
    expect(page.locator("#explain .headline")).to_have_text("Nothing sent yet")
    page.keyboard.press("p")  # still off after a reload
    page.keyboard.press(" ")
    assert lab.payments.requests() == []
    # The header button still opens the list, and the switch turns them back on.
    page.get_by_role("button", name="Shortcuts").click()
    expect(toggle).not_to_be_checked()
    toggle.click()
    expect(toggle).to_be_checked()
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()
    page.keyboard.press("p")
    expect(page.locator("#explain .headline")).to_contain_text("CHARGED")


def test_the_shortcuts_list_gives_the_focus_back_to_the_button_that_opened_it(
    page: Page, live_server: Any, errors: Any
) -> None:
    open_lab(page, live_server, "back")
    opener = page.get_by_role("button", name="Shortcuts")
    opener.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog")).to_be_visible()
    assert page.evaluate("document.getElementById('shortcuts').contains(document.activeElement)")
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_be_hidden()
    expect(opener).to_be_focused()


def test_new_order_from_the_keyboard_keeps_the_focus(
    page: Page, live_server: Any, errors: Any
) -> None:
    open_lab(page, live_server, "new-order")
    before = page.locator("#order-id").input_value()
    page.get_by_role("button", name="New order").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#order-id")).not_to_have_value(before)
    settled(page)
    expect(page.get_by_role("button", name="New order")).to_be_focused()


def test_a_skip_link_is_the_first_tab_stop_and_reaches_the_lesson_card(
    page: Page, live_server: Any, open_link: Any, errors: Any
) -> None:
    """Issue 10, L7: the lesson card was 56 Tab presses away."""
    open_link(page, f"{live_server.url}/lab/e2e-skip-{secrets.token_hex(4)}?lesson=lost-response")
    skip = page.get_by_role("link", name="Skip to the lesson")
    assert not skip.evaluate("el => el.getBoundingClientRect().bottom > 0")  # hidden off screen
    page.keyboard.press("Tab")
    expect(skip).to_be_focused()
    box = skip.bounding_box()
    assert box is not None and box["y"] >= 0 and box["height"] > 0  # visible on focus
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.getElementById('lesson').contains(document.activeElement)")
    # The second link skips to the lab itself: the order form.
    page.reload()
    expect(page.locator("#lesson")).to_be_visible()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to the lab")).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate(
        "() => document.getElementById('order-form').contains(document.activeElement)"
    )


def test_next_step_after_the_last_lesson_goes_to_the_wrap_up(
    page: Page, live_server: Any, open_link: Any, errors: Any
) -> None:
    """Issue 10, L8: after lesson 10 of 10, Next step did nothing, silently."""
    from demo.lessons import PATH, Progress

    lab_id = f"e2e-last-{secrets.token_hex(4)}"
    last = PATH[-1].name
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson={last}")
    lab = live_server.lab(lab_id)
    lab.apply_scenario(last, fixed=True)  # the lesson's second half, as Apply the fix does
    for item in PATH:
        lab.progress[item.name] = Progress(met_at={c.id: 0.0 for c in item.checks})
    page.reload()
    expect(page.locator("[data-path-end]")).to_have_text("The wrap-up →")
    n = page.evaluate("() => document.querySelector('main').dataset.script.split('|').length")
    for i in range(n):
        page.get_by_role("button", name="Next step").click()
        expect(page.locator(".lane")).to_have_count(i + 1)
        expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
        settled(page)
    page.get_by_role("button", name="Next step").click()  # past the last step, at once
    expect(page.locator("#lesson .onward-ask")).to_contain_text("The wrap-up")  # it asks
    page.wait_for_timeout(700)  # later than a bounce (600 ms)
    page.get_by_role("button", name="Next step").click()  # onward
    expect(page.locator("#lesson")).to_have_count(0)
    expect(page.locator("#path .wrap-up")).to_be_visible()
    expect(page.locator("#path .wrap-up")).to_contain_text("All ten lessons achieved")
