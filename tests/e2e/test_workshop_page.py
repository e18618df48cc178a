"""The workshop in a real browser: lessons achieved by following their steps, presenter
mode on a projector, the shortcuts, Vietnamese, the instructor's view, export and replay."""

from __future__ import annotations

import gettext
import json
import re
import secrets
import time
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from demo.web.i18n import TRANSLATIONS

pytestmark = pytest.mark.e2e


def lab_url(live_server: Any, prefix: str) -> tuple[str, str]:
    lab_id = f"e2e-{prefix}-{secrets.token_hex(4)}"
    return lab_id, f"{live_server.url}/lab/{lab_id}"


def button(page: Page, name: str) -> Any:
    return page.get_by_role("button", name=name, exact=True)


def achieved(page: Page) -> Any:
    return page.locator("#lesson .achieved")


def test_two_lessons_achieved_by_following_their_steps(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    lab_id, url = lab_url(live_server, "lessons")
    # Lesson 9, Decline: by clicking what the steps say.
    open_link(page, f"{url}?lesson=decline")
    expect(page.locator("#lesson-title")).to_contain_text("Lesson: Decline")
    button(page, "Pay").click()
    expect(page.locator("#explain .headline")).to_contain_text("402")
    button(page, "Retry").click()
    expect(page.locator("[data-check='decline-replayed']")).to_have_class(re.compile("met"))
    expect(achieved(page)).to_have_count(0)
    expect(page.locator("#lesson .fix-state")).to_have_text("a defence at work")
    expect(page.locator("#lesson .why")).to_contain_text("What protects you:")
    page.get_by_role("button", name="Try the second case", exact=True).click()
    expect(page.locator("#lesson .fix-state")).to_have_text("second case")
    expect(page.locator("#lesson .lesson-steps")).to_contain_text("fails before charging (502)")
    expect(page.locator("#lesson .lesson-steps")).not_to_contain_text("declines (402)")
    button(page, "Pay").click()
    expect(page.locator("#explain .headline")).to_contain_text("502")
    button(page, "Retry").click()
    expect(achieved(page)).to_contain_text("Lesson achieved")
    expect(page.locator("#path li.done")).to_have_count(1)
    # Lesson 4, The race: Double-submit with the lock off, then with it on.
    page.locator("#path button[data-lesson='race']").click()
    expect(page.locator("#lesson-title")).to_contain_text("The race")
    button(page, "Double-submit").click()
    expect(page.locator("#lesson .actual-charges")).to_have_text("2", timeout=10_000)
    page.get_by_role("button", name="Apply the fix", exact=True).click()
    button(page, "Double-submit").click()
    expect(achieved(page)).to_contain_text("Lesson achieved", timeout=10_000)
    expect(page.locator("#path li.done")).to_have_count(2)
    assert live_server.lab(lab_id).achieved() == {"decline", "race"}
    # A refresh keeps the progress.
    page.reload()
    expect(page.locator("#path .count")).to_have_text("2 of 10 achieved")


def test_next_step_walks_a_lesson_from_the_keyboard(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    # Lesson 3, no dropped connection on the way: a Pay whose connection the lab drops may
    # go out again from the browser itself when the socket it took had sat idle
    # (Chromium's ShouldResendRequest), which made the lost-response lesson's walk flaky.
    lab_id, url = lab_url(live_server, "next")
    open_link(page, f"{url}?lesson=key-reuse")
    expect(page.locator("#lesson")).to_be_visible()
    page.keyboard.press(".")  # Pay
    expect(page.locator("#explain .headline")).to_contain_text("CHARGED", timeout=10_000)
    page.keyboard.press(" ")  # Change amount & resend: the same key, another body
    expect(page.locator("#explain .headline")).to_contain_text("409", timeout=10_000)
    expect(page.locator("#lesson .checks li").first).to_have_class(re.compile("met"))
    page.keyboard.press(".")  # onward: the second case
    expect(page.locator("#lesson .fix-state")).to_have_text("second case")
    page.keyboard.press(".")  # Pay
    expect(page.locator("#explain .headline")).to_contain_text("CHARGED", timeout=10_000)
    page.keyboard.press(".")  # New order
    expect(page.locator("#order-id")).to_have_value("43")
    page.keyboard.press(".")  # Pay: the new order under its own key
    expect(achieved(page)).to_be_visible(timeout=10_000)
    # One press too many (here a double press, both in the same moment) asks, and stays.
    page.evaluate(
        """() => { const next = document.querySelector('#lesson [data-next-step]');
                   next.click(); next.click(); }"""
    )
    expect(page.locator("#lesson .onward-ask")).to_contain_text("again to go on: Next lesson →")
    page.wait_for_timeout(800)  # a deliberate press comes later than a bounce (600 ms)
    expect(page.locator("#lesson-title")).to_contain_text("Same key, another body")
    page.keyboard.press(".")  # asked for: onward, the next lesson
    expect(page.locator("#lesson-title")).to_contain_text("The race")
    assert live_server.lab(lab_id).achieved() == {"key-reuse"}


def test_presenter_mode_fits_a_projector_and_200_percent_zoom(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    _, url = lab_url(live_server, "present")
    open_link(page, f"{url}?present=1&lesson=race")
    expect(page.locator("#page")).to_have_class(re.compile("present"))
    expect(page.locator("#store")).to_be_hidden()  # secondary panels collapsed
    expect(page.locator("#lesson")).to_be_visible()
    button(page, "Double-submit").click()
    expect(page.locator("#lesson .actual-charges")).to_have_text("2", timeout=10_000)
    size = page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)")
    assert size >= 20  # large type
    for width, height in ((1280, 720), (640, 360)):  # 640×360 is 1280×720 at 200% zoom
        page.set_viewport_size({"width": width, "height": height})
        widths = page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert widths[0] <= widths[1], (width, widths)
        # The lesson is on the first screen, before the order form.
        box = page.locator("#lesson").bounding_box()
        assert box is not None and box["y"] < height, (width, box)
    page.keyboard.press("m")  # presenter mode off, from the keyboard
    expect(page.locator("#page")).not_to_have_class(re.compile("present"))


def test_the_shortcuts_press_pay_retry_and_double_submit(
    page: Page, live_server: Any, errors: Any
) -> None:
    lab_id, url = lab_url(live_server, "keys")
    page.goto(url)
    headline = page.locator("#explain .headline")
    page.keyboard.press("p")
    expect(headline).to_contain_text("CHARGED")
    page.keyboard.press("r")
    expect(headline).to_contain_text("REPLAYED")
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("p")  # with the list open, a key closes it and does nothing else
    expect(page.locator("#shortcuts")).to_be_hidden()
    page.keyboard.press("?")
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts")).to_be_hidden()
    page.get_by_role("button", name="Shortcuts").click()  # the focus is on a button now
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts")).to_be_hidden()
    page.get_by_role("button", name="Shortcuts").click()
    page.locator("#shortcuts").click(position={"x": 5, "y": 5})  # the backdrop
    expect(page.locator("#shortcuts")).to_be_hidden()
    page.locator("#order-id").fill("")
    page.locator("#order-id").type("7dp")  # typed into a field: no shortcut fires
    expect(page.locator("#order-id")).to_have_value("7dp")
    assert [e.action for e in live_server.lab(lab_id).payments.requests()] == ["Pay", "Retry"]
    page.locator("#order-id").fill("43")
    page.locator("body").click(position={"x": 5, "y": 700})
    page.keyboard.press("d")
    expect(page.locator(".lane")).to_have_count(4, timeout=10_000)
    actions = sorted(e.action for e in live_server.lab(lab_id).payments.requests())
    assert actions == ["Double-submit A", "Double-submit B", "Pay", "Retry"]


def vietnamese(msgid: str) -> str:
    with (TRANSLATIONS / "vi" / "LC_MESSAGES" / "messages.mo").open("rb") as fh:
        return gettext.GNUTranslations(fh).gettext(msgid)


def test_the_vietnamese_page_shows_vietnamese_labels(browser: Browser, live_server: Any) -> None:
    for word in ("Pay", "Retry", "Lessons", "Presenter mode"):
        assert vietnamese(word) != word, word
    context = browser.new_context(locale="vi-VN", viewport={"width": 1280, "height": 720})
    page = context.new_page()
    _, url = lab_url(live_server, "vi")
    page.goto(url)
    expect(page.locator("html")).to_have_attribute("lang", "vi")
    pay = page.locator("button[data-action='Pay']")
    expect(pay).to_have_text(vietnamese("Pay"))
    expect(page.locator("#path-title")).to_contain_text(vietnamese("Lessons"))
    pay.click()
    expect(page.locator("#explain")).to_be_visible()
    # The switch back to English is kept in the lab, whatever the browser asks for.
    page.locator("#language-select").select_option("en")
    page.locator("form.language button").click()
    expect(page.locator("button[data-action='Pay']")).to_have_text("Pay")
    page.reload()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    context.close()


def test_the_instructor_view_counts_a_lesson_from_another_browser(
    browser: Browser, page: Page, live_server: Any, open_link: Any
) -> None:
    token = live_server.app.config["INSTRUCTOR_TOKEN"]
    instructor = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    instructor.goto(f"{live_server.url}/instructor?token={token}")
    row = instructor.locator("tr[data-lesson='decline'] .achieved-count")
    before = int(row.inner_text())
    lab_id, url = lab_url(live_server, "room")
    open_link(page, f"{url}?lesson=decline")
    button(page, "Pay").click()
    expect(page.locator("#explain .headline")).to_contain_text("402")
    button(page, "Retry").click()
    expect(page.locator("[data-check='decline-replayed']")).to_have_class(re.compile("met"))
    page.get_by_role("button", name="Try the second case", exact=True).click()
    button(page, "Pay").click()
    expect(page.locator("#explain .headline")).to_contain_text("502")
    button(page, "Retry").click()
    expect(achieved(page)).to_be_visible()
    instructor.reload()
    expect(row).to_have_text(str(before + 1))
    expect(instructor.locator("body")).not_to_contain_text(lab_id)
    anonymous = browser.new_context().new_page()
    answer = anonymous.goto(f"{live_server.url}/instructor")
    assert answer is not None and answer.status == 403
    anonymous.context.close()
    instructor.context.close()


def test_export_then_import_gives_the_same_timeline(
    page: Page, live_server: Any, errors: Any, tmp_path: Any, open_link: Any
) -> None:
    _, url = lab_url(live_server, "export")
    open_link(page, f"{url}?scenario=key-reuse&run=1")
    expect(page.locator(".lane")).to_have_count(2, timeout=15_000)
    expect(page.locator("#explain .headline")).to_contain_text("409")
    lanes = page.locator(".lane").all_inner_texts()
    with page.expect_download() as download:
        page.get_by_role("link", name="Export this lab's history").click()
    saved = tmp_path / "history.json"
    download.value.save_as(saved)
    assert json.loads(saved.read_text())["format"] == "idempotency-demo/history"
    page.locator("#history-file").set_input_files(str(saved))
    page.get_by_role("button", name="Open the replay").click()
    expect(page.locator("p.read-only")).to_contain_text("Read-only replay")
    expect(page.locator(".lane")).to_have_count(2)
    assert page.locator(".lane").all_inner_texts() == lanes
    expect(page.locator("#explain .headline")).to_contain_text("409")


def test_next_step_counts_the_buttons_you_pressed_yourself(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Lesson 5 by hand: d, then step the lanes with a and b; "." then applies the fix."""
    lab_id, url = lab_url(live_server, "slow")
    open_link(page, f"{url}?lesson=slow-motion")
    expect(page.locator("#lesson")).to_be_visible()
    page.keyboard.press("d")
    expect(page.locator("[data-step-label=B]")).to_be_visible(timeout=10_000)
    for _ in range(20):
        if page.locator("[data-step-label]").count() == 0:
            break
        for lane in ("a", "b"):
            page.keyboard.press(lane)
            page.wait_for_timeout(150)
    expect(page.locator("[data-step-label]")).to_have_count(0, timeout=10_000)
    expect(page.locator("[data-check='stepped-double']")).to_have_class(re.compile("met"))
    page.keyboard.press(".")  # the Double-submit step is done: onward to the fix
    expect(page.locator("#lesson .fix-state")).to_have_text("fix ON: Lock on")
    assert len(live_server.lab(lab_id).payments.gateway.ledger()) == 0  # the fix starts afresh


def test_the_next_step_button_alone_walks_the_slow_motion_lesson(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """Mouse only: the Next step button steps paused lanes, then applies the fix."""
    lab_id, url = lab_url(live_server, "mouse")
    open_link(page, f"{url}?lesson=slow-motion")
    next_step = page.locator("#lesson [data-next-step]")
    next_step.click()  # Double-submit: A and B stop at their first step
    expect(page.locator("[data-step-label=B]")).to_be_visible(timeout=10_000)
    for _ in range(40):
        if page.locator("[data-check='stepped-double'].met").count():
            break
        page.locator("#lesson [data-next-step]").click()
        page.wait_for_timeout(200)
    expect(page.locator("[data-check='stepped-double']")).to_have_class(re.compile("met"))
    assert len(live_server.lab(lab_id).payments.gateway.ledger()) == 2
    page.locator("#lesson [data-next-step]").click()  # onward: the fix, only when asked
    expect(page.locator("#lesson .fix-state")).to_have_text("fix ON: Lock on")


def test_a_language_switch_in_one_tab_reloads_the_other(browser: Browser, live_server: Any) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="en-GB")
    first, second = context.new_page(), context.new_page()
    _, url = lab_url(live_server, "tabs")
    first.goto(url)
    second.goto(url)
    second.locator("#language-select").select_option("vi")
    second.locator("form.language button").click()
    expect(second.locator("html")).to_have_attribute("lang", "vi")
    first.locator("button[data-action='Pay']").click()  # its answer tells it the news
    expect(first.locator("html")).to_have_attribute("lang", "vi", timeout=10_000)
    expect(first.locator("button[data-action='Pay']")).to_have_text(vietnamese("Pay"))
    context.close()


def test_space_on_a_fresh_lab_starts_the_lessons_and_no_key_shows_no_key(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    lab_id, url = lab_url(live_server, "fresh")
    open_link(page, f"{url}?present=1")
    page.keyboard.press(" ")  # a presenter remote on a fresh lab: lesson 1 opens
    expect(page.locator("#lesson-title")).to_contain_text("Double-click without a key")
    # Lesson 1 sends no key, and the key field says so instead of showing one.
    expect(page.locator("#idempotency-key")).to_have_value("")
    page.keyboard.press(" ")
    expect(page.locator("#lesson .actual-charges")).to_have_text("2", timeout=10_000)
    assert [c.idempotency_key for c in live_server.lab(lab_id).payments.gateway.ledger()] == [
        None,
        None,
    ]


def test_a_pasted_link_opens_the_lesson_in_one_click_and_changes_nothing_for_a_bot(
    browser: Browser, page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    lab_id, url = lab_url(live_server, "link")
    # A link preview or a crawler: no script runs, and the lab is not even made.
    bot = browser.new_context(java_script_enabled=False).new_page()
    bot.goto(f"{url}?lesson=race&present=1")
    expect(bot.locator("#offer button")).to_have_text("Open lesson 4")
    assert live_server.app.extensions["labs"].peek(lab_id) is None
    # Without scripts a person still gets there with the button.
    bot.locator("#offer button").click()
    expect(bot.locator("#lesson-title")).to_contain_text("The race")
    bot.context.close()
    lab = live_server.lab(lab_id)
    assert lab.present and lab.lesson is not None and lab.lesson.name == "race"
    lab.leave_scenario()
    # A person's browser: the link alone opens the lesson, and Back does not open it again.
    page.goto(f"{live_server.url}/lab/{lab_id}")
    open_link(page, f"{url}?lesson=decline")
    expect(page.locator("#lesson-title")).to_contain_text("Decline")
    expect(page).to_have_url(re.compile(rf"/lab/{lab_id}$"))
    page.go_back()
    expect(page).to_have_url(re.compile(rf"/lab/{lab_id}$"))
    expect(page.locator("#offer")).to_have_count(0)


def test_next_step_after_a_reload_of_an_achieved_lesson_opens_the_next_one(
    page: Page, live_server: Any, errors: Any, open_link: Any
) -> None:
    """The page forgets how far its steps went when it reloads: once the lesson is
    achieved and its requests are on the timeline, Space goes on instead of running
    the lesson's clicks again."""
    lab_id, url = lab_url(live_server, "reload")
    open_link(page, f"{url}?lesson=race")
    button(page, "Double-submit").click()
    expect(page.locator(".lane")).to_have_count(2, timeout=10_000)
    from demo.lessons import LESSONS, Progress

    lab = live_server.lab(lab_id)
    # Achieved by the requests on the timeline (met after they started): not an earlier
    # visit's achievement, which walks the fix again.
    met = time.perf_counter()
    lab.progress["race"] = Progress(met_at={c.id: met for c in LESSONS["race"].checks})
    page.reload()
    expect(achieved(page)).to_be_visible()
    page.keyboard.press(" ")
    expect(page.locator("#lesson-title")).to_contain_text("Slow-motion race", timeout=10_000)
    assert len(lab.payments.requests()) == 0  # the next lesson's fresh lab: nothing re-sent
