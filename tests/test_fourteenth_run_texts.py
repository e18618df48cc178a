"""The thirteenth and fourteenth new-user runs through the ten payment lessons: what the
lesson card's numbers and steps say halfway through a lesson (both languages)."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_advice_stays_true import EN, VI, _achieve, lab, page, pay, section
from test_eighth_run_texts import _said
from test_failures import BODY, KEY, make
from test_lessons import fix, new_lab
from test_seventh_run_texts import _say, _step_card
from test_sixth_run_texts import VI as VI_CATALOGUE
from test_sixth_run_texts import stepping_lab
from test_step_mode import quiet, requests, step

from demo.payments.scenarios import SCENARIOS

APP_CONFIG = {"I18N_MARK_MISSING": True}


def test_lesson_10_halfway_says_the_receipt_is_to_come_not_a_mismatch(
    app: Flask, client: FlaskClient
) -> None:
    """Lesson 10 with the outbox, after the crash and before the Retry: "E-mails expected 1
    actual 0 MISMATCH" in red, though the steps say no e-mail goes out yet."""
    the_lab = lab(app, "email-halfway")
    the_lab.open_lesson("email-once")
    the_lab.apply_scenario("email-once", fixed=True)
    assert pay(client, the_lab.id).status_code >= 500  # the instance crashes after the charge
    card = section(page(client, the_lab.id, EN), "lesson")
    assert "MISMATCH" not in card and 'class="numbers bad' not in card
    assert "1 to come: a paid order's receipt goes out once its request completes" in card
    assert 'class="numbers pending"' in card
    vi = section(page(client, the_lab.id, VI), "lesson")
    assert "1 chưa gửi: email biên lai" in vi and "KHÔNG KHỚP" not in vi
    # The Retry completes the request: its receipt goes out, once.
    assert pay(client, the_lab.id, action="Retry").status_code == 201
    card = section(page(client, the_lab.id, EN), "lesson")
    assert "to come" not in card and card.count("as expected") == 2


def test_lesson_5s_fixed_steps_say_what_b_says_after_each_of_its_steps() -> None:
    """ "Step B twice: B is blocked" while B, after its first step, said "about to wait for
    A's lock": the tester stopped, unsure whether B was blocked yet."""
    said = " ".join(SCENARIOS["slow-motion"].steps_for(True))
    assert "Step B: it stops at the lock, about to wait for A's lock." in said
    assert said.index("about to wait") < said.index("Step B again: now B is blocked")
    lane = VI_CATALOGUE.gettext("stopped at <b>%(step)s</b>: about to wait for %(label)s's lock")
    assert "sắp phải chờ lock của" in lane
    assert "sắp phải chờ lock của A" in " ".join(
        VI_CATALOGUE.gettext(s) for s in SCENARIOS["slow-motion"].steps_for(True)
    )


@pytest.mark.parametrize(("ttl_s", "ttl"), [(24 * 3600, "24 h"), (600, "600 s")])
def test_a_crash_whose_record_expired_is_told_as_the_expiry_not_a_reclaim(
    ttl_s: int, ttl: str
) -> None:
    """Fourteenth run: a crash, +25 h, Lock off, Pay: the timeline said "lookup: miss" and
    the explanation "This retry found the key in progress …, reclaimed it"."""
    lab = make(fault="crash_after_charge", ttl_s=ttl_s)
    assert lab.payments.create_charge(KEY, BODY)[1].outcome == "crashed"
    lab.advance(ttl_s + 3600)
    lab.payments.update_settings({"lock": False})
    last = lab.payments.create_charge(KEY, BODY)[1]
    assert last.outcome == "charged" and last.step("reclaim") is None
    said = _said(lab)
    assert said.startswith("DOUBLE CHARGE — order 42, after the key expired")
    assert f"That record expired (TTL {ttl}) before this request with the same key" in said
    assert "reclaimed" not in said
    # Within the TTL the retry does reclaim the key, and says so.
    lab = make(fault="crash_after_charge", ttl_s=ttl_s)
    lab.payments.create_charge(KEY, BODY)
    assert lab.payments.create_charge(KEY, BODY)[1].step("reclaim") is not None
    assert "reclaimed it and charged again" in _said(lab)


