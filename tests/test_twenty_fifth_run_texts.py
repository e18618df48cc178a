"""The twenty-fifth session: what the twenty-fourth run left, checked in the lab's words."""

from __future__ import annotations

import html as html_lib
import json
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient

from demo.lessons import LESSONS
from demo.lessons.engine import Progress
from demo.queue.jobs import EXAMPLE

EN = {"Accept-Language": "en"}
CHARGES = "/lab/nu25-body/api/charges"
BODY_42 = {"order_id": "42", "amount": 100000}


@pytest.mark.parametrize(
    ("order_id", "said"),
    [
        ("4\u200f2", "holds U+200F, a control or invisible character"),
        ("42\u2028", "holds U+2028, a control or invisible character"),
        (" 42", "must not begin or end with a space"),
        ("\ue000 ", "must not begin or end with a space"),  # private use is printable here
    ],
)
def test_an_order_id_is_told_what_is_wrong_with_it(
    client: FlaskClient, order_id: str, said: str
) -> None:
    """An ``order_id`` with an invisible right-to-left mark inside was told "must be
    printable, without leading or trailing spaces": it had no space, and looked printable."""
    answer = client.post(
        CHARGES,
        data=json.dumps({"order_id": order_id, "amount": 100000}),
        content_type="application/json",
        headers={**EN, "Idempotency-Key": "k1"},
    )
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert said in answer.json["errors"]["order_id"]


def test_a_link_with_a_present_that_is_neither_0_nor_1_is_refused(
    app: Flask, client: FlaskClient
) -> None:
    """``POST /lab/<id>?present=2`` answered a quiet 303, as if it had done something."""
    answer = client.post("/lab/nu25-link?present=2", headers=EN)
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert "present must be 1" in answer.json["detail"] and "not 2" in answer.json["detail"]
    assert app.extensions["labs"].peek("nu25-link") is None  # no lab made for it
    assert client.post("/lab/nu25-link?present=1", headers=EN).status_code == 303


def test_a_history_sent_as_plain_text_is_415(client: FlaskClient) -> None:
    """``POST /replay`` with ``text/plain`` was a 400 "not valid JSON" for a valid file."""
    client.post(CHARGES, json={"order_id": "1", "amount": 5}, headers={"Idempotency-Key": "h"})
    exported = client.get("/lab/nu25-body/history.json").data
    plain = client.post("/replay", data=exported, content_type="text/plain", headers=EN)
    assert plain.status_code == 415 and plain.mimetype == "application/problem+json"
    assert "not text/plain" in plain.json["detail"]
    assert client.post("/replay", data=exported, content_type="application/json").status_code == 303


def test_an_idle_worker_says_whether_anything_can_still_come_back(client: FlaskClient) -> None:
    """The at-most-once scenario's last Work said "Move the clock past it to see a
    redelivery": the message had been acked on receive, and nothing would ever come back."""
    api = "/lab/nu25-queue/queue/api"
    client.patch(f"{api}/settings", json={"crash_at": "after_effect"})
    client.post(f"{api}/jobs", json=dict(EXAMPLE))
    assert client.post(f"{api}/work").get_json()["outcome"] == "crashed"
    waiting = client.post(f"{api}/work", headers=EN).get_json()
    assert waiting["outcome"] == "idle"
    assert "1 in flight" in waiting["explanation"][0]
    assert "Move the clock past it" in waiting["explanation"][0]

    api = "/lab/nu25-queue-2/queue/api"
    client.patch(f"{api}/settings", json={"delivery": "at_most_once", "crash_at": "after_receive"})
    client.post(f"{api}/jobs", json=dict(EXAMPLE))
    assert client.post(f"{api}/work").get_json()["outcome"] == "lost"
    client.post("/lab/nu25-queue-2/api/clock", json={"advance_s": 31})
    gone = client.post(f"{api}/work", headers=EN).get_json()
    assert gone["outcome"] == "idle"
    assert "none is in flight" in gone["explanation"][0]
    assert "Move the clock" not in " ".join(gone["explanation"])


def test_a_refused_key_is_not_told_to_send_the_same_key_again(client: FlaskClient) -> None:
    """A 400 for a bad key said "the same key can be retried with a corrected request": the
    key was what was wrong. An unknown field read "foo unknown field"."""
    lab = "/lab/nu25-refused"
    client.post(
        f"{lab}/api/charges",
        json={"order_id": "42", "amount": 5},
        headers={"Idempotency-Key": "a,b"},
    )
    html = client.get(lab, headers=EN).get_data(as_text=True)
    assert "send the request again with a key the header can carry" in html
    assert "the same key can be retried" not in html
    client.post(
        f"{lab}/api/charges", json={"order_id": "42", "amount": 5, "foo": 1},
        headers={"Idempotency-Key": "k-25"},
    )  # fmt: skip
    html = client.get(lab, headers=EN).get_data(as_text=True)
    assert "the same key can be retried with a corrected request" in html
    assert "foo is not a known field" in html


def test_operations_lesson_1_marks_the_fix_primary_only_once_its_first_check_is_met(
    client: FlaskClient,
) -> None:
    """Before any run, Apply the fix was already the dark primary button, while step 1 said to
    press Retry it first."""
    lab = "/lab/nu25-ops"
    fix = re.compile(r'<button type="submit" form="natural-apply-fix" class="([^"]*)"')
    client.post(f"{lab}?lesson=set-vs-add")
    assert fix.findall(client.get(f"{lab}/natural").get_data(as_text=True)) == [""]
    for operation in ("set_balance", "add_balance"):
        client.post(f"{lab}/natural/api/apply", json={"operation": operation, "times": 3})
    assert fix.findall(client.get(f"{lab}/natural").get_data(as_text=True)) == ["primary"]


