"""The eighteenth new-user run through the payment lessons: step mode's lane letters across
rounds, and the race told with every request that charged (both languages)."""

from __future__ import annotations

import gettext
import io
import re

import pytest

from demo import create_app
from demo.engine.stepping import StepMode
from demo.engine.text import translate
from demo.engine.timeline import Entry, Step
from demo.payments.charges import ChargeRequest
from demo.payments.explain.charged import charged
from demo.payments.gateway import LedgerSummary
from demo.payments.requests import RequestEntry
from demo.payments.settings import Settings
from demo.registry import LabRegistry
from demo.web.filters import lane_action
from demo.web.i18n import TRANSLATIONS

VI = gettext.GNUTranslations(io.BytesIO((TRANSLATIONS / "vi/LC_MESSAGES/messages.mo").read_bytes()))


def test_a_round_let_go_but_still_running_does_not_push_the_next_round_to_c_and_d() -> None:
    """Release all, New order, Double-submit: the released pair was still at the gateway,
    so the new pair was lettered C and D beside no A or B on screen."""
    stepper = StepMode({"lookup"})
    a = stepper.pause_for(Entry(1, "Double-submit A", 0.0))
    b = stepper.pause_for(Entry(2, "Double-submit B", 0.0))
    assert (a.label, b.label) == ("A", "B")
    stepper.release_all()  # both let go, still running
    c = stepper.pause_for(Entry(3, "Double-submit A", 0.0))
    d = stepper.pause_for(Entry(4, "Double-submit B", 0.0))
    assert (c.label, d.label) == ("A", "B")
    stepper.end(a)
    stepper.end(b)
    # The old round's lanes are gone from the screen: they do not come back as finished.
    assert stepper.finished() == []
    stepper.end(c)
    assert [f["label"] for f in stepper.finished()] == ["A"]


def test_a_lane_let_go_beside_one_still_paused_stays_in_its_round() -> None:
    """Run A to the end while B is paused: A's lane comes back as "A finished" and a third
    request of that round is C."""
    stepper = StepMode({"lookup"})
    a, b = stepper.pause_for(Entry(1, "Pay", 0.0)), stepper.pause_for(Entry(2, "Pay", 0.0))
    a.to_end = True
    stepper.end(a)
    assert [f["label"] for f in stepper.finished()] == ["A"]
    assert stepper.pause_for(Entry(3, "Pay", 0.0)).label == "C"
    assert b.label == "B"


def test_a_lane_names_a_double_submits_letter_only_where_it_is_the_lanes() -> None:
    """Two tabs' Double-submits fill lanes A to D: lane C read "#3 Double-submit A"."""
    app = create_app({"TESTING": True})
    with app.test_request_context():
        assert lane_action("Double-submit A", "A") == "Double-submit A"
        assert lane_action("Double-submit A", "C") == "Double-submit"
        assert lane_action("Double-submit B", "D") == "Double-submit"
        assert lane_action("Pay", "C") == "Pay"
    with app.test_request_context(headers={"Accept-Language": "vi"}):
        assert lane_action("Double-submit B", "D") == VI.gettext("Double-submit")


def _racer(n: int, started: float, save_ms: float | None) -> RequestEntry:
    entry = RequestEntry(n, "Double-submit A", started=started, key="k", finished=started + 1)
    entry.steps += [Step("lookup", 1.0, {"hit": False}), Step("gateway charge", 300.0, {})]
    if save_ms is not None:
        entry.steps.append(Step("record save", save_ms, {}))
    entry.outcome = "charged"
    entry.charge = ChargeRequest(order_id="42", amount=100, currency="VND")
    return entry


def test_four_requests_that_all_charged_are_all_named() -> None:
    """Two tabs each Double-submitted with the Lock off: four charges, and the explanation
    named two of them ("two requests … both charged") beside "actual 4"."""
    racers = [_racer(n, 10.0 + n * 0.001, 305.0) for n in (1, 2, 3, 4)]
    summary = LedgerSummary(charged=4, intended=1, doubled=frozenset({"42"}))
    told = charged(racers[-1], racers, summary, Settings(lock=False))
    english = translate(told.headline)
    assert english == "DOUBLE CHARGE — 4 requests with one key all charged order 42"
    body = " ".join(translate(line) for line in told.sentences)
    assert "Requests #1, #2, #3, #4 carried the same key k" in body
    assert "Each looked the key up before any of them saved its record" in body
    vietnamese = translate(told.headline, VI.gettext)
    assert vietnamese.startswith("TRỪ TIỀN HAI LẦN — 4 yêu cầu")
    # Two racers are still told as the pair.
    told = charged(racers[1], racers[:2], summary, Settings(lock=False))
    assert "two requests with one key both charged" in translate(told.headline)


@pytest.mark.parametrize(("fixed", "language"), [(False, "en"), (False, "vi"), (True, "en")])
def test_a_timeout_after_the_charge_says_the_answer_failed_beside_charges_as_expected(
    fixed: bool, language: str
) -> None:
    """ "Timeout after the charge", fix OFF: one charge, "as expected" in green beside the red
    "fix OFF" badge, and nothing on the card said what went wrong: the client's answer."""
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
    registry: LabRegistry = app.extensions["labs"]
    lab = registry.get(f"nu18-doubt-{int(fixed)}-{language}")
    lab.apply_scenario("gateway-timeout", fixed=fixed)
    key, body = ["t1:u7:pay:order-42:v1"], b'{"order_id": "42", "amount": 100000}'
    lab.payments.create_charge(key, body)
    lab.payments.create_charge(key, body)
    page = app.test_client().get(f"/lab/{lab.id}", headers={"Accept-Language": language})
    html = page.get_data(as_text=True)
    card = re.search(r'<section id="lesson".*?</section>', html, re.S)
    assert card
    # The failure the scenario shows, fix off: evidence (grey), not a red row.
    row = re.search(r'<p class="numbers (?:bad|evidence) in-doubt">.*?</p>', card.group(0), re.S)
    if fixed:
        assert row is None  # the retry got the first charge back: nothing in doubt
        return
    assert row
    said = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row.group(0)))
    if language == "en":
        assert "Answers 1 retry refused as in doubt (409)" in said
        assert "the order is paid, and no answer told the client so" in said
    else:
        assert "1 lần thử lại bị từ chối vì chưa rõ kết quả (409)" in said
