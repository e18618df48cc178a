"""The thirty-second new-user run: what the explanation says of a double charge whose key
the store had seen, once the store no longer held its record."""

from __future__ import annotations

import gettext
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_eighth_run_texts import _said
from test_failures import BODY, KEY, Clock, make
from test_thirtieth_run_texts import EN
from test_thirty_first_run_texts import _queue_card

import demo
from demo.engine.clock import VirtualClock
from demo.payments.settings import Settings
from demo.queue.explain import explain
from demo.queue.jobs import EXAMPLE
from demo.queue.lab import QueueLab
from demo.web.queue.panels import _word
from demo.workspace import Workspace


def test_a_store_started_afresh_is_why_the_same_key_charged_again() -> None:
    """Lesson 8 by hand: Pay, Store set to "one per instance" (the stores start afresh),
    Pay the same order: the page said "a new key per click" of a request with the same key."""
    lab = make()
    lab.payments.create_charge(KEY, BODY)
    lab.payments.update_settings({"store_scope": "per_instance"})
    assert lab.payments.create_charge(KEY, BODY)[1].outcome == "charged"
    said = _said(lab)
    assert "its record gone" in said
    assert "Then Instances or Store changed" in said
    assert "never per click" not in said


def test_an_evicted_record_is_why_the_same_key_charged_again() -> None:
    """The store's cap evicted the record: the same key charged again, and the page said
    the order had been paid "under another key"."""
    lab = Workspace("t", settings=Settings(gateway_latency_ms=0), clock=Clock(), max_records=1)
    lab.payments.create_charge(KEY, BODY)
    lab.payments.create_charge(["other"], BODY.replace(b"42", b"43"))
    assert lab.payments.create_charge(KEY, BODY)[1].outcome == "charged"
    said = _said(lab)
    assert "evicted it" in said
    assert "under another key" not in said


@pytest.mark.parametrize("page", ["", "/natural", "/queue", "/retries"])
@pytest.mark.parametrize("query", ["present=2", "present=1&present=0"])
def test_a_page_link_with_a_present_neither_0_nor_1_is_refused(
    app: Flask, client: FlaskClient, page: str, query: str
) -> None:
    """``GET /lab/<id>?present=2`` showed the page with no offer at all, and
    ``?present=1&present=0`` offered presenter mode on: the POST refuses both (422)."""
    # Each page's link is offered, and its offer POSTs to the lab's address.
    for answer in (
        client.get(f"/lab/nu32-link{page}?{query}", follow_redirects=True),
        client.post(f"/lab/nu32-link?{query}&lab={page.strip('/') or 'payments'}"),
    ):
        assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
        assert "present must be 1" in answer.json["detail"]
    assert app.extensions["labs"].peek("nu32-link") is None
    assert (
        client.get(f"/lab/nu32-link{page}?present=1&present=1", follow_redirects=True).status_code
        == 200
    )


def test_the_diagrams_second_lookup_has_the_timelines_word_in_vietnamese() -> None:
    """The timeline's step reads "lookup (tra cứu) lần 2", the diagram's label "tra lại":
    one step, two words for it."""
    vi = gettext.translation("messages", Path(demo.__file__).parent / "translations", ["vi"])
    step = vi.gettext("lookup again")
    assert step.startswith(vi.gettext("lookup"))
    for outcome in ("hit", "miss"):
        label = vi.gettext(f"%(who)s lookup again: {outcome}") % {"who": "A"}
        assert "tra cứu lần 2" in label and "tra lại" not in label


