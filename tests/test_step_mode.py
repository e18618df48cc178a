"""Step mode: the attendee is the scheduler. The pauses live in the real handler's step
points, so what these interleavings do is what the code does."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from demo.engine.problems import Problem
from demo.payments.settings import Settings
from demo.workspace import Workspace

KEY = ["t1:u7:pay:order-42:v1"]
BODY = b'{"order_id": "42", "amount": 100000}'


def quiet(lab: Workspace) -> list[dict[str, Any]]:
    """Wait until every request in step mode stands at a step point or is blocked."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        paused = lab.payments.stepper.paused()
        if all(p["waiting"] or p["step"] == "lock wait" for p in paused):
            version = lab.version
            time.sleep(0.02)
            if lab.version == version:
                return paused
        time.sleep(0.002)
    raise AssertionError(f"still running: {lab.payments.stepper.paused()}")


@contextmanager
def requests(lab: Workspace, n: int, **settings: Any) -> Iterator[list[Any]]:
    """Send ``n`` requests with one key, one after the other, each parked at its first step."""
    results: list[Any] = []
    threads = []
    for _ in range(n):
        t = threading.Thread(target=lambda: results.append(lab.payments.create_charge(KEY, BODY)))
        t.start()
        threads.append(t)
        deadline = time.monotonic() + 10
        while len([p for p in lab.payments.stepper.paused() if p["waiting"]]) < len(threads):
            assert time.monotonic() < deadline, lab.payments.stepper.paused()
            time.sleep(0.001)
    try:
        yield results
    finally:
        lab.payments.stepper.release_all()
        for t in threads:
            t.join(10)


def step(lab: Workspace, label: str) -> bool:
    """Step request ``label`` if it stands at a step point; False if it is blocked or done."""
    for p in quiet(lab):
        if p["label"] == label and p["waiting"]:
            lab.payments.stepper.step(p["request"])
            return True
    return False


def make(lock: bool, **more: Any) -> Workspace:
    return Workspace(
        "s", settings=Settings(gateway_latency_ms=0, step_mode=True, lock=lock, **more)
    )


def test_lock_off_lookup_lookup_charge_charge_is_a_double_charge() -> None:
    lab = make(lock=False)
    with requests(lab, 2):
        assert [p["step"] for p in quiet(lab)] == ["lookup", "lookup"]  # both missed
        assert step(lab, "A") and step(lab, "B")  # both stop right before the gateway
        assert [p["step"] for p in quiet(lab)] == ["charging", "charging"]
        assert lab.payments.gateway.ledger() == []  # no money moved yet
        assert step(lab, "A") and step(lab, "B")  # A charges, then B charges
        assert [p["step"] for p in quiet(lab)] == ["gateway charge", "gateway charge"]
    assert len(lab.payments.gateway.ledger()) == 2


def test_lock_on_b_is_blocked_until_a_finishes_then_replays() -> None:
    lab = make(lock=True)
    with requests(lab, 2) as results:
        step(lab, "A")  # lookup -> lock wait
        step(lab, "A")  # -> lock acquire (A holds the lock)
        step(lab, "B")  # lookup -> lock wait
        step(lab, "B")  # B tries to take the lock ... and blocks
        b = next(p for p in quiet(lab) if p["label"] == "B")
        assert b["blocked_by"] == "A" and not b["waiting"]
        with pytest.raises(Problem) as caught:
            lab.payments.stepper.step(b["request"])
        assert caught.value.status == 409
        while step(lab, "A"):
            pass  # A runs to its end, releasing the lock
        assert next(p for p in quiet(lab) if p["label"] == "B")["step"] == "lock acquire"
    assert len(lab.payments.gateway.ledger()) == 1
    assert sorted(e.outcome for _, e in results) == ["charged", "replayed"]


