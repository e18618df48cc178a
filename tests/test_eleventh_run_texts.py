"""The eleventh new-user run through the ten payment lessons: a huge amount's problem,
lesson 3's second case told one way everywhere, and an answer from another tab (both
languages)."""

from __future__ import annotations

import json
import re

import pytest
from flask.testing import FlaskClient
from test_advice_stays_true import EN, VI, lab, page, pay, section
from test_eighth_run_texts import _said
from test_failures import BODY, KEY, make
from test_sixth_run_texts import VI as VI_CATALOGUE
from test_step_mode import make as make_stepping
from test_step_mode import quiet, requests, step

from demo.engine.problems import Problem
from demo.lessons import LESSONS
from demo.payments.charges import MAX_AMOUNT, MAX_AMOUNT_TEXT, parse_charge
from demo.payments.scenarios import SCENARIOS

APP_CONFIG = {"I18N_MARK_MISSING": True}


@pytest.mark.parametrize("amount", [b"999999999999999999999999", b"1e+24", b"-1e+24"])
def test_a_huge_amount_is_told_its_range_not_that_it_is_no_integer(amount: bytes) -> None:
    """Amount 999999999999999999999999 (sent by the browser as 1e+24) read "must be an
    integer in minor units", though it is one; 0 and -5 got the range."""
    with pytest.raises(Problem) as caught:
        parse_charge(b'{"order_id": "42", "amount": ' + amount + b"}")
    said = str(caught.value.extra["errors"]["amount"])
    assert said == "must be between 1 and 1,000,000,000,000,000"
    assert int(str(MAX_AMOUNT_TEXT).replace(",", "")) == MAX_AMOUNT
    assert VI_CATALOGUE.gettext(MAX_AMOUNT_TEXT.msgid) == "1.000.000.000.000.000"
    with pytest.raises(Problem) as caught:
        parse_charge(b'{"order_id": "42", "amount": 100000.0}')  # in range, not an integer
    assert "must be a whole number" in str(caught.value.extra["errors"]["amount"])


def test_lesson_3s_second_case_is_told_the_same_way_on_its_card_and_in_its_hints() -> None:
    """ "The second case: … press New order, then Pay" did not tick the check (the numbered
    steps Pay first), and Show a hint in the second case gave the first case's hint."""
    scenario = SCENARIOS["key-reuse"]
    assert scenario.clicks(True) == ("Pay", "New order", "Pay")
    assert "Pay, then New order, then Pay again, in an empty lab" in scenario.fix_text
    first, _, second = LESSONS["key-reuse"].hints
    assert first.startswith("First case: ") and second.startswith("Second case: ")
    assert VI_CATALOGUE.gettext(first).startswith("Trường hợp đầu: ")
    assert VI_CATALOGUE.gettext(second).startswith("Trường hợp thứ hai: ")


def test_an_answer_from_another_tab_says_it_may_be_one(client: FlaskClient) -> None:
    """Tab 1 paid order 44, tab 2 order 43 after it: tab 1 showed order 43's answer with
    nothing saying where it came from."""
    for headers, words in ((EN, "from another tab"), (VI, "từ một tab khác")):
        found = re.search(r'id="i18n-strings">(.*?)</script>', page(client, "nu11", headers), re.S)
        assert found and words in json.loads(found.group(1))["retry_other_order"]


def test_a_replay_on_another_instance_says_the_shared_store_served_it() -> None:
    """Lesson 8's last REPLAYED never said that i2 had found i1's record: the lesson's point."""
    lab = make(instances=2, store_scope="shared")
    first = lab.payments.create_charge(KEY, BODY)[1]
    second = lab.payments.create_charge(KEY, BODY)[1]
    assert (first.instance, second.instance) == ("i1", "i2") and second.outcome == "replayed"
    said = _said(lab)
    assert "Instance i2 served this request; #1 was charged on i1." in said
    assert "The store is shared, so i2 found i1's record." in said
    # With a store per instance, i2 charges again, and a replay on i2 is of its own record.
    lab = make(instances=2, store_scope="per_instance")
    for _ in range(4):
        lab.payments.create_charge(KEY, BODY)
    assert "store is shared" not in _said(lab)


