"""The thirty-ninth session's fixes, in a real browser at 1280×720."""

from __future__ import annotations

import re
import secrets
from typing import Any

import pytest
from playwright.sync_api import Browser, expect
from test_fourteenth_run import start_afresh_elsewhere
from test_presenter_proof import PROJECTOR

pytestmark = pytest.mark.e2e


def test_the_started_afresh_line_heads_the_page_until_the_next_press(
    browser: Browser, live_server: Any, open_link: Any
) -> None:
    """Run AC: another tab opened a scenario, and this tab's lesson vanished; the reason sat
    under the order form, cut off by the projector's bottom edge."""
    context = browser.new_context(viewport=PROJECTOR)
    first, second = context.new_page(), context.new_page()
    try:
        url = f"{live_server.url}/lab/e2e-nu39-afresh-{secrets.token_hex(4)}"
        link, own = "?scenario=ttl-expiry", ""
        start_afresh_elsewhere(first, second, open_link, url, link, own)
        expect(first.locator("#lesson-title")).to_contain_text("TTL expiry", timeout=20_000)
        line = first.locator("#afresh")
        expect(line).to_contain_text("so the lab started afresh")
        expect(line).to_be_in_viewport(ratio=0.95)  # sub-pixel edges
        expect(first.locator("#lesson-title")).to_be_in_viewport()
        first.locator("#panels").evaluate("() => htmx.trigger(document.body, 'lab-refresh')")
        expect(first.locator("#panels")).to_be_attached()
        expect(line).to_be_visible()  # a poll is not a press
        first.get_by_role("button", name="Pay", exact=True).click()
        expect(first.locator("#explain .headline")).to_contain_text("CHARGED")
        expect(line).to_be_hidden()
    finally:
        context.close()


def test_a_key_the_strategy_does_not_send_is_struck_through(
    browser: Browser, live_server: Any
) -> None:
    """Run AC: Key strategy "no key", then Retry with a new key: the field showed that
    key as if the next Pay would send it."""
    context = browser.new_context(viewport=PROJECTOR)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/lab/e2e-nu39-unsent-{secrets.token_hex(4)}")
        field = page.locator("#idempotency-key")
        page.locator("#key-strategy").select_option("none")
        expect(field).to_have_value("")
        expect(field).not_to_have_class(re.compile(r"\bunsent\b"))
        page.get_by_role("button", name="Retry with a new key").click()
        expect(page.locator("#explain .headline")).to_contain_text("CHARGED")
        expect(field).not_to_have_value("")
        expect(field).to_have_class(re.compile(r"\bunsent\b"))
        expect(field).to_have_css("text-decoration-line", "line-through")
        page.locator("#key-strategy").select_option("stable")
        expect(field).not_to_have_class(re.compile(r"\bunsent\b"))
    finally:
        context.close()


@pytest.mark.parametrize(
    ("strategy", "said"),
    [
        ("none", "A Retry from here sends no key (Key strategy: “no key”)"),
        ("random", "A Retry from here sends a new random key"),
    ],
)
def test_the_retry_advice_follows_the_key_strategy(
    browser: Browser, live_server: Any, strategy: str, said: str
) -> None:
    """Run AC's screen, Key strategy "no key" after a charge with a key: the explanation
    still said "A Retry from here sends the same key and body: it would replay"."""
    context = browser.new_context(viewport=PROJECTOR)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/lab/e2e-nu39-advice-{secrets.token_hex(4)}")
        page.get_by_role("button", name="Pay", exact=True).click()
        advice = page.locator("#explain [data-about-order]")
        expect(advice).to_contain_text("A Retry from here sends the same key and body")
        page.locator("#key-strategy").select_option(strategy)
        expect(advice).to_contain_text(said)
        page.locator("#panels").evaluate("() => htmx.trigger(document.body, 'lab-refresh')")
        expect(advice).to_contain_text(said)  # a poll's redraw says it too
        page.locator("#key-strategy").select_option("stable")
        expect(advice).to_contain_text("A Retry from here sends the same key and body")
    finally:
        context.close()


def test_a_clicked_ledger_leaves_the_shortcuts_working(browser: Browser, live_server: Any) -> None:
    """Run AC clicked the Ledger panel (a scroll region, focusable for its arrow keys),
    then pressed p: nothing happened, with no word why."""
    context = browser.new_context(viewport=PROJECTOR)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/lab/e2e-nu39-region-{secrets.token_hex(4)}")
        page.locator("#ledger h2").click()
        expect(page.locator("#ledger")).to_be_focused()
        page.keyboard.press("p")
        expect(page.locator("#explain .headline")).to_contain_text("CHARGED")
        expect(page.locator("#ledger .charged")).to_have_text("charged 1")
    finally:
        context.close()


def test_the_instructor_views_numbers_share_one_row(browser: Browser, live_server: Any) -> None:
    """Run AC: on the instructor view, a wide gap stood between the active labs and the
    charges / intended, which had wrapped to a row of their own."""
    context = browser.new_context(viewport=PROJECTOR)
    page = context.new_page()
    try:
        token = live_server.app.config["INSTRUCTOR_TOKEN"]
        page.goto(f"{live_server.url}/instructor?token={token}")
        cards = page.locator("#room .stats .card")
        expect(cards).to_have_count(2)
        first, second = (cards.nth(i).bounding_box() for i in range(2))
        assert first and second and first["y"] == second["y"]
        chapter = page.locator("#room section.card").first.bounding_box()
        assert chapter and 0 < chapter["y"] - (first["y"] + first["height"]) <= 24
    finally:
        context.close()


def test_a_refused_key_drops_the_last_requests_keyless_line(
    browser: Browser, live_server: Any
) -> None:
    """Run AF: a keyless Pay, then the key "к" refused by the client: "NOT SENT" stood over
    "The lock is per key: a request with no key has nothing to lock", of the Pay before."""
    context = browser.new_context(viewport=PROJECTOR)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/lab/e2e-nu39-refused-{secrets.token_hex(4)}")
        page.locator("#key-strategy").select_option("none")
        page.get_by_role("button", name="Pay", exact=True).click()
        explain = page.locator("#explain")
        expect(explain.locator(".keyless")).to_be_visible()
        page.locator("#key-strategy").select_option("stable")
        page.locator("#idempotency-key").fill("к")
        page.get_by_role("button", name="Pay", exact=True).click()
        expect(explain.locator(".headline")).to_have_text("NOT SENT — the client refused the key")
        expect(explain.locator(".keyless")).to_have_count(0)
        expect(explain.locator(".mode")).to_be_visible()
    finally:
        context.close()
