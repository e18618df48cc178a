"""The delivery-semantics simulator: N messages over a link that loses messages and acks.

Each message is sent by the broker; a send is lost with probability ``loss``. A message
that arrives is processed (one side effect, or none for a duplicate under the idempotent
consumer) and acked; the ack is lost with probability ``ack_loss``.

- ``at_most_once``: one send each, acked on send: a lost send is a lost job.
- ``at_least_once``: the broker sends again until an ack comes back: no job is lost
  (``loss`` < 1), and each lost ack repeats the side effect.
- ``idempotent``: the same transport, and a consumer that dedups on the job's key: every
  job has exactly one side effect. "Exactly-once" is this, not a switch on the queue.

Under at-least-once only totals are reported, so each total is drawn at once from its
exact distribution: the deliveries of N jobs are N plus the acks lost before each gets
through (a sum of N geometric draws: a negative binomial), and the lost sends before the
deliveries likewise; 100,000 messages take milliseconds. A ``seed`` gives the same counts
every time, and the same transport to ``at_least_once`` and ``idempotent``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
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
    # Each job: 1 delivery + the acks lost before one gets through; before each
    # delivery, the sends lost on the way.
    delivered = messages + _failures(rng, messages, ack_loss)
    sends_lost = _failures(rng, delivered, loss)
    effects = messages if mode == "idempotent" else delivered
    return Simulation(mode, messages, loss, ack_loss, seed, delivered + sends_lost, delivered,
                      0, effects, effects - messages)  # fmt: skip


def _failures(rng: random.Random, successes: int, p: float) -> int:
    """The failures before ``successes`` successes, each try failing with probability
    ``p``: the sum of ``successes`` geometric draws, drawn at once as a negative binomial
    (a Poisson draw whose mean is a gamma draw: the same distribution, in O(1))."""
    if p <= 0 or successes == 0:
        return 0
    return _poisson(rng, rng.gammavariate(successes, p / (1.0 - p)))


def _poisson(rng: random.Random, mean: float) -> int:
    """A Poisson draw: by multiplication under a mean of 10, else by transformed
    rejection (PTRS: W. Hörmann, "The transformed rejection method for generating Poisson
    random variables", 1993), exact for any mean."""
    if mean < 10:
        limit, product, count = math.exp(-mean), rng.random(), 0
        while product > limit:
            product *= rng.random()
            count += 1
        return count
    root, log_mean = math.sqrt(mean), math.log(mean)
    b = 0.931 + 2.53 * root
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    while True:
        u, v = rng.random() - 0.5, rng.random()
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + mean + 0.43)
        if us >= 0.07 and v <= v_r:
            return k
        if k < 0 or (us < 0.013 and v > us):
            continue
        if math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b) <= (
            -mean + k * log_mean - math.lgamma(k + 1)
        ):
            return k


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
        errors["seed"] = Text("must be an integer from %(low)s to %(high)s", low=0, high=MAX_SEED)
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
