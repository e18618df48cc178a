"""The thirty-ninth session's fixes, in a real browser at 1280×720."""

from __future__ import annotations

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
        link, own = "?scenario=ttl-expiry", "?lesson=race"
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
