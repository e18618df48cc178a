"""What runs 27 to 30 left at 1280x720, in a real browser."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from test_fourth_run import projector

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_the_mistaken_codes_share_one_row_in_the_policy_form(
    browser: Browser, live_server: Any, lang: str
) -> None:
    """The retry policy's "To show the mistake: 400 402 409" row left "422" alone on a
    line of its own. The hint takes its own line; the four codes share the next."""
    page = projector(browser, lang)
    page.goto(f"{live_server.url}/lab/e2e-nu27p-{secrets.token_hex(4)}/retries")
    mistakes = page.locator(".choices.mistakes label.check")
    expect(mistakes).to_have_count(4)
    tops = {round(box["y"]) for box in (m.bounding_box() for m in mistakes.all()) if box}
    assert len(tops) == 1, tops
    page.context.close()


def test_a_reset_after_the_first_check_points_at_the_fix(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Lesson 4, Double-submit (the first check met), then Reset in another tab: the card
    said "the lab starts empty for the next: follow the steps", the line shown after Apply
    the fix, while the fix was off (the steps repeat the failure). The other tab's notice
    spoke of "a paused one too" when nothing had been paused."""
    lab_id = f"e2e-nu27r-{secrets.token_hex(4)}"
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=race")
    page.get_by_role("button", name="Double-submit", exact=True).click()
    expect(page.locator("#lesson .checks li").first).to_have_class("met")
    other = page.context.new_page()
    other.goto(f"{live_server.url}/lab/{lab_id}?lesson=race")
    expect(other.locator("#offer")).to_have_count(0)  # the link's POST done
    other.get_by_role("button", name="Reset", exact=True).click()
    expect(other.locator("#explain .headline")).to_have_text("Nothing sent yet")
    page.evaluate("htmx.trigger(document.body, 'lab-refresh')")  # the panels' poll
    expect(page.locator("#notice")).to_have_text(
        "Another tab reset this lab: the requests shown before are gone.", timeout=10_000
    )
    expect(page.locator("#lesson")).to_contain_text(
        "the lab has been reset since: the next check needs the fix, so press Apply the fix."
    )
    expect(page.locator("#lesson")).not_to_contain_text("follow the steps, or press Run")
    other.close()


@pytest.mark.parametrize(
    ("lang", "lesson", "onward"),
    [("en", "set-vs-add", "[data-next-lesson]"), ("vi", "tracking-pixel", "[data-chapter-done]")],
)
def test_an_achieved_operations_lesson_shows_its_way_on(
    browser: Browser, live_server: Any, lang: str, lesson: str, onward: str
) -> None:
    """Operations lesson 1, achieved at 1280x720: "Next lesson →" sat at y≈760 in the
    card's narrow column, under the steps, a note and the checks. Lesson 4's "Chapter
    done" link took four lines in Vietnamese, cut at the bottom edge."""
    page = projector(browser, lang)
    page.goto(f"{live_server.url}/lab/e2e-nu27o-{secrets.token_hex(4)}/natural?lesson={lesson}")
    expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
    card = page.locator("#natural-lesson")
    for _ in range(8):  # Next step: the steps, the fix, the steps again
        if card.locator(".achieved").count():
            break
        version = card.inner_text()
        card.locator("[data-next-step]").click()
        expect(card).not_to_have_text(version)
    expect(card.locator(".achieved")).to_be_visible()
    expect(card.locator(onward)).to_be_in_viewport(ratio=1)
    page.context.close()


def test_an_achieved_lesson_5_shows_its_way_on(browser: Browser, live_server: Any) -> None:
    """Lesson 5 achieved at 1280x720: its long steps pushed "Next step / Next lesson →" to
    the bottom edge, cut in half. The way on stands in the "Lesson achieved" line now."""
    from demo.lessons.engine import Progress

    page = projector(browser, "en")
    lab_id = f"e2e-nu27-5-{secrets.token_hex(4)}"
    lab = live_server.lab(lab_id)
    lab.open_lesson("slow-motion")
    lesson = lab.lesson
    lab.progress[lesson.name] = Progress(met_at={c.id: 0.0 for c in lesson.checks})
    lab.apply_scenario("slow-motion", fixed=True)
    page.goto(f"{live_server.url}/lab/{lab_id}")
    onward = page.locator("#lesson .achieved [data-next-lesson]")
    expect(onward).to_have_text("Next lesson →")
    expect(onward).to_be_in_viewport(ratio=1)
    expect(page.locator("#lesson [data-next-lesson]")).to_have_count(1)
    page.context.close()


def test_a_key_that_goes_out_as_another_is_said_so(page: Page, live_server: Any) -> None:
    """The 31st run: "  key with spaces  " charged under "key with spaces" without a word
    (HTTP trims a header's ends); "a<TAB>b" was refused as one "no HTTP header can carry",
    though a tab goes out, and the server refuses it (printable ASCII only)."""
    lab_id = f"e2e-nu27k-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}")
    key, line = page.locator("#idempotency-key"), page.locator("#key-next")
    key.fill("  key with spaces  ")
    expect(line).to_contain_text(
        "HTTP trims the spaces at either end of a header: the server gets “key with spaces”."
    )
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("CHARGED")
    assert [e.key for e in live_server.lab(lab_id).payments.requests()] == ["key with spaces"]
    key.fill("a\tb")
    expect(line).to_contain_text("its keys are printable ASCII, and this one holds a tab (U+0009).")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("400")
    expect(page.locator("#explain")).to_contain_text("printable ASCII")
    assert len(live_server.lab(lab_id).payments.requests()) == 2  # it reached the server


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_the_queue_clock_is_on_the_first_screen(
    browser: Browser, live_server: Any, lang: str
) -> None:
    """Queue lessons 1, 3, 4 and 6 say "Press +31 s on the lab clock": the button stood at
    y=726 at 1280x720, under the Work button's hint."""
    page = projector(browser, lang)
    page.goto(f"{live_server.url}/lab/e2e-nu27q-{secrets.token_hex(4)}/queue?lesson=redelivery")
    expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
    expect(page.locator("#work")).to_be_in_viewport(ratio=1)
    expect(page.locator("#clock-31")).to_be_in_viewport(ratio=1)
    page.context.close()


def test_the_pixels_number_with_the_fix_is_the_same_before_and_after_it(
    browser: Browser, live_server: Any
) -> None:
    """Operations lesson 4: before the fix the card said "with the fix 2"; after it, "expected
    with the fix 1", the fix's steps having dropped the unfurl. They run the same GETs now."""
    page = projector(browser, "en")
    page.goto(
        f"{live_server.url}/lab/e2e-nu27px-{secrets.token_hex(4)}/natural?lesson=tracking-pixel"
    )
    card = page.locator("#natural-lesson")
    requests = page.locator(".natural-requests li")
    # The case without the fix, one GET at a time (reload, prefetch, unfurl): the number
    # "with the fix" is read once all three have answered, not mid-step.
    for _ in range(3):
        before = requests.count()
        card.locator("[data-next-step]").click()
        expect(requests).not_to_have_count(before)
    expect(card.locator(".n-intended")).to_have_text("2")
    for _ in range(12):  # Next step: the fix, the fix's steps
        if card.locator(".achieved").count():
            break
        version = card.inner_text()
        card.locator("[data-next-step]").click()
        expect(card).not_to_have_text(version)
    expect(card.locator(".achieved")).to_be_visible()
    expect(card.locator(".numbers")).to_contain_text("expected with the fix 2")
    expect(page.locator("#natural-pixel .views")).to_have_text("2")
    page.context.close()
