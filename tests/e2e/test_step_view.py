"""Step mode in the browser: the code view follows the lane just stepped, a disabled
button looks disabled, and Next step alone plays lesson 5's interleaving."""

from __future__ import annotations

import re
import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

IN_VIEW = """(lane) => {
  const chip = document.querySelector('pre.code .here .chip-' + lane);
  if (!chip) return false;
  const line = chip.closest('.line').getBoundingClientRect();
  const box = chip.closest('pre.code').getBoundingClientRect();
  return line.top >= box.top && line.bottom <= box.bottom;
}"""


def settled(page: Page) -> None:
    page.wait_for_function("() => !document.querySelector('.htmx-swapping, .htmx-settling')")


def test_the_code_view_follows_the_lane_just_stepped(
    page: Page, live_server: Any, errors: Any
) -> None:
    page.goto(f"{live_server.url}/lab/e2e-follow-{secrets.token_hex(4)}")
    page.locator("input[name=step_mode]").check()
    page.get_by_role("button", name="Double-submit").click()
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    # Lock on: A walks the whole handler down to record save, far below the box's fold.
    for after in ("lock wait", "lock acquire", "lookup", "reserve", "gateway charge"):
        settled(page)
        page.keyboard.press("a")
        expect(page.locator(".lane-A")).to_contain_text(f"stopped after {after}")
        page.wait_for_function(IN_VIEW, arg="A")
    settled(page)
    page.keyboard.press("b")
    expect(page.locator(".lane-B")).to_contain_text("stopped after lock wait")
    page.wait_for_function(IN_VIEW, arg="B")  # back up to B's line
    page.get_by_role("button", name="Release all").click()


def test_a_disabled_step_button_looks_disabled(page: Page, live_server: Any, errors: Any) -> None:
    page.goto(f"{live_server.url}/lab/e2e-disabled-{secrets.token_hex(4)}")
    page.locator("input[name=step_mode]").check()
    page.get_by_role("button", name="Double-submit").click()
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    for label, after in (("a", "lock wait"), ("a", "lock acquire"), ("b", "lock wait")):
        settled(page)
        page.keyboard.press(label)
        expect(page.locator(f".lane-{label.upper()}")).to_contain_text(f"stopped after {after}")
    settled(page)
    page.keyboard.press("b")  # B tries the lock A holds, and blocks
    expect(page.locator(".blocked")).to_have_text("blocked: waits for A's lock")
    style = "b => ['borderStyle', 'backgroundColor', 'cursor'].map(p => getComputedStyle(b)[p])"
    enabled = page.locator("[data-step-label=A]").evaluate(style)
    disabled = page.locator("[data-step-label=B]").evaluate(style)
    assert disabled[0] == "dashed" and enabled[0] == "solid"
    assert disabled[1] != enabled[1] and disabled[2] == "not-allowed"
    page.get_by_role("button", name="Release all").click()


def walk_with_next_step(page: Page) -> None:
    """Double-submit, then "." (Next step) until no lane is left."""
    page.get_by_role("button", name="Double-submit").click()
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    for _ in range(30):
        # A lane that was just stepped runs on until its next stop: wait for one to stop.
        page.wait_for_function(
            """() => !document.querySelector('#step [data-step-label]')
                 || document.querySelector('#step [data-step-label]:not([disabled])')"""
        )
        settled(page)
        if page.locator("#step [data-step-label]").count() == 0:
            return
        before = page.locator("#panels").get_attribute("data-version") or ""
        page.keyboard.press(".")
        expect(page.locator("#panels")).not_to_have_attribute("data-version", before)
    expect(page.locator("#step [data-step-label]")).to_have_count(0)


def test_next_step_alone_plays_lesson_5_both_ways(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Next step takes the lanes in turn: with the lock off both pass lookup and charge;
    with it on, B tries the lock while A holds it, which the second check asks for."""
    lab_id = f"e2e-turns-{secrets.token_hex(4)}"
    open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=slow-motion")
    lab = live_server.lab(lab_id)
    walk_with_next_step(page)
    expect(page.locator("[data-check='stepped-double']")).to_have_class(re.compile("met"))
    assert len(lab.payments.gateway.ledger()) == 2
    page.get_by_role("button", name="Apply the fix", exact=True).click()
    expect(page.locator("#lesson .fix-state")).to_have_text("fix ON")
    walk_with_next_step(page)
    expect(page.locator("[data-check='stepped-once']")).to_have_class(re.compile("met"))
    assert len(lab.payments.gateway.ledger()) == 1
    assert "slow-motion" in lab.achieved()