def test_run_to_end_and_bad_ids() -> None:
    lab = make(lock=True)
    with requests(lab, 1) as results:
        paused = quiet(lab)
        for bad in ("1", None, 1.5, True):
            with pytest.raises(Problem) as caught:
                lab.payments.stepper.step(bad)
            assert caught.value.status == 422
        with pytest.raises(Problem) as caught:
            lab.payments.stepper.step(999)
        assert caught.value.status == 404
        lab.payments.stepper.step(paused[0]["request"], to_end=True)
        deadline = time.monotonic() + 5
        while not results and time.monotonic() < deadline:
            time.sleep(0.01)
    assert results[0][0].status == 201 and lab.payments.stepper.paused() == []


def test_switching_step_mode_off_and_reset_release_everyone() -> None:
    lab = make(lock=False)
    with requests(lab, 2) as results:
        lab.payments.update_settings({"step_mode": False})
        deadline = time.monotonic() + 5
        while len(results) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(results) == 2


SCHEDULES = st.lists(st.sampled_from("ABC"), min_size=0, max_size=30)


def run(lock: bool, n: int, schedule: list[str], **more: Any) -> int:
    lab = make(lock=lock, **more)
    with requests(lab, n):
        for label in schedule:
            step(lab, label)
    return len(lab.payments.gateway.ledger())


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 3), schedule=SCHEDULES)
def test_lock_on_no_interleaving_charges_twice(n: int, schedule: list[str]) -> None:
    assert run(True, n, schedule) == 1


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 3), schedule=SCHEDULES, crash=st.booleans())
def test_crash_window_fix_no_interleaving_charges_twice(
    n: int, schedule: list[str], crash: bool
) -> None:
    fault = "crash_after_charge" if crash else "none"
    assert run(True, n, schedule, recovery="downstream_key", fault=fault) == 1


def test_lock_off_some_interleaving_charges_twice_and_hypothesis_finds_it() -> None:
    found = find(
        st.tuples(st.integers(2, 3), SCHEDULES),
        lambda case: run(False, case[0], case[1]) > 1,
        settings=settings(max_examples=200, deadline=None, database=None),
    )
    assert run(False, *found) > 1


def test_let_go_requests_leave_the_paused_list_at_once() -> None:
    lab = make(lock=False)
    with requests(lab, 2):
        assert len(quiet(lab)) == 2
        lab.payments.stepper.release_all()
        assert lab.payments.stepper.paused() == []
    lab = make(lock=False)
    with requests(lab, 2):
        lab.reset()
        assert lab.payments.stepper.paused() == [] and lab.state()["paused"] == []


def test_a_blocked_request_stands_on_the_lock_line_of_the_code_view() -> None:
    from demo.web.payments.code import handler_lines

    lines = {line.point: line.text for line in handler_lines() if line.point}
    assert "with store.lock(" in lines["lock#blocked"]
    assert 'trace("gateway charge"' in lines["gateway charge#1"]


def test_a_request_from_before_a_reset_only_ever_touches_its_own_pause() -> None:
    # Old #1 is paused; Reset lets it go, and ids start at 1 again; the new #1 pauses;
    # then old #1 finishes. It must not remove the new #1's pause (which would leave the
    # new request stuck, invisible and unstoppable for 120 s).
    lab = make(lock=True)
    old_gateway = lab.payments.gateway
    entered, proceed = threading.Event(), threading.Event()
    real_charge = old_gateway.charge

    def held_charge(**kwargs: Any) -> Any:
        entered.set()
        assert proceed.wait(10)
        return real_charge(**kwargs)

    old_gateway.charge = held_charge  # type: ignore[method-assign]
    old = threading.Thread(target=lambda: lab.payments.create_charge(KEY, BODY))
    old.start()
    try:
        while not any(p["waiting"] for p in lab.payments.stepper.paused()):
            time.sleep(0.001)
        lab.reset()  # lets old #1 run to its end: it stops in the old gateway
        assert entered.wait(10)
        with requests(lab, 1) as results:
            assert [(p["request"], p["waiting"]) for p in lab.payments.stepper.paused()] == [
                (1, True)
            ]
            proceed.set()
            old.join(10)
            assert not old.is_alive()
            assert [(p["request"], p["waiting"]) for p in lab.payments.stepper.paused()] == [
                (1, True)
            ]
            lab.payments.stepper.step(1, to_end=True)  # the new #1 is still there to step
            deadline = time.monotonic() + 10
            while not results and time.monotonic() < deadline:
                time.sleep(0.01)
        assert results[0][0].status == 201
        assert [e.id for e in lab.payments.requests()] == [1]
        assert len(lab.payments.gateway.ledger()) == 1  # the new lab's charge only
    finally:
        proceed.set()
        old.join(10)


