"""The thirty-eighth session's fixes, in a real browser at 1280×720."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Browser, expect
from test_fourteenth_run import start_afresh_elsewhere
from test_presenter_proof import PROJECTOR

pytestmark = pytest.mark.e2e


def test_the_started_afresh_notice_is_on_screen_in_presenter_mode(
    browser: Browser, live_server: Any, open_link: Any
) -> None:
    """Run Y: in presenter mode, the notice that another tab started the lab afresh sat
    under the order form's buttons, below the projector's bottom edge."""
    context = browser.new_context(viewport=PROJECTOR)
    first, second = context.new_page(), context.new_page()
    try:
        url = f"{live_server.url}/lab/e2e-nu38-afresh-{secrets.token_hex(4)}"
        start_afresh_elsewhere(first, second, open_link, url, "?lesson=race", "?present=1")
        expect(first.locator("#lesson-title")).to_contain_text("race", timeout=20_000)
        notice = first.locator("#notice")
        expect(notice).to_contain_text("so the lab started afresh")
        expect(notice).to_be_in_viewport(ratio=0.95)  # sub-pixel edges
    finally:
        context.close()


def test_at_phone_width_the_operations_table_stacks_each_row(
    browser: Browser, live_server: Any
) -> None:
    """Run Z, 390 px: the "Operations, retried" table's four columns broke the states
    letter by letter, and its Verdict column sat out of sight past the card's edge."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        lab_id = f"e2e-nu38-ops-{secrets.token_hex(4)}"
        page.goto(f"{live_server.url}/lab/{lab_id}/natural?lesson=which-are-natural")
        expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
        page.locator("[data-retry-all]").click()
        verdict = page.locator('tr[data-operation="add_balance"] td.verdict')
        expect(verdict).to_contain_text("needs a dedup record")
        card = page.locator("#natural-operations")
        assert card.evaluate("e => e.scrollWidth <= e.clientWidth")
        box = verdict.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390
        states_box = page.locator('tr[data-operation="add_balance"] .states').bounding_box()
        assert states_box is not None and states_box["width"] > 200  # not a sliver
        before = verdict.evaluate("e => getComputedStyle(e, '::before').content")
        assert before == '"Verdict: "'  # its column's name, over it
    finally:
        context.close()


def test_at_phone_width_step_mode_keeps_the_lanes_marks_in_sight(
    browser: Browser, live_server: Any
) -> None:
    """Run Z, 390 px: "#1 Double-submit A" squeezed over four lines beside its buttons, and
    the code box cut off the "◀ A" / "◀ B" marks at its right edge."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        lab_id = f"e2e-nu38-step-{secrets.token_hex(4)}"
        page.goto(f"{live_server.url}/lab/{lab_id}?lesson=slow-motion")
        expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
        page.get_by_role("button", name="Double-submit", exact=True).click()
        code = page.locator("#step pre.code")
        marks = code.locator(".chip")
        expect(marks).to_have_count(2)
        edge = code.bounding_box()
        assert edge is not None
        for mark in marks.all():
            mark.scroll_into_view_if_needed()
            box, edge = mark.bounding_box(), code.bounding_box()
            assert box is not None and edge is not None
            assert box["x"] + box["width"] <= edge["x"] + edge["width"], (box, edge)
        req = page.locator("#step .step-lane.lane-A > .req")
        one_line = req.evaluate("e => e.getClientRects().length === 1 && e.offsetHeight < 30")
        assert one_line, req.evaluate("e => e.offsetHeight")
    finally:
        context.close()


def test_at_phone_width_a_lessons_tick_stays_beside_its_number(
    browser: Browser, live_server: Any
) -> None:
    """Run Z, 390 px: a long lesson title's pill wrapped "✓" and "2" onto two lines."""
    from demo.lessons import LESSONS, Progress

    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="vi")
    page = context.new_page()
    page.set_extra_http_headers({"Accept-Language": "vi"})
    try:
        lab_id = f"e2e-nu38-pill-{secrets.token_hex(4)}"
        lab = live_server.lab(lab_id)
        lesson = LESSONS["duplicate-job"]
        lab.progress[lesson.name] = Progress(met_at={c.id: 0.0 for c in lesson.checks})
        page.goto(f"{live_server.url}/lab/{lab_id}/queue?lesson=outbox")
        expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
        number = page.locator(".path li.done .n").first
        expect(number).to_contain_text("2")
        tops = number.evaluate(
            "e => { const r = document.createRange(); r.selectNodeContents(e);"
            " return [...r.getClientRects()].map(x => x.top); }"
        )
        assert max(tops) - min(tops) < 8, tops  # one line: not a line (≈17 px) apart
    finally:
        context.close()


def test_after_a_reset_every_tabs_form_holds_the_labs_order_again(
    browser: Browser, live_server: Any
) -> None:
    """Run AA: after another tab's Reset, this tab's form still showed order 44, the other
    tab's 45, and the lab's own order was 42 again (a reload showed it)."""
    context = browser.new_context(viewport=PROJECTOR)
    first, second = context.new_page(), context.new_page()
    try:
        url = f"{live_server.url}/lab/e2e-nu38-reset-{secrets.token_hex(4)}"
        for tab in (first, second):
            tab.goto(url)
            tab.get_by_role("button", name="New order", exact=True).click()
            expect(tab.locator("#order-id")).not_to_have_value("42")
        second.get_by_role("button", name="Reset", exact=True).click()
        expect(second.locator("#order-id")).to_have_value("42")
        first.bring_to_front()
        first.locator("#panels").evaluate("() => htmx.trigger(document.body, 'lab-refresh')")
        expect(first.locator("#notice")).to_contain_text("Another tab reset this lab")
        expect(first.locator("#order-id")).to_have_value("42")
        expect(first.locator("#idempotency-key")).to_have_value("t1:u7:pay:order-42:v1")
    finally:
        context.close()
