"""The storm simulator: the AWS blog's contention results, the outage, the retry budget."""

from __future__ import annotations

from typing import Any

import pytest

from demo.engine.problems import Problem
from demo.retries.policy import STRATEGIES
from demo.retries.storm import Budget, Storm, simulate
from demo.retries.storm_input import storm_answer

SEEDS = range(1, 6)
JITTERED = ("full_jitter", "equal_jitter", "decorrelated_jitter")
NO_JITTER = ("none", "fixed", "exponential")


def averaged(storm: Storm) -> dict[str, tuple[float, float]]:
    """Calls and completion time per strategy, averaged over :data:`SEEDS`."""
    out = {}
    for strategy in STRATEGIES:
        results = [simulate(Storm(**{**storm.__dict__, "seed": seed}), strategy) for seed in SEEDS]
        out[strategy] = (
            sum(r.calls for r in results) / len(results),
            sum(r.completion_s for r in results) / len(results),
        )
    return out


@pytest.fixture(scope="module")
def contention() -> dict[str, tuple[float, float]]:
    return averaged(Storm(model="contention", clients=100))


def test_without_jitter_the_most_calls_and_the_longest(
    contention: dict[str, tuple[float, float]],
) -> None:
    calls = {s: c for s, (c, _) in contention.items()}
    time = {s: t for s, (_, t) in contention.items()}
    # Every strategy without jitter does more work than every jittered one…
    assert min(calls[s] for s in NO_JITTER) > max(calls[s] for s in JITTERED)
    # …and exponential backoff without jitter, the blog's "No Jitter", takes the longest.
    assert max(time, key=time.__getitem__) == "exponential"
    assert calls["exponential"] > 2 * calls["full_jitter"]


def test_full_jitter_no_more_calls_than_equal_and_near_the_fewest(
    contention: dict[str, tuple[float, float]],
) -> None:
    calls = {s: c for s, (c, _) in contention.items()}
    assert calls["full_jitter"] <= calls["equal_jitter"]
    assert calls["full_jitter"] <= min(calls.values()) * 1.03


def test_equal_jitter_takes_longer_than_full(contention: dict[str, tuple[float, float]]) -> None:
    # The blog: "Equal Jitter" does slightly more work than "Full Jitter", and takes much longer.
    assert contention["equal_jitter"][1] > contention["full_jitter"][1]


@pytest.mark.parametrize("model", ["contention", "outage"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_deterministic_for_a_seed(model: str, strategy: str) -> None:
    storm = Storm(model=model, clients=50, seed=42, outage_s=2)
    first, again = simulate(storm, strategy), simulate(storm, strategy)
    assert first == again
    other = simulate(Storm(model=model, clients=50, seed=43, outage_s=2), strategy)
    assert (other.calls, other.completion_s) != (first.calls, first.completion_s)


def test_every_client_finishes_and_every_call_is_counted() -> None:
    for model in ("contention", "outage"):
        result = simulate(Storm(model=model, clients=30, outage_s=2), "full_jitter")
        assert result.calls == sum(result.load.values())
        assert result.calls >= 30
        assert not result.truncated and result.gave_up == 0


def test_an_outage_holds_the_clients_until_it_ends() -> None:
    result = simulate(Storm(model="outage", clients=200, outage_s=5), "full_jitter")
    assert result.completion_s >= 5
    # The server serves 100 calls a second: 200 clients need about two more seconds.
    assert result.completion_s >= 5 + 200 / 100 - 0.5


def test_a_retry_budget_lowers_the_peak_load() -> None:
    storm = Storm(model="outage", clients=1000, strategy="none", outage_s=10, base_ms=100)
    without = simulate(storm, "none")
    budget = simulate(Storm(**{**storm.__dict__, "budget": Budget(burst=10, per_s=5)}), "none")
    assert budget.peak_load < without.peak_load / 10
    assert budget.calls < without.calls / 10
    # The price: callers get the error instead of a retry.
    assert budget.gave_up > 0 and without.gave_up == 0


def test_the_answer_for_all_strategies_shares_one_time_axis() -> None:
    answer = storm_answer({"model": "contention", "clients": 20, "strategy": "all", "seed": 3})
    assert [r["strategy"] for r in answer["results"]] == list(STRATEGIES)
    for result in answer["results"]:
        assert set(result) >= {"calls", "completion_s", "peak_load", "series"}
        series = result["series"]
        assert sum(point["calls"] for point in series) == result["calls"]
        assert [p["t_s"] for p in series] == [
            round(i * answer["bucket_s"], 3) for i in range(len(series))
        ]
        assert len(series) <= 101


def test_one_strategy_answers_one_result() -> None:
    answer = storm_answer({"model": "outage", "clients": 10, "strategy": "exponential"})
    assert answer["strategy"] == "exponential"
    assert answer["calls"] >= 10 and answer["completion_s"] >= 10
    assert "results" not in answer


@pytest.mark.parametrize(
    ("request_", "member"),
    [
        ({"model": "tsunami"}, "model"),
        ({"clients": 0}, "clients"),
        ({"clients": 1001}, "clients"),
        ({"clients": 10.5}, "clients"),
        ({"strategy": "linear"}, "strategy"),
        ({"base_ms": 0}, "base_ms"),
        ({"cap_ms": 60_001}, "cap_ms"),
        ({"capacity_per_s": 0}, "capacity_per_s"),
        ({"outage_s": 31}, "outage_s"),
        ({"budget": 5}, "budget"),
        ({"budget": {"burst": 0, "per_s": 1}}, "budget.burst"),
        ({"budget": {"burst": 1}}, "budget"),
        ({"seed": -1}, "seed"),
        ({"seed": True}, "seed"),
        ({"wind": 3}, "wind"),
    ],
)
def test_a_bad_storm_is_a_422_naming_it(request_: dict[str, Any], member: str) -> None:
    with pytest.raises(Problem) as caught:
        storm_answer(request_)
    assert caught.value.status == 422
    assert caught.value.slug == "invalid-storm"
    assert member in caught.value.extra["errors"]


def test_a_storm_that_is_not_an_object_is_a_422() -> None:
    with pytest.raises(Problem) as caught:
        storm_answer([1, 2])
    assert caught.value.status == 422
