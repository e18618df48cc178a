"""What a newcomer hears and sees after each answer: the outcome's headline reaches a
screen reader (402 and 502 too), and the lesson card follows what the lab does now."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def lab_url(live_server: Any, prefix: str) -> str:
    return f"{live_server.url}/lab/e2e-{prefix}-{secrets.token_hex(4)}"


def button(page: Page, name: str) -> Any:
    return page.get_by_role("button", name=name, exact=True)


def test_the_402_and_502_headlines_are_announced(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    url = lab_url(live_server, "announce")
    open_link(page, f"{url}?lesson=decline")
    announce = page.get_by_role("status").and_(page.locator("#outcome-announce"))
    button(page, "Pay").click()
    expect(announce).to_have_text("402 — card declined")
    button(page, "Retry").click()
    expect(announce).to_have_text("REPLAYED — the same 402 decline")
    button(page, "Try the second case").click()
    expect(page.locator("#lesson .fix-state")).to_have_text("second case")
    button(page, "Pay").click()
    expect(announce).to_have_text("502 — the gateway failed")
    # The region stays in the page: the panels' swap does not replace it.
    assert page.locator("#panels #outcome-announce").count() == 0
