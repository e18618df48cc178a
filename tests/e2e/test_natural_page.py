"""The operations lab in a real browser: the tracking pixel counts a reload and a link
prefetch with no window, and neither with a 30-minute window; a lesson achieved by
following its steps; the lost update and its fix."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def _lab(live_server: Any) -> tuple[str, str]:
    lab_id = f"e2e-natural-{secrets.token_hex(4)}"
    return lab_id, f"{live_server.url}/lab/{lab_id}"


def _views(page: Page) -> Any:
    return page.locator("#natural-pixel .views")


def _requests(live_server: Any, lab_id: str) -> list[dict[str, Any]]:
    return [e.result for e in live_server.lab(lab_id).natural.requests() if e.action == "pixel"]


def test_a_reload_and_a_prefetch_count_with_no_window(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id, url = _lab(live_server)
    page.goto(f"{url}/natural")
    expect(_views(page)).to_have_text("1")  # the article's <img> counted the first view
    page.get_by_role("button", name="Reload the article").click()
    expect(_views(page)).to_have_text("2")
    page.get_by_role("button", name="Prefetch it").click()
    expect(_views(page)).to_have_text("3")
    page.reload()  # the browser's own reload fetches the no-store pixel again
    expect(_views(page)).to_have_text("4")
    pixels = _requests(live_server, lab_id)
    assert [p["prefetch"] for p in pixels] == [False, False, True, False]
    assert {p["viewer"] for p in pixels} == {1}  # one reader, by the cookie: four views
    assert live_server.lab(lab_id).natural.pixel.counts() == {"42": 4}
    expect(page.locator("#natural-timeline")).to_contain_text("prefetch")


def test_with_a_window_a_reload_and_a_prefetch_count_once(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id, url = _lab(live_server)
    page.goto(f"{url}/natural")
    expect(_views(page)).to_have_text("1")
    # The counter's refresh after the article's pixel loaded swaps the select out: a choice
    # made on the old one before that swap would be lost with it.
    page.wait_for_load_state("networkidle")
    page.locator("#pixel-window").select_option("1800")
    # The answer to the PATCH is swapped in: the setting is the server's now.
    expect(page.locator("#natural-pixel .hint")).to_contain_text("once per 1800 s")
    assert live_server.lab(lab_id).natural.settings() == {"pixel_dedup_window_s": 1800}
    page.get_by_role("button", name="Reload the article").click()
    expect(page.locator("#natural-timeline")).to_contain_text("not counted")
    page.get_by_role("button", name="Prefetch it").click()
    expect(page.locator("#natural-timeline li").first).to_contain_text("prefetch")
    page.reload()
    expect(page.locator("#natural-timeline li")).to_have_count(4)
    expect(_views(page)).to_have_text("1")
    pixels = _requests(live_server, lab_id)
    assert [p["counted"] for p in pixels] == [True, False, False, False]
    # A chat app's unfurl carries no cookie: another viewer, counted.
    page.get_by_role("button", name="Unfurl in a chat app").click()
    expect(_views(page)).to_have_text("2")
    assert _requests(live_server, lab_id)[-1]["new_viewer"] is True


def test_set_vs_add_achieved_in_the_browser(page: Page, live_server: Any, errors: Any) -> None:
    lab_id, url = _lab(live_server)
    page.goto(f"{url}?lesson=set-vs-add")  # the page offers the lesson and opens it (a POST)
    page.wait_for_url(f"{url}/natural")
    card = page.locator("#natural-lesson")
    expect(card.locator("h2")).to_contain_text("Lesson: SET survives a retry, += does not")
    page.locator("tr[data-operation=set_balance] button").click()
    expect(page.locator("tr[data-operation=set_balance] .badge")).to_have_text(
        "naturally idempotent"
    )
    page.locator("tr[data-operation=add_balance] button").click()
    expect(page.locator("tr[data-operation=add_balance] .badge")).to_have_text(
        "needs a dedup record"
    )
    expect(card.locator("[data-check=set-natural-add-not]")).to_have_class("met")
    expect(card.locator(".numbers .n-actual")).to_have_text("300")
    # The step predicted 300 without the fix: the failure is evidence, not a mismatch.
    expect(card.locator(".numbers .n-expected")).to_have_text("300")
    expect(card.locator(".numbers .verdict")).to_have_text(
        "the failure you caused, kept as evidence"
    )
    page.locator("#ops-dedup").check()
    page.locator("tr[data-operation=add_balance] button").click()
    expect(card.locator(".achieved")).to_contain_text("Lesson achieved")
    expect(card.locator(".numbers .n-actual")).to_have_text("100")
    assert "set-vs-add" in live_server.lab(lab_id).achieved()


def test_the_lost_update_and_its_fix(page: Page, live_server: Any, errors: Any) -> None:
    _, url = _lab(live_server)
    page.goto(f"{url}/natural")
    page.get_by_role("button", name="Run the three writes").click()
    expect(page.locator(".final-balance")).to_have_text("100")
    page.locator("#lost-conditional").check()
    page.get_by_role("button", name="Run the three writes").click()
    expect(page.locator(".final-balance")).to_have_text("50")
    expect(page.locator(".writes li").nth(2)).to_contain_text("412")


def test_retry_them_all_sorts_the_nine(page: Page, live_server: Any, errors: Any) -> None:
    lab_id, url = _lab(live_server)
    page.goto(f"{url}/natural")
    page.get_by_role("button", name="Retry them all").click()
    expect(page.locator(".tally")).to_contain_text(
        "4 naturally idempotent, 5 need a dedup record, 0 not retried yet"
    )
    expect(page.locator(".callout")).to_contain_text("answered 204, then 404")
    runs = live_server.lab(lab_id).natural.latest_runs()
    assert len(runs) == 9 and not any(r["dedup"] for r in runs.values())


def test_no_accessibility_violations(page: Page, live_server: Any, errors: Any) -> None:
    from test_accessibility import no_violations

    _, url = _lab(live_server)
    page.goto(f"{url}?lesson=tracking-pixel")
    page.wait_for_url(f"{url}/natural")
    expect(_views(page)).to_have_text("1")
    page.get_by_role("button", name="Retry them all").click()
    expect(page.locator(".tally")).to_contain_text("0 not retried yet")
    page.get_by_role("button", name="Run the three writes").click()
    expect(page.locator(".final-balance")).to_have_text("100")
    no_violations(page)


@pytest.mark.parametrize("times", ["0", "11", ""])
def test_a_bad_attempts_value_shows_its_one_problem(
    page: Page, live_server: Any, errors: Any, times: str
) -> None:
    lab_id, url = _lab(live_server)
    page.goto(f"{url}/natural")
    answers: list[int] = []
    page.on("response", lambda r: answers.append(r.status) if "api/apply" in r.url else None)
    page.locator("#ops-times").fill(times)
    page.get_by_role("button", name="Retry them all").click()
    expect(page.locator("#notice")).to_be_visible()
    expect(page.locator("#notice")).to_contain_text("422")
    expect(page.locator("#ops-times")).to_have_value(times)  # not silently reset
    assert answers == [422]  # validated once, not nine identical 422s
    page.locator("#ops-times").fill(times)
    page.locator("tr[data-operation='add_balance'] button").click()
    expect(page.locator("#notice")).to_contain_text("422")
    assert live_server.lab(lab_id).natural.latest_runs() == {}
    assert errors and all("status of 422" in e for e in errors)  # the two refusals, no more
    errors.clear()


def test_a_second_tab_follows_retry_them_all(page: Page, live_server: Any, errors: Any) -> None:
    lab_id, url = _lab(live_server)
    page.goto(f"{url}/natural")
    other = page.context.new_page()
    other.goto(f"{url}/natural")
    page.get_by_role("button", name="Retry them all").click()
    expect(page.locator(".tally")).to_contain_text("0 not retried yet")
    # The poll's request, sent now (the e2e server polls every 600 s).
    other.evaluate(
        """() => { const poll = document.getElementById("natural-poll");
        htmx.ajax("GET", poll.getAttribute("hx-get"),
                  {target: "#natural-pixel", swap: "outerHTML"}); }"""
    )
    expect(other.locator(".tally")).to_contain_text("0 not retried yet")
    expect(other.locator("tr[data-operation='add_balance'] .states li")).to_have_count(3)
    other.close()


def test_presenter_mode_can_be_left_from_this_page(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id, url = _lab(live_server)
    page.goto(f"{url}/natural")
    page.get_by_role("switch", name="Presenter mode").click()
    expect(page.locator("#page.present")).to_have_count(1)
    assert live_server.lab(lab_id).present
    page.locator("h1").click()
    page.keyboard.press("m")
    expect(page.locator("#page.present")).to_have_count(0)
    assert not live_server.lab(lab_id).present


def test_the_lessons_strip_opens_the_first_lesson(
    page: Page, live_server: Any, errors: Any
) -> None:
    _, url = _lab(live_server)
    page.goto(f"{url}/natural")
    expect(page.locator("#natural-path")).to_contain_text("0 of 4 achieved")
    page.get_by_role("button", name="Start the lessons").click()
    expect(page.locator("#natural-lesson")).to_contain_text("SET survives a retry")
    expect(page.locator("#natural-lesson .checks li")).to_have_count(2)
    # The article's pixel loads with the page and the counter then refreshes: read it after.
    page.wait_for_load_state("networkidle")
    views = _views(page).inner_text()
    page.get_by_role("button", name="Show a hint").click()
    expect(page.locator("#natural-lesson .hints li")).to_have_count(1)
    expect(_views(page)).to_have_text(views)  # the hint reloads nothing: no view counted
