"""Take the README's screenshots: each state an attendee sees, at 1280×720.

    python docs/screenshots.py            # writes docs/*.png
    python docs/screenshots.py retries    # the retry lab's only (docs/retry-*.png)

Runs the app in a thread of this process and drives Debian's Chromium (or
``$DEMO_CHROMIUM``) with Playwright, as the browser tests do.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from demo import create_app  # noqa: E402
from demo.server import make_server  # noqa: E402  (the server python -m demo runs)
from docs.screenshots_queue import shoot_queue  # noqa: E402

OUT = Path(__file__).resolve().parent
CHROMIUM = os.environ.get("DEMO_CHROMIUM", "/usr/bin/chromium")


def shoot(page: Page, name: str, full: bool = False) -> None:
    page.wait_for_timeout(150)  # let the swap settle
    page.screenshot(path=OUT / f"{name}.png", full_page=full)
    print("wrote", OUT / f"{name}.png")


def main() -> None:
    app = create_app()
    server = make_server(app, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.port}/lab/workshop"
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 720}, accept_downloads=True)
        retry_lab(page, base)
        if sys.argv[1:] == ["retries"]:
            browser.close()
            server.shutdown()
            return
        page.goto(base)
        button = lambda name: page.get_by_role("button", name=name, exact=True)  # noqa: E731
        headline = page.locator("#explain .headline")

        button("Pay").click()
        expect(headline).to_contain_text("CHARGED")
        shoot(page, "state-charged")
        button("Retry").click()
        expect(headline).to_contain_text("REPLAYED")
        shoot(page, "state-replayed")
        button("Change amount & resend").click()
        expect(headline).to_contain_text("409")
        shoot(page, "state-conflict")

        page.get_by_role("switch", name="Lock").click()
        expect(page.locator("#explain .mode")).to_contain_text("Lock is OFF")
        button("New order").click()
        expect(page.locator("#order-id")).to_have_value("43")
        button("Double-submit").click()
        expect(headline).to_contain_text("DOUBLE CHARGE")
        expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
        shoot(page, "state-double-charge")
        shoot(page, "screenshot", full=True)

        page.get_by_role("switch", name="Lock").click()
        expect(page.locator("#explain .mode")).to_contain_text("Lock is ON")
        button("New order").click()
        expect(page.locator("#order-id")).to_have_value("44")
        button("Double-submit").click()
        expect(page.locator(".badge-replayed")).to_have_count(2)
        expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
        shoot(page, "state-locked-double-submit")

        # Step mode, lock off: both requests stopped after their lookup, then A and B charge.
        page.goto(f"{base}-step")
        page.locator("input[name=step_mode]").check()
        page.get_by_role("switch", name="Lock").click()
        expect(page.locator("#explain .mode")).to_contain_text("Lock is OFF")
        button("Double-submit").click()
        expect(page.locator("[data-step-label=B]")).to_be_enabled()
        for label in "abab":  # each stops at charging, then charges
            page.keyboard.press(label)
            page.wait_for_timeout(600)
        expect(page.locator("pre.code .here").filter(has_text="gateway charge")).to_contain_text(
            "◀ B"
        )
        page.wait_for_timeout(300)
        shoot(page, "state-step-mode")
        page.get_by_role("button", name="Release all").click()
        expect(page.locator("#ledger .tally")).to_contain_text("charged 2")
        # At one instant: a poll may swap the panels in while a locator waits to scroll.
        page.evaluate("document.getElementById('sequence').scrollIntoView()")
        page.wait_for_timeout(500)
        with page.expect_download() as png:
            page.get_by_role("button", name="Download .png").click()
        png.value.save_as(OUT / "sequence.png")
        print("wrote", OUT / "sequence.png")

        # The failure lab: a scenario from its link, run by its own steps.
        lesson = page.locator("#lesson .actual-charges")
        for name, fixed, charges in (
            ("crash-window", False, "2"),
            ("crash-window", True, "1"),
            ("lost-response", False, "2"),
            ("multi-instance", False, "2"),
            ("email-once", False, "1"),
        ):
            fix = "&fixed=1" if fixed else ""
            page.goto(f"{base}-{name}?scenario={name}{fix}&run=1")
            expect(page.locator("#offer")).to_have_count(0)  # the page opens its link itself
            expect(lesson).to_have_text(charges, timeout=15_000)
            page.wait_for_timeout(800)
            shoot(page, f"scenario-{name}{'-fixed' if fixed else ''}")
        page.goto(f"{base}-menu")
        # A native drop-down does not show in a screenshot: open the same element as a list.
        page.locator("#scenario-select").evaluate("s => { s.size = s.options.length; }")
        box = page.locator(".scenario-menu").bounding_box()
        assert box is not None
        page.screenshot(
            path=OUT / "scenario-menu.png",
            clip={
                "x": 0,
                "y": 0,
                "width": box["x"] + box["width"] + 20,
                "height": box["y"] + box["height"] + 10,
            },
        )
        print("wrote", OUT / "scenario-menu.png")

        # Presenter mode, in the race lesson after the double charge: what the room sees.
        page.goto(f"{base}-present?present=1&lesson=race")
        expect(page.locator("#offer")).to_have_count(0)
        button("Double-submit").click()
        expect(page.locator("#lesson .actual-charges")).to_have_text("2", timeout=15_000)
        page.wait_for_timeout(500)
        shoot(page, "presenter-mode")
        button("Apply the fix").click()
        button("Double-submit").click()
        expect(page.locator("#lesson .achieved")).to_be_visible(timeout=15_000)
        page.wait_for_timeout(500)
        shoot(page, "presenter-mode-achieved")

        # The Vietnamese page, as a browser that asks for Vietnamese gets it.
        vi = browser.new_page(viewport={"width": 1280, "height": 720}, locale="vi-VN")
        vi.goto(f"{base}-vi?lesson=lost-response")
        expect(vi.locator("#offer")).to_have_count(0)
        vi.locator("button[data-action='Pay']").click()
        expect(vi.locator("#lesson .actual-charges")).to_have_text("1", timeout=15_000)
        vi.locator("button[data-action='Retry with a new key']").click()
        expect(vi.locator("#lesson .actual-charges")).to_have_text("2", timeout=15_000)
        shoot(vi, "vietnamese")
        shoot_queue(browser, f"http://127.0.0.1:{server.port}")
        browser.close()
    server.shutdown()


def retry_lab(page: Page, base: str) -> None:
    """The retry lab: the double charge of a new key per attempt, and the storm chart of
    100 contending clients, every strategy side by side."""
    page.goto(f"{base}-retries/retries?scenario=lost-response-retry&run=1")
    expect(page.locator("#offer")).to_have_count(0)
    expect(page.locator("#run .charges")).to_have_attribute("data-charges", "2", timeout=15_000)
    shoot(page, "retry-double-charge")
    page.goto(f"{base}-storm/retries")
    page.locator("#storm-form select[name=strategy]").select_option("all")
    page.locator("button[data-action='storm']").click()
    expect(page.locator("svg.storm-chart g.panel")).to_have_count(6)
    page.wait_for_timeout(150)
    page.locator("#storm").screenshot(path=OUT / "retry-storm.png")
    print("wrote", OUT / "retry-storm.png")


if __name__ == "__main__":
    main()
