"""The layout along the lessons' flow (issue 10, the last round, part F1): the wrap-up where
the path ends, the step lanes beside lesson 5's card, the proof on a presenter's screen,
client buttons that stay under the pointer, and achieved pills that keep their number."""

from __future__ import annotations

import re
import secrets
from typing import Any

import pytest
from measure import box_of
from playwright.sync_api import Browser, Page, expect

pytestmark = pytest.mark.e2e

LAPTOP = {"width": 1280, "height": 800}
PROJECTOR = {"width": 1280, "height": 720}


def in_view(page: Page, selector: str, height: int) -> dict[str, float]:
    """The element's box, asserted wholly inside the window (``height`` px tall, 1280 wide)."""
    box = box_of(page.locator(selector).first)
    assert box["y"] >= 0 and box["x"] >= 0, (selector, box)
    assert box["y"] + box["height"] <= height, (selector, box)
    assert box["x"] + box["width"] <= 1280, (selector, box)
    return box


def all_achieved(live_server: Any, lab_id: str) -> None:
    from demo.lessons import PATH, Progress

    lab = live_server.lab(lab_id)
    for item in PATH:
        lab.progress[item.name] = Progress(met_at={c.id: 0.0 for c in item.checks})


def settled(page: Page) -> None:
    page.wait_for_function("() => !document.querySelector('.htmx-swapping, .htmx-settling')")


def test_after_ten_of_ten_a_lesson_card_and_its_result_stay_above_the_fold(
    browser: Browser, live_server: Any, open_link: Any
) -> None:
    """F1 1: the wrap-up stayed above every lesson after 10/10 (56_vi_wrap.png); at 1280×800
    a revisited lesson's card and the result of a click went below the fold."""
    context = browser.new_context(viewport=LAPTOP, extra_http_headers={"Accept-Language": "vi"})
    page = context.new_page()
    try:
        lab_id = f"e2e-wrap-{secrets.token_hex(4)}"
        open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=race")
        all_achieved(live_server, lab_id)
        page.reload()
        expect(page.locator("#path .count")).to_contain_text("10")
        expect(page.locator("#path .wrap-up")).to_have_count(0)
        page.locator("#double-submit").click()
        expect(page.locator(".lane")).to_have_count(2, timeout=10_000)
        expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
        expect(page.locator("#explain .headline")).to_contain_text("TRỪ TIỀN HAI LẦN")
        assert page.evaluate("window.scrollY") == 0
        for selector in (
            "#lesson h2",
            "#lesson [data-next-step]",
            "#explain .headline",
            "#ledger .tally",
        ):
            in_view(page, selector, LAPTOP["height"])
        # Where the path ends (the lesson left), the wrap-up is there.
        page.locator("#lesson-leave").evaluate("form => form.requestSubmit()")
        expect(page.locator("#path .wrap-up")).to_be_visible()
    finally:
        context.close()


def test_lesson_5_lanes_step_buttons_and_markers_in_view_beside_the_card(
    browser: Browser, live_server: Any, open_link: Any, errors: Any
) -> None:
    """F1 2: after Double-submit the card says "Step A once…" while Step A / Step B sat
    ~900 px down and the code box (403 px) hid the ◀ A ◀ B markers of long lines."""
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        open_link(page, f"{live_server.url}/lab/e2e-l5-{secrets.token_hex(4)}?lesson=slow-motion")
        page.get_by_role("button", name="Double-submit", exact=True).click()
        expect(page.locator("#step [data-step-label]")).to_have_count(2)
        settled(page)
        assert page.evaluate("window.scrollY") == 0
        in_view(page, "#lesson h2", LAPTOP["height"])
        for label in ("A", "B"):
            in_view(page, f"#step [data-step-label={label}]", LAPTOP["height"])
        code = in_view(page, "#step pre.code", LAPTOP["height"])
        # Step A twice: its marker sits on a long line (the gateway charge's trace).
        for stopped in ("stopped at charging", "stopped after gateway charge"):
            page.get_by_role("button", name="Step A", exact=True).click()
            expect(page.locator(".lane-A .where")).to_contain_text(stopped)
            settled(page)
            for label in ("A", "B"):
                marker = page.locator(f"#step pre.code .chip-{label}").bounding_box()
                assert marker is not None, label
                # Inside the code box's visible area, not scrolled out sideways.
                assert code["x"] <= marker["x"], (label, marker, code)
                assert marker["x"] + marker["width"] <= code["x"] + code["width"], (label, marker)
            assert page.locator("#step pre.code").evaluate("el => el.scrollWidth <= el.clientWidth")
            in_view(page, "#step [data-step-label=B]", LAPTOP["height"])
    finally:
        context.close()