def test_a_redelivery_after_a_crash_before_the_e_mail_is_not_processed_again() -> None:
    """Run J, queue lesson 3 by hand (at-least-once, no dedup, Crash after receive):
    "PROCESSED AGAIN — … the worker did the job again and sent another e-mail" over a
    mailbox of one e-mail."""
    lab = QueueLab(clock=VirtualClock(lambda: 1000.0))
    lab.update_settings({"crash_at": "after_receive", "dedup": False})
    lab.enqueue(dict(EXAMPLE))
    assert lab.work().outcome == "crashed"
    lab.clock.advance(31)
    second = lab.work()
    assert second.outcome == "processed" and second.receive_count == 2
    said = " ".join(map(str, explain(second)))
    assert "sent the first e-mail" in said and "did the job again" not in said
    assert _word(second) == "PROCESSED"
    assert len(lab.state()["emails"]) == 1
    lab.update_settings({"crash_at": "after_effect"})
    lab.enqueue(dict(EXAMPLE))
    lab.work()  # sends, then crashes before the record
    lab.clock.advance(31)
    again = lab.work()
    assert "did the job again" in " ".join(map(str, explain(again)))
    assert _word(again) == "PROCESSED AGAIN"


def test_a_replay_past_the_ttl_set_since_says_the_record_kept_its_own() -> None:
    """Run J, lesson 7: TTL 72 h by hand, Pay, TTL back to 24 h, Pay, +25 h, Retry:
    "REPLAYED", with nothing saying the record kept the 72 h it was saved with."""
    lab = make(ttl_s=72 * 3600)
    lab.payments.create_charge(KEY, BODY)
    lab.payments.update_settings({"ttl_s": 24 * 3600})
    lab.advance(25 * 3600)
    assert lab.payments.create_charge(KEY, BODY)[1].outcome == "replayed"
    said = _said(lab)
    assert "saved under a TTL of 72 h and keeps it" in said and "(24 h)" in said


def test_a_double_charge_past_the_ttl_the_record_was_saved_with_names_that_ttl() -> None:
    """Saved under 24 h, the TTL then set to 72 h, retried after 25 h: it charged again
    ("after the key expired"), and the page named the 72 h set since."""
    lab = make(ttl_s=24 * 3600)
    lab.payments.create_charge(KEY, BODY)
    lab.payments.update_settings({"ttl_s": 72 * 3600})
    lab.advance(25 * 3600)
    assert lab.payments.create_charge(KEY, BODY)[1].outcome == "charged"
    said = _said(lab)
    assert "after the key expired" in said and "(TTL 24 h)" in said


def test_a_long_fixed_backoff_that_ignores_retry_after_does_not_achieve_lesson_3(
    client: FlaskClient, app: Flask
) -> None:
    """Run J: Retries lesson 3 achieved ("Honour Retry-After") by a fixed 4 s backoff with
    respect_retry_after unticked, the badge still "fix OFF: Retry-After ignored"."""
    lab = "/lab/nu32-ra"
    assert client.post(f"{lab}?lesson=retry-after").status_code == 303
    assert client.post(f"{lab}/retries/api/run", json={}).status_code == 200  # the case
    ignoring = {"respect_retry_after": False, "strategy": "fixed", "base_ms": 4000}
    ran = client.post(f"{lab}/retries/api/run", json={"policy": ignoring})
    assert ran.status_code == 200 and ran.get_json()["outcome"] == "charged", ran.get_json()
    progress = app.extensions["labs"].get("nu32-ra").progress["retry-after"]
    assert progress.met == {"early"}
    card = client.get(f"{lab}/retries", headers=EN).get_data(as_text=True)
    assert "this run ticks nothing until it is" not in card  # the fix is not on
    listening = client.post(
        f"{lab}/retries/api/run", json={"policy": {"respect_retry_after": True}}
    )
    assert listening.status_code == 200
    assert "waited" in progress.met


def test_a_run_with_the_fix_before_the_case_says_the_checks_count_in_order(
    client: FlaskClient,
) -> None:
    """Run J: Retries lesson 3, Apply the fix first, Run: "as expected" and nothing ticked,
    with no word why (the payment card says "The checks count in order")."""
    lab = "/lab/nu32-co"
    assert client.post(f"{lab}?lesson=retry-after").status_code == 303
    assert client.post(f"{lab}?scenario=retry-after&fixed=1&lab=retries").status_code == 303
    card = lambda: client.get(f"{lab}/retries", headers=EN).get_data(as_text=True)  # noqa: E731
    assert "checks-order" not in card()  # not run yet
    assert client.post(f"{lab}/retries/api/run", json={}).status_code == 200
    assert "so this run ticks nothing until it is. Press Run again without the fix" in card()


