"""The thirty-ninth session: what run AC named, checked in the lab's words."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_advice_stays_true import pay
from test_newcomer_texts import EN, VI, lab, page, section


@pytest.mark.parametrize(
    ("amount", "quoted"),
    [(2.5, "not 2.5"), ("abc", 'not "abc"'), (True, "not true"), ("100000", 'not "100000"')],
)
def test_an_amount_that_is_not_whole_is_quoted_as_sent(
    client: FlaskClient, amount: object, quoted: str
) -> None:
    """Run AC typed 2.5, and sent "abc", true and "100000": each 422 said "not 1.5", as if
    it had read the amount wrong."""
    answer = client.post(
        "/lab/nu39-amount/api/charges",
        json={"order_id": "42", "amount": amount},
        headers={"Idempotency-Key": "k-amount", **EN},
    )
    assert answer.status_code == 422
    said = answer.get_json()["errors"]["amount"]
    assert said.endswith(quoted)
    assert "1.5" not in said


def test_lesson_2_achieved_by_pressing_retry_says_the_fix_is_on(
    app: Flask, client: FlaskClient
) -> None:
    """Run AC achieved lesson 2 by hand, pressing Retry (the same key) after the lost
    response: "Lesson achieved" stood under the badge "fix OFF: Retry with a new key"."""
    the_lab = lab(app, "nu39-lost")
    the_lab.open_lesson("lost-response")
    pay(client, the_lab.id)
    pay(client, the_lab.id, key="t1:u7:pay:order-42:v2", action="Retry with a new key")
    before = section(page(client, the_lab.id, EN), "lesson")
    assert "fix OFF: Retry with a new key" in before
    assert "Lesson achieved" not in before
    pay(client, the_lab.id, action="Retry")
    card = section(page(client, the_lab.id, EN), "lesson")
    assert "Lesson achieved" in card
    assert "fix ON: Retry with the same key (set by hand)" in card  # run AE: what was done
    assert "fix OFF" not in card
    # Run AF: the steps under that badge, the fix's, not "Press “Retry with a new key”".
    assert "Press Retry: the same key again." in card
    assert "Press “Retry with a new key”" not in card


def test_the_retry_policy_says_its_strategy_is_not_the_storms(
    app: Flask, client: FlaskClient
) -> None:
    """Run AC, retries lesson 4: the badge said "fix OFF: no jitter" while the one strategy
    box on screen, the Retry policy's, read full_jitter; the storm's sat below the fold."""
    the_lab = lab(app, "nu39-policy")
    html = client.get(f"/lab/{the_lab.id}/retries", headers=EN).get_data(as_text=True)
    legend = html[html.index("Retry policy") : html.index("</legend>", html.index("Retry policy"))]
    assert "the storm below has its own strategy and backoff" in legend


def test_lesson_9_achieved_by_hand_keeps_the_second_cases_steps(
    app: Flask, client: FlaskClient
) -> None:
    """Run AC achieved lesson 9's second case by hand (Gateway declines unticked): the card
    then listed the first case's "Press Pay: the gateway declines (402)" over a lab whose
    Pay would charge, with no word that the settings had changed."""
    workspace = lab(app, "nu39-decline-done")
    workspace.open_lesson("decline")
    assert pay(client, workspace.id).status_code == 402
    assert pay(client, workspace.id, action="Retry").status_code == 402
    workspace.payments.update_settings({"gateway_decline": False, "fault": "gateway_error"})
    key = "t1:u7:pay:order-43:v1"
    assert pay(client, workspace.id, key=key, order_id="43").status_code == 502
    assert pay(client, workspace.id, key=key, order_id="43", action="Retry").status_code == 201
    card = section(page(client, workspace.id, EN), "lesson")
    assert "Lesson achieved" in card
    # Run AD: the steps of the case the lab holds, the second, not a warning over the first's.
    assert "Press Pay: the gateway fails before charging (502)" in card
    assert "Press Pay: the gateway declines (402)." not in card
    assert "The lab's settings were changed by hand since this case set them" not in card
    workspace.payments.update_settings({"gateway_decline": True})  # the first case's again
    card = section(page(client, workspace.id, EN), "lesson")
    assert "Press Pay: the gateway declines (402)." in card


def test_an_answer_the_retry_lab_got_says_so_on_the_payment_page(
    app: Flask, client: FlaskClient
) -> None:
    """Run AC: after a Run in the retry lab, the payment page explained "CHARGED — ch_0002
    for order retry-1-…", then said the form had been "moved there by a later request
    (another tab, or one sent from outside the page)": it had not moved."""
    from demo.payments.requests import RETRY_LAB_ACTION
    from demo.web.retries.transport import ACTION

    assert RETRY_LAB_ACTION == ACTION
    workspace = lab(app, "nu39-from-retries")
    assert pay(client, workspace.id).status_code == 201
    assert "retry lab" not in section(page(client, workspace.id, EN), "explain")
    ran = client.post(f"/lab/{workspace.id}/retries/api/run", json={"faults": ["ok"]})
    assert ran.status_code == 200
    explain = section(page(client, workspace.id, EN), "explain")
    assert "CHARGED" in explain and "for order retry-" in explain
    assert "This answer went to the retry lab's client (the Retries tab)" in explain
    assert "moved there by a later request" not in explain
    assert "A Retry from this page sends the form's own order (42), not this one" in explain
    assert pay(client, workspace.id, action="Retry").status_code == 201  # a replay of 42
    assert "retry lab's client" not in section(page(client, workspace.id, EN), "explain")


