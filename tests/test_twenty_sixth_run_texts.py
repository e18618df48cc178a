"""The twenty-sixth session: what the twenty-sixth run found, checked in the lab's words."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from demo.registry import LabRegistry

EN = {"Accept-Language": "en"}
BODY = {"order_id": "42", "amount": 100000}


def test_go_further_follows_the_lesson_buttons(app: Flask, client: FlaskClient) -> None:
    """Lesson 9's "Go further" note, above the checks once the fix was applied, pushed the
    card's buttons off a 1280x720 screen: it is read after the case, as Why is."""
    registry: LabRegistry = app.extensions["labs"]
    client.post("/lab/nu26-further?lesson=decline", headers=EN)
    registry.get("nu26-further").apply_scenario("decline", fixed=True)
    key = {"Idempotency-Key": "t1:u7:pay:order-42:v1"}
    assert client.post("/lab/nu26-further/api/charges", json=BODY, headers=key).status_code == 502
    html = client.get("/lab/nu26-further", headers=EN).get_data(as_text=True)
    assert "Go further:" in html
    assert html.index('class="lesson-actions"') < html.index('class="fix-note"')
    assert html.index('class="fix-note"') < html.index('class="why"')


def test_a_step_is_a_change_before_the_stepped_thread_wakes() -> None:
    """A step into a held lock answered with the panels' old version when the answer was
    drawn before the stepped request's thread woke (a loaded machine): the lane read
    "blocked", yet a page that goes by the version saw nothing new until its next poll."""
    from demo.engine.stepping import StepMode
    from demo.engine.timeline import Entry

    touched: list[int] = []
    stepper = StepMode({"lock wait"}, touch=lambda: touched.append(1))
    pause = stepper.pause_for(Entry(1, "Double-submit B", 0.0))
    pause.waiting, pause.step = True, "lock wait"  # parked, as park() leaves it
    stepper.step(1)
    assert touched == [1]  # no thread ran: the step itself is the change
    assert stepper.paused()[0]["waiting"] is False


def test_an_achieved_lesson_says_so_once(app: Flask, client: FlaskClient) -> None:
    """Lesson 5 achieved, opened again: "Achieved already: …" under the steps and
    "Achieved earlier: press Run the steps …" under the checks, two words for one fact."""
    from demo.lessons.engine import Progress
    from demo.lessons.payments import PATH

    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get("nu26-once")
    lab.open_lesson("slow-motion")
    checks = [c.id for c in next(x for x in PATH if x.name == "slow-motion").checks]
    lab.progress["slow-motion"] = Progress(met_at=dict.fromkeys(checks, 0.0))
    html = client.get("/lab/nu26-once", headers=EN).get_data(as_text=True)
    card = html[html.index('id="lesson"') :]
    assert card.count("Achieved already") == 1 and "Achieved earlier" not in card
    lab.apply_scenario("slow-motion", fixed=True)  # no line under the steps: this one says it
    html = client.get("/lab/nu26-once", headers=EN).get_data(as_text=True)
    assert "Achieved already: press Run the steps to see it again." in html


def test_the_diagram_marks_the_repeat_not_the_first_charge(app: Flask, client: FlaskClient) -> None:
    """Lesson 8: the sequence diagram marked the first, legitimate 201 "DOUBLE CHARGE" too,
    as the ledger marks both rows of the order: the first was the payment asked for."""
    from demo.payments.gateway import summarise
    from demo.web.payments.sequence import diagram

    registry: LabRegistry = app.extensions["labs"]
    for _ in range(2):  # no key: the same order charged twice
        answer = client.post(
            "/lab/nu26-seq/api/charges", json={"order_id": "42", "amount": 100000}, headers=EN
        )
        assert answer.status_code == 201
    payments = registry.get("nu26-seq").payments
    drawn = diagram(payments.requests(), summarise(payments.gateway.ledger()))
    answers = [a.full for a in drawn.arrows if "201" in a.full]
    assert answers == ["#1 201 CHARGED", "#2 201 CHARGED — DOUBLE CHARGE"]
    assert [a.bold for a in drawn.arrows if "201" in a.full] == [False, True]


def test_vietnamese_sentences_name_the_buttons_as_the_page_does() -> None:
    """The wrap-up's free-play line read "… nên Pay trừ tiền nó một lần" beside a button
    that reads "Thanh toán": a sentence must quote the label the attendee sees."""
    import re

    from babel.messages.pofile import read_po

    from demo.web.i18n import TRANSLATIONS

    with open(TRANSLATIONS / "vi/LC_MESSAGES/messages.po", "rb") as po:
        catalog = read_po(po)
    buttons = ("Pay", "Double-submit", "New order", "Next step", "Apply the fix", "Run the steps")
    labels = {b: catalog.get(b).string for b in buttons}
    assert all(v and v != b for b, v in labels.items()), labels  # each has its own label
    names = "|".join(map(re.escape, buttons))
    english = re.compile(rf"\b({names})\b(?!-)")
    quoting = [m.string for m in catalog if m.id and isinstance(m.string, str)]
    assert [s for s in quoting if english.search(s)] == []


