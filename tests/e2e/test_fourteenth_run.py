"""The thirteenth and fourteenth new-user runs through the ten payment lessons, in a real
browser at 1280×720: the question before leaving stays on the card through a redraw."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from test_presenter_proof import PROJECTOR
from test_sixth_run import on_screen_below_header, press_and_wait, step_by_keys
from test_tenth_run import run_timeout_scenario_and_press_once_more
from test_thirty_fourth_run import first_check_met

from demo.lessons import PATH, Progress

pytestmark = pytest.mark.e2e


def test_the_question_before_leaving_stays_through_a_redraw_of_the_panels(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """The ask line under a scenario's buttons vanished when a poll redrew the panels, while
    the question stayed open (a second "." went on, with nothing on screen saying why)."""
    lab_id = f"e2e-nu14-ask-{secrets.token_hex(4)}"
    run_timeout_scenario_and_press_once_more(page, open_link, f"{live_server.url}/lab/{lab_id}")
    ask = page.locator("#lesson .onward-ask")
    expect(ask).to_contain_text("Press Next step (.) again to go on")
    # Another client's request changes the lab: the page redraws its panels.
    version = page.locator("#panels").get_attribute("data-version")
    live_server.lab(lab_id).payments.create_charge(["other"], b'{"order_id": "7", "amount": 5}')
    page.locator("#panels").evaluate("() => htmx.trigger(document.body, 'lab-refresh')")
    expect(page.locator("#panels")).not_to_have_attribute("data-version", str(version))
    expect(ask).to_contain_text("Press Next step (.) again to go on")
    expect(page.locator("#lesson-title")).to_contain_text("Timeout after the charge")


def test_next_step_counts_the_retry_lab_cards_own_run(
    page: Page, live_server: Any, errors: Any
) -> None:
    """The retry lab's lesson card has its own Run button: pressed, then ".", ran the
    scenario again instead of going on to the fix."""
    page.set_viewport_size(PROJECTOR)
    lab_id = f"e2e-nu14-run-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}/retries?lesson=retry-after")
    expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
    lesson = page.locator("#lesson")
    lesson.locator("[data-card-action='run']").click()
    expect(lesson.locator("[data-check='early']")).to_have_class("met")
    assert len(live_server.lab(lab_id).retries.runs()) == 1
    page.locator("header h1").click()
    page.keyboard.press(".")  # the steps are done: the fix
    expect(page.locator("#lesson-title .fix-state")).to_contain_text("fix ON: ")


def test_a_blocked_lanes_notice_goes_with_the_next_change(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """ "B is blocked: it waits for A's lock" stayed under the client column after Run A to
    the end, after B got the lock, and after the lesson was achieved."""
    page.set_viewport_size(PROJECTOR)
    lab = f"{live_server.url}/lab/e2e-nu14-blk-{secrets.token_hex(4)}"
    open_link(page, f"{lab}?scenario=slow-motion&fixed=1")
    step_by_keys(page, "aabb")
    expect(page.locator(".lane-B .where")).to_contain_text("blocked", timeout=20_000)
    page.keyboard.press("b")
    notice = page.locator("#notice")
    expect(notice).to_contain_text("B is blocked", timeout=10_000)
    page.locator("#panels").evaluate("() => htmx.trigger(document.body, 'lab-refresh')")
    page.wait_for_timeout(500)  # a redraw (a GET) changes nothing: the notice stays
    expect(notice).to_be_visible()
    page.get_by_role("button", name="Run A to the end").click()
    expect(notice).to_be_hidden()
    expect(page.locator(".lane-B .where")).not_to_contain_text("blocked", timeout=20_000)


def test_the_locks_hint_follows_the_switch(page: Page, live_server: Any, errors: Any) -> None:
    """With the Lock off, its hint still said "a duplicate waits for the first request"."""
    page.set_viewport_size(PROJECTOR)
    page.goto(f"{live_server.url}/lab/e2e-nu14-lock-{secrets.token_hex(4)}")
    on, off = (
        page.locator("#settings .lock-hint .when-on"),
        page.locator("#settings .lock-hint .when-off"),
    )
    lock = page.get_by_role("switch", name="Lock")
    expect(lock).to_be_checked()
    expect(on).to_have_text(
        "Lock on: a duplicate with the same key waits for the first request, looks again, "
        "and replays."
    )
    expect(on).to_be_visible()
    expect(off).to_be_hidden()
    lock.uncheck()
    expect(off).to_have_text(
        "Lock off: nothing makes a duplicate wait, so two requests with one key can both find "
        "no record and both charge (TOCTOU)."
    )
    expect(off).to_be_visible()
    expect(on).to_be_hidden()
    page.reload()  # as the server draws it
    expect(off).to_be_visible()
    expect(on).to_be_hidden()


def start_afresh_elsewhere(
    first: Page, second: Page, open_link: Any, url: str, link: str, query: str = ""
) -> None:
    """``first`` charges once at ``url`` (``query``: its own link's), then ``second`` opens
    ``url + link`` (a lesson or scenario: the lab starts afresh), and ``first`` redraws."""
    first.goto(url + query)
    first.get_by_role("button", name="Pay", exact=True).click()
    expect(first.locator("#explain .headline")).to_contain_text("CHARGED")
    open_link(second, url + link)
    first.bring_to_front()
    first.locator("#panels").evaluate("() => htmx.trigger(document.body, 'lab-refresh')")


def test_a_lab_started_afresh_from_another_tab_says_so(
    browser: Browser, live_server: Any, open_link: Any
) -> None:
    """Tab 1 had a paused request; tab 2 opened a scenario: tab 1 reloaded into it, its
    lane and ledger gone, with nothing saying why."""
    context = browser.new_context(viewport=PROJECTOR)
    first, second = context.new_page(), context.new_page()
    try:
        url = f"{live_server.url}/lab/e2e-nu14-afresh-{secrets.token_hex(4)}"
        start_afresh_elsewhere(first, second, open_link, url, "?scenario=race")
        expect(first.locator("#lesson-title")).to_contain_text("Scenario", timeout=20_000)
        expect(first.locator("#afresh")).to_have_text(
            "Another tab (or client) opened a lesson or scenario in this lab, so the lab "
            "started afresh: what this page showed before is gone."
        )
        # The tab that opened it did so itself: no notice there.
        expect(second.locator("#afresh")).to_be_hidden()
        first.reload()  # said once
        expect(first.locator("#afresh")).to_be_hidden()
    finally:
        context.close()


def test_a_press_too_many_after_an_achieved_lessons_steps_shown_again_asks(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Lesson 1, achieved earlier, opened again: "." ran its steps, and the next press went
    on to lesson 2 without asking, as it asks right after an achievement. (Achieved on an
    earlier visit, its steps walk through the fix again, then the press too many asks.)"""
    page.set_viewport_size(PROJECTOR)
    lab_id = f"e2e-nu14-again-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}")
    lesson = PATH[0]
    live_server.lab(lab_id).progress[lesson.name] = Progress(
        met_at={c.id: 0.0 for c in lesson.checks}
    )
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson={lesson.name}&present=1")
    expect(page.locator("#lesson .achieved")).to_be_visible()
    page.locator("header h1").click()  # nothing focused: the single keys are shortcuts
    press_and_wait(page, ".")  # the lesson's one step: Double-submit
    expect(page.locator("#explain .headline")).to_contain_text("DOUBLE CHARGE")
    with page.expect_navigation(wait_until="load"):  # Apply the fix: a form post
        page.keyboard.press(".")
    expect(page.locator("#lesson .fix-state")).to_contain_text("fix ON")
    page.locator("header h1").click()
    press_and_wait(page, ".")  # Double-submit again, with a key now
    expect(page.locator("#explain .headline")).not_to_contain_text("DOUBLE CHARGE")
    expect(page.locator("#lesson .achieved")).to_be_visible()
    page.keyboard.press(".")  # one press too many
    expect(page.locator("#lesson .onward-ask")).to_contain_text("Next lesson")
    expect(page.locator("#lesson-title")).to_contain_text("Double-click without a key")
    page.wait_for_timeout(700)  # later than a bounce (600 ms)
    page.keyboard.press(".")
    expect(page.locator("#lesson-title")).to_contain_text("Lost response")