def test_a_replay_offers_no_lesson_to_open(app: Flask, client: FlaskClient) -> None:
    """Run AC: a read-only replay of a scenario showed "Open lesson 4 →" in bold, as a
    link, that did nothing."""
    the_lab = lab(app, "nu39-replay")
    the_lab.apply_scenario("race")
    assert "Open lesson 4" in section(page(client, the_lab.id, EN), "lesson")
    pay(client, the_lab.id)
    exported = client.get(f"/lab/{the_lab.id}/history.json").data
    answer = client.post("/replay", data=exported, content_type="application/json")
    replay_id = answer.headers["Location"].rsplit("/", 1)[1]
    card = section(page(client, replay_id, EN), "lesson")
    assert "This scenario is lesson 4 of the path" in card
    assert "Open lesson 4" not in card


def test_the_pixel_fix_is_three_steps_not_one(app: Flask, client: FlaskClient) -> None:
    """Run AC: operations lesson 4's fix was one step of five presses and three outcomes."""
    import re

    workspace = lab(app, "nu39-pixel")
    workspace.open_lesson("tracking-pixel")
    workspace.apply_scenario("tracking-pixel", fixed=True, lab="natural")
    html = client.get("/lab/nu39-pixel/natural", headers=EN).get_data(as_text=True)
    steps = re.search(r'<ol class="lesson-steps">(.*?)</ol>', html, re.S)
    assert steps
    items = re.findall(r"<li[^>]*>(.*?)</li>", steps.group(1), re.S)
    assert [item.split(":")[0] for item in items] == [
        "With the 30 minutes window, press Unfurl in a chat app",
        "Press Reload the article, then Prefetch it",
        "Press +10 min on the clock, then Reload the article",
    ]


def test_new_order_first_says_why(app: Flask, client: FlaskClient) -> None:
    """Run AC achieved lessons 1 and 8 by hand without the New order the step asked for
    first, and read the step as one it could have skipped: it now says what it is for."""
    from demo.lessons import LESSONS, Progress

    workspace = lab(app, "nu39-new-order")
    workspace.open_lesson("race")
    workspace.progress["race"] = Progress({LESSONS["race"].checks[0].id: 0.0})
    workspace.payments.update_settings({"lock": True})
    assert pay(client, workspace.id).status_code == 201
    card = section(page(client, workspace.id, EN), "lesson")
    assert "press New order first, so the fix's run has an order of its own in the ledger" in card


def test_lesson_1_achieved_asks_for_no_new_order(app: Flask, client: FlaskClient) -> None:
    """Run AD: lesson 1 achieved, its card still said "press New order first" (the step
    for a fix set by hand before its run), with nothing left to run."""
    from demo.lessons import LESSONS, Progress

    workspace = lab(app, "nu39-l1-done")
    workspace.open_lesson("double-click")
    checks = [check.id for check in LESSONS["double-click"].checks]
    workspace.progress["double-click"] = Progress({checks[0]: 0.0})
    assert pay(client, workspace.id).status_code == 201
    assert "press New order first" in section(page(client, workspace.id, EN), "lesson")
    workspace.progress["double-click"] = Progress(dict.fromkeys(checks, 0.0))
    card = section(page(client, workspace.id, EN), "lesson")
    assert "Lesson achieved" in card
    assert "press New order first" not in card


def test_lesson_1_links_to_key_strategy_and_lesson_2_says_how_by_hand(
    app: Flask, client: FlaskClient
) -> None:
    """Run AD: lesson 1's fix names Key strategy, two screens down at 1280x720 with no way
    there; lesson 2's fix by hand took four steps to work out (lesson 9 says its own)."""
    workspace = lab(app, "nu39-to-key")
    workspace.open_lesson("double-click")
    card = section(page(client, workspace.id, EN), "lesson")
    assert '<a href="#key-strategy">Key strategy ↓</a>' in card
    assert 'id="key-strategy"' in page(client, workspace.id, EN)
    workspace.open_lesson("lost-response")
    card = section(page(client, workspace.id, EN), "lesson")
    assert "#key-strategy" not in card
    assert (
        "By hand: press New order, press Lose the response in the Failure lab, then Pay, "
        "then Retry." in card
    )
    assert "Tự tay: bấm Đơn hàng mới, bấm Làm mất phản hồi" in section(
        page(client, workspace.id, VI), "lesson"
    )


