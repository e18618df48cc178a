"""What the twenty-fourth run left, in a real browser: the retry lab's free play at 1280x720,
its line of attempts, a button htmx disables while it runs, and the header's lab id."""

from __future__ import annotations

import re
import secrets
from typing import Any

import pytest
from measure import box_of
from playwright.sync_api import Browser, Page, expect
from test_fourth_run import projector
from test_retries_browser import open_retries
from test_twenty_third_run import ANSWERED

pytestmark = pytest.mark.e2e

OUTAGE_THEN_SERVED = "lose_response, 503, lose_response, 503, lose_response, 503, 503, ok"


def test_free_play_runs_and_storms_from_the_first_screen(
    browser: Browser, live_server: Any
) -> None:
    """In free play the form's Run (and the storm form's Storm) sat below a 720 px screen:
    the result cards carry a copy, which press the same forms."""
    page = projector(browser, "en")
    lab_id = open_retries(page, live_server)
    for copy, answer in (("#run-now", "#run .run-headline"), ("#storm-now", "#storm svg")):
        button = page.locator(copy)
        box = box_of(button)
        assert box["y"] + box["height"] <= 720, copy
        button.click()
        expect(page.locator(answer)).to_be_visible()
    state = live_server.lab(lab_id).retries.state()
    assert state["last_run"] is not None and state["last_storm"] is not None
    page.context.close()


def test_in_a_lesson_the_card_has_its_own_run_and_no_copy(page: Page, live_server: Any) -> None:
    open_retries(page, live_server)
    page.locator(".path [data-lesson='retry-policy']").click()
    expect(page.locator("#lesson")).to_be_visible()
    expect(page.locator("#run-now, #storm-now")).to_have_count(0)


def test_run_pressed_from_the_keyboard_keeps_the_focus(page: Page, live_server: Any) -> None:
    """htmx disables Run while its request runs (``hx-disabled-elt``), and a disabled button
    loses the focus: after the answer it was on ``<body>``, the next Tab from the top."""
    open_retries(page, live_server)
    for selector in ("button[data-action='run']", "#run-now"):
        for _ in range(2):  # the second time, #run-now is the one its own answer replaced
            page.locator(selector).focus()
            page.keyboard.press("Enter")
            page.wait_for_function(ANSWERED)
            expect(page.locator(selector)).to_be_focused()


def test_the_attempts_labels_never_touch(page: Page, live_server: Any) -> None:
    """Short waits drew "#1 no answer" into "#2 503", and "waited 12 ms" into "waited
    108 ms": the attempts stood as far apart as their waits, whatever their labels."""
    open_retries(page, live_server)
    page.fill("input[name=max_attempts]", "8")
    page.fill("input[name=base_ms]", "10")
    # No jitter: a jittered wait may be 0 ms, and a wait of 0 ms has no label.
    page.locator(".policy select[name=strategy]").select_option("exponential")
    page.fill("[data-fault-plan]", OUTAGE_THEN_SERVED)
    page.locator("button[data-action='run']").click()
    expect(page.locator(".attempt-line .attempt")).to_have_count(8)
    for kind in ("attempt-label", "wait-label"):
        boxes = [
            page.locator(f".attempt-line .{kind}").nth(i).bounding_box()
            for i in range(page.locator(f".attempt-line .{kind}").count())
        ]
        assert len(boxes) == (8 if kind == "attempt-label" else 7)
        for left, right in zip(boxes, boxes[1:], strict=False):
            assert left is not None and right is not None
            assert left["x"] + left["width"] < right["x"], kind
        svg = page.locator("svg.attempt-line").bounding_box()
        assert svg is not None
        assert (
            boxes[0]["x"] >= svg["x"]
            and boxes[-1]["x"] + boxes[-1]["width"] <= svg["x"] + svg["width"]
        )


