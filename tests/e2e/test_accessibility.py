"""axe-core on the lab's pages in a real browser: 0 violations is the bar.

axe-core is vendored from its npm package (``npm pack axe-core@4.14.1``) in
``tests/e2e/vendor/`` with its MPL-2.0 licence beside it: a test tool, so the server never
serves it. The page's Content-Security-Policy allows only same-origin scripts, so the test
answers one same-origin address with the file (a Playwright route) and adds it as a
``<script src>``: the page's own policy stays on while axe runs.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Route, expect

pytestmark = pytest.mark.e2e

AXE = Path(__file__).parent / "vendor" / "axe-4.14.1.min.js"
AXE_PATH = "/__axe-test-only__.js"  # answered by the test's route, never by the server


def axe_violations(page: Page) -> list[str]:
    """Every axe violation on the page as it is now, one line per rule with its nodes."""

    def serve(route: Route) -> None:
        route.fulfill(body=AXE.read_bytes(), content_type="text/javascript")

    page.route(f"**{AXE_PATH}", serve)
    if not page.evaluate("() => 'axe' in window"):
        page.add_script_tag(url=AXE_PATH)
    page.wait_for_function("() => 'axe' in window")
    page.wait_for_function("() => !document.querySelector('.htmx-swapping, .htmx-settling')")
    found = page.evaluate(
        """async () => {
             const r = await axe.run(document, {resultTypes: ['violations']});
             return r.violations.map(v => v.id + ' (' + v.impact + '): ' + v.help + ' — '
               + v.nodes.length + ' nodes: '
               + v.nodes.slice(0, 3).map(n => n.target.join(' ') + ' ' + n.failureSummary
                   .replace(/\\s+/g, ' ')).join(' | '));
           }"""
    )
    return list(found)


def no_violations(page: Page) -> None:
    found = axe_violations(page)
    assert found == [], "\n".join(found)


def open_lab(page: Page, live_server: Any, prefix: str, query: str = "") -> str:
    lab_id = f"e2e-a11y-{prefix}-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}{query}")
    expect(page.locator("#offer")).to_have_count(0)
    expect(page.locator("#panels")).to_be_visible()
    return lab_id


def set_lock(page: Page, on: bool) -> None:
    switch = page.get_by_role("switch", name="Lock")
    if switch.is_checked() != on:
        switch.click()
    expect(page.locator("#explain .mode")).to_contain_text(f"Lock is {'ON' if on else 'OFF'}")


def test_fresh_lab(page: Page, live_server: Any, errors: Any) -> None:
    open_lab(page, live_server, "fresh")
    no_violations(page)


def test_after_pay(page: Page, live_server: Any, errors: Any) -> None:
    open_lab(page, live_server, "pay")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("CHARGED")
    no_violations(page)


def test_double_charge(page: Page, live_server: Any, errors: Any) -> None:
    open_lab(page, live_server, "double")
    set_lock(page, False)
    page.get_by_role("button", name="Double-submit").click()
    expect(page.locator("#ledger .tally")).to_contain_text("charged 2 / intended 1")
    expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
    no_violations(page)


def test_step_mode_with_paused_lanes(page: Page, live_server: Any, errors: Any) -> None:
    open_lab(page, live_server, "step")
    page.locator("input[name=step_mode]").check()
    expect(page.locator("#step")).to_be_visible()
    page.get_by_role("button", name="Double-submit").click()
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    expect(page.locator("[data-step-label=A]")).to_be_enabled()
    # A key pressed mid-swap reaches no button: wait for htmx to settle first.
    page.wait_for_function("() => !document.querySelector('.htmx-swapping, .htmx-settling')")
    page.keyboard.press("a")
    expect(page.locator(".lane-A")).to_contain_text("stopped at lock wait")
    no_violations(page)
    page.get_by_role("button", name="Release all").click()
    expect(page.locator("#step [data-step-label]")).to_have_count(0)


def test_shortcuts_dialog(page: Page, live_server: Any, errors: Any) -> None:
    open_lab(page, live_server, "keys")
    page.keyboard.press("?")
    expect(page.get_by_role("dialog")).to_be_visible()
    no_violations(page)


def test_presenter_mode(page: Page, live_server: Any, errors: Any) -> None:
    open_lab(page, live_server, "present", "?present=1&lesson=race")
    expect(page.locator("#page.present")).to_be_visible()
    page.get_by_role("button", name="Double-submit").click()
    expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
    expect(page.locator(".lane")).to_have_count(2)
    no_violations(page)


def test_vietnamese(browser: Browser, live_server: Any) -> None:
    context = browser.new_context(locale="vi-VN", viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        open_lab(page, live_server, "vi", "?lesson=double-click")
        expect(page.locator("html")).to_have_attribute("lang", "vi")
        page.locator("button[data-action='Pay']").click()
        expect(page.locator("#explain")).to_be_visible()
        no_violations(page)
    finally:
        context.close()


def test_instructor_view(page: Page, live_server: Any, errors: Any) -> None:
    token = live_server.app.config["INSTRUCTOR_TOKEN"]
    page.goto(f"{live_server.url}/instructor?token={token}")
    expect(page.locator("#room")).to_be_visible()
    no_violations(page)


def open_queue(page: Page, live_server: Any, prefix: str) -> str:
    lab_id = f"e2e-a11y-queue-{prefix}-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}/queue")
    expect(page.locator("#queue-panels")).to_be_visible()
    return lab_id


def test_queue_lab_fresh(page: Page, live_server: Any, errors: Any) -> None:
    open_queue(page, live_server, "fresh")
    no_violations(page)


def test_queue_lab_lesson_after_its_scenario(page: Page, live_server: Any, errors: Any) -> None:
    open_queue(page, live_server, "lesson")
    page.locator("#path button[data-lesson='redelivery']").click()
    expect(page.locator("#lesson")).to_be_visible()
    page.locator("#run-scenario").click()
    expect(page.locator("#mailbox tbody tr")).to_have_count(2)
    page.locator(".earlier summary").click()
    no_violations(page)


def test_queue_lab_presenter_mode_with_a_dead_letter_and_a_simulation(
    page: Page, live_server: Any, errors: Any
) -> None:
    open_queue(page, live_server, "present")
    page.locator(".present-switch").click()
    expect(page.locator("#page.present")).to_be_visible()
    page.locator("#path button[data-lesson='poison-message']").click()
    page.locator("#apply-fix").click()
    expect(page.locator("#queue .dead-letters")).to_be_visible()
    page.locator("#simulate").click()
    expect(page.locator(".sim-result")).to_be_visible()
    no_violations(page)


def test_retry_lab(page: Page, live_server: Any, errors: Any) -> None:
    """The retry lab's page: fresh, after a run with a double charge, and with the storm
    chart and an open lesson."""
    lab_id = f"e2e-a11y-retries-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}/retries")
    no_violations(page)
    page.get_by_role("checkbox", name="same_key").uncheck()
    page.get_by_label("The plan").fill("lose_response, ok")  # the menu follows: your own list
    page.locator("button[data-action='run']").click()
    expect(page.locator("#run .run-headline")).to_contain_text("DOUBLE CHARGE")
    page.locator("button[data-action='storm']").click()
    expect(page.locator("svg.storm-chart")).to_be_visible()
    no_violations(page)
    page.goto(f"{live_server.url}/lab/{lab_id}/retries?lesson=jitter")
    expect(page.locator("#offer")).to_have_count(0)
    expect(page.locator("#lesson")).to_be_visible()
    no_violations(page)
