"""Presenter mode at 1280×720, as a README-only run through the ten lessons found it: lesson
5's tally after the lanes finish, a lane past the handler's code, the lesson's steps beside
the lanes while stepping, the check just ticked beside the proof (lessons 4 and 6), and the
ledger's keys read whole, in both languages."""

from __future__ import annotations

import re
import secrets
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

pytestmark = pytest.mark.e2e

PROJECTOR = {"width": 1280, "height": 720}
PAST_CODE = {
    "en": "{label} is past the handler's code: answering",
    "vi": "{label} đã qua code của handler: đang trả phản hồi",
}


def settled(page: Page) -> None:
    page.wait_for_function("() => !document.querySelector('.htmx-swapping, .htmx-settling')")


def projector(browser: Browser, language: str) -> Page:
    context = browser.new_context(
        viewport=PROJECTOR, extra_http_headers={"Accept-Language": language}
    )
    return context.new_page()


def on_screen(page: Page, *selectors: str) -> None:
    for selector in selectors:
        expect(page.locator(selector).last).to_be_in_viewport(ratio=1)


def next_step(page: Page) -> None:
    """Press "." once the lanes (if any) can step, and wait for the panels it redraws."""
    page.wait_for_function(
        """() => !document.querySelector('#step [data-step-label]')
             || document.querySelector('#step [data-step-label]:not([disabled])')"""
    )
    settled(page)
    before = page.locator("#panels").get_attribute("data-version") or ""
    page.keyboard.press(".")
    expect(page.locator("#panels")).not_to_have_attribute("data-version", before)


def answered(page: Page) -> None:
    expect(page.locator(".lane.outcome-in_flight")).to_have_count(0, timeout=10_000)
    settled(page)


@pytest.mark.parametrize("language", ["en", "vi"])
def test_lesson_5_stepped_keeps_the_steps_and_lanes_then_shows_the_tally(
    browser: Browser, live_server: Any, open_link: Any, language: str
) -> None:
    """Findings 1, 2 and 3. While stepping, the lesson card's instructions were scrolled
    away (the lanes were brought to the top) and each lane at respond still stood among
    the charge's lines of the code; after the lanes finished, without the fix, the ledger's
    tally was below the fold."""
    page = projector(browser, language)
    try:
        lab_id = f"e2e-pr5-{secrets.token_hex(4)}"
        open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=slow-motion&present=1")
        page.locator("#double-submit").click()
        expect(page.locator("[data-step-label=B]")).to_be_enabled()
        settled(page)
        # The step the lanes play (the card's second one, heading the step card in presenter
        # mode) and the lanes, together.
        on_screen(page, "#step .step-instruction", "#step .step-lanes")
        scrolled = page.evaluate("window.scrollY")
        seen_past = set()
        for _ in range(30):
            if page.locator("#step [data-step-label]").count() == 0:
                break
            next_step(page)
            if page.locator("#step [data-step-label]").count() == 0:
                break
            # Stepping scrolls nothing away: the instruction and the lanes stay.
            on_screen(page, "#step .step-instruction", "#step .step-lanes")
            assert page.evaluate("window.scrollY") == scrolled
            for label in ("A", "B"):
                where = page.locator(f".lane-{label} .where")
                if where.count() and "respond" in where.inner_text():
                    sentence = PAST_CODE[language].format(label=label)
                    expect(page.locator("#step .past-code")).to_contain_text([sentence])
                    expect(page.locator(f"#step pre.code .chip-{label}")).to_have_count(0)
                    seen_past.add(label)
        assert seen_past == {"A", "B"}
        expect(page.locator("#step [data-step-label]")).to_have_count(0)
        expect(page.locator("#ledger .tally .charged")).to_contain_text("2")
        answered(page)
        on_screen(
            page,
            "#lesson .checks li.met",
            "#lesson .expected",
            "#explain .headline",
            "#ledger .tally",
        )
    finally:
        page.context.close()


@pytest.mark.parametrize("language", ["en", "vi"])
def test_lessons_4_and_6_keep_the_check_just_ticked_beside_the_proof(
    browser: Browser, live_server: Any, open_link: Any, language: str
) -> None:
    """Finding 4: the page scrolled the ledger into view and the check just ticked left the
    top of the screen."""
    page = projector(browser, language)
    try:
        open_link(
            page, f"{live_server.url}/lab/e2e-pr4-{secrets.token_hex(4)}?lesson=race&present=1"
        )
        proof = ("#explain .headline", "#ledger .tally", "#lesson .expected")
        next_step(page)  # Double-submit, lock off
        expect(page.locator("[data-check='lock-off-double']")).to_have_class("met")
        answered(page)
        on_screen(page, "[data-check='lock-off-double']", *proof)
        next_step(page)  # Apply the fix
        next_step(page)  # Double-submit, lock on
        expect(page.locator("[data-check='lock-on-once']")).to_have_class("met")
        answered(page)
        on_screen(page, "[data-check='lock-on-once']", "#lesson .achieved", *proof)

        open_link(
            page,
            f"{live_server.url}/lab/e2e-pr6-{secrets.token_hex(4)}?lesson=crash-window&present=1",
        )
        next_step(page)  # Pay: the instance crashes after the charge
        answered(page)
        next_step(page)  # Retry: charges again
        expect(page.locator("[data-check='crash-double']")).to_have_class("met")
        answered(page)
        on_screen(page, "[data-check='crash-double']", *proof)
        next_step(page)  # Apply the fix
        next_step(page)  # Pay: crashes again
        answered(page)
        next_step(page)  # Retry: the gateway returns the first charge
        expect(page.locator("[data-check='crash-recovered']")).to_have_class("met")
        answered(page)
        on_screen(page, "[data-check='crash-recovered']", "#lesson .achieved", *proof)
    finally:
        page.context.close()


@pytest.mark.parametrize("language", ["en", "vi"])
@pytest.mark.parametrize("present", ["0", "1"])
def test_the_ledger_reads_each_key_whole(
    browser: Browser, live_server: Any, open_link: Any, language: str, present: str
) -> None:
    """Finding 5: in Vietnamese the Key column cut a key: beside a lesson its narrow column
    broke "t1:u7:pay:order-4|2:v1" inside the number, and the second line fell under the
    ledger's scroll edge."""
    page = projector(browser, language)
    try:
        lab_id = f"e2e-keys-{secrets.token_hex(4)}"
        open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=race&present={present}")
        page.locator("#double-submit").click()
        expect(page.locator("#ledger td.key code")).to_have_count(2, timeout=10_000)
        answered(page)
        page.locator("#ledger").scroll_into_view_if_needed()
        keys = page.evaluate(
            """() => {
              const ledger = document.querySelector('#ledger');
              const box = ledger.getBoundingClientRect();
              const bottom = box.top + ledger.clientTop + ledger.clientHeight;
              const right = box.left + ledger.clientLeft + ledger.clientWidth;
              return [...ledger.querySelectorAll('td.key code')].map(code => {
                const r = code.getBoundingClientRect();
                const tops = [...code.getClientRects()].map(line => Math.round(line.top));
                return {text: code.textContent, lines: new Set(tops).size,
                        inside: r.bottom <= bottom + 0.5 && r.right <= right + 0.5};
              });
            }"""
        )
        for key in keys:
            assert key["text"] == "t1:u7:pay:order-42:v1", key
            assert key["lines"] == 1, key  # room for it whole, on one line
            assert key["inside"], key  # not under the ledger's scroll edge
        # A long key with no room wraps after a colon, never inside a part.
        assert re.search(r":<wbr>", page.locator("#ledger td.key code").first.inner_html())
    finally:
        page.context.close()
