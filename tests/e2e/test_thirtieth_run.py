"""What run 40 named, in a real browser on the projector's 1280×720."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def _open(page: Page, url: str) -> None:
    page.goto(url)
    # The link's offer is pressed by the page, which then loads again: use that one.
    expect(page.locator("#offer")).to_have_count(0)
    expect(page.locator("#natural-lesson")).to_have_attribute("data-lesson", "set-vs-add")


def _box(page: Page, selector: str) -> dict[str, float]:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def test_operations_lesson_1_shows_its_numbers_above_the_fold(page: Page, live_server: Any) -> None:
    """Operations lesson 1 after its two steps: the expected/actual box began at 736 px,
    under six buttons in a narrow column, below a 720 px screen's fold."""
    _open(page, f"{live_server.url}/lab/e2e-nu30o-{secrets.token_hex(4)}/natural?lesson=set-vs-add")
    card = page.locator("#natural-lesson")
    for _ in range(2):
        page.locator("#natural-lesson [data-next-step]").click()
    expect(card.locator(".numbers .verdict")).to_have_text(
        "the failure you caused, kept as evidence"
    )
    numbers = _box(page, "#natural-lesson .numbers")
    assert numbers["y"] + numbers["height"] <= 720, numbers
    actions = _box(page, "#natural-lesson .lesson-actions")
    assert actions["y"] + actions["height"] <= numbers["y"]  # the buttons still come first


def test_the_fix_badge_follows_the_title_on_its_last_line(page: Page, live_server: Any) -> None:
    """A two-line lesson title put its badge on a third line of its own (a flex item):
    lesson 1's badge sat under the title where lessons 2 and 7 had it beside."""
    _open(page, f"{live_server.url}/lab/e2e-nu30h-{secrets.token_hex(4)}/natural?lesson=set-vs-add")
    title = _box(page, "#natural-lesson-title")
    badge = _box(page, "#natural-lesson-title .fix-state")
    assert badge["x"] > title["x"] + 20, (title, badge)  # after a word, not a line's start
    assert title["height"] < 3 * badge["height"], (title, badge)  # two lines, not three