@pytest.mark.parametrize(
    ("page", "scenario", "n"),
    [
        ("", "race", 4),
        ("/natural", "lost-update", 3),
        ("/retries", "lost-response-retry", 2),
        ("/queue", "outbox", 4),
    ],
)
def test_a_scenario_that_is_a_lesson_says_it_ticks_no_check(
    app: Flask, client: FlaskClient, page: str, scenario: str, n: int
) -> None:
    """A scenario run and fixed left the lesson of the same name unticked, and nothing on
    screen said that scenarios and lessons are counted apart."""
    lab = f"/lab/nu25-as-{n}"
    lab_name = page.strip("/") or "payments"
    client.post(f"{lab}?scenario={scenario}&lab={lab_name}")
    html = client.get(f"{lab}{page}", headers=EN).get_data(as_text=True)
    assert f"This scenario is lesson {n} of the path." in html
    action = re.search(r'<form class="as-lesson" method="post" action="([^"]+)"', html)
    assert action is not None
    client.post(html_lib.unescape(action.group(1)))
    workspace = app.extensions["labs"].peek(f"nu25-as-{n}")
    assert workspace.lesson.name == scenario
    assert "This scenario is lesson" not in client.get(f"{lab}{page}").get_data(as_text=True)


def test_a_failure_lab_scenario_offers_no_lesson(client: FlaskClient) -> None:
    client.post("/lab/nu25-as-none?scenario=key-per-click")
    assert 'class="as-lesson"' not in client.get("/lab/nu25-as-none").get_data(as_text=True)


def test_a_queue_job_key_follows_the_payment_labs_rule(client: FlaskClient) -> None:
    """A payment key "my key 1" was taken (201), a job's "must be … without spaces"."""
    api = "/lab/nu25-jobkey/queue/api/jobs"
    spaced = client.post(api, json={**EXAMPLE, "idempotency_key": "my key 1"})
    assert spaced.status_code == 201
    paid = client.post(
        "/lab/nu25-jobkey/api/charges", json=BODY_42, headers={"Idempotency-Key": "my key 1"}
    )
    assert paid.status_code == 201
    for bad in (" my key", "my key ", "k" * 256, "ké"):
        refused = client.post(api, json={**EXAMPLE, "idempotency_key": bad}, headers=EN)
        assert refused.status_code == 422, bad
        assert "no space at either end" in refused.json["errors"]["idempotency_key"]


def test_an_operations_scenario_marks_the_fix_primary_once_it_has_run(
    client: FlaskClient,
) -> None:
    """The 26th run: a scenario's Apply the fix was the dark button before anything ran."""
    lab = "/lab/nu26-ops"
    fix = re.compile(r'<button type="submit" form="natural-apply-fix" class="([^"]*)"')
    client.post(f"{lab}?scenario=set-vs-add&lab=natural")
    assert fix.findall(client.get(f"{lab}/natural").get_data(as_text=True)) == [""]
    client.post(f"{lab}/natural/api/apply", json={"operation": "add_balance", "times": 3})
    assert fix.findall(client.get(f"{lab}/natural").get_data(as_text=True)) == ["primary"]


def test_a_keyless_double_click_is_not_called_a_retry(client: FlaskClient) -> None:
    lab = "/lab/nu26-keyless"
    for _ in range(2):
        client.post(f"{lab}/api/charges", json=BODY_42)
    html = client.get(lab, headers=EN).get_data(as_text=True)
    assert "a repeat of the same intent (a double click, a retry) from a new payment" in html


def test_the_fix_set_by_hand_says_new_order_before_step_1(client: FlaskClient) -> None:
    """Lesson 4 with the Lock ticked by hand read "1. Press Double-submit" first, and only
    in step 2 "on a New order if this one already has its record": read top-down, the
    Double-submit replayed the old order's record, and the check did not tick."""
    lab = "/lab/nu26-hand"
    client.post(f"{lab}?lesson=race")
    first = {LESSONS["race"].checks[0].id: 0.0}  # the case seen (before it: "undo it first")
    client.application.extensions["labs"].get("nu26-hand").progress["race"] = Progress(first)
    client.patch(f"{lab}/api/settings", json={"lock": True})
    html = client.get(lab, headers=EN).get_data(as_text=True)
    steps = re.search(r'<ol class="lesson-steps">(.*?)</ol>', html, re.S)
    assert steps is not None
    items = re.findall(r"<li>(.*?)</li>", steps.group(1), re.S)
    assert (
        items[0]
        == "The fix is on, set by hand: follow these steps again (or Apply the fix: it starts "
        "the lab afresh, the fix on)."
    )
    assert "Press Double-submit" in items[1] and len(items) == 2


def test_lesson_5s_last_step_says_it_takes_several_presses(client: FlaskClient) -> None:
    """ "Step B on: it stops after lookup again, and replays" read as one press; it took
    four (lookup again, fingerprint check, respond, finished)."""
    client.post("/lab/nu26-l5?scenario=slow-motion&fixed=1")
    html = client.get("/lab/nu26-l5", headers=EN).get_data(as_text=True)
    assert "Step B on, one step a press: after lookup again (a hit: A&#39;s record)" in html
    assert "then finished: REPLAYED." in html
