"""Step mode, the timeline and the diagram tell the same story (issue 10, part S): a stop
right before the gateway is called, the receipt e-mail as a step of its own, one name per
step on the timeline and the step panel, and the attendee's think time told as theirs."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask.testing import FlaskClient

from demo import create_app
from demo.engine.stepping import PAUSED_MS
from demo.engine.text import Text
from demo.payments.requests import RequestEntry
from demo.payments.settings import Settings
from demo.payments.step_names import step_at
from demo.payments.steps import STEP_POINTS
from demo.web.i18n import MISSING
from demo.web.payments.code import handler_lines, where
from demo.web.payments.step_text import step_text as _step_text
from demo.web.payments.timeline import timeline
from demo.workspace import Workspace

BODY = b'{"order_id": "42", "amount": 1000, "currency": "VND"}'
ORDER = {"order_id": "42", "amount": 1000, "currency": "VND"}
HX = {"HX-Request": "true"}
VI = {"Accept-Language": "vi"}


@pytest.fixture
def client() -> FlaskClient:
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0, "I18N_MARK_MISSING": True})
    return app.test_client()


def wait_for(condition: Any, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


@contextmanager
def one_request(lab: Workspace, key: list[str]) -> Iterator[list[RequestEntry]]:
    done: list[RequestEntry] = []
    thread = threading.Thread(target=lambda: done.append(lab.payments.create_charge(key, BODY)[1]))
    thread.start()
    try:
        yield done
    finally:
        lab.payments.stepper.release_all()
        thread.join(10)


def stop(lab: Workspace) -> dict[str, Any]:
    """The one paused request, once it stands at a step point."""
    wait_for(lambda: any(p["waiting"] for p in lab.payments.stepper.paused()))
    return lab.payments.stepper.paused()[0]


def walk(lab: Workspace, key: list[str]) -> tuple[list[tuple[str, int, int]], RequestEntry]:
    """Step one request through every stop: (step, occurrence, charges so far) at each."""
    stops = []
    with one_request(lab, key) as done:
        while True:
            wait_for(lambda: done or any(p["waiting"] for p in lab.payments.stepper.paused()))
            if done:
                break
            p = lab.payments.stepper.paused()[0]
            stops.append((p["step"], p["occurrence"], len(lab.payments.gateway.ledger())))
            lab.payments.stepper.step(p["request"])
    return stops, done[0]


# -- S2: a stop right before the gateway call -------------------------------------------


@pytest.mark.parametrize(
    ("lock", "key"),
    [(True, ["k1"]), (False, ["k1"]), (False, [])],
    ids=["lock", "no-lock", "no-key"],
)
def test_the_step_that_moves_the_money_starts_at_charging(lock: bool, key: list[str]) -> None:
    lab = Workspace("s", settings=Settings(gateway_latency_ms=0, step_mode=True, lock=lock))
    stops, entry = walk(lab, key)
    names = [name for name, _, _ in stops]
    at = names.index("charging")
    assert names[at + 1] == "gateway charge"
    assert stops[at][2] == 0 and stops[at + 1][2] == 1  # one Step, from charging: the money
    assert all(charges == 0 for _, _, charges in stops[: at + 1])
    assert entry.status == 201


def test_the_code_view_marks_the_charging_line_right_above_the_call() -> None:
    lines = handler_lines()
    at = next(n for n, line in enumerate(lines) if line.point == where("charging", 1))
    assert 'trace("charging")' in lines[at].text
    following = [line.text.strip() for line in lines[at + 1 : at + 4]]
    assert "response = charge()" in following


# -- S3: one name per step --------------------------------------------------------------


DETAILS: dict[str, dict[str, Any]] = {
    "lookup": {"hit": False, "state": None},
    "fingerprint check": {"match": True},
    "lock acquire": {"waited_ms": 12.0},
    "gateway charge": {"ms": 3.0},
    "gateway timeout": {"ms": 3.0},
    "outbox enqueue": {"charge_id": "ch_0001"},
    "email send": {"email": "em_0001", "via": "outbox", "key": "k1"},
}
TOLD_APART = {"respond", "response lost", "gateway replay"}
"""Drawn on the timeline by other rows (the answer; the replay follows its call)."""


@pytest.mark.parametrize("lang", ["en", "vi"])
@pytest.mark.parametrize("point", sorted(STEP_POINTS - TOLD_APART))
def test_a_step_reads_on_the_timeline_as_the_step_panel_names_it(
    client: FlaskClient, lang: str, point: str
) -> None:
    from demo.engine.text import translate

    with client.application.test_request_context(headers={"Accept-Language": lang}):
        for occurrence in (1, 2) if point == "lookup" else (1,):
            detail = {**DETAILS.get(point, {}), **({"again": True} if occurrence == 2 else {})}
            text = _step_text(point, detail)
            assert text, point
            told = translate(text) if isinstance(text, Text) else text
            name = step_at(point, occurrence)
            named = translate(name) if isinstance(name, Text) else name
            assert told.startswith(named), (told, named)


def test_the_second_lookup_is_lookup_again_on_the_panel_and_the_timeline(
    client: FlaskClient,
) -> None:
    answer = client.patch("/lab/names/api/settings", json={"step_mode": True})
    assert answer.status_code == 200
    lab: Workspace = client.application.extensions["labs"].get("names")
    with one_request(lab, ["k1"]):
        while (p := stop(lab))["step"] != "lookup" or p["occurrence"] < 2:
            lab.payments.stepper.step(p["request"])
        panels = client.get("/lab/names/panels", headers=HX).get_data(as_text=True)
    assert "stopped after <b>lookup again</b>" in panels
    assert "lookup again: miss" in panels


# -- S1: the receipt e-mail in the timeline and the diagram -----------------------------


@pytest.mark.parametrize(
    ("email", "words", "vi_words"),
    [
        ("inline", "email send: receipt e-mail em_0001 sent", "đã gửi email biên lai em_0001"),
        (
            "outbox",
            "email send: receipt e-mail em_0001 sent from the outbox",
            "đã gửi email biên lai em_0001 từ outbox",
        ),
    ],
)
def test_the_receipt_e_mail_is_a_step_of_the_timeline_and_the_diagram(
    client: FlaskClient, email: str, words: str, vi_words: str
) -> None:
    lab = f"mail-{email}"
    assert client.patch(f"/lab/{lab}/api/settings", json={"email": email}).status_code == 200
    answer = client.post(
        f"/lab/{lab}/api/charges", json=ORDER, headers={"Idempotency-Key": "k-mail"}
    )
    assert answer.status_code == 201
    panels = client.get(f"/lab/{lab}/panels", headers=HX).get_data(as_text=True)
    assert words in panels
    if email == "outbox":
        assert "outbox enqueue: receipt for ch_0001 written with the record" in panels
    svg = client.get(f"/lab/{lab}/sequence.svg").get_data(as_text=True)
    assert ">Mailbox<" in svg
    assert "#1 send receipt em_0001 (key k-mail)" in svg
    vi = client.get(f"/lab/{lab}/panels", headers={**HX, **VI}).get_data(as_text=True)
    assert MISSING not in vi and vi_words in vi
    vi_svg = client.get(f"/lab/{lab}/sequence.svg", headers=VI).get_data(as_text=True)
    assert MISSING not in vi_svg and ">Hộp thư<" in vi_svg
    assert "#1 gửi email biên lai em_0001 (key k-mail)" in vi_svg


def test_a_replay_sends_no_e_mail_and_its_lane_shows_none(client: FlaskClient) -> None:
    client.patch("/lab/mail-replay/api/settings", json={"email": "outbox"})
    for _ in range(2):
        client.post("/lab/mail-replay/api/charges", json=ORDER, headers={"Idempotency-Key": "k"})
    panels = client.get("/lab/mail-replay/panels", headers=HX).get_data(as_text=True)
    assert panels.count("email send:") == 1


def test_without_e_mail_the_diagram_has_no_mailbox(client: FlaskClient) -> None:
    client.post("/lab/no-mail/api/charges", json=ORDER, headers={"Idempotency-Key": "k"})
    assert "Mailbox" not in client.get("/lab/no-mail/sequence.svg").get_data(as_text=True)


# -- S5: think time is the attendee's ----------------------------------------------------


def test_the_time_a_request_stands_paused_is_recorded_and_told_as_yours() -> None:
    lab = Workspace("s", settings=Settings(gateway_latency_ms=0, step_mode=True, lock=True))
    with one_request(lab, ["k1"]) as done:
        first = stop(lab)
        time.sleep(0.02)  # the attendee thinks (at least 20 ms: a lower bound, not a race)
        lab.payments.stepper.step(first["request"], to_end=True)
        wait_for(lambda: bool(done))
    entry = done[0]
    lookup = entry.steps[[s.name for s in entry.steps].index("lookup")]
    assert lookup.detail[PAUSED_MS] >= 20
    others = [s for s in entry.steps if s is not lookup]
    assert all(PAUSED_MS not in s.detail for s in others)  # run to the end: no more stops
    (cluster,) = timeline([entry])
    (lane,) = cluster.lanes
    assert lane.paused_ms == lookup.detail[PAUSED_MS]
    paused = [m for m in lane.marks if m.name == "paused"]
    assert len(paused) == 1 and "paused by you" in str(paused[0].text.msgid)
    names = [m.name for m in lane.marks]
    assert names.index("paused") == names.index("lookup") + 1  # told right after its stop


def test_without_step_mode_nothing_is_paused() -> None:
    lab = Workspace("s", settings=Settings(gateway_latency_ms=0))
    _, entry = lab.payments.create_charge(["k1"], BODY)
    assert all(PAUSED_MS not in s.detail for s in entry.steps)
    (cluster,) = timeline([entry])
    assert cluster.lanes[0].paused_ms == 0
    assert not any(m.name == "paused" for m in cluster.lanes[0].marks)
    assert re.search(r"paused", repr(cluster.lanes[0].marks)) is None


@pytest.mark.parametrize(
    ("email", "order"),
    [
        ("inline", ["charging", "gateway charge", "email send", "record save", "respond"]),
        ("outbox", ["charging", "gateway charge", "record save", "outbox enqueue", "email send"]),
    ],
)
def test_the_e_mail_steps_come_in_the_order_they_happen(email: str, order: list[str]) -> None:
    # An inline e-mail is sent once the gateway answered; the outbox message is written by
    # the record's save, and sent by the relay after it.
    lab = Workspace("s", settings=Settings(gateway_latency_ms=0, email=email))
    _, entry = lab.payments.create_charge(["k1"], BODY)
    names = [s.name for s in entry.steps]
    assert [n for n in names if n in order] == order
    (cluster,) = timeline([entry])
    marks = [m.name for m in cluster.lanes[0].marks]
    assert [n for n in marks if n in order] == [n for n in order if n != "respond"]


def test_a_crash_before_the_record_writes_no_outbox_message() -> None:
    lab = Workspace(
        "s", settings=Settings(gateway_latency_ms=0, email="outbox", fault="crash_after_charge")
    )
    _, entry = lab.payments.create_charge(["k1"], BODY)
    assert entry.outcome == "crashed"
    assert entry.step("outbox enqueue") is None and entry.step("email send") is None
    assert lab.payments.emails() == []