def test_a_lab_holds_at_most_max_paused_requests_in_step_mode() -> None:
    lab = Workspace(
        "s", settings=Settings(gateway_latency_ms=0, step_mode=True, lock=False), max_paused=3
    )
    with requests(lab, 3):
        with pytest.raises(Problem) as caught:
            lab.payments.create_charge(KEY, BODY)
        assert caught.value.status == 429 and caught.value.slug == "too-many-paused"
        assert len(lab.payments.requests()) == 3  # the refused one ran nothing and is not logged
        assert [p["label"] for p in lab.payments.stepper.paused()] == ["A", "B", "C"]
    # Released: the slots are free again.
    with requests(lab, 3):
        assert len(lab.payments.stepper.paused()) == 3


def test_a_reset_does_not_free_the_slots_of_requests_still_running() -> None:
    lab = Workspace(
        "s", settings=Settings(gateway_latency_ms=0, step_mode=True, lock=False), max_paused=1
    )
    entered, proceed = threading.Event(), threading.Event()
    real_charge = lab.payments.gateway.charge

    def held_charge(**kwargs: Any) -> Any:
        entered.set()
        assert proceed.wait(10)
        return real_charge(**kwargs)

    lab.payments.gateway.charge = held_charge  # type: ignore[method-assign]
    old = threading.Thread(target=lambda: lab.payments.create_charge(KEY, BODY))
    old.start()
    try:
        while not any(p["waiting"] for p in lab.payments.stepper.paused()):
            time.sleep(0.001)
        lab.reset()
        assert entered.wait(10)  # still running, still holding its thread
        with pytest.raises(Problem) as caught:
            lab.payments.create_charge(KEY, BODY)
        assert caught.value.status == 429
    finally:
        proceed.set()
        old.join(10)
    with requests(lab, 1):  # finished: its slot is free
        assert len(lab.payments.stepper.paused()) == 1


def test_the_shared_budget_caps_paused_requests_across_labs() -> None:
    slots = threading.BoundedSemaphore(3)
    labs = [
        Workspace(
            f"s{n}",
            settings=Settings(gateway_latency_ms=0, step_mode=True, lock=False),
            paused_slots=slots,
        )
        for n in range(2)
    ]
    with requests(labs[0], 2), requests(labs[1], 1):
        with pytest.raises(Problem) as caught:
            labs[1].payments.create_charge(KEY, BODY)
        assert caught.value.status == 429 and caught.value.retry_after_s == 5
        assert labs[1].payments.requests()[-1].id == 1  # nothing logged
    # Every slot came back once the requests finished.
    with requests(labs[1], 3):
        assert len(labs[1].payments.stepper.paused()) == 3
    assert all(slots.acquire(blocking=False) for _ in range(3))


def test_every_paused_lane_has_a_label_of_its_own_whatever_their_number() -> None:
    lab = Workspace(
        "s", settings=Settings(gateway_latency_ms=0, step_mode=True, lock=False), max_paused=30
    )
    with requests(lab, 30):
        labels = [p["label"] for p in lab.payments.stepper.paused()]
    assert len(set(labels)) == 30 and "?" not in labels
    assert labels[:3] == ["A", "B", "C"] and labels[26:] == ["AA", "AB", "AC", "AD"]


