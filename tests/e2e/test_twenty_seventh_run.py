"""What runs 27 to 30 left at 1280x720, in a real browser."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Browser, expect
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
