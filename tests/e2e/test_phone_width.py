"""At phone width (390×844), in either language, the lab never scrolls sideways: the page
is as wide as the screen, with a lesson open and after requests have filled the panels."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
WORDS = {
    "en": {"pay": "Pay", "retry": "Retry", "charged": "CHARGED", "replayed": "REPLAYED"},
    "vi": {
        "pay": "Thanh toán",
        "retry": "Thử lại",
        "charged": "ĐÃ TRỪ TIỀN",
        "replayed": "ĐÃ REPLAY",
    },
}

# Lists what sticks out past the right edge, so a failure names its culprit.
WIDER = """() => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5)
  .slice(0, 5).map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className)"""


@pytest.fixture(params=["en", "vi"])
def phone(request: Any, browser: Any) -> Iterator[tuple[Page, str]]:
    language = request.param
    context = browser.new_context(
        viewport=PHONE, locale=language, extra_http_headers={"Accept-Language": language}
    )
    yield context.new_page(), language
    context.close()


def _no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    inner = page.evaluate("window.innerWidth")
    assert inner == PHONE["width"]
    assert width <= inner, f"{width} px wide: {page.evaluate(WIDER)}"


def test_the_lab_fits_a_phone(phone: tuple[Page, str], live_server: Any) -> None:
    page, language = phone
    words = WORDS[language]
    page.goto(f"{live_server.url}/lab/phone-{language}-{secrets.token_hex(4)}")
    expect(page.locator("#panels")).to_be_visible()
    _no_sideways_scroll(page)
    page.get_by_role("button", name=words["pay"], exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text(words["charged"])
    page.get_by_role("button", name=words["retry"], exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text(words["replayed"])
    _no_sideways_scroll(page)


@pytest.mark.parametrize("lesson", ["race", "slow-motion", "crash-window"])
def test_a_lesson_fits_a_phone(
    phone: tuple[Page, str], live_server: Any, open_link: Any, lesson: str
) -> None:
    page, language = phone
    url = f"{live_server.url}/lab/phone-{lesson}-{language}-{secrets.token_hex(4)}"
    open_link(page, f"{url}?lesson={lesson}")
    _no_sideways_scroll(page)


def test_the_profiles_table_fits_a_phone(
    phone: tuple[Page, str], live_server: Any, open_link: Any
) -> None:
    page, language = phone
    url = f"{live_server.url}/lab/phone-profiles-{language}-{secrets.token_hex(4)}"
    open_link(page, f"{url}?scenario=profiles")
    _no_sideways_scroll(page)
