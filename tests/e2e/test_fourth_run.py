"""The fourth new-user run through the ten lessons at 1280×720 (presenter mode for
lessons 4-6), in both languages: what it found in the page's behaviour and layout."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from measure import box_of
from playwright.sync_api import Browser, Page, expect

pytestmark = pytest.mark.e2e

PROJECTOR = {"width": 1280, "height": 720}


def settled(page: Page) -> None:
    page.wait_for_function("() => !document.querySelector('.htmx-swapping, .htmx-settling')")


def projector(browser: Browser, language: str) -> Page:
    context = browser.new_context(
        viewport=PROJECTOR, extra_http_headers={"Accept-Language": language}
    )
    return context.new_page()


def on_screen(page: Page, *selectors: str) -> None:
    for selector in selectors:
        expect(page.locator(selector).last).to_be_in_viewport(ratio=1)


def click_step(page: Page, label: str) -> None:
    """Click lane ``label``'s Step button with the mouse, as the tester did, and wait for
    the panels it redraws."""
    button = page.locator(f"[data-step-label={label}]")
    expect(button).to_be_enabled()
    settled(page)
    before = page.locator("#panels").get_attribute("data-version") or ""
    box = box_of(button)
    assert box["y"] >= 0 and box["y"] + box["height"] <= PROJECTOR["height"]
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page.locator("#panels")).not_to_have_attribute("data-version", before)
    settled(page)


@pytest.mark.parametrize("language", ["en", "vi"])
def test_lesson_5_stepping_a_b_a_by_mouse_keeps_the_steps_on_screen(
    browser: Browser, live_server: Any, open_link: Any, language: str
) -> None:
    """Finding 2: lock off, Double-submit, Step A, Step B, Step A (mouse clicks, presenter
    mode): the page jumped from scrollY 346 to 846, the lesson's steps and checks gone."""
    page = projector(browser, language)
    try:
        lab_id = f"e2e-nu4-l5-{secrets.token_hex(4)}"
        open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=slow-motion&present=1")
        expect(page.locator("#lock")).not_to_be_checked()
        page.locator("#double-submit").click()
        expect(page.locator("[data-step-label=B]")).to_be_enabled()
        settled(page)
        on_screen(page, "#step .step-instruction", "#step .step-lanes")
        scrolled = page.evaluate("window.scrollY")
        for label in ("A", "B", "A"):
            click_step(page, label)
            on_screen(page, "#step .step-instruction", "#step .step-lanes")
            assert page.evaluate("window.scrollY") == scrolled, label
    finally:
        page.context.close()


def answered(page: Page, lanes: int) -> None:
    expect(page.locator(".lane")).to_have_count(lanes, timeout=10_000)
    expect(page.locator(".lane.outcome-in_flight")).to_have_count(0, timeout=10_000)
    settled(page)


@pytest.mark.parametrize("language", ["en", "vi"])
def test_the_ledger_shows_two_charges_whole_with_a_long_random_key(
    browser: Browser, live_server: Any, open_link: Any, language: str
) -> None:
    """Finding 3: lesson 2, Pay, Retry with a new key. The ledger beside the lesson clipped
    its rows with an inner scrollbar (191 px of content in a 180 px box)."""
    page = projector(browser, language)
    try:
        lab_id = f"e2e-nu4-l2-{secrets.token_hex(4)}"
        open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=lost-response")
        page.locator("[data-action=Pay]").click()
        answered(page, 1)
        page.locator("[data-new-key=true]").click()
        answered(page, 2)
        expect(page.locator("#ledger tbody tr")).to_have_count(2)
        sizes = page.evaluate(
            "() => { const l = document.getElementById('ledger');"
            " return [l.scrollHeight, l.clientHeight]; }"
        )
        assert sizes[0] <= sizes[1], sizes  # no inner scroll
        on_screen(page, "#ledger tbody tr:nth-child(1)", "#ledger tbody tr:nth-child(2)")
    finally:
        page.context.close()


def all_achieved(live_server: Any, lab_id: str) -> None:
    from demo.lessons import PATH, Progress

    lab = live_server.lab(lab_id)
    for item in PATH:
        lab.progress[item.name] = Progress(met_at={c.id: 0.0 for c in item.checks})


