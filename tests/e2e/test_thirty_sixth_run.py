"""The thirty-sixth session: what the last runs left, in the browser."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    ("typed", "warned"),
    [('"abc', True), ('"a"b"', True), ('"abc"', False), ('a"bc', False)],
)
def test_an_unbalanced_quote_in_the_key_is_warned_before_it_is_sent(
    page: Page, live_server: Any, typed: str, warned: bool
) -> None:
    """Run R's helper: a key typed as `"abc` went out without a word under the buttons and
    came back 400 ("A quoted key must be one structured-field string")."""
    page.goto(f"{live_server.url}/lab/e2e-nu36q-{secrets.token_hex(4)}")
    page.locator("#idempotency-key").fill(typed)
    line = page.locator("#key-next")
    expect(line).to_contain_text(typed)  # the line speaks of this key
    words = "a key that begins with a quote must be one quoted string"
    if warned:
        expect(line).to_contain_text(words)
        page.get_by_role("button", name="Pay", exact=True).click()
        expect(page.locator("#explain")).to_contain_text("400")
    else:
        expect(line).not_to_contain_text(words)


def test_the_key_under_the_buttons_is_kept_whole_on_a_phone(page: Page, live_server: Any) -> None:
    """Run R's helper: the line under the buttons wrapped the key at its hyphen
    ("… t1:u7:pay:order-" and "42:v1 (amount …)" below), which read as two keys."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/lab/e2e-nu36w-{secrets.token_hex(4)}")
    page.locator("#amount").fill("123456789")
    key = page.locator("#key-next .key-whole")
    expect(key).to_have_text("t1:u7:pay:order-42:v1")
    line_height = page.evaluate(
        "parseFloat(getComputedStyle(document.getElementById('key-next')).lineHeight) || 20"
    )
    box = key.bounding_box()
    assert box is not None and box["height"] < 1.5 * line_height


def test_a_lesson_opened_in_another_tab_is_said_on_the_queue_page(
    page: Page, live_server: Any
) -> None:
    """Run T: queue lesson 1 open in one tab, "A poison message" opened from another: the
    first tab's card turned into the other lesson at its next poll, its message gone, and
    nothing said why (the payment lab's page says the lab started afresh)."""
    lab = f"{live_server.url}/lab/e2e-nu36t-{secrets.token_hex(4)}"
    page.goto(f"{lab}/queue?lesson=redelivery")
    expect(page.locator("#offer")).to_have_count(0)  # the link's POST done
    card = page.locator("#lesson")
    card.get_by_role("button", name="Run the steps").click()  # this page's own press
    expect(card.locator(".checks li").first).to_have_class("met")
    poll = (  # not awaited: the page may reload before the promise settles
        "void htmx.ajax('GET', document.getElementById('queue-panels').getAttribute('hx-get'),"
        " {target: '#queue-slot', swap: 'innerHTML'})"
    )
    page.evaluate(poll)
    page.wait_for_timeout(500)
    expect(page.locator("#notice")).to_be_hidden()
    opened = page.request.post(f"{lab}?lab=queue&scenario=poison-message", max_redirects=0)
    assert opened.status == 303
    page.evaluate(poll)
    expect(page.locator("#lesson-title")).to_contain_text("A poison message")
    expect(page.locator("#notice")).to_contain_text("so the lab started afresh")


def test_the_step_that_arms_a_fault_leads_to_the_failure_lab_on_a_phone(
    page: Page, live_server: Any, open_link: Any
) -> None:
    """Run T: on a phone, payment lesson 2 after a Reset said "in the Failure lab, press
    'Lose the response'", and the Failure lab was some 3,300 px further down the page."""
    page.set_viewport_size({"width": 390, "height": 844})
    open_link(page, f"{live_server.url}/lab/e2e-nu36f-{secrets.token_hex(4)}?lesson=lost-response")
    card = page.locator("#lesson")
    card.locator("[data-next-step]").click()  # Pay: the fault fires
    expect(page.locator("#outcome-announce")).to_contain_text("No response", timeout=10_000)
    page.locator("button[data-action='Reset']").click()
    link = card.locator("li.arm-first a[href='#failure-lab']")
    expect(link).to_have_text("Failure lab ↓")
    link.click()
    expect(page.locator("#failure-lab button", has_text="Lose the response")).to_be_in_viewport()


def test_a_refused_runs_problem_goes_once_the_form_is_corrected(
    page: Page, live_server: Any
) -> None:
    """Run T: a Run refused with 422 ("max_attempts must be an integer from 1 to 10") kept
    its problem on screen after the field was corrected."""
    page.goto(f"{live_server.url}/lab/e2e-nu36p-{secrets.token_hex(4)}/retries")
    field = page.locator("#policy-form [name='max_attempts']")
    field.evaluate("f => { f.removeAttribute('min'); f.removeAttribute('max'); }")
    field.fill("0")
    page.locator("#policy-form button[type='submit']", has_text="Run").first.click()
    notice = page.locator("#notice")
    expect(notice).to_contain_text("max_attempts must be an integer from 1 to 10")
    field.fill("4")
    expect(notice).to_be_hidden()


def test_a_short_key_is_kept_whole_only_where_it_stands(page: Page, live_server: Any) -> None:
    """A one-letter key "a" is no part of "Pay" or "and": only the keys themselves are kept
    whole (the field's, and the order's stable key)."""
    page.goto(f"{live_server.url}/lab/e2e-nu36a-{secrets.token_hex(4)}")
    page.locator("#idempotency-key").fill("a")
    line = page.locator("#key-next")
    expect(line).to_contain_text("Pay and Retry send the key in the field: a.")
    expect(line.locator(".key-whole")).to_have_text(["a", "t1:u7:pay:order-42:v1"])


def test_the_retry_budget_badge_follows_its_box(page: Page, live_server: Any) -> None:
    """Run U: retry lesson 5, Storm, then Retry budget ticked: the badge stayed "fix OFF: no
    retry budget", while lesson 2's badge follows same_key as it is ticked."""
    from test_retries_browser import open_retries

    open_retries(page, live_server, "?lesson=retry-budget")
    badge = page.locator("#lesson .fix-state")
    expect(badge).to_have_text("fix OFF: no retry budget")
    page.locator("#storm-form input[name='budget']").check()
    expect(badge).to_have_text("fix ON: a retry budget (set by hand)")
    page.locator("#storm-form input[name='budget']").uncheck()
    expect(badge).to_have_text("fix OFF: no retry budget")


@pytest.mark.parametrize(("width", "row"), [(390, True), (1280, False)])
def test_each_attempts_why_is_readable_on_a_phone(
    page: Page, live_server: Any, width: int, row: bool
) -> None:
    """Run U: on a phone the attempts table's sixth column, Why, was cut to a few letters a
    line ("400 bec retr so…"); there each why stands on a row of its own under its attempt."""
    from test_retries_browser import open_retries

    page.set_viewport_size({"width": width, "height": 844})
    open_retries(page, live_server)
    page.locator("#policy-form button[type='submit']", has_text="Run").first.click()
    why_row = page.locator("#run table.attempts tr.why-row").first
    column = page.locator("#run table.attempts td.why").first
    expect(page.locator("#run table.attempts tr[data-attempt]").first).to_be_visible()
    if row:
        expect(why_row).to_be_visible()
        expect(column).to_be_hidden()
        box = why_row.bounding_box()
        assert box is not None and box["width"] > 300
    else:
        expect(why_row).to_be_hidden()
        expect(column).to_be_visible()
