"""The retry lab in a real browser: the lost-response scenario run from its page (a new
key per attempt charges twice, the same key once, in the payment lab's own ledger), and a
lesson achieved by its steps and its fix."""

from __future__ import annotations

import re
import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def open_retries(page: Page, live_server: Any, query: str = "") -> str:
    """Open a fresh lab's retry page with a link's change, as a person does."""
    lab_id = f"e2e-retries-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}/retries{query}")
    expect(page.locator("#offer")).to_have_count(0)
    expect(page.locator("#retries-panels")).to_be_visible()
    return lab_id


def order_charges(live_server: Any, lab_id: str, page: Page) -> int:
    order = page.locator("#run .ledger-link code").inner_text()
    ledger = live_server.lab(lab_id).payments.gateway.ledger()
    return sum(1 for charge in ledger if charge.order_id == order)


def test_lost_response_retry_new_key_twice_same_key_once(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id = open_retries(page, live_server, "?scenario=lost-response-retry&lab=retries")
    expect(page.locator("#lesson-title")).to_contain_text("A retry after a lost response")
    expect(page.get_by_role("checkbox", name="same_key")).not_to_be_checked()
    page.locator("button[data-action='run']").click()
    headline = page.locator("#run .run-headline")
    expect(headline).to_contain_text("DOUBLE CHARGE")
    expect(headline.locator(".charges")).to_have_attribute("data-charges", "2")
    expect(page.locator("#run table.attempts .new-key")).to_have_count(1)
    expect(page.locator("[data-expected='charges']")).to_contain_text("kept as evidence")
    assert order_charges(live_server, lab_id, page) == 2  # the payment lab's own ledger

    # The fix, one click away: the page reopens with it and runs the steps by itself.
    page.get_by_role("button", name="Apply the fix and run again").click()
    expect(page.locator("#lesson-title .fix-state")).to_have_text("fix ON: the same key")
    expect(headline.locator(".charges")).to_have_attribute("data-charges", "1")
    expect(headline).to_contain_text("REPLAYED")
    expect(page.locator("[data-expected='charges']")).to_contain_text("as expected")
    keys = page.locator("#run table.attempts td.key code").all_inner_texts()
    assert len(keys) == 2 and len(set(keys)) == 1
    assert order_charges(live_server, lab_id, page) == 1

    # The link to the payment lab, where the charges are in its ledger.
    page.get_by_role("link", name=re.compile("payment lab's ledger")).click()
    expect(page.locator("#ledger")).to_be_visible()


def test_a_lesson_is_achieved_in_the_browser(page: Page, live_server: Any, errors: Any) -> None:
    open_retries(page, live_server, "?lesson=retry-after")
    lesson = page.locator("#lesson")
    expect(lesson.locator("[data-check='early']")).to_have_class(re.compile("unmet"))
    page.keyboard.press(".")  # Next step presses the scenario's button: Run
    expect(lesson.locator("[data-check='early']")).to_have_class(re.compile(r"\bmet"))
    wait = page.locator("#run table.attempts tr[data-attempt='2'] td.num")
    expect(wait).to_have_text(re.compile(r"^\d+ ms$"))
    assert int(wait.inner_text().split()[0].replace(",", "")) < 3000

    page.get_by_role("button", name="Apply the fix", exact=True).click()
    expect(page.get_by_role("checkbox", name="respect_retry_after")).to_be_checked()
    page.locator("button[data-action='run']").click()
    expect(lesson.locator(".achieved")).to_contain_text("Lesson achieved")
    assert int(wait.inner_text().split()[0].replace(",", "")) >= 3000
    expect(page.locator("#path li.done")).to_have_count(1)


def test_a_double_click_on_run_is_one_run_and_one_charge(
    page: Page, live_server: Any, errors: Any
) -> None:
    """A double click on Run charged twice, in a lab that teaches double-submit."""
    lab_id = open_retries(page, live_server)
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.locator("button[data-action='run']").dblclick()
    expect(page.locator("#run .run-headline")).to_be_visible()
    # Both clicks were dispatched before the first answer came, so a second post, if any,
    # was sent by now.
    assert [u for u in posts if u.endswith("/retries/run")] == [posts[0]]
    assert len(live_server.lab(lab_id).retries.runs()) == 1
    assert order_charges(live_server, lab_id, page) == 1
    expect(page.locator("button[data-action='run']")).to_be_enabled()