def test_a_race_stepped_to_one_end_is_told_as_the_race_while_the_other_lane_is_paused() -> None:
    """Twelfth run: lesson 5, lock off, both lanes past their gateway charge, A run to its
    end: "paid again … under another key", beside two charges under one key."""
    lab = make_stepping(lock=False)
    with requests(lab, 2):
        for label in "ABABABAB":
            step(lab, label)
            lanes = {p["label"]: p for p in quiet(lab)}
            if all(p["step"] == "gateway charge" for p in lanes.values()) and len(lanes) == 2:
                break
        assert {p["step"] for p in quiet(lab)} == {"gateway charge"}
        a = next(p for p in quiet(lab) if p["label"] == "A")
        lab.payments.stepper.step(a["request"], to_end=True)
        quiet(lab)
        said = _said(lab)
        assert "DOUBLE CHARGE — two requests with one key both charged order 42" in said
        assert "another key" not in said


def test_the_in_flight_scenario_names_its_setting_and_the_store_says_in_doubt(
    client: FlaskClient,
) -> None:
    """Twelfth run: the in-flight card had a bare "fix OFF" and a fix text that began "Or
    wait"; the store table read "in_doubt" where the lanes say "(in doubt)"."""
    scenario = SCENARIOS["in-flight"]
    assert scenario.badge_for(False) == "fix OFF: a duplicate is rejected (409)"
    assert scenario.badge_for(True) == "fix ON: a duplicate waits, then replays"
    assert scenario.fix_text.startswith("Set Duplicate in flight to wait, replay:")
    the_lab = lab(client.application, "nu12-doubt")
    the_lab.payments.update_settings({"fault": "gateway_timeout"})
    assert pay(client, the_lab.id).status_code == 504
    for headers, words in ((EN, "in doubt"), (VI, VI_CATALOGUE.gettext("in doubt"))):
        store = section(page(client, the_lab.id, headers), "store")
        assert f">{words}</td>" in store and "in_doubt<" not in store


def test_a_timeout_after_taking_over_a_crashed_key_says_it_charged_again() -> None:
    """Twelfth run: a crash, then a Retry whose gateway timed out after charging: the 504
    spoke of the timeout only, beside two charges for the order."""
    lab = make(fault="crash_after_charge")
    lab.payments.create_charge(KEY, BODY)  # charges, then the instance crashes
    lab.payments.update_settings({"fault": "gateway_timeout"})
    lab.payments.create_charge(KEY, BODY)  # reclaims the key, charges, times out
    said = _said(lab)
    assert "504 — the gateway timed out, after charging" in said
    assert "took over a key that a crashed attempt had left in progress, and charged again" in said
    assert len(lab.payments.gateway.ledger()) == 2


def test_a_retry_that_charges_again_and_crashes_too_is_a_double_charge() -> None:
    """Thirteenth run: crash, then a Retry that took over the key, charged and crashed too:
    "CRASHED — …, press Retry", beside two charges for the order."""
    lab = make(fault="crash_after_charge")
    lab.payments.create_charge(KEY, BODY)
    lab.payments.update_settings({"fault": "crash_after_charge"})
    lab.payments.create_charge(KEY, BODY)
    said = _said(lab)
    assert said.startswith("DOUBLE CHARGE — order 42, and the instance crashed again")
    assert "is charged twice" in said and len(lab.payments.gateway.ledger()) == 2
    for msgid in (
        "DOUBLE CHARGE — order %(order)s, and the instance crashed again",
        "A fault fires only on a request that gets that far: a replay of an order already "
        "paid never does, so press New order first.",
    ):
        assert VI_CATALOGUE.gettext(msgid) != msgid


def test_a_lessons_way_back_from_the_fix_waits_for_the_attendee(client: FlaskClient) -> None:
    """Thirteenth run: "Run again without the fix" in lesson 5 fired the Double-submit at
    once (in step mode it sat paused, then ran on), then the card's steps only replayed."""
    the_lab = lab(client.application, "nu13-back")
    the_lab.open_lesson("slow-motion")
    the_lab.apply_scenario("slow-motion", fixed=True)
    card = section(page(client, the_lab.id, EN), "lesson")
    assert "Back to the first case" in card and "Run again without the fix" not in card
    form = re.search(r'<form id="lesson-unfix" method="post" action="([^"]+)"', card)
    assert form and "run=1" not in form.group(1)
    # A scenario's (no lesson) still runs its steps again, as its name says.
    the_lab.apply_scenario("race", fixed=True)
    card = section(page(client, the_lab.id, EN), "lesson")
    form = re.search(r'<form id="lesson-unfix" method="post" action="([^"]+)"', card)
    assert "Run again without the fix" in card and form and "run=1" in form.group(1)
