"""The queue lab's page in a real browser: two scenarios run from the page (by hand with
its buttons, and with its one-click fix), and one lesson achieved by hand."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def open_queue(page: Page, live_server: Any, prefix: str) -> str:
    lab_id = f"e2e-queue-{prefix}-{secrets.token_hex(4)}"
    page.goto(f"{live_server.url}/lab/{lab_id}/queue")
    expect(page.locator("#queue-panels")).to_be_visible()
    return lab_id


def click(page: Page, selector: str) -> None:
    """Press a button and wait for its answer to be swapped in (a new version)."""
    version = page.locator("#queue-panels").get_attribute("data-version")
    page.click(selector)
    expect(page.locator("#queue-panels")).not_to_have_attribute("data-version", version or "")


def set_setting(page: Page, name: str, value: str | bool) -> None:
    version = page.locator("#queue-panels").get_attribute("data-version")
    control = page.locator(f"#set-{name}")
    if isinstance(value, bool):
        control.set_checked(value)
    else:
        control.select_option(value)
    expect(page.locator("#queue-panels")).not_to_have_attribute("data-version", version or "")


def emails(page: Page) -> Any:
    return page.locator("#mailbox tbody tr")


def test_redelivery_by_hand_two_emails_then_one_with_dedup(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id = open_queue(page, live_server, "redelivery")
    # Without dedup: a crash after the record, before the ack; past the timeout, again.
    set_setting(page, "crash_at", "after_record")
    click(page, "#enqueue")
    click(page, "#work")
    expect(page.locator("#explain .headline")).to_contain_text("CRASHED, NOT ACKED")
    expect(page.locator("#code .line.crash")).to_contain_text('trace("record"')
    expect(page.locator("#queue tbody tr")).to_contain_text("in flight")
    click(page, "#clock-31")
    click(page, "#work")
    expect(page.locator("#explain .headline")).to_contain_text("PROCESSED")
    expect(emails(page)).to_have_count(2)
    expect(page.locator("#queue tbody tr")).to_contain_text("acked")
    lab = live_server.lab(lab_id).queue
    assert lab.measure("emails_per_key") == 2  # the page shows what the lab holds

    # With dedup: the same clicks, one e-mail, and the redelivery skipped.
    click(page, "#queue-reset")
    set_setting(page, "dedup", True)
    set_setting(page, "crash_at", "after_record")
    click(page, "#enqueue")
    click(page, "#work")
    click(page, "#clock-31")
    click(page, "#work")
    expect(page.locator("#explain .headline")).to_contain_text("DUPLICATE SKIPPED")
    expect(emails(page)).to_have_count(1)
    expect(page.locator("#dedup tbody")).to_contain_text("invoice:42:email")
    assert lab.measure("emails_per_key") == 1


def test_at_most_once_scenario_loses_the_job_silently_and_the_fix_keeps_it(
    page: Page, live_server: Any, errors: Any
) -> None:
    open_queue(page, live_server, "amo")
    page.select_option("#scenario-select", "at-most-once")
    page.locator(".scenario-menu button").click()
    expect(page.locator("#lesson-title")).to_contain_text("At-most-once")
    click(page, "#run-scenario")
    # The job is gone: acked, no e-mail, and no error anywhere on the page.
    expect(page.locator("#queue tbody tr")).to_have_count(1)
    expect(page.locator("#queue tbody tr")).to_contain_text("acked")
    expect(emails(page)).to_have_count(0)
    expect(page.locator("#notice")).to_be_hidden()
    numbers = page.locator("#lesson .numbers")
    expect(numbers.locator(".expected-value")).to_have_text("0")
    expect(numbers.locator(".actual-value")).to_have_text("1")
    expect(numbers).to_contain_text("the failure you caused, kept as evidence")
    expect(page.locator("#lanes")).to_contain_text("LOST")

    click(page, "#apply-fix")
    expect(page.locator("#lesson .fix-state")).to_have_text("fix ON: at-least-once + dedup")
    expect(numbers.locator(".actual-value")).to_have_text("0")
    expect(numbers).to_contain_text("as expected")
    expect(emails(page)).to_have_count(1)


def test_duplicate_job_lesson_achieved_by_hand(page: Page, live_server: Any, errors: Any) -> None:
    lab_id = open_queue(page, live_server, "lesson")
    page.locator("#path button[data-lesson='duplicate-job']").click()
    expect(page.locator("#lesson[data-lesson='duplicate-job']")).to_be_visible()
    checks = page.locator("#lesson .checks li")
    expect(checks.nth(0)).to_have_class("unmet")

    for button in ("#enqueue", "#producer-retry", "#work", "#work"):
        click(page, button)
    expect(emails(page)).to_have_count(2)
    expect(checks.nth(0)).to_have_class("met")
    expect(checks.nth(1)).to_have_class("unmet")

    click(page, "#queue-reset")
    set_setting(page, "dedup", True)
    for button in ("#enqueue", "#producer-retry", "#work", "#work"):
        click(page, button)
    expect(emails(page)).to_have_count(1)
    expect(checks.nth(1)).to_have_class("met")
    expect(page.locator("#lesson .achieved")).to_contain_text("Lesson achieved")
    expect(page.locator("#path li.done")).to_have_count(1)
    assert "duplicate-job" in live_server.lab(lab_id).achieved()


def test_a_bad_setting_is_refused_in_the_notice_and_changes_nothing(
    page: Page, live_server: Any
) -> None:
    lab_id = open_queue(page, live_server, "bad")
    # A value the page does not offer, as a tampered form would send it.
    page.evaluate(
        "() => { const o = document.createElement('option'); o.value = '9'; o.text = '9';"
        " document.querySelector('#set-workers').append(o); }"
    )
    page.locator("#set-workers").select_option("9")
    expect(page.locator("#notice")).to_contain_text("422")
    expect(page.locator("#notice")).to_contain_text("workers")
    assert live_server.lab(lab_id).queue.settings.workers == 1


def test_a_refused_simulation_is_told_beside_the_simulator(page: Page, live_server: Any) -> None:
    lab_id = open_queue(page, live_server, "sim422")
    # A loss the form's own limits would stop, as a tampered form would send it.
    page.evaluate("() => document.querySelector('#sim-loss').removeAttribute('max')")
    page.fill("#sim-loss", "0.95")
    page.click("#simulate")
    problem = page.locator("#sim-problem")
    expect(problem).to_contain_text("422")
    expect(problem).to_contain_text("loss")
    expect(problem).to_be_in_viewport()
    assert live_server.lab(lab_id).queue.simulation is None