def test_the_store_names_every_record_the_ttl_dropped_in_progress_ones_too(
    app: Flask, client: FlaskClient
) -> None:
    """Fourteenth run: after +25 h the store panel named order 42's expired record, not order
    43's in-progress one (its request crashed), which was gone too."""
    the_lab = lab(app, "two-expired")
    assert pay(client, the_lab.id).status_code == 201
    the_lab.payments.update_settings({"fault": "crash_after_charge"})
    crashed_key = KEY[0].replace("42", "43")
    assert pay(client, the_lab.id, key=crashed_key, order_id="43").status_code >= 500
    the_lab.payments.update_settings({"fault": "gateway_error"})  # released: never kept
    assert pay(client, the_lab.id, key="released", order_id="44").status_code == 502
    the_lab.advance(25 * 3600)
    store = section(page(client, the_lab.id, EN), "store")
    assert f"Expired: the record for {crashed_key} was dropped" in store
    assert f"Expired: the record for {KEY[0]} was dropped" in store
    assert "the record for released" not in store


def test_lesson_3s_second_case_says_why_the_first_order_is_paid_again() -> None:
    """Fourteenth run: "Press Pay: the first order is charged" in the second case read as
    paying the first case's order again: the fix starts the lab empty."""
    first = SCENARIOS["key-reuse"].steps_for(True)[0]
    assert first.startswith("The lab starts empty for this case. Press Pay: the first order")
    assert VI_CATALOGUE.gettext(first).startswith("Phòng lab bắt đầu trống cho trường hợp này.")


def test_lesson_8_is_not_achieved_by_an_instance_replaying_its_own_charge() -> None:
    """Fifteenth run: lesson 8, fix off: Pay (i1 charges), a double-clicked Retry (i2
    charges, then i1 replays its own charge): "✓ Another instance replayed the first one's
    charge" and LESSON ACHIEVED, the shared store never seen."""
    lab = new_lab()
    lab.open_lesson("multi-instance")
    for _ in range(3):
        lab.payments.create_charge(KEY, BODY)
    served = [(e.instance, e.outcome) for e in lab.payments.requests()]
    assert served == [("i1", "charged"), ("i2", "charged"), ("i1", "replayed")]
    assert lab.progress["multi-instance"].met == {"per-instance-double"}
    fix(lab)  # one store for both: i2 replays i1's charge
    lab.payments.create_charge(KEY, BODY)
    lab.payments.create_charge(KEY, BODY)
    assert lab.achieved() == {"multi-instance"}


def test_the_fix_applied_before_the_failure_says_the_checks_count_in_order(
    app: Flask, client: FlaskClient
) -> None:
    """Fifteenth run: lesson 2, Apply the fix first, then Pay and Retry: "REPLAYED" beside
    "○ … replayed: not yet", and nothing saying why."""
    the_lab = lab(app, "fix-first")
    the_lab.open_lesson("lost-response")
    the_lab.apply_scenario("lost-response", fixed=True)
    said = "The checks count in order: the first is not met yet"
    assert said in section(page(client, the_lab.id, EN), "lesson")
    assert "Quay lại trường hợp thứ nhất" in section(page(client, the_lab.id, VI), "lesson")
    # Once the failure was seen, the fixed case counts: the sentence goes.
    the_lab.open_lesson("lost-response")
    assert said not in section(page(client, the_lab.id, EN), "lesson")  # first case
    the_lab.progress["lost-response"].met_at["new-key-double"] = 0.0
    the_lab.apply_scenario("lost-response", fixed=True)
    assert said not in section(page(client, the_lab.id, EN), "lesson")


def test_a_hint_in_the_second_case_is_the_second_cases(app: Flask, client: FlaskClient) -> None:
    """Fifteenth run: lesson 3's second case, Show a hint: "First case: Change amount &
    resend keeps the key…", no help with New order, then Pay."""
    the_lab = lab(app, "hint-second")
    the_lab.open_lesson("key-reuse")
    the_lab.show_hint("key-reuse")
    card = section(page(client, the_lab.id, EN), "lesson")
    assert '<ol class="hints"><li>First case: ' in card
    the_lab.apply_scenario("key-reuse", fixed=True)
    card = section(page(client, the_lab.id, EN), "lesson")
    assert '<ol class="hints"><li>Second case: ' in card
    vi = section(page(client, the_lab.id, VI), "lesson")
    assert '<ol class="hints"><li>Trường hợp thứ hai: ' in vi


