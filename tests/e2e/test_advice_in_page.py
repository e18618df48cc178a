"""The page speaks of the last thing that happened: a key the client refused to send, an
achieved lesson (Next step goes on, the extra charge is evidence), a read-only replay
(its card's buttons are off)."""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def lab_url(live_server: Any, prefix: str) -> str:
    return f"{live_server.url}/lab/e2e-{prefix}-{secrets.token_hex(4)}"


def button(page: Page, name: str) -> Any:
    return page.get_by_role("button", name=name, exact=True)


def test_a_key_the_client_refuses_is_what_the_panel_speaks_of(page: Page, live_server: Any) -> None:
    """Pay with a key the server refuses, then with ``ключ,é…``: the panel still spoke of
    the server's refusal while the client had refused the second key itself. (The first
    answer is a 400 on purpose, so only script errors count here.) The field takes no more
    than the server's 255 characters, so the server's refusal here is a comma's."""
    script_errors: list[str] = []
    page.on("pageerror", lambda exc: script_errors.append(str(exc)))
    url = lab_url(live_server, "refused")
    page.goto(url)
    key = page.locator("#idempotency-key")
    explain = page.locator("#explain")
    key.fill("k" * 300)
    assert len(key.input_value()) == 255  # the field's limit is the server's
    # …and the cut is said, not silent.
    expect(page.locator("#key-next")).to_contain_text("The field stops at 255 characters")
    key.fill("pay,1")
    button(page, "Pay").click()
    expect(explain).to_contain_text("The Idempotency-Key value holds a comma")
    sent = len(live_server.lab(url.rsplit("/", 1)[1]).payments.requests())
    key.fill("ключ,é…")
    button(page, "Pay").click()
    expect(explain.locator(".headline")).to_have_text("NOT SENT — the client refused the key")
    expect(explain).to_contain_text("This key cannot be sent in an HTTP header")
    expect(explain).to_contain_text("Nothing reached the server")
    expect(explain).not_to_contain_text("holds a comma")
    expect(explain.locator(".mode")).to_contain_text("Settings now, for the next request")
    assert len(live_server.lab(url.rsplit("/", 1)[1]).payments.requests()) == sent
    # The next request that goes out is explained by the server again.
    key.fill("a-good-key")
    button(page, "Pay").click()
    expect(explain.locator(".headline")).to_contain_text("CHARGED")
    assert script_errors == []


def test_after_lesson_4_by_hand_next_step_goes_on_and_keeps_the_evidence(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Lock ticked by hand, New order, Double-submit: achieved. Space then applied the fix
    (resetting the ledger) beside a red "expected 2 actual 3 MISMATCH"."""
    url = lab_url(live_server, "l4-hand")
    open_link(page, f"{url}?lesson=race")
    card = page.locator("#lesson")
    button(page, "Double-submit").click()
    expect(card.locator('[data-check="lock-off-double"]')).to_have_class("met")
    page.locator("#lock").check()
    expect(card.locator(".fix-state")).to_have_text("fix ON: Lock on (set by hand)")
    # On the order already charged, both lanes replay: the panel says the way out.
    button(page, "Double-submit").click()
    expect(page.locator("#explain")).to_contain_text("press New order first")
    expect(card.locator('[data-check="lock-on-once"]')).to_have_class("unmet")
    button(page, "New order").click()
    expect(page.locator("#order-id")).to_have_value("43")
    button(page, "Double-submit").click()
    expect(card.locator(".achieved")).to_contain_text("Lesson achieved")
    charges = card.locator(".numbers").first
    expect(charges).to_have_class("numbers evidence")
    expect(charges).to_contain_text("1 extra: the failure you caused, kept as evidence")
    expect(card).not_to_contain_text("MISMATCH")
    page.keyboard.press(" ")  # right after the achievement: it asks first
    expect(card.locator(".onward-ask")).to_contain_text("again to go on: Next lesson →")
    expect(page.locator("#lesson")).to_have_attribute("data-lesson", "race")
    page.wait_for_timeout(700)  # later than a bounce (600 ms)
    page.keyboard.press(" ")
    expect(page.locator("#lesson")).to_have_attribute("data-lesson", "slow-motion")
    lab = live_server.lab(url.rsplit("/", 1)[1])
    assert lab.lesson is not None and lab.lesson.name == "slow-motion"


def test_a_read_only_replay_offers_no_card_button_that_would_fail(
    page: Page, live_server: Any, errors: Any
) -> None:
    url = lab_url(live_server, "to-replay")
    lab = live_server.lab(url.rsplit("/", 1)[1])
    lab.apply_scenario("race")
    lab.payments.create_charge(["k1"], json.dumps({"order_id": "42", "amount": 100000}).encode())
    client = live_server.app.test_client()
    exported = client.get(f"/lab/{lab.id}/history.json").data
    answer = client.post("/replay", data=exported, content_type="application/json")
    page.goto(f"{live_server.url}{answer.headers['Location']}")
    actions = page.locator("#lesson .lesson-actions button")
    assert actions.count() >= 4
    for index in range(actions.count()):
        expect(actions.nth(index)).to_be_disabled()
    expect(page.locator("#lesson")).to_contain_text("these buttons run nothing here")
    page.keyboard.press(".")  # the shortcut does nothing either: still the replay
    expect(page.locator("#page.read-only")).to_be_visible()


def test_a_replay_says_its_store_is_not_exported_and_opens_no_scenario(
    page: Page, live_server: Any, errors: Any
) -> None:
    url = lab_url(live_server, "replay-store")
    lab = live_server.lab(url.rsplit("/", 1)[1])
    body = json.dumps({"order_id": "42", "amount": 100000}).encode()
    lab.payments.create_charge(["k1"], body)
    lab.payments.create_charge(["k2"], body)
    client = live_server.app.test_client()
    exported = client.get(f"/lab/{lab.id}/history.json").data
    answer = client.post("/replay", data=exported, content_type="application/json")
    page.goto(f"{live_server.url}{answer.headers['Location']}")
    expect(page.locator("#page.read-only")).to_be_visible()
    expect(page.locator("#ledger tbody tr")).to_have_count(2)
    store = page.locator("#store")
    expect(store).to_contain_text("Not part of an exported history")
    expect(store).not_to_contain_text("no key has been seen yet")
    # The header's menu would only lead to a 409: both are disabled, the reason in a tooltip.
    expect(page.locator("#scenario-select")).to_be_disabled()
    expect(page.locator(".scenario-menu button[type=submit]")).to_be_disabled()
    expect(page.locator("#scenario-select")).to_have_attribute(
        "title", "A read-only replay opens no scenario: open one in a lab of your own."
    )
    # A fresh lab of one's own keeps both.
    page.goto(lab_url(live_server, "own"))
    expect(page.locator("#scenario-select")).to_be_enabled()
    expect(page.locator(".scenario-menu button[type=submit]")).to_be_enabled()
    expect(page.locator("#store")).to_contain_text("no key has been seen yet")
