"""The delivery-semantics simulator: deterministic for a seed, and counts that say what
each delivery semantics does."""

from __future__ import annotations

from typing import Any

import pytest

from demo.engine.problems import Problem
from demo.queue.simulator import MODES, parse_simulation, simulate


def run(mode: str, messages: int = 10_000, loss: float = 0.2, ack_loss: float = 0.2,
        seed: int = 7) -> Any:  # fmt: skip
    return simulate(mode=mode, messages=messages, loss=loss, ack_loss=ack_loss, seed=seed)


@pytest.mark.parametrize("mode", MODES)
def test_the_same_seed_gives_the_same_counts(mode: str) -> None:
    assert run(mode) == run(mode)
    assert run(mode, seed=8) != run(mode)


def test_at_most_once_loses_and_never_duplicates() -> None:
    result = run("at_most_once")
    assert result.sent == 10_000
    assert result.lost > 0 and result.delivered + result.lost == 10_000
    assert result.effects == result.delivered and result.duplicate_effects == 0
    assert 1_700 < result.lost < 2_300  # about 20% of 10,000


def test_at_least_once_loses_nothing_and_duplicates() -> None:
    result = run("at_least_once")
    assert result.lost == 0
    assert result.duplicate_effects > 0 and result.effects == 10_000 + result.duplicate_effects
    assert result.sent > result.delivered > 10_000
    # One delivery in five loses its ack: about 0.25 extra deliveries per job (geometric).
    assert 2_100 < result.duplicate_effects < 2_900


def test_the_idempotent_consumer_is_exactly_once_in_effect() -> None:
    transport, result = run("at_least_once"), run("idempotent")
    assert (result.lost, result.duplicate_effects, result.effects) == (0, 0, 10_000)
    # The same transport for the same seed: only the consumer differs.
    assert (result.sent, result.delivered) == (transport.sent, transport.delivered)


@pytest.mark.parametrize("loss", [0.0, 0.5, 0.9])
def test_idempotent_has_no_loss_and_no_duplicate_whatever_the_loss(loss: float) -> None:
    result = run("idempotent", loss=loss, ack_loss=0.9)
    assert (result.lost, result.duplicate_effects, result.effects) == (0, 0, 10_000)


def test_a_perfect_link_is_one_send_per_message() -> None:
    for mode in MODES:
        result = run(mode, loss=0, ack_loss=0)
        assert (result.sent, result.delivered, result.lost, result.effects) == (
            10_000, 10_000, 0, 10_000)  # fmt: skip


def test_100000_messages_are_simulated() -> None:
    # The speed is measured in bench/queue.py; here only that the largest run completes.
    result = run("idempotent", messages=100_000, loss=0.9, ack_loss=0.9)
    assert result.effects == 100_000 and result.delivered > 100_000


@pytest.mark.parametrize(
    "body",
    [
        None,
        {"mode": "exactly_once", "messages": 10},
        {"mode": "idempotent", "messages": 0},
        {"mode": "idempotent", "messages": 100_001},
        {"mode": "idempotent", "messages": 10.0},
        {"mode": "idempotent", "messages": 10, "loss": 1},
        {"mode": "idempotent", "messages": 10, "ack_loss": -0.1},
        {"mode": "idempotent", "messages": 10, "loss": True},
        {"mode": "idempotent", "messages": 10, "seed": -1},
        {"mode": "idempotent", "messages": 10, "speed": 2},
    ],
)
def test_bad_simulations_are_422(body: Any) -> None:
    with pytest.raises(Problem) as bad:
        parse_simulation(body)
    assert (bad.value.status, bad.value.slug) == (422, "invalid-simulation")