@pytest.mark.parametrize(
    ("ten_of_ten", "language", "headline"),
    [(False, "en", "DOUBLE CHARGE"), (True, "vi", "TRỪ TIỀN HAI LẦN")],
)
def test_presenter_mode_shows_the_proof_after_space(
    browser: Browser,
    live_server: Any,
    open_link: Any,
    errors: Any,
    ten_of_ten: bool,
    language: str,
    headline: str,
) -> None:
    """F1 3 (and 1): at 1280×720 in presenter mode, lesson 4's Space ran a Double-submit and
    the room saw the checks tick, never the DOUBLE CHARGE explanation nor the ledger."""
    context = browser.new_context(
        viewport=PROJECTOR, extra_http_headers={"Accept-Language": language}
    )
    page = context.new_page()
    try:
        lab_id = f"e2e-proof-{secrets.token_hex(4)}"
        open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=race&present=1")
        if ten_of_ten:
            all_achieved(live_server, lab_id)
            page.reload()
        expect(page.locator("#page")).to_have_class(re.compile("present"))
        page.keyboard.press("Space")  # Next step: the lesson's Double-submit
        expect(page.locator(".lane")).to_have_count(2, timeout=10_000)
        expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
        expect(page.locator("#explain .headline")).to_contain_text(headline)
        expect(page.locator("#ledger .tally")).to_be_in_viewport(ratio=1)
        expect(page.locator("#explain .headline")).to_be_in_viewport(ratio=1)
        expect(page.locator("#lesson .expected")).to_be_in_viewport(ratio=1)
        expect(page.locator("#ledger .tally")).to_contain_text("2")
    finally:
        context.close()


def test_client_buttons_stay_under_the_pointer_after_retry_with_a_new_key(
    browser: Browser, live_server: Any, open_link: Any, errors: Any
) -> None:
    """F1 4: the several-line warning after "Retry with a new key" pushed the buttons
    ~54 px down, leaving the pointer over "Change amount & resend" (07_l2_newkey.png)."""
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        lab_id = f"e2e-still-{secrets.token_hex(4)}"
        open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=lost-response")
        page.get_by_role("button", name="Pay", exact=True).click()
        expect(page.locator(".lane")).to_have_count(1)
        expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
        settled(page)
        buttons = page.locator("#order-form .buttons button")

        def where() -> list[tuple[int, int]]:
            return [
                (round(b["x"]), round(b["y"]))
                for b in (buttons.nth(i).bounding_box() for i in range(buttons.count()))
                if b is not None
            ]

        before = where()
        assert len(before) == buttons.count() >= 7
        new_key = page.get_by_role("button", name="Retry with a new key", exact=True)
        box = new_key.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        expect(page.locator(".lane")).to_have_count(2)
        expect(page.locator("#key-next")).to_contain_text("not this order's stable key")
        settled(page)
        assert where() == before
        # The pointer is still over the button it pressed.
        under = page.evaluate(
            "([x, y]) => document.elementFromPoint(x, y).closest('button').dataset.action",
            [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
        )
        assert under == "Retry with a new key"
    finally:
        context.close()


@pytest.mark.parametrize("present", ["0", "1"])
def test_an_achieved_pill_keeps_its_number_and_its_name(
    browser: Browser, live_server: Any, open_link: Any, present: str
) -> None:
    """F1 5: achieved lessons collapsed to a bare "✓" pill (11_l3_start.png)."""
    from demo.lessons import PATH, Progress

    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        lab_id = f"e2e-pill-{secrets.token_hex(4)}"
        open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=key-reuse&present={present}")
        lab = live_server.lab(lab_id)
        for item in PATH[:2]:
            lab.progress[item.name] = Progress(met_at={c.id: 0.0 for c in item.checks})
        page.reload()
        first = page.locator("#path li.done").first
        expect(first.locator(".n")).to_have_text("✓ 1")
        expect(first.locator(".n")).to_be_visible()
        expect(page.locator("#path li.done")).to_have_count(2)
        # Its name stays its accessible name (and its tooltip).
        named = page.get_by_role("button", name=re.compile(r"1\s+Double-click without a key"))
        expect(named).to_have_count(1)
        expect(named).to_have_attribute("title", "Double-click without a key")
    finally:
        context.close()
