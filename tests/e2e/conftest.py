"""Browser tests: a live server in a thread of this process (so tests can read the
in-memory labs), the same waitress server ``python -m demo`` runs (:mod:`demo.server`),
and headless Chromium driven by pytest-playwright.

Which Chromium: ``$DEMO_CHROMIUM`` if set; else the one ``playwright install`` put on
this machine; else a system Chromium (``/usr/bin/chromium``). With none of them the
tests fail rather than skip.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from demo import create_app
from demo.registry import LabRegistry
from demo.server import make_server
from demo.workspace import Workspace

SYSTEM_CHROMIUMS = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium")


def _chromium(bundled: str) -> str | None:
    if os.environ.get("DEMO_CHROMIUM"):
        return os.environ["DEMO_CHROMIUM"]
    if Path(bundled).exists():
        return None  # playwright's own
    for candidate in (*SYSTEM_CHROMIUMS, shutil.which("chromium") or ""):
        if candidate and Path(candidate).exists():
            return candidate
    return None


@pytest.fixture(scope="session")
def browser_type_launch_args(
    browser_type_launch_args: dict[str, Any], playwright: Any
) -> dict[str, Any]:
    path = _chromium(playwright.chromium.executable_path)
    args = dict(browser_type_launch_args)
    if path:
        args["executable_path"] = path
        # A closed network: keep Chromium from calling home at start-up.
        args["args"] = [
            *args.get("args", []),
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ]
    return args


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    # The projector size the lab is designed for.
    return {**browser_context_args, "viewport": {"width": 1280, "height": 720}}


class LiveServer:
    def __init__(self, app: Flask) -> None:
        self.app = app
        self._server = make_server(app, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def lab(self, lab_id: str) -> Workspace:
        registry: LabRegistry = self.app.extensions["labs"]
        return registry.get(lab_id)

    def __enter__(self) -> LiveServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._thread.join(15)


@pytest.fixture(scope="session")
def live_server() -> Iterator[LiveServer]:
    # The default gateway latency (300 ms): the race window the demo relies on.
    # No polling: what the page shows must come from the answers themselves.
    # Room for every lab the suite makes: an evicted lab would change the instructor counts.
    with LiveServer(create_app({"TESTING": True, "POLL_S": 600, "LAB_MAX": 5000})) as server:
        yield server


# What the browser itself reports when a connection closes with no response (the lost
# response and the crash do exactly that), and for the lesson's own 4xx and 502 answers.
EXPECTED_CONSOLE = re.compile(
    r"ERR_EMPTY_RESPONSE|htmx:sendError|htmx:afterRequest|status of (40[29]|429|50[24])"
)


SCRIPT_STARTED = (
    "document.readyState !== 'loading' && "
    "(document.documentElement.dataset.script === 'started' || "
    "!document.querySelector('script[type=module]'))"
)
"""True once the page's script has set up its listeners (static/app.js), or on a page
without it."""


@pytest.fixture
def page(page: Any) -> Any:
    """Playwright's page, whose key presses wait until the page's script listens: after a
    navigation the new page's HTML shows before its script has started, and a key pressed
    then would be lost (a person's first key comes later than that)."""
    press = page.keyboard.press

    def press_when_heard(key: str, **options: Any) -> None:
        page.wait_for_function(SCRIPT_STARTED)
        press(key, **options)

    page.keyboard.press = press_when_heard
    return page


@pytest.fixture
def errors(page: Any) -> Iterator[list[str]]:
    """Console errors and page errors; the test fails on any the lesson does not expect."""
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: seen.append(f"page error: {exc}"))
    yield seen
    assert [e for e in seen if not EXPECTED_CONSOLE.search(e)] == []


@pytest.fixture
def open_link() -> Any:
    """``open_link(page, url)``: open a lab link that changes the lab (``?lesson=``,
    ``?scenario=``, ``?present=``) as a person does, in one click. The page offers the
    change and presses its button by itself (a POST); this waits until the lab it opens
    has replaced the offer."""
    from playwright.sync_api import expect

    def go(page: Any, url: str) -> None:
        page.goto(url)
        expect(page.locator("#offer")).to_have_count(0)
        expect(page.locator("#panels")).to_be_visible()

    return go