@pytest.mark.parametrize(
    ("name", "case"), [("race", "the fix included"), ("key-reuse", "the second case included")]
)
def test_an_achieved_lesson_revisited_walks_through_it_again_fix_included(
    app: Flask, client: FlaskClient, name: str, case: str
) -> None:
    """Fifteenth run: lesson 4 revisited once achieved: "." ran the double charge, then went
    on to lesson 5, while the card still said "Then press Apply the fix". Twentieth run: a
    presenter in a lab rehearsed before the workshop never showed the room the fix. Achieved
    earlier, Next step walks the whole lesson again; the note is not a numbered step."""
    the_lab = lab(app, f"again-{name}")
    the_lab.open_lesson(name)
    assert "Achieved already" not in section(page(client, the_lab.id, EN), "lesson")
    _achieve(the_lab, name)
    card = section(page(client, the_lab.id, EN), "lesson")
    assert (
        f'<p class="hint achieved-again">Achieved already: Next step walks through it again, '
        f"{case}; Next lesson → skips ahead.</p>"
    ) in card
    assert "data-apply-fix" in card and "Then press" not in card
    assert "Achieved already" not in card.split('<ol class="lesson-steps">')[1].split("</ol>")[0]
    assert "Bài này đã đạt: Bước tiếp sẽ đi lại toàn bộ bài" in section(
        page(client, the_lab.id, VI), "lesson"
    )


def test_a_key_of_spaces_is_told_how_to_send_none(client: FlaskClient) -> None:
    """Fifteenth run: a key of three spaces got "The Idempotency-Key header is empty", while
    the field's hint says "empty: none sent"."""
    for headers, words in ((EN, "an empty key field sends none"), (VI, "để trống ô key")):
        answer = client.post(
            "/lab/spaces/api/charges",
            data=BODY,
            headers={**headers, "Idempotency-Key": "   ", "Content-Type": "application/json"},
        )
        assert answer.status_code == 400 and answer.mimetype == "application/problem+json"
        assert words in answer.get_json()["detail"]


def test_free_play_names_the_scenario_its_ledger_comes_from(
    app: Flask, client: FlaskClient
) -> None:
    """Sixteenth run: after leaving the scenario "Client-side guard", the strip said the
    ledger keeps order 43 "from the lesson"."""
    the_lab = lab(app, "left-scenario")
    the_lab.apply_scenario("client-guard")
    assert pay(client, the_lab.id).status_code == 201
    the_lab.leave_scenario()
    html = page(client, the_lab.id, EN)
    assert "the ledger keeps order 42 from “Client-side guard”." in html
    assert "from the lesson" not in html


@pytest.mark.parametrize("language", ["en", "vi"])
def test_two_lanes_at_a_free_lock_do_not_both_claim_it(language: str) -> None:
    """Seventeenth run: lesson 5 after the fix, both lanes stepped once: A and B both read
    "the lock is free, its next step takes it", as if both got the lock."""
    app, the_lab = stepping_lab(f"nu17-rivals-{language}", lock=True)
    with requests(the_lab, 2):
        step(the_lab, "A")
        step(the_lab, "B")
        assert [p["step"] for p in quiet(the_lab)] == ["lock wait", "lock wait"]
        card = _step_card(app, the_lab.id, language)
    wait = "lock wait" if language == "en" else "lock wait (chờ lock)"
    rivals = (
        "stopped at <b>%(step)s</b>: the lock is free, and %(others)s stands at it too: "
        "whichever is stepped first takes it, the other then waits"
    )
    for other in ("A", "B"):
        assert _say(language, rivals, step=wait, others=other) in card
    alone = "stopped at <b>%(step)s</b>: the lock is free, its next step takes it"
    assert _say(language, alone, step=wait) not in card


def test_leaving_a_lesson_before_any_request_leaves_the_failure_lab_open(
    app: Flask, client: FlaskClient
) -> None:
    """Seventeenth run: Leave the lesson, then the server card: "▶ Failure lab", folded,
    where the README says it is open after you leave a lesson."""
    the_lab = lab(app, "left-empty")
    the_lab.open_lesson("crash-window")
    the_lab.leave_scenario()
    assert '<details id="failure-lab" class="failures" open>' in page(client, the_lab.id, EN)
