"""The failure lab in a real browser: scenarios run from their links with real clicks,
and the expected-vs-actual numbers on the page match what the real code did."""

from __future__ import annotations

import re
import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def run_scenario(page: Page, live_server: Any, name: str, fixed: bool) -> str:
    lab_id = f"e2e-{name}-{secrets.token_hex(4)}"
    fix = "&fixed=1" if fixed else ""
    # The link opens with its change offered, and the page presses the button itself.
    page.goto(f"{live_server.url}/lab/{lab_id}?scenario={name}{fix}&run=1")
    expect(page.locator("#offer")).to_have_count(0)
    expect(page.locator("#lesson")).to_be_visible()
    expect(page).to_have_url(re.compile(rf"/lab/{lab_id}$"))  # ?run=1 is consumed
    return lab_id


def expect_numbers(page: Page, expected: int, actual: int) -> None:
    expect(page.locator("#lesson .actual-charges")).to_have_text(str(actual), timeout=15_000)
    expect(page.locator("#lesson .expected-charges")).to_have_text(str(expected))


@pytest.mark.parametrize(("fixed", "actual"), [(False, 2), (True, 1)])
def test_lost_response(page: Page, live_server: Any, errors: Any, fixed: bool, actual: int) -> None:
    lab_id = run_scenario(page, live_server, "lost-response", fixed)
    expect_numbers(page, 1, actual)
    expect(page.locator(".lane").filter(has_text="NO RESPONSE")).to_have_count(1)
    assert len(live_server.lab(lab_id).payments.gateway.ledger()) == actual


@pytest.mark.parametrize(("fixed", "actual"), [(False, 2), (True, 1)])
def test_crash_window(page: Page, live_server: Any, errors: Any, fixed: bool, actual: int) -> None:
    lab_id = run_scenario(page, live_server, "crash-window", fixed)
    expect_numbers(page, 1, actual)
    expect(page.locator(".badge-crashed")).to_have_count(1)
    expect(page.locator("#explain .headline")).to_contain_text(
        "RECOVERED" if fixed else "DOUBLE CHARGE"
    )
    assert len(live_server.lab(lab_id).payments.gateway.ledger()) == actual


@pytest.mark.parametrize(("fixed", "actual"), [(False, 2), (True, 1)])
def test_multi_instance(
    page: Page, live_server: Any, errors: Any, fixed: bool, actual: int
) -> None:
    lab_id = run_scenario(page, live_server, "multi-instance", fixed)
    expect_numbers(page, 1, actual)
    expect(page.locator(".lane .instance")).to_have_text(["i2", "i1"])
    assert [e.instance for e in live_server.lab(lab_id).payments.requests()] == ["i1", "i2"]


@pytest.mark.parametrize(("fixed", "actual"), [(False, 2), (True, 1)])
def test_ttl_expiry(page: Page, live_server: Any, errors: Any, fixed: bool, actual: int) -> None:
    lab_id = run_scenario(page, live_server, "ttl-expiry", fixed)
    expect_numbers(page, 1, actual)
    expect(page.locator("#explain .mode")).to_contain_text("lab clock +25h")
    assert live_server.lab(lab_id).clock_offset_s() == 25 * 3600


@pytest.mark.parametrize("fixed", [False, True])
def test_gateway_timeout_never_charges_twice(
    page: Page, live_server: Any, errors: Any, fixed: bool
) -> None:
    lab_id = run_scenario(page, live_server, "gateway-timeout", fixed)
    expect(page.locator(".lane")).to_have_count(2, timeout=15_000)
    expect_numbers(page, 1, 1)
    expect(page.locator("#explain .headline")).to_contain_text(
        "RECOVERED" if fixed else "409 IN DOUBT"
    )
    timed_out = page.locator(".lane").filter(
        has_text="gateway timeout: it charged, but its answer timed out"
    )
    expect(timed_out).to_have_count(1)
    lab = live_server.lab(lab_id)
    assert [e.outcome for e in lab.payments.requests()] == [
        "error",
        "recovered" if fixed else "in_doubt",
    ]
    assert len(lab.payments.gateway.ledger()) == 1


def test_email_once(page: Page, live_server: Any, errors: Any) -> None:
    run_scenario(page, live_server, "email-once", False)
    expect(page.locator("#lesson .actual-emails")).to_have_text("2", timeout=15_000)
    expect(page.locator("#lesson .actual-charges")).to_have_text("1")


def test_arming_a_fault_by_hand_shows_no_response(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id = "e2e-arm-" + secrets.token_hex(4)
    page.goto(f"{live_server.url}/lab/{lab_id}")
    page.get_by_text("Failure lab").click()
    page.get_by_role("button", name="Lose the response").click()
    armed = page.locator("#explain .armed")
    expect(armed).to_contain_text("the next charge's response will be lost")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("NO RESPONSE")
    # Said once, by the panels: the notice under the buttons only when they cannot be
    # fetched either (the twenty-seventh run saw the same words twice, one box cut).
    expect(page.locator("#notice")).to_be_hidden()
    expect(page.locator("#outcome-announce")).to_contain_text("No response — did it charge?")
    page.get_by_role("button", name="Retry", exact=True).click()
    expect(page.locator("#explain .headline")).to_contain_text("REPLAYED")
    assert len(live_server.lab(lab_id).payments.gateway.ledger()) == 1


def test_random_key_per_click_charges_every_click(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id = run_scenario(page, live_server, "key-per-click", False)
    expect_numbers(page, 1, 2)
    keys = {c.idempotency_key for c in live_server.lab(lab_id).payments.gateway.ledger()}
    assert len(keys) == 2


@pytest.mark.parametrize(("fixed", "actual"), [(False, 3), (True, 2)])
def test_client_guard_stops_the_double_click_but_not_a_second_tab(
    page: Page, live_server: Any, errors: Any, fixed: bool, actual: int
) -> None:
    lab_id = run_scenario(page, live_server, "client-guard", fixed)
    expect(page.locator("#guard")).to_be_checked()
    expect_numbers(page, 2, actual)
    requests = live_server.lab(lab_id).payments.requests()
    # The guard let one of the Double-submit's two requests out; the second tab's went too.
    assert [e.action for e in requests][:1] == ["Double-submit A"]
    assert "Pay (second tab)" in [e.action for e in requests]
    assert len(requests) == 3


def test_a_real_second_tab_is_not_stopped_by_the_guard(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id = run_scenario(page, live_server, "client-guard", False)
    expect_numbers(page, 2, 3)
    page.get_by_role("button", name="New order").click()
    expect(page.locator("#order-id")).to_have_value("44")
    second = page.context.new_page()
    second.goto(f"{live_server.url}/lab/{lab_id}")
    expect(second.locator("#order-id")).to_have_value("44")  # every tab shows the intent
    expect(second.locator("#guard")).to_be_checked()
    second.get_by_role("button", name="Pay", exact=True).click()
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#lesson .actual-charges")).to_have_text("5", timeout=15_000)
    second.close()
