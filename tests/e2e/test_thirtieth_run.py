"""What run 40 named, in a real browser on the projector's 1280×720."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from measure import box_of
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def _open(page: Page, url: str) -> None:
    page.goto(url)
    # The link's offer is pressed by the page, which then loads again: use that one.
    expect(page.locator("#offer")).to_have_count(0)
    expect(page.locator("#natural-lesson")).to_have_attribute("data-lesson", "set-vs-add")


def _box(page: Page, selector: str) -> dict[str, float]:
    return box_of(page.locator(selector).first)


def test_operations_lesson_1_shows_its_numbers_above_the_fold(page: Page, live_server: Any) -> None:
    """Operations lesson 1 after its two steps: the expected/actual box began at 736 px,
    under six buttons in a narrow column, below a 720 px screen's fold."""
    _open(page, f"{live_server.url}/lab/e2e-nu30o-{secrets.token_hex(4)}/natural?lesson=set-vs-add")
    card = page.locator("#natural-lesson")
    for _ in range(2):
        page.locator("#natural-lesson [data-next-step]").click()
    expect(card.locator(".numbers .verdict")).to_have_text(
        "the failure you caused, kept as evidence"
    )
    numbers = _box(page, "#natural-lesson .numbers")
    assert numbers["y"] + numbers["height"] <= 720, numbers
    actions = _box(page, "#natural-lesson .lesson-actions")
    assert actions["y"] + actions["height"] <= numbers["y"]  # the buttons still come first


def test_the_fix_badge_follows_the_title_on_its_last_line(page: Page, live_server: Any) -> None:
    """A two-line lesson title put its badge on a third line of its own (a flex item):
    lesson 1's badge sat under the title where lessons 2 and 7 had it beside."""
    _open(page, f"{live_server.url}/lab/e2e-nu30h-{secrets.token_hex(4)}/natural?lesson=set-vs-add")
    title = _box(page, "#natural-lesson-title")
    badge = _box(page, "#natural-lesson-title .fix-state")
    assert badge["x"] > title["x"] + 20, (title, badge)  # after a word, not a line's start
    assert title["height"] < 3 * badge["height"], (title, badge)  # two lines, not three


def test_a_comma_in_the_order_id_is_encoded_and_a_typed_one_warned(
    page: Page, live_server: Any
) -> None:
    """Order id "a,b": the page built a key its own server refused (400), with no warning
    under the buttons (a typed "é" had one)."""
    page.goto(f"{live_server.url}/lab/e2e-nu30c-{secrets.token_hex(4)}")
    page.locator("#order-id").fill("a,b")
    key = page.locator("#idempotency-key")
    expect(key).to_have_value("t1:u7:pay:order-a%2Cb:v1")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#ledger")).to_contain_text("charged 1")
    key.fill("my,key")
    expect(page.locator("#key-next")).to_contain_text(
        "The server refuses this key (400): it holds a comma"
    )


def test_change_amount_at_the_most_a_charge_may_be_still_shows_the_conflict(
    page: Page, live_server: Any
) -> None:
    """At the documented maximum amount, Change amount & resend sent the maximum + 1,000:
    a 422 for the amount, never the 409 the button is there to show."""
    page.goto(f"{live_server.url}/lab/e2e-nu30m-{secrets.token_hex(4)}")
    most = 10**15
    page.locator("#amount").fill(str(most))
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#ledger")).to_contain_text("charged 1")
    page.get_by_role("button", name="Change amount & resend").click()
    expect(page.locator("#amount")).to_have_value(str(most - 1000))
    expect(page.locator("#explain")).to_contain_text("409")


def test_a_lane_stopped_after_its_fingerprint_check_says_what_comes_next(
    page: Page, live_server: Any
) -> None:
    """Step mode: the lane read only "stopped after fingerprint check", where the others
    say what their step found ("miss: no record for this key yet")."""
    page.goto(f"{live_server.url}/lab/e2e-nu30f-{secrets.token_hex(4)}")
    page.locator("input[name=step_mode]").check()
    page.get_by_role("button", name="Pay", exact=True).click()
    page.get_by_role("button", name="Run A to the end").click()
    expect(page.locator("#ledger")).to_contain_text("charged 1")
    page.get_by_role("button", name="Retry", exact=True).click()
    lane = page.locator("#step .lane-A .where")
    for _ in range(6):  # lookup, then the lock's steps, then the check
        expect(page.locator("[data-step-label=A]")).to_be_enabled()
        before = lane.text_content() or ""
        if "fingerprint check" in before:
            break
        page.locator("[data-step-label=A]").click()
        expect(lane).not_to_have_text(before)
    expect(lane).to_contain_text("stopped after fingerprint check: same body: it replays next")


def test_ten_attempts_keep_the_verdicts_on_the_card(page: Page, live_server: Any) -> None:
    """Operations with Attempts 10: the e-mail and invoice lists ran so long the Verdict
    column went past the card's right edge, behind a sideways scroll far below."""
    page.goto(f"{live_server.url}/lab/e2e-nu30t-{secrets.token_hex(4)}/natural")
    page.locator("#ops-times").fill("10")
    page.locator("[data-retry-all]").click()
    expect(page.locator("table.ops tbody tr[data-times='10']")).to_have_count(9)
    widths = page.locator("table.ops").evaluate("t => [t.scrollWidth, t.parentElement.clientWidth]")
    assert widths[0] <= widths[1], widths
    card = _box(page, "#natural-operations")
    for badge in page.locator("table.ops .verdict .badge").all():
        box = badge.bounding_box()
        assert box is not None and box["x"] + box["width"] <= card["x"] + card["width"]


def test_the_pointer_to_the_answer_wraps_on_a_phone(page: Page, live_server: Any) -> None:
    """On a 390 px phone "↓ worker-1: DUPLICATE SKIPPED — see the answer" ran off the
    screen at "— se"."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/lab/e2e-nu30p-{secrets.token_hex(4)}/queue")
    pointer = page.locator("#to-outcome")
    words = "↓ worker-1: DUPLICATE SKIPPED — see the answer"
    pointer.evaluate("(b, words) => { b.hidden = false; b.textContent = words; }", words)
    box = _box(page, "#to-outcome")
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    assert pointer.evaluate("b => b.scrollWidth <= b.clientWidth")


def test_dedup_ticked_before_the_failure_says_to_undo_it_at_once(
    page: Page, live_server: Any
) -> None:
    """Operations lesson 1, Dedup ticked before any step: the badge turned "fix ON" at
    once, but the steps said to undo it only after a run that proved nothing, and still
    said so after it was unticked."""
    _open(page, f"{live_server.url}/lab/e2e-nu30u-{secrets.token_hex(4)}/natural?lesson=set-vs-add")
    undo = page.locator("#natural-lesson li.undo-first")
    expect(undo).to_be_hidden()
    page.locator("#ops-dedup").check()
    expect(undo).to_be_visible()
    expect(undo).to_contain_text("so set that back first")
    page.locator("#ops-dedup").uncheck()
    expect(undo).to_be_hidden()
