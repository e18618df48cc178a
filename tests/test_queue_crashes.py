"""Every crash point × dedup on/off × outbox on/off, on both brokers: how many e-mails
one job ends with once the broker has redelivered it (worked out in the table below)."""

from __future__ import annotations

from typing import Any

import pytest

from demo.engine.clock import VirtualClock
from demo.queue.jobs import EXAMPLE
from demo.queue.lab import QueueLab

# (crash_at, dedup, outbox) → e-mails for invoice:42:email after the redelivery.
EMAILS = {
    # No crash: one delivery, one e-mail, whatever the switches.
    **{("none", d, o): 1 for d in (False, True) for o in (False, True)},
    # A crash right after the receive: nothing was done yet; the redelivery does it once.
    **{("after_receive", d, o): 1 for d in (False, True) for o in (False, True)},
    # Between the side effect and the record: the consumer's crash window. Dedup alone
    # finds no record and sends again; only the outbox (one atomic step) with dedup closes it.
    ("after_effect", False, False): 2,
    ("after_effect", True, False): 2,
    ("after_effect", False, True): 2,  # a second outbox row: nothing dedups the job
    ("after_effect", True, True): 1,
    # After the record, before the ack: dedup alone protects.
    ("after_record", False, False): 2,
    ("after_record", True, False): 1,
    ("after_record", False, True): 2,
    ("after_record", True, True): 1,
}


def lab_on(make_broker: Any, **settings: Any) -> QueueLab:
    lab = QueueLab(clock=VirtualClock(lambda: 1000.0), make_broker=make_broker)
    lab.update_settings(settings)
    return lab


def run_to_the_end(lab: QueueLab) -> list[str]:
    """Enqueue the article's job, work, move past the timeout, work until idle."""
    lab.enqueue(dict(EXAMPLE))
    outcomes = [lab.work().outcome]
    for _ in range(4):
        lab.clock.advance(31)
        outcome = lab.work().outcome
        outcomes.append(outcome)
        if outcome == "idle":
            break
    return outcomes


@pytest.mark.parametrize(("crash_at", "dedup", "outbox"), sorted(EMAILS))
def test_each_crash_point_sends_what_the_table_says(
    make_broker: Any, crash_at: str, dedup: bool, outbox: bool
) -> None:
    lab = lab_on(make_broker, crash_at=crash_at, dedup=dedup, outbox=outbox)
    outcomes = run_to_the_end(lab)
    state = lab.state()
    assert len(state["emails"]) == EMAILS[crash_at, dedup, outbox], outcomes
    assert {e["idempotency_key"] for e in state["emails"]} == {"invoice:42:email"}
    assert [m["state"] for m in state["messages"]] == ["acked"]
    assert state["summary"]["lost"] == 0  # at-least-once: never silently lost
    assert outcomes[0] == ("processed" if crash_at == "none" else "crashed")
    assert outcomes[-1] == "idle"
    assert state["settings"]["crash_at"] == "none"  # one shot
    if crash_at != "none":
        assert state["deliveries"][1]["crashed_at"] == crash_at
        assert state["messages"][0]["receive_count"] == 2
    if dedup:
        assert state["dedup"] == [{"key": "invoice:42:email", "state": "completed"}]


@pytest.mark.parametrize("crash_at", ["after_receive", "after_effect", "after_record"])
def test_at_most_once_acks_first_so_a_crash_loses_the_job(make_broker: Any, crash_at: str) -> None:
    lab = lab_on(make_broker, delivery="at_most_once", crash_at=crash_at)
    outcomes = run_to_the_end(lab)
    state = lab.state()
    # Before the side effect the job is gone without a trace; after it, it was done once.
    emails = 0 if crash_at == "after_receive" else 1
    assert outcomes == ["lost" if emails == 0 else "crashed", "idle"]
    assert [m["state"] for m in state["messages"]] == ["acked"]
    assert len(state["emails"]) == emails
    assert state["summary"]["lost"] == 1 - emails


@pytest.mark.parametrize("provider_dedup", [False, True])
@pytest.mark.parametrize("dedup", [False, True])
def test_a_relay_crash_resends_unless_the_provider_dedups(
    make_broker: Any, provider_dedup: bool, dedup: bool
) -> None:
    lab = lab_on(make_broker, outbox=True, dedup=dedup, provider_dedup=provider_dedup,
                 crash_at="relay_after_send")  # fmt: skip
    lab.enqueue(dict(EXAMPLE))
    first = lab.work()
    assert (first.outcome, first.relay_crashed) == ("processed", True)
    assert [r["sent"] for r in lab.state()["outbox"]] == [False]  # sent, never marked
    again = lab.work()  # idle for the worker; the relay runs anyway and resends the row
    assert again.outcome == "idle"
    state = lab.state()
    assert [r["sent"] for r in state["outbox"]] == [True]
    assert len(state["emails"]) == (1 if provider_dedup else 2)
    assert {e["outbox_row"] for e in state["emails"]} == {"ob-1"}


def test_without_the_outbox_a_relay_crash_has_nothing_to_fire_at(make_broker: Any) -> None:
    lab = lab_on(make_broker, crash_at="relay_after_send")
    lab.enqueue(dict(EXAMPLE))
    assert lab.work().relay_crashed is False
    assert len(lab.state()["emails"]) == 1
    assert lab.settings.crash_at == "relay_after_send"  # still armed
