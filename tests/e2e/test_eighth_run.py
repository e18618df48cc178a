"""The eighth new-user run, in a real browser: the line under the failure lab's buttons
follows what is armed, as it is armed and as it fires."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from test_presenter_proof import PROJECTOR

pytestmark = pytest.mark.e2e


def test_the_line_under_the_fault_buttons_says_what_is_armed_now(
    page: Page, live_server: Any, errors: Any
) -> None:
    """Finding 1: the line kept "No fault armed" after Gateway error or Crash after the
    charge, until a reload."""
    page.set_viewport_size(PROJECTOR)
    page.goto(f"{live_server.url}/lab/e2e-nu8-armed-{secrets.token_hex(4)}")
    page.locator("details.failures > summary").click()
    line = page.locator("#settings .armed-now")
    expect(line).to_have_text("No fault armed: the next request runs as usual.")
    page.get_by_role("button", name="Crash after the charge").click()
    expect(line).to_have_text("Armed: the next charge crashes its instance.")
    page.get_by_role("button", name="Disarm").click()
    expect(line).to_have_text("No fault armed: the next request runs as usual.")
    page.get_by_role("button", name="Gateway error").click()
    expect(line).to_have_text("Armed: the next gateway call fails.")
    page.get_by_role("button", name="Pay", exact=True).click()  # the fault fires
    expect(page.locator("#explain .headline")).to_contain_text("502")
    expect(line).to_have_text("No fault armed: the next request runs as usual.")