def test_next_step_goes_on_from_where_it_was_after_a_reload(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Sixteenth run: lesson 7 with the fix, Pay, +25 h, a reload (a projector laptop that
    refreshes), then ".": it pressed +25 h again (the clock at +50 h) instead of Retry."""
    page.set_viewport_size(PROJECTOR)
    lab_id = f"e2e-nu14-reload-{secrets.token_hex(4)}"
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=ttl-expiry&present=1")
    live_server.lab(lab_id).apply_scenario("ttl-expiry", fixed=True)  # as Apply the fix does
    first_check_met(live_server, lab_id, "ttl-expiry")
    page.reload()
    expect(page.locator("#lesson .fix-state")).to_contain_text("fix ON")
    headline, clock = page.locator("#explain .headline"), page.locator("#lesson .lesson-clock")
    page.locator("header h1").click()  # nothing focused: the single keys are shortcuts
    press_and_wait(page, ".")  # Pay
    expect(headline).to_contain_text("CHARGED")
    press_and_wait(page, ".")  # +25 h
    expect(clock).to_contain_text("+25h 00m")
    page.reload()
    page.locator("header h1").click()
    press_and_wait(page, ".")  # Retry, not Pay again (then +25 h again)
    expect(headline).to_contain_text("REPLAYED")
    expect(page.locator("#timeline .lane").first).to_contain_text("#2 Retry")
    expect(clock).to_contain_text("+25h 00m")
    # The same case started afresh starts its steps afresh too.
    page.get_by_role("button", name="Reset this lesson").click()
    expect(page.locator("#timeline .lane")).to_have_count(0)
    page.locator("header h1").click()
    press_and_wait(page, ".")  # Pay
    expect(headline).to_contain_text("CHARGED")


def test_the_next_key_line_says_a_key_that_cannot_be_sent_is_not_sent(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Sixteenth run: with a key the page refused to send, the line under the buttons said
    "Pay and Retry send the key in the field: …". (A tab does go out, and the server refuses it:
    the 31st run found the page saying no header could carry one.)"""
    page.set_viewport_size(PROJECTOR)
    page.goto(f"{live_server.url}/lab/e2e-nu14-tab-{secrets.token_hex(4)}")
    page.locator("#idempotency-key").fill("a\u0416b")
    line = page.locator("#key-next")
    expect(line).to_have_text(
        "Pay and Retry send nothing with this key: no HTTP header can carry “Ж” (U+0416)."
    )
    page.locator("#idempotency-key").fill("a\tb")
    expect(line).to_contain_text(
        "The server refuses this key (400): its keys are printable ASCII, and this one "
        "holds a tab (U+0009)."
    )
    page.locator("#idempotency-key").fill("a b")  # a space is sent
    expect(line).to_contain_text("Pay and Retry send the key in the field: a b")


def test_a_page_loaded_with_requests_paused_shows_their_lanes_in_presenter_mode(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Sixteenth run: lesson 5 in presenter mode, requests paused, the page loaded again: it
    opened at the lesson strip, the lanes below the fold until a key was pressed."""
    page.set_viewport_size(PROJECTOR)
    lab = f"{live_server.url}/lab/e2e-nu14-lanes-{secrets.token_hex(4)}"
    open_link(page, f"{lab}?lesson=slow-motion&present=1")
    step_by_keys(page, "a")
    expect(page.locator(".lane-A .where")).not_to_contain_text("running", timeout=20_000)
    page.goto(lab)  # the lab opened afresh in the browser (no scroll to restore)
    expect(page.locator("#step .step-lanes")).to_be_visible()
    page.wait_for_function("() => window.scrollY > 0")
    on_screen_below_header(page, "#step .step-lanes")


def test_an_achieved_lessons_way_on_is_above_the_fold_in_normal_mode(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Eighteenth run: lesson 10 achieved in normal mode at 1280×720: "The wrap-up →" was
    half below the fold, under the "Lesson achieved" line and the expected/actual numbers."""
    page.set_viewport_size(PROJECTOR)
    lab_id = f"e2e-nu14-fold-{secrets.token_hex(4)}"
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=email-once")
    lab = live_server.lab(lab_id)
    lab.apply_scenario("email-once", fixed=True)
    key, body = ["t1:u7:pay:order-42:v1"], b'{"order_id": "42", "amount": 100000}'
    lab.payments.create_charge(key, body)  # the crash
    lab.payments.create_charge(key, body)  # the retry: one e-mail, through the outbox
    for lesson in PATH:
        lab.progress[lesson.name] = Progress(met_at={c.id: 0.0 for c in lesson.checks})
    page.reload()
    expect(page.locator("#lesson .achieved")).to_be_visible()
    expect(page.locator("#lesson .expected")).to_contain_text("as expected")
    onward = page.locator("[data-path-end]")
    expect(onward).to_have_text("The wrap-up →")
    expect(onward).to_be_in_viewport(ratio=1)
