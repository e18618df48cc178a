"""The delivery-semantics simulator: N messages over a link that loses messages and acks.

Each message is sent by the broker; a send is lost with probability ``loss``. A message
that arrives is processed (one side effect, or none for a duplicate under the idempotent
consumer) and acked; the ack is lost with probability ``ack_loss``.

- ``at_most_once``: one send each, acked on send: a lost send is a lost job.
- ``at_least_once``: the broker sends again until an ack comes back: no job is lost
  (``loss`` < 1), and each lost ack repeats the side effect.
- ``idempotent``: the same transport, and a consumer that dedups on the job's key: every
  job has exactly one side effect. "Exactly-once" is this, not a switch on the queue.

The counts come from geometric draws (one per delivery, not per send), so 100,000
messages take a fraction of a second; a ``seed`` gives the same counts every time, and
the same transport to ``at_least_once`` and ``idempotent``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

from ..engine.problems import Problem
from ..engine.text import N_, Reasons, Text

MODES = ("at_most_once", "at_least_once", "idempotent")
MAX_MESSAGES = 100_000
MAX_LOSS = 0.9
MAX_SEED = 2**63 - 1


@dataclass(frozen=True)
class Simulation:
    """What happened to ``messages`` jobs.

    :param sent: sends by the broker, retries included.
    :param delivered: sends that reached the consumer (duplicates included).
    :param lost: jobs that never reached the consumer.
    :param effects: side effects (e-mails sent).
    :param duplicate_effects: side effects beyond the first of a job.
    """

    mode: str
    messages: int
    loss: float
    ack_loss: float
    seed: int
    sent: int
    delivered: int
    lost: int
    effects: int
    duplicate_effects: int

    def as_dict(self) -> dict[str, object]:
        """The result as the API spells it."""
        return asdict(self)


def simulate(*, mode: str, messages: int, loss: float, ack_loss: float, seed: int) -> Simulation:
    """Run the simulation (arguments already checked: see :func:`parse_simulation`)."""
    rng = random.Random(seed)
    draw = rng.random
    if mode == "at_most_once":
        delivered = sum(1 for _ in range(messages) if draw() >= loss)
        return Simulation(mode, messages, loss, ack_loss, seed, messages, delivered,
                          messages - delivered, delivered, 0)  # fmt: skip
    # Deliveries of one job: 1 + the acks lost before one gets through (geometric), and
    # before each delivery the sends lost on the way (geometric too). Only totals are
    # reported, so the draws are summed as they come.
    delivered = messages + _geometric_sum(draw, messages, ack_loss)
    sends_lost = _geometric_sum(draw, delivered, loss)
    effects = messages if mode == "idempotent" else delivered
    return Simulation(mode, messages, loss, ack_loss, seed, delivered + sends_lost, delivered,
                      0, effects, effects - messages)  # fmt: skip


def _geometric_sum(draw: Callable[[], float], count: int, p: float) -> int:
    """The total of ``count`` draws of the failures before a success, where each try
    fails with probability ``p`` (inverse transform: ⌊ln U / ln p⌋)."""
    if p <= 0:
        return 0
    scale, log = 1.0 / math.log(p), math.log
    return sum([int(log(1.0 - draw()) * scale) for _ in range(count)])


def parse_simulation(body: object) -> dict[str, object]:
    """Check a simulation request and return its arguments for :func:`simulate`.

    :param body: ``{"mode", "messages", "loss", "ack_loss", "seed"}``: ``mode`` one of
        :data:`MODES`; ``messages`` an integer 1-100,000; ``loss`` and ``ack_loss``
        numbers 0-0.9 (probabilities); ``seed`` an integer 0 to 2⁶³-1 (default 0).
    :raises Problem: 422 ``invalid-simulation`` naming every bad member.
    """
    if not isinstance(body, Mapping):
        raise _invalid({"body": N_("must be a JSON object")})
    errors: dict[str, str | Text] = {}
    for name in body:
        if name not in ("mode", "messages", "loss", "ack_loss", "seed"):
            errors[str(name)] = N_("unknown member")
    mode = body.get("mode")
    if not isinstance(mode, str) or mode not in MODES:
        errors["mode"] = Text("must be one of %(choices)s",
                              choices=", ".join(f'"{m}"' for m in MODES))  # fmt: skip
    messages = body.get("messages")
    if not _int_in(messages, 1, MAX_MESSAGES):
        errors["messages"] = Text("must be an integer from %(low)s to %(high)s",
                                  low=1, high=MAX_MESSAGES)  # fmt: skip
    for name in ("loss", "ack_loss"):
        value = body.get(name, 0)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (0 <= value <= MAX_LOSS)
        ):
            errors[name] = Text("must be a number from 0 to %(high)s", high=MAX_LOSS)
    seed = body.get("seed", 0)
    if not _int_in(seed, 0, MAX_SEED):
        errors["seed"] = N_("must be a non-negative integer")
    if errors:
        raise _invalid(errors)
    return {"mode": mode, "messages": messages, "loss": float(body.get("loss", 0)),
            "ack_loss": float(body.get("ack_loss", 0)), "seed": seed}  # fmt: skip


def _int_in(value: object, low: int, high: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and low <= value <= high


def _invalid(errors: dict[str, str | Text]) -> Problem:
    reasons = Reasons(errors)
    return Problem(
        422,
        "invalid-simulation",
        N_("Invalid simulation"),
        Text("Fix the simulation: %(fields)s.", fields=reasons),
        errors=reasons.english(),
    )
