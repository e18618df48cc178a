"""The twentieth new-user run through the payment lessons, in a real browser at 1280×720:
a press that htmx queues says so, and a lab rehearsed before the workshop still shows the
room the fix."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from measure import box_of
from playwright.sync_api import Page, expect
from test_keyboard import open_lab, paused_pair, settled
from test_presenter_proof import PROJECTOR
from test_sixth_run import press_and_wait

from demo.lessons import PATH, Progress

pytestmark = pytest.mark.e2e


def test_double_submit_pressed_while_its_pair_is_paused_says_it_waits_its_turn(
    page: Page, live_server: Any, errors: Any
) -> None:
    """ "d" while A and B were paused did nothing visible; after Release all two more lanes
    appeared from nowhere (htmx had queued the press)."""
    lab_id = open_lab(page, live_server, "nu20-queued")
    paused_pair(page, live_server, lab_id, lock=False)
    page.keyboard.press("d")
    notice = page.locator("#notice")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("Double-submit waits its turn")
    assert len(live_server.lab(lab_id).payments.requests()) == 2  # nothing sent yet
    page.get_by_role("button", name="Release all").click()
    # The queued pair goes out once the first has answered: its notice goes with it.
    expect(page.locator("[data-step-label=B]")).to_be_enabled(timeout=20_000)
    expect(notice).to_be_hidden()
    settled(page)
    page.get_by_role("button", name="Release all").click()


def test_a_lesson_achieved_before_the_workshop_still_walks_through_the_fix(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Presenter mode, lesson 4 achieved while rehearsing: "." ran the double charge, then
    went straight on to lesson 5, and the room never saw the lock fix it."""
    page.set_viewport_size(PROJECTOR)
    lab_id = f"e2e-nu20-rehearsed-{secrets.token_hex(4)}"
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=race&present=1")
    lab = live_server.lab(lab_id)
    lesson = next(item for item in PATH if item.name == "race")
    lab.progress["race"] = Progress(met_at={c.id: 0.0 for c in lesson.checks})
    page.reload()
    expect(page.locator("#lesson .achieved-again")).to_contain_text("the fix included")
    page.locator("header h1").click()  # nothing focused: "." is next step
    page.keyboard.press(".")  # the steps: a Double-submit, the lock off
    expect(page.locator("#lesson .actual-charges")).to_have_text("2", timeout=10_000)
    settled(page)
    # A press that went out at once is not "waiting its turn".
    expect(page.locator("#notice")).to_be_hidden()
    page.keyboard.press(".")  # the fix, not lesson 5
    expect(page.locator("#lesson-title .fix-state.on")).to_be_visible(timeout=10_000)
    expect(page.locator("#lesson-title")).to_contain_text("race", ignore_case=True)
    assert lab.payments.settings.lock is True


def in_view(page: Page, selector: str) -> bool:
    box = box_of(page.locator(selector))
    size = page.viewport_size
    assert size is not None
    return box["y"] >= 0 and box["y"] + box["height"] <= size["height"]


def test_the_question_before_leaving_is_on_screen_whole(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Lesson 3 achieved by ".", then "." once more: "The steps are done. Press Next step (.)
    again to go on" appeared half cut at the bottom edge at 1280×720, and the press looked
    ignored."""
    page.set_viewport_size(PROJECTOR)
    open_link(page, f"{live_server.url}/lab/e2e-nu20-ask-{secrets.token_hex(4)}?lesson=key-reuse")
    page.locator("header h1").click()  # nothing focused: "." is next step
    for _ in range(10):
        if page.locator("#lesson .achieved").count():
            break
        press_and_wait(page, ".")
        # The step's own answer too (New order's form, a charge): a redraw while it is on
        # its way ends press_and_wait, and Pay pressed before New order's answer would send
        # the old order (seen once with a CPU hog beside the run).
        page.wait_for_function("() => !document.querySelector('.htmx-request')")
    expect(page.locator("#lesson .achieved")).to_be_visible()
    page.keyboard.press(".")
    expect(page.locator("#lesson .onward-ask")).to_contain_text("Press Next step (.) again")
    assert in_view(page, "#lesson .onward-ask")


def test_pay_pressed_after_its_answer_is_not_told_to_wait(
    page: Page, live_server: Any, errors: Any
) -> None:
    """The "waits its turn" notice counted the press's own request as the one in flight."""
    lab_id = open_lab(page, live_server, "nu20-not-queued")
    for _ in range(2):
        page.get_by_role("button", name="Pay", exact=True).click()
        expect(page.locator("#explain .headline")).not_to_have_text("Nothing sent yet")
        page.wait_for_function("() => !document.querySelector('.htmx-request')")
        expect(page.locator("#notice")).to_be_hidden()
    assert len(live_server.lab(lab_id).payments.requests()) == 2
