"""The lab in a real browser: real clicks, real concurrent HTTP requests, real threads."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from playwright.sync_api import Page, Request, expect

from demo.workspace import Workspace

pytestmark = pytest.mark.e2e

# The browser reports every 4xx answer in the console; these are the lesson, not bugs.
EXPECTED = re.compile(r"Failed to load resource: the server responded with a status of 409")


@dataclass
class LabPage:
    page: Page
    lab: Workspace
    errors: list[str]
    charge_requests: list[Request] = field(default_factory=list)

    def click(self, name: str) -> None:
        self.page.get_by_role("button", name=name, exact=True).click()

    def headline(self):  # type: ignore[no-untyped-def]
        return self.page.locator("#explain .headline")

    def set_lock(self, on: bool) -> None:
        switch = self.page.get_by_role("switch", name="Lock")
        if switch.is_checked() != on:
            switch.click()
        expect(self.page.locator("#explain .mode")).to_contain_text(
            f"Lock is {'ON' if on else 'OFF'}"
        )
        assert self.lab.payments.settings.lock is on

    def new_order(self) -> str:
        before = self.page.locator("#order-id").input_value()
        self.click("New order")
        expect(self.page.locator("#order-id")).not_to_have_value(before)
        return self.page.locator("#idempotency-key").input_value()

    def wait_idle(self, lanes: int) -> None:
        expect(self.page.locator(".lane")).to_have_count(lanes)
        expect(self.page.locator(".lane.outcome-in_flight")).to_have_count(0)


@pytest.fixture
def lab(page: Page, live_server: Any) -> Iterator[LabPage]:
    lab_id = "e2e-" + secrets.token_hex(6)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    lab_page = LabPage(page, live_server.lab(lab_id), errors)
    page.on(
        "request",
        lambda r: lab_page.charge_requests.append(r) if r.url.endswith("/api/charges") else None,
    )
    page.goto(f"{live_server.url}/lab/{lab_id}")
    expect(lab_page.headline()).to_have_text("Nothing sent yet")
    yield lab_page
    assert [e for e in errors if not EXPECTED.search(e)] == []


def test_pay_charges_once(lab: LabPage) -> None:
    lab.click("Pay")
    expect(lab.headline()).to_contain_text("CHARGED")
    expect(lab.page.locator("#ledger .tally")).to_contain_text("charged 1 / intended 1")
    assert len(lab.lab.payments.gateway.ledger()) == 1
    assert lab.charge_requests[0].headers["idempotency-key"] == "t1:u7:pay:order-42:v1"


def test_retry_replays_and_charges_nothing(lab: LabPage) -> None:
    lab.click("Pay")
    expect(lab.headline()).to_contain_text("CHARGED")
    lab.click("Retry")
    expect(lab.headline()).to_contain_text("REPLAYED")
    expect(lab.page.locator(".badge-replayed")).to_have_count(1)
    expect(lab.page.locator("#ledger .tally")).to_contain_text("charged 1 / intended 1")
    assert len(lab.lab.payments.gateway.ledger()) == 1


def test_change_amount_and_resend_is_409(lab: LabPage) -> None:
    lab.click("Pay")
    expect(lab.headline()).to_contain_text("CHARGED")
    lab.click("Change amount & resend")
    expect(lab.headline()).to_contain_text("409 CONFLICT")
    expect(lab.page.locator(".badge-conflict")).to_have_text("409 CONFLICT")
    assert len(lab.lab.payments.gateway.ledger()) == 1
    sent = lab.charge_requests[-1]
    assert sent.post_data_json["amount"] == 101_000  # the form's amount + 1,000
    assert sent.headers["idempotency-key"] == lab.charge_requests[0].headers["idempotency-key"]


def test_retry_after_change_amount_replays_what_it_says(lab: LabPage) -> None:
    """After Change amount & resend under a new key, the page says Retry replays that
    response: the Amount field shows what was sent, so Retry sends the same body."""
    lab.click("Pay")
    expect(lab.headline()).to_contain_text("CHARGED")
    lab.new_order()
    lab.click("Change amount & resend")
    expect(lab.headline()).to_contain_text("CHARGED")
    expect(lab.page.locator("#explain")).to_contain_text(
        "A Retry from here sends the same key and body"
    )
    expect(lab.page.locator("#amount")).to_have_value("101000")
    lab.click("Retry")
    expect(lab.headline()).to_contain_text("REPLAYED")
    changed, retried = lab.charge_requests[-2:]
    assert retried.post_data_json == changed.post_data_json
    assert retried.headers["idempotency-key"] == changed.headers["idempotency-key"]
    assert len(lab.lab.payments.gateway.ledger()) == 2


def test_lock_off_double_submit_charges_twice(lab: LabPage) -> None:
    lab.set_lock(False)
    key = lab.new_order()
    lab.click("Double-submit")
    lab.wait_idle(2)
    expect(lab.headline()).to_contain_text("DOUBLE CHARGE")
    expect(lab.page.locator("#ledger .tally")).to_contain_text("charged 2 / intended 1")
    expect(lab.page.locator("#ledger .double-tag")).to_have_count(2)
    charges = lab.lab.payments.gateway.ledger()
    assert [c.idempotency_key for c in charges] == [key, key]
    # Two real HTTP requests left the browser, with the same key and body.
    assert len(lab.charge_requests) == 2
    assert {r.headers["idempotency-key"] for r in lab.charge_requests} == {key}
    assert lab.charge_requests[0].post_data == lab.charge_requests[1].post_data


def test_lock_on_double_submit_charges_once(lab: LabPage) -> None:
    lab.set_lock(False)
    lab.set_lock(True)
    key = lab.new_order()
    lab.click("Double-submit")
    lab.wait_idle(2)
    expect(lab.page.locator(".badge-replayed")).to_have_count(1)
    expect(lab.page.locator("#ledger .tally")).to_contain_text("charged 1 / intended 1")
    expect(lab.page.locator("#ledger .double-tag")).to_have_count(0)
    assert [c.idempotency_key for c in lab.lab.payments.gateway.ledger()] == [key]
    assert len(lab.charge_requests) == 2
    replay = next(e for e in lab.lab.payments.requests() if e.outcome == "replayed")
    assert replay.step("lock acquire").detail["waited_ms"] > 50  # type: ignore[union-attr]


def test_keyboard_only(lab: LabPage) -> None:
    lab.page.get_by_role("button", name="Pay", exact=True).focus()
    lab.page.keyboard.press("Enter")
    expect(lab.headline()).to_contain_text("CHARGED")
    lab.page.keyboard.press("Tab")  # to Retry
    lab.page.keyboard.press("Enter")
    expect(lab.headline()).to_contain_text("REPLAYED")


def test_editing_the_order_id_derives_a_new_key(lab: LabPage) -> None:
    lab.page.locator("#order-id").fill("1001")
    expect(lab.page.locator("#idempotency-key")).to_have_value("t1:u7:pay:order-1001:v1")


def test_user_strings_show_as_text_and_run_nothing(lab: LabPage) -> None:
    dialogs: list[str] = []
    lab.page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    evil = "<img src=x onerror=alert(1)>"
    lab.page.locator("#idempotency-key").fill(evil)
    lab.page.locator("#order-id").fill(evil[:60])
    lab.click("Pay")
    expect(lab.headline()).to_contain_text("CHARGED")
    expect(lab.page.locator(".lane .key").first).to_have_text(evil)
    expect(lab.page.locator("#ledger td.key code").first).to_have_text(evil)
    assert lab.page.locator("img[src=x]").count() == 0
    lab.page.reload()
    expect(lab.page.locator(".lane .key").first).to_have_text(evil)
    assert dialogs == []


def settled(page: Page) -> None:
    """Wait until htmx has finished swapping: a key pressed mid-swap reaches no button."""
    page.wait_for_function("() => !document.querySelector('.htmx-swapping, .htmx-settling')")
    page.wait_for_timeout(50)


def test_step_mode_by_hand_double_charges_with_the_lock_off_and_never_with_it_on(
    lab: LabPage,
) -> None:
    page = lab.page
    page.locator("input[name=step_mode]").check()
    expect(page.locator("#step")).to_be_visible()
    lab.set_lock(False)
    lab.click("Double-submit")
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    # Both stopped after their lookup, on the same line of the real source.
    here = page.locator("pre.code .here")
    expect(here).to_have_count(1)
    expect(here).to_contain_text('trace("lookup"')
    expect(here.locator(".chip")).to_have_text(["◀ A", "◀ B"])
    for label in ("A", "B"):  # both stop right before the gateway call, then charge
        settled(page)
        page.keyboard.press(label.lower())
        charging = page.locator("pre.code .here").filter(has_text='trace("charging")')
        expect(charging).to_contain_text(f"◀ {label}")
    expect(page.locator("#ledger .tally")).to_contain_text("charged 0")
    settled(page)
    page.keyboard.press("a")  # A charges
    expect(page.locator("pre.code .here").filter(has_text="gateway charge")).to_contain_text("◀ A")
    settled(page)
    page.keyboard.press("b")  # B charges too: both had missed
    expect(page.locator("pre.code .here").filter(has_text="gateway charge")).to_contain_text("◀ B")
    page.get_by_role("button", name="Release all").click()
    expect(page.locator("#ledger .tally")).to_contain_text("charged 2 / intended 1")

    lab.set_lock(True)
    key = lab.new_order()
    lab.click("Double-submit")
    expect(page.locator("[data-step-label=B]")).to_be_enabled()
    # A: to lock wait, to lock acquire (A holds the lock); B: to lock wait, then it blocks.
    for label, stopped in (
        ("a", "stopped at lock wait"),
        ("a", "stopped after lock acquire"),
        ("b", "stopped at lock wait"),
    ):
        settled(page)
        page.keyboard.press(label)
        expect(page.locator(f".lane-{label.upper()}")).to_contain_text(stopped)
    settled(page)
    page.keyboard.press("b")
    expect(page.locator(".blocked")).to_have_text("blocked: waits for A's lock")
    expect(page.locator("[data-step-label=B]")).to_be_disabled()
    page.get_by_role("button", name="Release all").click()
    expect(page.locator(".badge-replayed")).to_have_count(1)
    assert [c.idempotency_key for c in lab.lab.payments.gateway.ledger()].count(key) == 1


def test_shortcuts_overlay_and_no_shortcuts_while_typing(lab: LabPage) -> None:
    page = lab.page
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts")).to_be_hidden()
    lab.click("Pay")
    expect(lab.headline()).to_contain_text("CHARGED")
    page.locator("#order-id").fill("")
    page.locator("#order-id").type("xrpd?")  # typing: no reset, no click, no overlay
    expect(page.locator("#shortcuts")).to_be_hidden()
    assert len(lab.lab.payments.gateway.ledger()) == 1
    page.locator("body").click(position={"x": 5, "y": 700})
    page.keyboard.press("Shift+X")
    expect(page.locator("#ledger .tally")).to_contain_text("charged 0")


def test_sequence_diagram_downloads_as_svg_and_png(lab: LabPage, tmp_path: Any) -> None:
    lab.click("Pay")
    expect(lab.headline()).to_contain_text("CHARGED")
    image = lab.page.locator("#sequence img")
    expect(image).to_be_visible()
    assert lab.page.evaluate("img => img.naturalWidth", image.element_handle()) > 300
    with lab.page.expect_download() as png:
        lab.page.get_by_role("button", name="Download .png").click()
    path = tmp_path / "sequence.png"
    png.value.save_as(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with lab.page.expect_download() as svg:
        lab.page.get_by_role("link", name="Download .svg").click()
    assert svg.value.suggested_filename.endswith(".svg")
