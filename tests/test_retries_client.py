"""The retry lab's client against a real payment lab (no web layer): the issue's rules."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from demo.engine.clock import VirtualClock
from demo.engine.problems import Problem
from demo.retries.client import charge_with_retries
from demo.retries.faults import FAULT_STATUSES, MAX_FAULTS, FaultLayer, parse_faults
from demo.retries.lab import RetriesLab
from demo.retries.policy import RETRY_ON_CHOICES, STRATEGIES, Policy, backoff_ms
from tests.retries_support import PaymentsTransport, payments_lab


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(lambda: 1_000_000.0)


@pytest.fixture
def lab(clock: VirtualClock) -> RetriesLab:
    payments = payments_lab(clock)
    return RetriesLab(clock=clock, transport=PaymentsTransport(payments), rng=random.Random(7))


def run(lab: RetriesLab, faults: list[Any], **policy: Any) -> dict[str, Any]:
    return lab.run({"faults": faults, "policy": policy})


@pytest.mark.parametrize("status", [400, 402, 409, 422])
def test_an_answer_a_retry_cannot_change_is_final(lab: RetriesLab, status: int) -> None:
    result = run(lab, [status])
    assert len(result["attempts"]) == 1
    assert result["attempts"][0]["status"] == status
    assert result["attempts"][0]["retried"] is False
    assert result["outcome"] == "final_error"
    assert result["charges"] == 0


def test_a_lost_response_retried_with_the_same_key_replays(lab: RetriesLab) -> None:
    result = run(lab, ["lose_response", "ok"], same_key=True)
    attempts = result["attempts"]
    assert len(attempts) == 2
    assert attempts[0]["error"] == "network" and attempts[0]["status"] is None
    assert attempts[0]["retried"] is True
    assert attempts[1]["status"] == 201
    assert len({a["key"] for a in attempts}) == 1
    assert result["outcome"] == "replayed"
    assert result["charges"] == 1


def test_a_lost_response_retried_with_a_new_key_charges_twice(lab: RetriesLab) -> None:
    payments = lab.transport.payments  # type: ignore[union-attr]
    result = run(lab, ["lose_response", "ok"], same_key=False)
    assert len(result["attempts"]) == 2
    assert len({a["key"] for a in result["attempts"]}) == 2
    assert result["outcome"] == "charged"
    assert result["charges"] == 2
    # The double charge is in the payment lab's own ledger, marked as such.
    ledger = [c for c in payments.state()["charges"] if c["order_id"] == result["order_id"]]
    assert len(ledger) == 2
    assert all(c["double_charge"] for c in ledger)


def test_the_attempts_are_real_requests_in_the_payment_lab(lab: RetriesLab) -> None:
    payments = lab.transport.payments  # type: ignore[union-attr]
    result = run(lab, ["lose_response", 503, "ok"])
    # The 503 never reached the payment lab (the fault layer answered it); the other two did.
    requests = payments.requests()
    assert [r.outcome for r in requests] == ["charged", "replayed"]
    assert {r.key for r in requests} == {result["attempts"][0]["key"]}
    assert all(r.action == "Retry client" for r in requests)


def test_waits_grow_by_the_strategy(lab: RetriesLab) -> None:
    result = run(lab, [503, 503, "ok"], strategy="exponential", base_ms=100, cap_ms=5000)
    attempts = result["attempts"]
    assert len(attempts) == 3
    assert len({a["key"] for a in attempts}) == 1
    assert [a["waited_ms"] for a in attempts] == [0, 100, 200]
    assert result["outcome"] == "charged"


def test_jittered_waits_stay_under_the_growing_ceiling(lab: RetriesLab) -> None:
    for _ in range(20):
        result = run(lab, [503, 503, 503, "ok"], strategy="full_jitter", base_ms=100)
        waits = [a["waited_ms"] for a in result["attempts"]]
        assert waits[0] == 0
        assert all(0 <= w <= 100 * 2**i for i, w in enumerate(waits[1:]))


def test_retry_after_is_respected(lab: RetriesLab) -> None:
    result = run(lab, [429, "ok"], respect_retry_after=True, base_ms=10)
    assert result["attempts"][1]["waited_ms"] >= 3000
    assert result["outcome"] == "charged"


def test_retry_after_ignored_comes_back_sooner(lab: RetriesLab) -> None:
    result = run(lab, [429, "ok"], respect_retry_after=False, base_ms=10, strategy="fixed")
    assert result["attempts"][1]["waited_ms"] == 10


def test_max_attempts_gives_up(lab: RetriesLab) -> None:
    result = run(lab, [502] * 5, max_attempts=3)
    assert len(result["attempts"]) == 3
    assert [a["retried"] for a in result["attempts"]] == [True, True, False]
    assert result["outcome"] == "gave_up"
    assert "max_attempts" in result["attempts"][-1]["reason"]


def test_one_attempt_gives_up_in_the_singular(lab: RetriesLab) -> None:
    result = run(lab, [502], max_attempts=1)
    assert result["outcome"] == "gave_up"
    reason = result["attempts"][-1]["reason"]
    assert "only attempt" in reason and "attempts" not in reason.replace("max_attempts", "")


def test_retrying_a_400_is_possible_and_wasted(lab: RetriesLab) -> None:
    safe = ["network", 408, 429, 500, 502, 503, 504]
    result = run(lab, [400] * 4, retry_on=[*safe, 400], max_attempts=4)
    assert len(result["attempts"]) == 4
    assert result["outcome"] == "gave_up"
    assert "wasted" in result["attempts"][0]["reason"]


def test_network_errors_left_out_of_retry_on_are_final(lab: RetriesLab) -> None:
    result = run(lab, ["lose_response", "ok"], retry_on=[503])
    assert len(result["attempts"]) == 1
    assert result["outcome"] == "final_error"
    assert result["charges"] == 1  # it did charge: the client just never learnt it


def test_virtual_waits_move_the_clock_and_sleep_for_none(
    lab: RetriesLab, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_real_sleep(seconds: float) -> None:
        raise AssertionError(f"slept {seconds} s for real")

    monkeypatch.setattr(time, "sleep", no_real_sleep)
    result = run(lab, [503, 503, 503, "ok"], strategy="exponential", base_ms=2000, cap_ms=8000)
    assert [a["waited_ms"] for a in result["attempts"]] == [0, 2000, 4000, 8000]
    assert clock.offset_s == pytest.approx(14.0)


def test_the_client_sleeps_through_the_hook_it_is_given() -> None:
    slept: list[float] = []
    payments = payments_lab()
    send = FaultLayer(parse_faults([503, 429, "ok"]), PaymentsTransport(payments))
    run = charge_with_retries(
        Policy(strategy="exponential", base_ms=500),
        send,
        {"order_id": "o-1", "amount": 100, "currency": "EUR"},
        new_key=lambda: "k-1",
        sleep=slept.append,
        rng=random.Random(1),
    )
    assert slept == [0.5, 3.0]  # 500 ms, then Retry-After: 3 over the 1 s backoff
    assert run.outcome == "charged"


def test_each_attempt_is_a_step_on_the_timeline(lab: RetriesLab) -> None:
    run(lab, ["lose_response", 503, "ok"])
    (entry,) = lab.runs()
    names = [s.name for s in entry.steps]
    assert names == ["send", "answer"] * 3
    answers = [s.detail for s in entry.steps if s.name == "answer"]
    assert [a["retried"] for a in answers] == [True, True, False]
    sends = [s.detail for s in entry.steps if s.name == "send"]
    assert sends[0]["waited_ms"] == 0 and sends[1]["waited_ms"] > 0


@pytest.mark.parametrize(
    ("policy", "member"),
    [
        ({"max_attempts": 0}, "max_attempts"),
        ({"max_attempts": 11}, "max_attempts"),
        ({"max_attempts": True}, "max_attempts"),
        ({"strategy": "linear"}, "strategy"),
        ({"base_ms": 0}, "base_ms"),
        ({"cap_ms": 60_001}, "cap_ms"),
        ({"base_ms": 500.0}, "base_ms"),
        ({"retry_on": [418]}, "retry_on"),
        ({"retry_on": [503.0]}, "retry_on"),
        ({"retry_on": [True]}, "retry_on"),
        ({"retry_on": "network"}, "retry_on"),
        ({"same_key": "yes"}, "same_key"),
        ({"colour": "red"}, "colour"),
        (None, "policy"),
    ],
)
def test_a_bad_policy_is_a_422_naming_it(
    lab: RetriesLab, policy: dict[str, Any], member: str
) -> None:
    before = lab.state()
    with pytest.raises(Problem) as caught:
        lab.run({"policy": policy, "faults": ["ok"]})
    assert caught.value.status == 422
    assert caught.value.slug == "invalid-policy"
    assert member in caught.value.extra["errors"]
    assert lab.state() == before


@pytest.mark.parametrize("faults", ["ok", [418], [True], ["lost"], [503] * 11, [None], [503.0]])
def test_a_bad_fault_plan_is_a_422(lab: RetriesLab, faults: Any) -> None:
    with pytest.raises(Problem) as caught:
        lab.run({"faults": faults})
    assert caught.value.status == 422
    assert caught.value.slug == "invalid-faults"
    assert lab.runs() == []


def test_backoff_formulas() -> None:
    rng = random.Random(3)
    assert [backoff_ms("exponential", n, 100, 1000, 100, rng) for n in (1, 2, 3, 4, 5)] == [
        100,
        200,
        400,
        800,
        1000,
    ]
    assert backoff_ms("none", 3, 100, 1000, 100, rng) == 0
    assert backoff_ms("fixed", 3, 100, 1000, 100, rng) == 100
    for n in range(1, 12):
        ceiling = min(1000, 100 * 2 ** (n - 1))
        assert 0 <= backoff_ms("full_jitter", n, 100, 1000, 100, rng) <= ceiling
        assert ceiling / 2 <= backoff_ms("equal_jitter", n, 100, 1000, 100, rng) <= ceiling
        assert 100 <= backoff_ms("decorrelated_jitter", n, 100, 1000, 300, rng) <= 900
    assert backoff_ms("exponential", 200, 100, 60_000, 100, rng) == 60_000  # no overflow


def test_a_cap_under_the_base_caps_every_wait(lab: RetriesLab) -> None:
    result = run(lab, [503, 503, "ok"], strategy="exponential", base_ms=500, cap_ms=100)
    assert [a["waited_ms"] for a in result["attempts"]] == [0, 100, 100]


faults_st = st.lists(st.sampled_from(["ok", "lose_response", *FAULT_STATUSES]), max_size=MAX_FAULTS)
policies_st = st.fixed_dictionaries(
    {
        "max_attempts": st.integers(1, 10),
        "strategy": st.sampled_from(STRATEGIES),
        "base_ms": st.integers(1, 10_000),
        "cap_ms": st.integers(1, 60_000),
        "retry_on": st.lists(st.sampled_from(RETRY_ON_CHOICES), unique=True),
        "respect_retry_after": st.booleans(),
        "same_key": st.booleans(),
    }
)


@settings(max_examples=200, deadline=None)
@given(faults=faults_st, policy=policies_st, seed=st.integers(0, 2**32))
def test_any_plan_any_policy(faults: list[Any], policy: dict[str, Any], seed: int) -> None:
    """Whatever the plan and the policy: never more attempts than allowed, every wait
    within its bounds, and with one key per charge never more than one charge."""
    clock = VirtualClock(lambda: 0.0)
    lab = RetriesLab(
        clock=clock, transport=PaymentsTransport(payments_lab(clock)), rng=random.Random(seed)
    )
    result = lab.run({"faults": faults, "policy": policy})
    attempts = result["attempts"]
    assert 1 <= len(attempts) <= policy["max_attempts"]
    assert [a["n"] for a in attempts] == list(range(1, len(attempts) + 1))
    assert attempts[0]["waited_ms"] == 0
    longest = max(policy["cap_ms"], 3000 if policy["respect_retry_after"] else 0)
    assert all(0 <= a["waited_ms"] <= longest for a in attempts)
    assert [a["retried"] for a in attempts] == [True] * (len(attempts) - 1) + [False]
    assert clock.offset_s * 1000 == pytest.approx(sum(a["waited_ms"] for a in attempts), abs=5)
    if policy["same_key"]:
        assert len({a["key"] for a in attempts}) == 1
        assert result["charges"] <= 1  # a retry with the key is safe, whatever happens
    plan = [*faults, *["ok"] * 10][: len(attempts)]
    reached = sum(1 for f in plan if f in ("ok", "lose_response"))
    assert result["charges"] <= reached
    last = attempts[-1]
    if result["outcome"] in ("charged", "replayed"):
        assert last["status"] == 201
    elif result["outcome"] == "gave_up":
        assert len(attempts) == policy["max_attempts"]
        assert (last["status"] or "network") in policy["retry_on"]
    else:
        assert (last["status"] or "network") not in policy["retry_on"]