@pytest.mark.parametrize("how", ["link", "space"])
def test_reaching_the_wrap_up_from_lesson_10_unfolds_it_first(
    browser: Browser, live_server: Any, open_link: Any, how: str
) -> None:
    """Finding 4: in presenter mode the wrap-up, once folded by a Pay in free play, arrived
    folded when reached again from lesson 10 (space, or "The wrap-up →"), under lesson 10's
    headline: the closing slide showed only its title."""
    page = projector(browser, "en")
    try:
        lab_id = f"e2e-nu4-wrap-{secrets.token_hex(4)}"
        page.goto(f"{live_server.url}/lab/{lab_id}")
        all_achieved(live_server, lab_id)
        page.reload()
        wrap_up = page.locator("[data-wrap-up]")
        expect(wrap_up).to_have_attribute("open", "")
        page.locator("button[data-action='Pay']").click()
        expect(wrap_up).not_to_have_attribute("open", "")  # folded by the first answer
        open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=email-once&present=1")
        expect(page.locator("[data-path-end]")).to_have_text("The wrap-up →")
        if how == "link":
            page.locator("[data-path-end]").click()
        else:
            for action in ("Pay", "Retry"):  # lesson 10's steps, shown again
                page.locator(f"button[data-action='{action}']").click()
                expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
            # Achieved on an earlier visit: its walk-through takes in the fix too.
            with page.expect_navigation(wait_until="load"):
                page.locator("#lesson button[data-apply-fix]").click()
            expect(page.locator("#lesson .fix-state")).to_contain_text("fix ON")
            for action in ("Pay", "Retry"):  # the steps with the fix
                page.locator(f"button[data-action='{action}']").click()
                expect(page.locator(".lane.outcome-in_flight")).to_have_count(0)
            page.reload()  # the steps were done: after a reload one press goes on
            page.keyboard.press("Space")
        expect(page.locator("#lesson")).to_have_count(0)
        expect(wrap_up).to_have_attribute("open", "")
        rules = wrap_up.locator("ol.rules li")
        expect(rules).to_have_count(10)
        # The closing slide first: its title at the top of the screen, the rules under it.
        expect(page.locator("#wrap-up-title")).to_be_in_viewport(ratio=1)
        title = page.locator("#wrap-up-title").bounding_box()
        assert title is not None and title["y"] < 60, title
        expect(rules.first).to_be_in_viewport(ratio=1)
        # Fifth run: no lesson pill sliced at the top edge above it.
        pills = page.locator("#path > ol > li")
        for i in range(pills.count()):
            box = pills.nth(i).bounding_box()
            assert box is not None and (box["y"] + box["height"] <= 0 or box["y"] >= 0), box
        # Seen afresh: the next answer folds it again, as the first one did.
        page.reload()
        expect(wrap_up).to_have_attribute("open", "")
    finally:
        page.context.close()


@pytest.mark.parametrize("language", ["en", "vi"])
def test_lesson_8s_store_table_fits_its_column(
    browser: Browser, live_server: Any, open_link: Any, language: str
) -> None:
    """Finding 6: lesson 8 (a store per instance) at 1280×720: the store's table
    overflowed sideways, its Expires column cut to "Expi" behind a horizontal scrollbar."""
    page = projector(browser, language)
    try:
        lab_id = f"e2e-nu4-l8-{secrets.token_hex(4)}"
        open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=multi-instance")
        page.locator("[data-action=Pay]").click()
        answered(page, 1)
        page.locator("[data-action=Retry]").click()
        answered(page, 2)
        expect(page.locator("#store tr.state-completed")).to_have_count(2)
        sizes = page.evaluate(
            "() => { const s = document.getElementById('store');"
            " return [s.scrollWidth, s.clientWidth]; }"
        )
        assert sizes[0] <= sizes[1], sizes  # no sideways scroll
        last = page.locator("#store thead th").last
        header = last.bounding_box()
        store = page.locator("#store").bounding_box()
        assert header is not None and store is not None
        assert header["x"] + header["width"] <= store["x"] + store["width"], (header, store)
    finally:
        page.context.close()


@pytest.mark.parametrize("language", ["en", "vi"])
def test_lesson_7s_plus_25_h_is_on_screen_beside_its_step(
    browser: Browser, live_server: Any, open_link: Any, language: str
) -> None:
    """Finding 7: lesson 7 at 1280×720 says "Press +25 h", but the clock's button sat at
    y≈745, below the fold. The lesson card has the clock's button beside its steps; it
    presses the same button, so the lesson's Next step counts it as done."""
    page = projector(browser, language)
    try:
        lab_id = f"e2e-nu4-l7-{secrets.token_hex(4)}"
        open_link(page, f"{live_server.url}/lab/{lab_id}?lesson=ttl-expiry")
        proxy = page.locator("#lesson [data-proxy-action='+25 h']")
        page.locator("[data-action=Pay]").click()
        answered(page, 1)
        on_screen(page, "#lesson [data-proxy-action='+25 h']", "#lesson .lesson-steps")
        proxy.click()
        now = {"en": "Now +25h 00m; a key lives 24h 00m.",
               "vi": "Hiện tại +25h 00m; một key sống 24h 00m."}[language]  # fmt: skip
        expect(page.locator("#clock-now")).to_have_text(now)
        expect(page.locator("#lesson .lesson-clock")).to_contain_text(now)
        assert page.evaluate("window.scrollY") == 0
        settled(page)
        page.keyboard.press(".")  # the lesson's next step is Retry: +25 h counted as done
        answered(page, 2)
        expect(page.locator("#ledger .tally .charged")).to_contain_text("2")
        expect(page.locator("#lesson li[data-check]").first).to_have_class("met")
    finally:
        page.context.close()