def test_past_the_cap_the_api_answers_a_translated_429_problem_the_page_shows() -> None:
    import json

    from demo import create_app

    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0, "STEP_MAX_PAUSED_PER_LAB": 1})
    client = app.test_client()
    client.patch("/lab/cap/api/settings", json={"step_mode": True})
    lab = app.extensions["labs"].get("cap")
    headers = {"Idempotency-Key": "k", "Content-Type": "application/json"}
    with requests(lab, 1):
        answer = client.post("/lab/cap/api/charges", data=BODY, headers=headers)
        assert answer.status_code == 429
        assert answer.content_type == "application/problem+json"
        assert answer.json is not None and answer.json["type"] == "/problems/too-many-paused"
        assert "Release all" in answer.json["detail"]
        page = client.post(
            "/lab/cap/api/charges", data=BODY, headers={**headers, "HX-Request": "true"}
        )
        assert page.status_code == 429
        event = json.loads(page.headers["HX-Trigger"])["lab-problem"]
        assert event["title"] == "Too many paused requests"
        vi = client.post(
            "/lab/cap/api/charges", data=BODY, headers={**headers, "Accept-Language": "vi"}
        )
        assert vi.json is not None and vi.json["title"] != "Too many paused requests"


def test_every_trace_point_but_validate_is_a_step_point() -> None:
    # One Step never runs past a trace point the attendee does not see.
    from demo.payments.steps import STEP_POINTS, STEPS

    assert set(STEPS) - STEP_POINTS == {"validate", "crash", "step timeout"}


def test_a_request_without_a_key_stops_before_it_charges() -> None:
    lab = make(lock=False)
    thread = threading.Thread(target=lambda: lab.payments.create_charge([], BODY))
    thread.start()
    try:
        assert [p["step"] for p in quiet(lab)] == ["no key"]
        assert lab.payments.gateway.ledger() == []  # no money has moved at the first stop
        assert step(lab, "A")
        assert [p["step"] for p in quiet(lab)] == ["charging"]
        assert lab.payments.gateway.ledger() == []  # the stop right before the gateway call
        assert step(lab, "A")
        assert [p["step"] for p in quiet(lab)] == ["gateway charge"]
        assert len(lab.payments.gateway.ledger()) == 1
    finally:
        lab.payments.stepper.release_all()
        thread.join(10)


def test_a_gateway_replay_is_told_after_its_call() -> None:
    # The crash-window fix: the retry's gateway call returns the first charge; the request
    # stops after that call, and its timeline tells the replay right after it.
    lab = Workspace(
        "s",
        settings=Settings(
            gateway_latency_ms=0, lock=True, recovery="downstream_key", fault="crash_after_charge"
        ),
    )
    lab.payments.create_charge(KEY, BODY)  # charges, then the instance dies before the record
    lab.payments.update_settings({"step_mode": True})
    seen: list[str] = []
    with requests(lab, 1):
        seen.append(quiet(lab)[0]["step"])
        while step(lab, "A"):
            paused = quiet(lab)
            if paused:
                seen.append(paused[0]["step"])
    # The gateway's answer is told right after its call, as it happened, not as a stop.
    assert "gateway replay" not in seen
    assert seen.index("reclaim") < seen.index("gateway charge")
    names = [s.name for s in lab.payments.requests()[-1].steps]
    assert names.index("gateway replay") == names.index("gateway charge") + 1
    assert len(lab.payments.gateway.ledger()) == 1


def test_a_replay_after_waiting_on_a_paused_holder_says_what_it_waited_for() -> None:
    from demo.payments.explain import explain
    from demo.payments.gateway import summarise

    lab = make(lock=True)
    with requests(lab, 2):
        for label in ("A", "A", "B", "B"):  # A holds the lock; B tries it and blocks
            assert step(lab, label), label
        while step(lab, "A"):
            pass
    b = next(e for e in lab.payments.requests() if e.outcome == "replayed")
    said = " ".join(
        map(
            str,
            explain(lab.payments.requests(), summarise(lab.payments.gateway.ledger()), b).sentences,
        )
    )
    assert "which #1 held: in step mode #1 stood paused until you stepped it on" in said
    assert "still charging" not in said
