"""What run M and CI's session-33 run named, in a real browser on the projector's 1280×720."""

from __future__ import annotations

import secrets
import time
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from demo.lessons import LESSONS, Progress

pytestmark = pytest.mark.e2e


def first_check_met(live_server: Any, lab_id: str, name: str) -> None:
    """Lesson ``name``'s first check met as of now, so the fix's steps count: while it is
    open, Next step goes back to the case (run O) rather than walk the fix's steps."""
    check = LESSONS[name].checks[0].id
    live_server.lab(lab_id).progress[name] = Progress(met_at={check: time.perf_counter()})


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


def test_next_step_starts_the_case_afresh_while_its_first_check_is_open(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Run N: payments lesson 4, Pay pressed by hand first: Next step's Double-submit
    replayed, then it went on to the fix with the first check open, and took four presses
    to get back to the case."""
    open_link(page, f"{live_server.url}/lab/e2e-nu34a-{secrets.token_hex(4)}?lesson=race")
    card, lanes = page.locator("#lesson"), page.locator("#timeline .lane")
    page.locator("button[data-action='Pay']").first.click()
    expect(lanes).to_have_count(1, timeout=10_000)
    card.locator("[data-next-step]").click()  # the case's Double-submit: both replay
    expect(lanes).to_have_count(3, timeout=10_000)
    expect(page.locator(".lane.outcome-in_flight")).to_have_count(0, timeout=10_000)
    first = card.locator("li[data-check]").first
    expect(first).to_have_class("unmet")
    card.locator("[data-next-step]").click()
    expect(card.locator(".onward-ask")).to_contain_text("the first check is still open")
    expect(card.locator(".fix-state")).to_have_text("fix OFF: Lock off")  # not the fix
    page.wait_for_timeout(700)  # a second, deliberate press
    with page.expect_navigation(wait_until="load"):
        page.locator("#lesson [data-next-step]").click()
    expect(lanes).to_have_count(0)
    page.locator("#lesson [data-next-step]").click()  # the case's first step, afresh
    expect(page.locator("#lesson li[data-check]").first).to_have_class("met", timeout=10_000)


def test_an_operations_lesson_achieved_by_hand_keeps_its_proof_on_next_step(
    page: Page, live_server: Any
) -> None:
    """Run N: operations lesson 1, achieved with Dedup ticked by hand: one Next step
    pressed Apply the fix, which started the lab afresh ("9 not retried yet") under
    "Lesson achieved"."""
    page.goto(f"{live_server.url}/lab/e2e-nu34o-{secrets.token_hex(4)}/natural?lesson=set-vs-add")
    expect(page.locator("#offer")).to_have_count(0)
    card = page.locator("#natural-lesson")
    for _ in range(2):
        card.locator("[data-next-step]").click()
    expect(card.locator("li[data-check]").first).to_have_class("met")
    page.locator("#ops-dedup").check()
    page.locator("button[data-action='Retry add_balance']").click()
    expect(card.locator(".achieved")).to_be_visible()
    card.locator("[data-next-step]").click()
    expect(card.locator(".onward-ask")).to_be_visible()
    expect(page.locator("#natural-operations")).not_to_contain_text("9 not retried yet")
    expect(card.locator(".achieved")).to_be_visible()


def test_attempts_1_says_nothing_was_retried(page: Page, live_server: Any) -> None:
    """Run N: operations lesson 1 with Attempts 1: a green "expected 100, actual 100, as
    expected" while the first check stayed open."""
    page.goto(f"{live_server.url}/lab/e2e-nu34t-{secrets.token_hex(4)}/natural?lesson=set-vs-add")
    expect(page.locator("#offer")).to_have_count(0)
    page.locator("#ops-times").fill("1")
    page.locator("button[data-action='Retry add_balance']").click()
    numbers = page.locator("#natural-lesson .numbers")
    expect(numbers).to_have_class("numbers pending")
    expect(numbers.locator(".verdict")).to_have_text(
        "nothing was retried: Attempts is 1, so set it to 2 or more and press Retry it again"
    )


@pytest.mark.parametrize(
    ("path", "lesson", "presses", "proof"),
    [
        ("queue", "redelivery", 4, "#explain .headline"),
        ("natural", "set-vs-add", 2, "#natural-lesson .checks li.met"),
    ],
)
def test_presenter_mode_brings_the_answer_on_screen(
    page: Page, live_server: Any, path: str, lesson: str, presses: int, proof: str
) -> None:
    """Run N: presenter mode on the queue and operations labs never scrolled: the room saw
    only the card's numbers, never "What just happened", nor the ✓ under the buttons."""
    page.set_viewport_size({"width": 1280, "height": 720})
    lab_id = f"e2e-nu34p-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}/{path}?lesson={lesson}&present=1")
    expect(page.locator("#offer")).to_have_count(0)
    expect(page.locator("#page.present")).to_have_count(1)
    for n in range(presses):
        page.locator("header h1").click()  # focus off the fields (the header stays on top)
        page.keyboard.press(".")
        if path == "queue":
            expect(page.locator("#lesson button[data-next-step-server]")).not_to_have_attribute(
                "title", f"Step {n + 1} of 4"
            )
    expect(page.locator(proof).last).to_be_in_viewport()


def test_a_changed_retry_policy_steps_the_cards_undo_aside_until_run(
    page: Page, live_server: Any
) -> None:
    """Run N: retries lesson 1, 400 unticked and Run (the fix, by hand), then 400 ticked
    again: the card still said "set that back first", and Next step ran nothing."""
    page.goto(f"{live_server.url}/lab/e2e-nu34r-{secrets.token_hex(4)}/retries?lesson=retry-policy")
    expect(page.locator("#offer")).to_have_count(0)
    box = page.locator("#policy-form input[name=retry_on][value='400']")
    card = page.locator("#lesson")
    box.uncheck()
    page.locator("#policy-form button[data-action='run']").click()
    undo = card.locator("li.undo-first")
    expect(undo).to_be_visible()
    box.check()
    expect(undo).to_be_hidden()
    expect(card.locator("li.form-pending")).to_have_text(
        "The policy you changed counts once you press Run: Next step presses it."
    )
    card.locator("[data-next-step]").click()
    expect(card.locator("li[data-check]").first).to_have_class("met", timeout=10_000)


def test_next_step_goes_back_to_the_first_case_as_the_card_says(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Run O: payments lesson 9, Try the second case before the first check: the card said
    "Press Back to the first case", and Next step pressed the second case's Pay and Retry."""
    open_link(page, f"{live_server.url}/lab/e2e-nu34d-{secrets.token_hex(4)}?lesson=decline")
    card = page.locator("#lesson")
    with page.expect_navigation(wait_until="load"):
        card.locator("button[form=lesson-apply-fix]").click()
    expect(page.locator("#lesson .checks-order")).to_contain_text("Press Back to the first case")
    with page.expect_navigation(wait_until="load"):
        page.locator("#lesson [data-next-step]").click()
    expect(page.locator("#lesson .checks-order")).to_have_count(0)
    expect(page.locator("#timeline .lane")).to_have_count(0)  # nothing of the fix's was sent
    expect(page.locator("#lesson button[form=lesson-apply-fix]")).to_have_text(
        "Try the second case"
    )
