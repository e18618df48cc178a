"""Take the README's screenshots of the operations lab, at 1280×720.

    python docs/screenshots_natural.py            # writes docs/natural-*.png
    python docs/screenshots_natural.py --out /tmp/shots --height 800 --language vi

Runs the app in a thread of this process and drives Debian's Chromium (or
``$DEMO_CHROMIUM``) with Playwright, as the browser tests do.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from demo import create_app  # noqa: E402
from demo.server import make_server  # noqa: E402  (the server python -m demo runs)

CHROMIUM = os.environ.get("DEMO_CHROMIUM", "/usr/bin/chromium")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--language", default="en")
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    def shoot(page: Page, name: str) -> None:
        page.wait_for_timeout(150)  # let the swap settle
        page.screenshot(path=out / f"{name}.png")
        print("wrote", out / f"{name}.png")

    app = create_app()
    server = make_server(app, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.port}/lab/workshop-ops"
    suffix = "" if args.language == "en" else f"-{args.language}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        context = browser.new_context(
            viewport={"width": 1280, "height": args.height},
            extra_http_headers={"Accept-Language": args.language},
        )
        page = context.new_page()
        views = page.locator("#natural-pixel .views")

        # Free play: every operation retried three times, the lost update, four views.
        page.goto(f"{base}/natural")
        expect(views).to_have_text("1")
        page.locator("[data-retry-all]").click()
        expect(page.locator("tr[data-operation=transfer] .badge")).to_be_visible()
        page.locator("#natural-lost-update button[type=submit]").click()
        expect(page.locator(".final-balance")).to_have_text("100")
        page.locator("[data-reload-article]").click()
        expect(views).to_have_text("2")
        page.locator("[data-prefetch]").click()
        expect(views).to_have_text("3")
        page.locator("[data-unfurl]").click()
        expect(views).to_have_text("4")
        page.evaluate("window.scrollTo(0, 0)")
        shoot(page, f"natural-lab{suffix}")

        # Lesson 1 of the chapter, achieved: SET and += without, then += with dedup.
        page.goto(f"{base}?lesson=set-vs-add")
        page.wait_for_url(f"{base}/natural")
        page.locator("tr[data-operation=set_balance] button").click()
        expect(page.locator("tr[data-operation=set_balance] .badge")).to_be_visible()
        page.locator("tr[data-operation=add_balance] button").click()
        expect(page.locator("[data-check=set-natural-add-not].met")).to_be_visible()
        page.locator("#ops-dedup").check()
        page.locator("tr[data-operation=add_balance] button").click()
        expect(page.locator("#natural-lesson .achieved")).to_be_visible()
        shoot(page, f"natural-lesson{suffix}")

        # The tracking pixel with its fix: a reload and a prefetch within the window.
        page.goto(f"{base}?scenario=tracking-pixel&fixed=1&lab=natural")
        page.wait_for_url(f"{base}/natural")
        expect(views).to_have_text("1")
        page.locator("[data-reload-article]").click()
        expect(page.locator("#natural-timeline li")).to_have_count(2)
        page.locator("[data-prefetch]").click()
        expect(page.locator("#natural-timeline li")).to_have_count(3)
        page.locator("#natural-pixel").scroll_into_view_if_needed()
        shoot(page, f"natural-pixel-window{suffix}")
        browser.close()
    server.shutdown()


if __name__ == "__main__":
    main()
