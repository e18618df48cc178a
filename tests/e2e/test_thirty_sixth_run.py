"""The thirty-sixth session: what the last runs left, in the browser."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    ("typed", "warned"),
    [('"abc', True), ('"a"b"', True), ('"abc"', False), ('a"bc', False)],
)
def test_an_unbalanced_quote_in_the_key_is_warned_before_it_is_sent(
    page: Page, live_server: Any, typed: str, warned: bool
) -> None:
    """Run R's helper: a key typed as `"abc` went out without a word under the buttons and
    came back 400 ("A quoted key must be one structured-field string")."""
    page.goto(f"{live_server.url}/lab/e2e-nu36q-{secrets.token_hex(4)}")
    page.locator("#idempotency-key").fill(typed)
    line = page.locator("#key-next")
    expect(line).to_contain_text(typed)  # the line speaks of this key
    words = "a key that begins with a quote must be one quoted string"
    if warned:
        expect(line).to_contain_text(words)
        page.get_by_role("button", name="Pay", exact=True).click()
        expect(page.locator("#explain")).to_contain_text("400")
    else:
        expect(line).not_to_contain_text(words)
