"""The queue lab's screenshots for the README, at 1280×720: called by
``docs/screenshots.py`` (``python docs/screenshots.py`` retakes them all)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, Page, expect

OUT = Path(__file__).resolve().parent


def _shoot(page: Page, name: str, full: bool = False) -> None:
    page.wait_for_timeout(150)  # let the swap settle
    page.screenshot(path=OUT / f"{name}.png", full_page=full)
    print("wrote", OUT / f"{name}.png")


def _click(page: Page, selector: str) -> None:
    """Press a button and wait for its answer (the panels' version moves on)."""
    version = page.locator("#queue-panels").get_attribute("data-version") or ""
    page.click(selector)
    expect(page.locator("#queue-panels")).not_to_have_attribute("data-version", version)


def shoot_queue(browser: Browser, root: str) -> None:
    """The queue lab: the redelivery lesson before and after its fix, the whole page,
    the simulator, and presenter mode with a dead letter."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{root}/lab/queue-shots/queue")
    page.locator("#path button[data-lesson='redelivery']").click()
    expect(page.locator("#lesson")).to_be_visible()
    _click(page, "#run-scenario")
    expect(page.locator("#lesson .actual-value")).to_have_text("2")
    _shoot(page, "queue-redelivery")
    _click(page, "#apply-fix")
    expect(page.locator("#lesson .achieved")).to_be_visible()
    _shoot(page, "queue-redelivery-fixed")
    _shoot(page, "queue-lab", full=True)

    page.goto(f"{root}/lab/queue-shots-sim/queue")
    page.select_option("#scenario-select", "delivery-semantics")
    page.locator(".scenario-menu button").click()
    _click(page, "#run-scenario")
    page.locator("#simulator").scroll_into_view_if_needed()
    _shoot(page, "queue-simulator")

    page.goto(f"{root}/lab/queue-shots-present/queue")
    page.locator(".present-switch").click()
    expect(page.locator("#page.present")).to_be_visible()
    page.locator("#path button[data-lesson='poison-message']").click()
    _click(page, "#apply-fix")
    expect(page.locator("#queue .dead-letters")).to_be_visible()
    _shoot(page, "queue-presenter-dead-letter")
    page.close()
