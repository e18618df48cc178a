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
    expect(page.locator("#step")).to_be_visible()  # the server has step mode on
    page.get_by_role("button", name="Double-submit").click()
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    # Lock on: A walks the whole handler down to record save, far below the box's fold.
    for stopped in (
        "stopped at lock wait",
        "stopped after lock acquire",
        "stopped after lookup again",
        "stopped after reserve",
        "stopped at charging",
        "stopped after gateway charge",
    ):
        settled(page)
        page.keyboard.press("a")
        expect(page.locator(".lane-A")).to_contain_text(stopped)
        page.wait_for_function(IN_VIEW, arg="A")
    settled(page)
    page.keyboard.press("b")
    expect(page.locator(".lane-B")).to_contain_text("stopped at lock wait")
    page.wait_for_function(IN_VIEW, arg="B")  # back up to B's line
    page.get_by_role("button", name="Release all").click()


def test_a_disabled_step_button_looks_disabled(page: Page, live_server: Any, errors: Any) -> None:
    page.goto(f"{live_server.url}/lab/e2e-disabled-{secrets.token_hex(4)}")
    page.locator("input[name=step_mode]").check()
    expect(page.locator("#step")).to_be_visible()  # the server has step mode on
    page.get_by_role("button", name="Double-submit").click()
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    for label, stopped in (
        ("a", "stopped at lock wait"),
        ("a", "stopped after lock acquire"),
        ("b", "stopped at lock wait"),
    ):
        settled(page)
        page.keyboard.press(label)
        expect(page.locator(f".lane-{label.upper()}")).to_contain_text(stopped)
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
    expect(page.locator("#lesson .fix-state")).to_have_text("fix ON: Lock on")
    walk_with_next_step(page)
    expect(page.locator("[data-check='stepped-once']")).to_have_class(re.compile("met"))
    assert len(lab.payments.gateway.ledger()) == 1
    assert "slow-motion" in lab.achieved()


def boxes(page: Page) -> list[tuple[float, float]]:
    """Where each lane's Step and Run buttons are (x, y of their top-left corner)."""
    found = page.evaluate(
        """() => [...document.querySelectorAll('#step .step-lane button')]
                 .map(b => { const r = b.getBoundingClientRect(); return [r.x, r.y]; })"""
    )
    return [(round(x), round(y)) for x, y in found]


@pytest.mark.parametrize("width", [1280])
@pytest.mark.parametrize("height", [720, 800])
def test_the_step_buttons_keep_their_place_as_the_lanes_text_changes(
    page: Page, live_server: Any, errors: Any, width: int, height: int
) -> None:
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/lab/e2e-still-{secrets.token_hex(4)}")
    page.locator("input[name=step_mode]").check()
    expect(page.locator("#step")).to_be_visible()  # the server has step mode on
    page.get_by_role("button", name="Double-submit").click()
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    settled(page)
    page.locator("#step").scroll_into_view_if_needed()
    first = boxes(page)
    assert len(first) == 4
    texts = set()
    # A walks down the handler (its line says ever other things, some two lines long);
    # B then blocks on A's lock. No button moves, sideways or down.
    for key, stopped in (
        ("a", "stopped at lock wait"),
        ("a", "stopped after lock acquire"),
        ("a", "stopped after lookup again"),
        ("a", "stopped after reserve"),
        ("a", "stopped at charging"),
        ("b", "stopped at lock wait"),
        ("b", "blocked: waits for A's lock"),
    ):
        page.keyboard.press(key)
        expect(page.locator(f".lane-{key.upper()}")).to_contain_text(stopped)
        settled(page)
        texts.add(page.locator(".lane-A .where").inner_text())
        assert boxes(page) == first, stopped
    assert len(texts) >= 3  # the text did change under the buttons
    page.get_by_role("button", name="Release all").click()


def test_the_timeline_tells_the_time_paused_by_the_attendee(
    page: Page, live_server: Any, errors: Any
) -> None:
    """The seconds the attendee spends before pressing Step are not the server's: the
    lane says "paused by you" at the stop, and how much of its duration was paused."""
    lab_id = f"e2e-paused-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}")
    page.locator("input[name=step_mode]").check()
    expect(page.locator("#step")).to_be_visible()  # the server has step mode on
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("[data-step-label=A]")).to_be_enabled()
    page.wait_for_timeout(600)  # the attendee thinks: a lower bound on the pause, not a race
    page.get_by_role("button", name="Run A to the end").click()
    lab = live_server.lab(lab_id)
    # On a loaded machine the answer may come after the step's own refresh: wait for it
    # on the server, then refresh the panels as the page does when a request ends.
    for _ in range(200):
        if all(e.finished is not None for e in lab.payments.requests()):
            break
        page.wait_for_timeout(50)
    page.evaluate("htmx.trigger(document.body, 'lab-refresh')")
    lane = page.locator("#timeline .lane").first
    expect(lane.locator(".step-respond")).to_contain_text("→ 201")
    paused = lane.locator(".step-paused")
    expect(paused).to_have_count(1)
    expect(paused).to_contain_text(re.compile(r"paused by you: (0\.[6-9]|[1-9][0-9]*\.[0-9]) s"))
    total = lane.locator(".paused-total").inner_text()
    said = re.fullmatch(r"\(([\d,]+) ms of it paused by you\)", total)
    assert said, total
    ms = int(said.group(1).replace(",", ""))  # "1,234": grouped as the page's language groups
    assert ms >= 600
    # The pause stands right after the stop it happened at: the first lookup.
    steps = lane.locator(".steps li").all_inner_texts()
    at = next(n for n, text in enumerate(steps) if "paused by you" in text)
    assert "lookup: miss" in steps[at - 1]
    (entry,) = lab.payments.requests()
    assert entry.steps[0].name == "validate" and entry.step("lookup").detail["paused_ms"] >= 600