def test_a_redelivery_that_repeats_the_side_effect_is_headed_processed_again(
    client: FlaskClient,
) -> None:
    """Queue lesson 1, the first case: the run that sent the second e-mail was headed
    "worker-1: PROCESSED", as plain as the first, the one that was right."""
    import re

    def post(what: str, **form: str) -> str:
        answer = client.post(
            f"/lab/nu26-q/queue/{what}", data=form, headers={"HX-Request": "true", **EN}
        )
        assert answer.status_code == 200
        return answer.get_data(as_text=True)

    def headline(html: str) -> str:
        found = re.search(r'<p class="headline">(worker-\d: [A-Z ,]+)</p>', html)
        assert found
        return found.group(1)

    post("settings", setting="crash_at", crash_at="after_record")
    post("enqueue", job="42")
    assert headline(post("work")) == "worker-1: CRASHED, NOT ACKED"
    post("settings", setting="crash_at", crash_at="none")
    post("clock", advance_s="31")
    assert headline(post("work")) == "worker-1: PROCESSED AGAIN"
    post("enqueue", job="43")
    assert headline(post("work")) == "worker-1: PROCESSED"  # a first delivery


def test_the_lost_updates_numbers_say_the_correct_balance_too(client: FlaskClient) -> None:
    """Operations lesson 3: "expected without the fix 100" stood beside the panel's "should
    be 50", read as two answers to one question. The card says 50 is the fix's."""
    import re

    lab = "/lab/nu26-lost/natural"
    assert (
        client.post(
            "/lab/nu26-lost", data={"lab": "natural", "scenario": "lost-update"}
        ).status_code
        == 303
    )
    client.post(f"{lab}/api/delayed-duplicate", json={"conditional": False})
    html = client.get(f"{lab}/_partials/lesson", headers=EN).get_data(as_text=True)
    assert re.search(
        r'n-expected">100<.*with the fix <strong class="n-intended">50<.*n-actual">100<', html, re.S
    )
    client.post(f"{lab}/api/delayed-duplicate", json={"conditional": True})
    html = client.get(f"{lab}/_partials/lesson", headers=EN).get_data(as_text=True)
    assert "n-intended" not in html  # with If-Match the expected value is the correct one


def test_the_operations_card_goes_back_to_the_first_case_by_that_name(
    client: FlaskClient,
) -> None:
    """Operations, after the fix: "Run again without the fix" ran nothing (it goes back and
    waits), where the payment lab's card says "Back to the first case" for that."""
    lab = "/lab/nu26-unfix/natural"
    form = {"lab": "natural", "lesson": "set-vs-add"}
    assert client.post("/lab/nu26-unfix", data=form).status_code == 303
    client.post("/lab/nu26-unfix", data={"lab": "natural", "scenario": "set-vs-add", "fixed": "1"})
    html = client.get(f"{lab}/_partials/lesson", headers=EN).get_data(as_text=True)
    assert 'form="natural-unfix">Back to the first case<' in html
    assert "Run again without the fix" not in html
    unfix = html[html.index('id="natural-unfix"') :].split(">", 1)[0]
    assert "run=" not in unfix  # it runs nothing: the name must not say it does


def test_the_retry_cards_outcome_row_says_what_another_outcome_means(
    client: FlaskClient,
) -> None:
    """Retry lab: "expected FINAL ERROR actual GAVE UP" on the lesson card, and what each
    word means was said only in the run panel further down."""
    lab = "/lab/nu26-gave-up"
    assert client.post(lab, data={"lab": "retries", "lesson": "retry-policy"}).status_code == 303
    answer = client.post(f"{lab}/retries/api/run", json={"faults": [503, 503, 503, 503, 503]})
    assert answer.status_code == 200 and answer.json["outcome"] == "gave_up"
    html = client.get(f"{lab}/retries", headers=EN).get_data(as_text=True)
    card = html[html.index('data-expected="outcome"') :].split("</p>", 1)[0]
    assert "FINAL ERROR" in card and "GAVE UP" in card
    assert "still failing when the policy's attempts ran out" in card


def test_reset_refuses_a_body_it_would_ignore_and_empties_nothing(
    app: Flask, client: FlaskClient
) -> None:
    """``POST /api/reset`` with ``{"x":``, a text/plain body or ``{"lock": false}`` answered
    200 and emptied the lab: the one destructive call was the one lenient one."""
    registry: LabRegistry = app.extensions["labs"]
    lab = "/lab/nu26-reset"
    headers = {**EN, "Idempotency-Key": "k-reset"}
    assert client.post(f"{lab}/api/charges", json=BODY, headers=headers).status_code == 201
    for body, kind, status in (
        ('{"x":', "application/json", 400),
        ("garbage", "text/plain", 415),
        ('{"lock": false}', "application/json", 422),
    ):
        answer = client.post(f"{lab}/api/reset", data=body, content_type=kind, headers=EN)
        assert answer.status_code == status and answer.mimetype == "application/problem+json"
        assert len(registry.get("nu26-reset").payments.gateway.ledger()) == 1  # nothing emptied
    assert "takes no body" in client.post(f"{lab}/api/reset", json={"a": 1}).json["detail"]
    assert client.post(f"{lab}/api/reset", json={}).status_code == 200
    assert registry.get("nu26-reset").payments.gateway.ledger() == []
    assert client.post(f"{lab}/api/reset").status_code == 200  # no body at all, as the page
