"""The fifth new-user run through the ten lessons at 1280×720, in both languages: what it
found in the page's behaviour."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    ("language", "lesson", "keys", "check"),
    [
        ("en", "race", "d", "lock-off-double"),
        ("vi", "race", "d", "lock-off-double"),
        ("en", "crash-window", "pr", None),
    ],
)
def test_space_after_a_reload_applies_the_fix_once_the_first_case_is_done(
    browser: Browser,
    live_server: Any,
    open_link: Any,
    language: str,
    lesson: str,
    keys: str,
    check: str | None,
) -> None:
    """Finding 1: lesson 4 → Reset this lesson → d (first check ticks) → reload → Space
    sent another Double-submit instead of the card's next step, Apply the fix (lesson 6
    the same with p, r). The card the server renders says the case's steps are done."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 720},
        extra_http_headers={"Accept-Language": language},
    )
    page = context.new_page()
    try:
        lab_id = f"e2e-nu5-{secrets.token_hex(4)}"
        open_link(page, f"{live_server.url}/lab/{lab_id}?lesson={lesson}&present=1")
        # Reset this lesson is a form post and a new page: wait for that page (and its
        # keyboard script) before pressing keys, or a key lands on the page being left.
        with page.expect_navigation(wait_until="load"):
            page.locator("button[form=lesson-reset]").click()
        expect(page.locator("#lesson[data-steps-done='false']")).to_be_attached()
        first = page.locator("#lesson .checks li").first
        for key in keys:
            before = len(live_server.lab(lab_id).payments.requests())
            page.keyboard.press(key)
            page.wait_for_function("() => !document.querySelector('.htmx-request')")
            expect(page.locator("#timeline .lane")).not_to_have_count(0, timeout=10_000)
            assert len(live_server.lab(lab_id).payments.requests()) > before
        expect(first).to_have_class("met", timeout=10_000)
        if check:
            expect(first).to_have_attribute("data-check", check)
        sent = len(live_server.lab(lab_id).payments.requests())
        page.reload()
        expect(page.locator("#lesson[data-steps-done='true']")).to_be_attached()
        expect(page.locator("[data-apply-fix]")).to_be_visible()
        page.keyboard.press(" ")
        # The fix applied: the badge turns on, and no request of the first case was re-sent.
        expect(page.locator("#lesson-title .fix-state.on")).to_be_visible(timeout=10_000)
        expect(page.locator("[data-apply-fix]")).to_have_count(0)
        lab = live_server.lab(lab_id)
        assert len(lab.payments.requests()) <= sent
        assert lab.payments.settings.as_dict().get("lock") is True or lesson != "race"
    finally:
        context.close()