def test_the_queue_badge_names_no_case_the_lab_no_longer_holds(
    app: Flask, client: FlaskClient
) -> None:
    """Run J: queue lesson 3 with Delivery at-least-once by hand (no dedup) still read
    "fix OFF: at-most-once"; lesson 6 with Max attempts 5, "fix OFF: 10 attempts"."""
    for lesson, change, said in (
        ("at-most-once", {"delivery": "at_least_once"}, "fix OFF: at-most-once"),
        ("poison-message", {"max_attempts": 5}, "fix OFF: 10 attempts"),
    ):
        queue, card = _queue_card(app, client, "nu32-qb", lesson)
        assert said in card()
        queue.update_settings(change)
        assert said not in card() and "fix OFF: not all of it set (changed by hand)" in card()


def test_a_payment_card_whose_case_lost_a_setting_by_hand_says_so(
    app: Flask, client: FlaskClient
) -> None:
    """Run J: lesson 9 with Gateway declines unticked by hand still said "Press Pay: the
    gateway declines (402)", and Pay charged."""
    from demo.lessons import CHAPTERS
    from demo.payments.scenarios import SCENARIOS

    lab = app.extensions["labs"].get("nu32-cc")
    for lesson in CHAPTERS["payments"]:
        for fixed in (False, True):
            lab.open_lesson(lesson.name)
            if fixed:
                lab.apply_scenario(lesson.name, fixed=True, lab="payments")
            page = client.get("/lab/nu32-cc", headers=EN).get_data(as_text=True)
            assert "case-changed" not in page, (lesson.name, fixed)
    lab.open_lesson("decline")
    lab.payments.update_settings({"gateway_decline": False})
    page = client.get("/lab/nu32-cc", headers=EN).get_data(as_text=True)
    assert "were changed by hand since this case set them" in page
    assert SCENARIOS["decline"].case_changed(lab.payments.settings.as_dict(), False)


def test_a_retry_card_whose_storm_lost_its_clients_by_hand_says_so(client: FlaskClient) -> None:
    """Run J: Retries lesson 4, Storm with 50 clients: the card still said "the same 100
    clients"."""
    lab = "/lab/nu32-rs"
    card = lambda: client.get(f"{lab}/retries", headers=EN).get_data(as_text=True)  # noqa: E731
    for name in ("retry-policy", "jitter", "retry-budget"):
        assert client.post(f"{lab}?lesson={name}").status_code == 303
        assert "case-changed" not in card(), name
    assert client.post(f"{lab}?lesson=jitter").status_code == 303
    storm = client.get(f"{lab}/retries/api/state").get_json()["storm_request"]
    for by_hand, changed in (({"strategy": "full_jitter"}, False), ({"clients": 50}, True)):
        answer = client.post(f"{lab}/retries/api/storm", json={**storm, **by_hand})
        assert answer.status_code == 200, answer.get_json()
        assert ("were changed by hand since this case set them" in card()) is changed


def test_a_lab_clock_moved_as_far_as_it_goes_still_exports_a_history_that_opens(
    client: FlaskClient,
) -> None:
    """Run K: ~400 advances of 30 days put the clock past what a history may hold, and the
    lab's own history.json was refused by /replay (422 clock_offset_s)."""
    lab = "/lab/nu32-clk"
    client.post(f"{lab}/api/charges", json={"order_id": "1", "amount": 5},
                headers={"Idempotency-Key": "c1"})  # fmt: skip
    month = {"advance_s": 30 * 24 * 3600}
    answers = [client.post(f"{lab}/api/clock", json=month) for _ in range(400)]
    assert answers[0].status_code == 200
    refused = answers[-1]
    assert refused.status_code == 422 and refused.mimetype == "application/problem+json"
    assert "at most 1000000000 s" in refused.json["detail"]
    exported = client.get(f"{lab}/history.json")
    opened = client.post("/replay", data=exported.data, content_type="application/json")
    assert opened.status_code == 303, opened.get_json()