def test_a_scenario_left_from_an_achieved_lesson_says_so(app: Flask, client: FlaskClient) -> None:
    """Run AD came back to the Retries tab after the queue's chapter: "Scenario: A retry
    storm during an outage … This scenario is lesson 5 of the path", a scenario it had never
    opened (its lesson, achieved, had closed since)."""
    from demo.lessons import LESSONS, Progress

    workspace = lab(app, "nu39-left")
    workspace.open_lesson("retry-budget")
    checks = [check.id for check in LESSONS["retry-budget"].checks]
    workspace.progress["retry-budget"] = Progress(dict.fromkeys(checks, 0.0))
    said = "Lesson 5 is achieved, and this card is its case as a scenario (opened from the menu"
    assert said not in client.get("/lab/nu39-left/retries", headers=EN).get_data(as_text=True)
    workspace.lesson = None  # as the path's end leaves it: the scenario stays open
    html = client.get("/lab/nu39-left/retries", headers=EN).get_data(as_text=True)
    assert "This scenario is lesson 5 of the path" in html
    assert said in html


def test_the_export_says_what_starts_the_lab_afresh(app: Flask, client: FlaskClient) -> None:
    """Run AD exported right after Apply the fix, and got a history with no request."""
    lab(app, "nu39-export")
    history = section(page(client, "nu39-export", EN), "history")
    assert "Apply the fix, Reset, and opening a lesson or scenario start the lab afresh" in history
    assert "hãy xuất trước đó" in section(page(client, "nu39-export", VI), "history")


def test_lesson_3s_second_case_says_it_wants_an_empty_lab() -> None:
    """Run AE did lesson 3's second case by hand after the first: its Pay, on the order
    whose key held the first case's record (and with the amount + 1,000 still in the form),
    got the first case's 409 again."""
    from demo.payments.scenarios import SCENARIOS

    text = SCENARIOS["key-reuse"].fix_text
    assert "in an empty lab: Try the second case empties it" in text
    assert "this order's key still holds that case's record" in text


@pytest.mark.parametrize(
    ("name", "control"),
    [
        ("multi-instance", "(Store: shared, in the Failure lab)"),
        ("email-once", "(Receipt e-mail: outbox, in the Failure lab)"),
    ],
)
def test_lessons_8_and_10_name_the_control_of_their_fix(name: str, control: str) -> None:
    """Run AE set lessons 8 and 10's fix by hand and searched the Failure lab's lists:
    lessons 1 and 6 named their control, these two did not."""
    from demo.payments.scenarios import SCENARIOS

    assert SCENARIOS[name].fix_text.endswith(control + ".")


def test_the_operations_strip_leads_on_as_the_card_does(app: Flask, client: FlaskClient) -> None:
    """Run AE, the operations chapter done: the strip said "Back to the payment lab's
    lessons →" while the card's main button said "Next chapter: Retries →"."""
    import re

    from demo.lessons import LESSONS

    workspace = lab(app, "nu39-strip")
    for name, lesson in LESSONS.items():
        if lesson.lab == "natural":
            workspace.open_lesson(name)
            for check in lesson.checks:
                workspace.progress.get(name).met_at[check.id] = 1.0
    html = client.get("/lab/nu39-strip/natural", headers=EN).get_data(as_text=True)
    strip = re.search(r'<p class="chapter-done"[^>]*>(.*?)</p>', html, re.S)
    assert strip and "Chapter done: every operations lesson is achieved." in strip.group(1)
    assert "Next chapter: Retries →" in strip.group(1)
    assert "Back to the payment lab" not in strip.group(1)


def test_the_storms_tick_is_explained(client: FlaskClient) -> None:
    """Run AE, retries lesson 4: "full_jitter · 804 calls ✓" and "equal_jitter · 804 calls
    ✓", with no word of what the mark meant."""
    from test_retries_page import HTMX, storm_form

    html = client.post("/lab/nu39-storm/retries/storm", data=storm_form(), headers=HTMX).text
    assert "✓: the fewest calls of these strategies (a tie marks each)." in html
    one = client.post(
        "/lab/nu39-storm/retries/storm", data=storm_form(strategy="full_jitter"), headers=HTMX
    ).text
    assert "the fewest calls of these strategies" not in one  # one panel: nothing to compare


def test_operations_fix_before_the_case_leads_back_to_the_case(
    app: Flask, client: FlaskClient
) -> None:
    """Run AF, operations lesson 3: Apply the fix before the case, then its run: "as
    expected", no check ticked, and Next step ran the fix again and again."""
    workspace = lab(app, "nu39-ops-order")
    workspace.open_lesson("lost-update")
    workspace.apply_scenario("lost-update", fixed=True, lab="natural")
    ran = client.post(
        "/lab/nu39-ops-order/natural/api/delayed-duplicate", json={"conditional": True}
    )
    assert ran.status_code == 200
    html = client.get("/lab/nu39-ops-order/natural", headers=EN).get_data(as_text=True)
    assert "The checks count in order: the first is not met yet" in html
    assert "data-case-afresh" in html and "data-fix-afresh" not in html
