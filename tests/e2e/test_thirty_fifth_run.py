"""What run O and run P named, in a real browser on the projector's 1280×720."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from test_retries_browser import open_retries
from test_thirty_fourth_run import first_check_met

from demo.lessons import LESSONS

pytestmark = pytest.mark.e2e


def test_a_key_strategy_chosen_by_hand_after_the_case_turns_the_steps_too(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Run O: Payments lesson 1, the double charge seen, then "stable key per intent" chosen
    by hand: the badge said "fix ON: a stable key (set by hand)" over a step that still
    said "… with no key"."""
    open_link(page, f"{live_server.url}/lab/e2e-nu35k-{secrets.token_hex(4)}?lesson=double-click")
    card = page.locator("#lesson")
    card.locator("[data-next-step]").click()  # the case: two charges, no key
    expect(card.locator("li[data-check]").first).to_have_class("met", timeout=10_000)
    shown = card.locator("ol.lesson-steps li:visible")
    expect(shown.first).to_contain_text("with no key")
    page.select_option("#key-strategy", "stable")
    expect(card.locator(".fix-state")).to_have_text("fix ON: a stable key (set by hand)")
    expect(shown).to_have_count(2)
    expect(shown.first).to_contain_text("and order 42 was paid already: press New order first")
    expect(shown.last).to_contain_text("with the same stable key")
    page.select_option("#key-strategy", "none")
    expect(shown.first).to_contain_text("with no key")
    expect(shown.last).to_have_text("Then press Apply the fix and follow the steps again.")


def test_next_step_after_the_fixs_steps_with_a_check_open_runs_them_afresh(
    page: Page, live_server: Any
) -> None:
    """Run P: lesson 5 with the fix, A run to the end before B was stepped: the second
    check stayed open, and Next step said "… again to go on anyway", then opened lesson 6
    with lesson 5 unachieved. It now runs the fix's steps afresh, the lesson still open."""
    lab_id = f"e2e-nu35f-{secrets.token_hex(4)}"
    first_check_met(live_server, lab_id, "slow-motion")
    page.goto(f"{live_server.url}/lab/{lab_id}?lesson=slow-motion")
    expect(page.locator("#offer")).to_have_count(0)
    card = page.locator("#lesson")
    card.locator("[data-apply-fix]").click()
    expect(card.locator(".fix-state")).to_contain_text("fix ON")
    page.locator("button[data-action='Double-submit']").first.click()
    for lane in ("A", "B"):  # by hand, A to its end before B is stepped: no wait seen
        button = page.get_by_role("button", name=f"Run {lane} to the end")
        expect(button).to_be_enabled(timeout=10_000)
        button.click()
        expect(page.locator(".step-spacer .ended")).to_have_count(1 if lane == "A" else 0)
    expect(page.locator("#timeline .lane")).to_have_count(2, timeout=10_000)
    expect(card.locator("li[data-check]").last).to_have_class("unmet")
    ask = card.locator(".onward-ask")
    for _ in range(len(LESSONS["slow-motion"].checks) + 12):  # the steps left, if any
        if ask.is_visible() and "fix's steps are done" in ask.inner_text():
            break
        card.locator("[data-next-step]").click()
        page.wait_for_timeout(300)  # the press's answer; the loop's bound is the steps'
    expect(ask).to_contain_text("Press Next step (.) again to run them afresh")
    page.wait_for_timeout(700)  # past the bounce guard: a second, deliberate press
    card.locator("[data-next-step]").click()
    expect(page.locator("#timeline .lane")).to_have_count(0)
    expect(card).to_have_attribute("data-lesson", "slow-motion")
    expect(card.locator(".fix-state")).to_contain_text("fix ON")


def test_a_refused_run_says_its_reason_beside_the_earlier_run(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Run P: Run refused (the payment lab left in step mode), and the run panel said "the
    reason is beside the form": at 1280×720 that line sat below the fold."""
    lab_id = open_retries(page, live_server)
    page.locator("#policy-form button[data-action='run']").click()
    expect(page.locator("#run .run-headline")).to_be_visible()
    page.goto(f"{live_server.url}/lab/{lab_id}")
    page.locator("input[name=step_mode]").check()
    expect(page.locator("input[name=step_mode]")).to_be_checked()
    page.goto(f"{live_server.url}/lab/{lab_id}/retries")
    page.locator("#policy-form button[data-action='run']").click()
    note = page.locator("#run .stale-run-note")
    expect(note).to_contain_text("Your last Run was refused, and charged nothing: 409")
    expect(note).to_contain_text("409 Payment lab in step mode: The payment lab is in step mode")
    expect(note).to_be_in_viewport()
    errors.clear()  # the 409 in the console is the point


@pytest.mark.parametrize(
    ("lang", "typed", "shown"),
    [
        ("en", "100000", "(amount 100,000)"),
        ("vi", "100000", "(số tiền 100.000)"),
        ("en", "99999999999999999999", "(amount 99999999999999999999)"),
    ],
)
def test_the_line_under_the_key_writes_the_amount_as_the_ledger_does(
    page: Page, live_server: Any, lang: str, typed: str, shown: str
) -> None:
    """Run P: "số tiền 100000" on that line beside "100.000 VND" in the ledger, and
    99999999999999999999 typed read "(amount 100000000000000000000)"."""
    page.set_extra_http_headers({"Accept-Language": lang})
    page.goto(f"{live_server.url}/lab/e2e-nu35amt-{secrets.token_hex(4)}")
    page.locator("#amount").fill(typed)
    expect(page.locator("#key-next")).to_contain_text(shown)


@pytest.mark.parametrize(
    ("lesson", "switch", "on"),
    [
        ("retry-policy", "input[name=retry_on][value='400']", False),
        ("retry-after", "input[name=respect_retry_after]", True),
        ("lost-response-retry", "input[name=same_key]", True),
    ],
)
def test_the_retry_badge_follows_its_switch_before_run(
    page: Page, live_server: Any, lesson: str, switch: str, on: bool
) -> None:
    """Runs O, Q and R: unticking 400 in retry_on left the badge at "fix OFF: retries a 400"
    until Run; the other labs' badges follow their switch as it moves."""
    open_retries(page, live_server, f"?lesson={lesson}")
    badge = page.locator("#lesson .fix-state")
    expect(badge).to_contain_text("fix OFF")
    box = page.locator(f"#policy-form {switch}")
    box.set_checked(on)
    expect(badge).to_contain_text("fix ON")
    expect(badge).to_contain_text("(set by hand)")
    # …and the card's first step with it, as on the other labs (a fresh helper's review).
    expect(page.locator("#lesson li.undo-first")).to_be_visible()
    box.set_checked(not on)
    expect(badge).to_contain_text("fix OFF")
    expect(badge).not_to_contain_text("(set by hand)")