@pytest.mark.parametrize("language", ["en", "vi"])
@pytest.mark.parametrize("path", ["", "/natural", "/retries", "/queue"])
def test_the_lab_id_is_read_whole_at_1280(
    browser: Browser, live_server: Any, path: str, language: str
) -> None:
    """A random lab id was cut ("Lab V3vBD8Y27wZfYqIaD…") on the header's second line (in
    Vietnamese still, the twenty-seventh run: "Phòng lab A0zxZtfpFQyOF…")."""
    page = projector(browser, language)
    lab_id = secrets.token_urlsafe(16)  # as long as the ids GET / gives
    page.goto(f"{live_server.url}/lab/{lab_id}{path}")
    label = page.locator("header .lab-id")
    expect(label).to_contain_text(lab_id)
    assert label.evaluate("e => e.scrollWidth <= e.clientWidth")
    assert page.locator("header").evaluate("e => e.offsetHeight") < 100  # still two lines
    page.context.close()


def test_the_run_that_achieves_a_lesson_shows_its_achievement(
    browser: Browser, live_server: Any
) -> None:
    """After the run that achieved the lesson, the page brought the run on screen and left
    "Lesson achieved" above it, scrolled away: the attendee never saw it."""
    page = projector(browser, "en")
    open_retries(page, live_server, "?lesson=retry-policy")
    lesson = page.locator("#lesson")
    page.locator("header h1").click()  # nothing focused: "." is Next step
    page.keyboard.press(".")  # Run, without the fix
    expect(lesson.locator(".checks li").first).to_have_class(re.compile(r"\bmet"))
    with page.expect_navigation():
        lesson.locator("[data-apply-fix]").click()
    page.locator("header h1").click()
    page.keyboard.press(".")  # Run, with the fix
    expect(lesson.locator(".achieved")).to_contain_text("Lesson achieved")
    # Both on screen once the page has brought the answer in (it scrolls after the swap).
    page.wait_for_function(
        """() => {
            const won = document.querySelector('#lesson .achieved').getBoundingClientRect();
            const run = document.querySelector('#run .run-headline').getBoundingClientRect();
            return won.top >= 0 && run.bottom <= innerHeight && scrollY > 0;
        }""",
        timeout=10_000,
    )
    page.context.close()


def test_run_the_steps_plays_lesson_5s_lanes_to_their_end(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Lesson 5's Run the steps sent its Double-submit and left both lanes "stopped after
    lookup"; a second press changed nothing and said nothing. It now steps the lanes in
    turn, as "." does, until none is left: both charge with the lock off; with it on, B
    waits for A's lock and replays. The lesson is achieved by those real steps."""
    lab_id = f"e2e-nu25-l5-{secrets.token_hex(4)}"
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=slow-motion")
    lab = live_server.lab(lab_id).payments
    for charges in (2, 1):
        with page.expect_navigation():
            page.locator("button[form=lesson-run]").click()
        expect(page.locator("#lesson .checks li.met")).to_have_count(3 - charges, timeout=60_000)
        assert len(lab.gateway.ledger()) == charges
        expect(page.locator("[data-step-label]")).to_have_count(0)
        if charges == 2:
            with page.expect_navigation():
                page.locator("[data-apply-fix]").click()
    expect(page.locator("#lesson .achieved")).to_contain_text("Lesson achieved")


def test_a_key_cut_at_255_is_said_first(page: Page, live_server: Any) -> None:
    """A pasted 300-character key was cut to 255 with the words saying so at the end of a
    line that first repeats the 255 characters: nobody read that far."""
    lab_id = f"e2e-nu25-cut-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}")
    field = page.locator("#idempotency-key")
    field.focus()
    field.press("Control+a")
    page.keyboard.insert_text("k" * 300)
    assert len(field.input_value()) == 255
    expect(page.locator("#key-next")).to_contain_text(re.compile(r"^The field stops at 255"))


def test_every_quick_press_is_a_request(page: Page, live_server: Any) -> None:
    """Five quick clicks on Retry with a new key made two requests: htmx kept only the
    last press waiting behind the one in flight, and the others vanished unsaid."""
    lab_id = f"e2e-nu25-quick-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}")
    live_server.lab(lab_id).payments.update_settings({"gateway_latency_ms": 400})
    button = page.locator("button[data-action='Retry with a new key']")
    for _ in range(5):
        button.click(no_wait_after=True)
    lab = live_server.lab(lab_id).payments
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request')", timeout=30_000, polling=200
    )
    expect(page.locator("#ledger tbody tr")).to_have_count(5, timeout=10_000)
    keys = {charge.idempotency_key for charge in lab.gateway.ledger()}
    assert len(lab.gateway.ledger()) == 5 and len(keys) == 5  # a new key each
