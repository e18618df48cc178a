"""The queue lab as a whole: scenarios (expected against actual, with and without the
fix), the producer retry, redelivery, dead letters, poison messages, the switches'
input rules, concurrency, resets, and the "what just happened" explanations."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from demo.engine.clock import VirtualClock
from demo.engine.lab import Lab
from demo.engine.problems import Problem
from demo.engine.text import translate
from demo.queue.explain import explain
from demo.queue.jobs import EXAMPLE, parse_job
from demo.queue.lab import QueueLab
from demo.queue.scenarios import POISON_JOB, SCENARIOS
from demo.workspace import Workspace


def fresh(make_broker: Any = None, **settings: Any) -> QueueLab:
    lab = QueueLab(clock=VirtualClock(lambda: 1000.0), make_broker=make_broker)
    lab.update_settings(settings)
    return lab


def test_it_is_a_lab_of_the_workspace() -> None:
    ws = Workspace("q1")
    assert isinstance(ws.queue, Lab)
    assert ws.labs["queue"] is ws.queue
    assert ws.queue.clock is ws.clock  # the workspace's clock moves visibility timeouts
    assert ws.is_blank()
    ws.queue.enqueue(dict(EXAMPLE))
    assert not ws.is_blank()
    ws.reset()
    assert ws.queue.is_blank() and ws.queue.state()["messages"] == []


# Each scenario: (actual without the fix, with it); the fix gives the expected value.
ACTUALS = {
    "redelivery": (2, 1),
    "duplicate-job": (2, 1),
    "at-most-once": (1, 0),
    "outbox": (2, 1),
    "delivery-semantics": (None, 0),  # at-least-once duplicates: checked > 0 below
    "poison-message": (0, 1),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_each_scenario_misses_its_expectation_until_fixed(make_broker: Any, name: str) -> None:
    broken, fixed = fresh(make_broker), fresh(make_broker)
    broken.play(name)
    fixed.play(name, fixed=True)
    before, after = broken.state()["scenario"], fixed.state()["scenario"]
    assert before["expected"] == after["expected"] == SCENARIOS[name].expected
    assert before["actual"] != before["expected"]
    if ACTUALS[name][0] is not None:
        assert before["actual"] == ACTUALS[name][0]
    assert after["actual"] == ACTUALS[name][1] == after["expected"]
    assert (before["fixed"], after["fixed"]) == (False, True)


def test_producer_retry_is_two_messages_for_one_job(make_broker: Any) -> None:
    lab = fresh(make_broker)
    first = lab.enqueue(dict(EXAMPLE))
    second = lab.producer_retry()
    messages = lab.state()["messages"]
    assert first != second
    assert [m["message_id"] for m in messages] == [first, second]
    assert {m["job_id"] for m in messages} == {"send-invoice-42"}
    assert [e["action"] for e in lab.state()["deliveries"]] == ["enqueue", "producer_retry"]


def test_redelivery_waits_for_the_visibility_timeout_on_the_lab_clock(make_broker: Any) -> None:
    lab = fresh(make_broker, crash_at="after_receive", visibility_timeout_s=60)
    lab.enqueue(dict(EXAMPLE))
    assert lab.work().outcome == "crashed"
    lab.clock.advance(59)
    assert lab.work().outcome == "idle"  # still hidden
    assert lab.state()["messages"][0]["state"] == "in_flight"
    lab.clock.advance(1)
    again = lab.work()
    assert (again.outcome, again.receive_count) == ("processed", 2)


def test_a_poison_message_ends_in_the_dead_letter_queue(make_broker: Any) -> None:
    lab = fresh(make_broker, max_attempts=2)
    lab.enqueue(dict(POISON_JOB))
    first = lab.work()
    assert (first.outcome, first.error) == ("crashed", "invoice_id must be a positive integer")
    lab.clock.advance(31)
    assert lab.work().receive_count == 2
    lab.clock.advance(31)
    last = lab.work()
    assert (last.outcome, last.dead_lettered) == (
        "idle",
        [lab.state()["messages"][0]["message_id"]],
    )
    state = lab.state()
    assert [m["state"] for m in state["messages"]] == ["dead"]
    assert state["emails"] == [] and state["summary"]["dead"] == 1


def test_a_poison_message_under_at_most_once_is_lost(make_broker: Any) -> None:
    lab = fresh(make_broker, delivery="at_most_once")
    lab.enqueue(dict(POISON_JOB))
    assert lab.work().outcome == "lost"


@pytest.mark.parametrize(
    "body",
    [
        None,
        [],
        {"id": "j"},
        {"id": "", "idempotency_key": "k"},
        {"id": "a b", "idempotency_key": "k"},
        {"id": "j", "idempotency_key": "k" * 256},
        {"id": 1, "idempotency_key": "k"},
        {"id": "j", "idempotency_key": "k", "payload": []},
        {"id": "j", "idempotency_key": "k", "payload": {"invoice_id": 42.0}},
        {"id": "j", "idempotency_key": "k", "payload": {"x": "y" * 3000}},
        {"id": "j", "idempotency_key": "k", "priority": 1},
    ],
)
def test_a_bad_job_is_422_and_enqueues_nothing(body: Any) -> None:
    lab = fresh()
    with pytest.raises(Problem) as bad:
        lab.enqueue(body)
    assert (bad.value.status, bad.value.slug) == (422, "invalid-job")
    assert lab.state()["messages"] == [] and lab.is_blank()


def test_the_articles_job_is_accepted_as_written() -> None:
    job = parse_job(dict(EXAMPLE))
    assert job.as_dict() == dict(EXAMPLE)
    assert parse_job({"id": "j", "idempotency_key": "k", "payload": {}}).payload == {}
    # No payload at all is a mistake, not an empty job: refused by name (422).
    with pytest.raises(Problem) as refused:
        parse_job({"id": "j", "idempotency_key": "k"})
    assert refused.value.status == 422 and "payload" in refused.value.extra["errors"]


@pytest.mark.parametrize(
    "changes",
    [
        {"delivery": "exactly_once"},
        {"dedup": "yes"},
        {"crash_at": "before_receive"},
        {"visibility_timeout_s": 0},
        {"visibility_timeout_s": 30.0},
        {"max_attempts": 11},
        {"max_attempts": True},
        {"workers": 4},
        {"workers": 0},
        {"colour": "red"},
        [],
    ],
)
def test_bad_settings_are_422_and_change_nothing(changes: Any) -> None:
    lab = fresh()
    before = lab.settings
    with pytest.raises(Problem) as bad:
        lab.update_settings(changes)
    assert (bad.value.status, bad.value.slug) == (422, "invalid-settings")
    assert lab.settings == before


def test_a_crash_is_one_shot() -> None:
    lab = fresh(crash_at="after_effect")
    lab.enqueue(dict(EXAMPLE))
    lab.enqueue({"id": "send-invoice-43", "idempotency_key": "invoice:43:email",
                 "payload": {"invoice_id": 43}})  # fmt: skip
    assert [lab.work().outcome, lab.work().outcome] == ["crashed", "processed"]
    assert lab.settings.crash_at == "none"


def test_concurrent_workers_with_the_outbox_send_one_email_per_key() -> None:
    # Three workers take three messages of one job at the same moment, on three threads:
    # the outbox's atomic step (a unique dedup key) lets exactly one of them write the e-mail.
    lab = fresh(workers=3, dedup=True, outbox=True)
    for _ in range(3):
        lab.producer_retry()
    entries = lab.work_all()
    assert len(entries) == 3  # which worker took which depends on the threads' timing
    assert {e.worker for e in entries} <= {"worker-1", "worker-2", "worker-3"}
    outcomes = sorted(e.outcome for e in entries)
    assert outcomes == ["duplicate_skipped", "duplicate_skipped", "processed"]
    assert len(lab.state()["emails"]) == 1
    assert {m["state"] for m in lab.state()["messages"]} == {"acked"}


def test_more_work_than_workers_in_step_mode_is_429() -> None:
    lab = fresh(step_mode=True)
    lab.enqueue(dict(EXAMPLE))
    done: list[Any] = []
    thread = threading.Thread(target=lambda: done.append(lab.work()))
    thread.start()
    try:
        for _ in range(2000):  # wait for the worker to stop at its first step
            if lab.stepper.paused() and lab.stepper.paused()[0]["waiting"]:
                break
            threading.Event().wait(0.005)
        paused = lab.stepper.paused()
        assert paused[0]["step"] == "receive" and lab.busy_workers() == ["worker-1"]
        with pytest.raises(Problem) as busy:
            lab.work()
        assert (busy.value.status, busy.value.slug) == (429, "workers-busy")
    finally:
        lab.release_all()
        thread.join()
    assert done[0].outcome == "processed"
    assert [s.name for s in done[0].steps] == ["receive", "side effect", "record", "ack"]


def test_reset_empties_everything_but_the_settings(make_broker: Any) -> None:
    lab = fresh(make_broker, dedup=True)
    lab.enqueue(dict(EXAMPLE))
    lab.work()
    lab.simulate({"mode": "at_most_once", "messages": 10, "seed": 1})
    lab.reset()
    state = lab.state()
    assert (state["messages"], state["dedup"], state["emails"], state["deliveries"]) == (
        [], [], [], [])  # fmt: skip
    assert state["simulation"] is None and state["settings"]["dedup"] is True
    lab.enqueue(dict(EXAMPLE))
    assert lab.work().outcome == "processed"  # the fresh dedup table knows nothing


@pytest.mark.parametrize(
    ("settings", "clicks", "words"),
    [
        ({}, ["work"], "No message was visible"),
        ({}, ["enqueue", "work"], "sent the e-mail and acked, recording nothing (dedup is off)"),
        ({"dedup": True}, ["enqueue", "work"], "sent the e-mail, recorded it and acked"),
        ({"dedup": True}, ["enqueue", "retry", "work", "work"], "already holds invoice:42:email"),
        ({"crash_at": "after_receive"}, ["enqueue", "work"], "right after receiving"),
        ({"crash_at": "after_effect"}, ["enqueue", "work"], "consumer's crash window"),
        ({"crash_at": "after_record", "dedup": True}, ["enqueue", "work"], "dedup alone covers"),
        ({"crash_at": "after_record"}, ["enqueue", "work"], "second e-mail"),
        ({"delivery": "at_most_once", "crash_at": "after_receive"}, ["enqueue", "work"],
         "The job is gone"),
        ({"outbox": True, "crash_at": "relay_after_send"}, ["enqueue", "work"],
         "a second e-mail, unless the provider dedups"),
    ],
)  # fmt: skip
def test_what_just_happened_says_why(settings: Any, clicks: list[str], words: str) -> None:
    lab = fresh(**settings)
    entry = None
    for click in clicks:
        if click == "enqueue":
            lab.enqueue(dict(EXAMPLE))
        elif click == "retry":
            lab.producer_retry()
        else:
            entry = lab.work()
    assert entry is not None
    said = " ".join(translate(s) for s in explain(entry))
    assert words in said


def test_every_worker_at_once_is_every_worker() -> None:
    """Three workers at once, three messages: each work call gave its worker back before
    the next took one, so all three outcomes read "worker-1". Each holds its own now."""
    for _ in range(5):  # timing-dependent before the fix: several rounds
        lab = fresh(workers=3)
        for n in range(3):
            lab.enqueue({"id": f"send-invoice-{n}", "idempotency_key": f"invoice:{n}:email",
                         "payload": {"invoice_id": n + 1}})  # fmt: skip
        entries = lab.work_all()
        assert sorted(e.worker or "" for e in entries) == ["worker-1", "worker-2", "worker-3"]
        assert [e.outcome for e in entries] == ["processed"] * 3
