"""The storm request's rules (``POST /lab/<id>/retries/api/storm``), and its answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..engine.problems import Problem
from ..engine.text import N_, Reasons, Text
from .policy import MAX_BASE_MS, MAX_CAP_MS, STRATEGIES
from .storm import MODELS, Budget, Storm, bucket_for, run_storm

MAX_CLIENTS = 1000
MAX_SEED = 2**31 - 1

DEFAULTS: Mapping[str, Mapping[str, int]] = {
    "contention": {"base_ms": 10, "cap_ms": 2_000},  # the AWS blog's first wait and cap
    "outage": {"base_ms": 100, "cap_ms": 10_000},
}
"""``base_ms`` and ``cap_ms`` when the request leaves them out, per model."""

RANGES = {
    "clients": (1, MAX_CLIENTS),
    "base_ms": (1, MAX_BASE_MS),
    "cap_ms": (1, MAX_CAP_MS),
    "capacity_per_s": (10, 100_000),
    "outage_s": (1, 30),
    "seed": (0, MAX_SEED),
}
BUDGET_RANGES = {"burst": (1, 10_000), "per_s": (0, 10_000)}


def parse_storm(value: object) -> tuple[Storm, tuple[str, ...]]:
    """The storm ``value`` asks for, and the strategies to run (all six for ``"all"``).

    Members: ``model`` (``"outage"`` or ``"contention"``, default ``"contention"``),
    ``clients`` (1-1000, 100), ``strategy`` (one of :data:`~.policy.STRATEGIES` or
    ``"all"``, default ``"all"``), ``base_ms`` and ``cap_ms`` (see :data:`DEFAULTS`),
    ``capacity_per_s`` (10-100,000, 100) and ``outage_s`` (1-30 s, 10) for the outage,
    ``budget`` (``null`` or ``{"burst": 1-10,000, "per_s": 0-10,000}``), ``seed`` (0-2³¹-1, 1).

    :raises Problem: 422 ``invalid-storm`` naming each bad member.
    """
    if not isinstance(value, Mapping):
        raise _bad_storm({"body": N_("must be a JSON object")})
    errors: dict[str, str | Text] = {}
    model = value.get("model", "contention")
    if model not in MODELS:
        errors["model"] = Text("must be one of %(choices)s", choices=", ".join(MODELS))
        model = "contention"
    strategy = value.get("strategy", "all")
    if strategy != "all" and strategy not in STRATEGIES:
        errors["strategy"] = Text(
            "must be one of %(choices)s", choices=", ".join(("all", *STRATEGIES))
        )
    members: dict[str, Any] = {**DEFAULTS[model]}
    for name, given in value.items():
        if name in RANGES:
            low, high = RANGES[name]
            if isinstance(given, bool) or not isinstance(given, int) or not low <= given <= high:
                errors[name] = Text(
                    "must be an integer from %(low)s to %(high)s", low=low, high=high
                )
            else:
                members[name] = given
        elif name == "budget":
            members["budget"] = _budget(given, errors)
        elif name not in ("model", "strategy"):
            errors[str(name)] = Text(
                "is not a storm member (they are: %(names)s)",
                names=", ".join(("model", "strategy", *RANGES, "budget")),
            )
    if errors:
        raise _bad_storm(errors)
    chosen = STRATEGIES if strategy == "all" else (strategy,)
    return Storm(model=model, strategy=chosen[0], **members), chosen


def _budget(value: object, errors: dict[str, str | Text]) -> Budget | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) != set(BUDGET_RANGES):
        errors["budget"] = N_('must be null or {"burst": …, "per_s": …}')
        return None
    for name, (low, high) in BUDGET_RANGES.items():
        given = value[name]
        if isinstance(given, bool) or not isinstance(given, int) or not low <= given <= high:
            errors[f"budget.{name}"] = Text(
                "must be an integer from %(low)s to %(high)s", low=low, high=high
            )
    return None if errors else Budget(burst=value["burst"], per_s=value["per_s"])


def _bad_storm(errors: dict[str, str | Text]) -> Problem:
    reasons = Reasons(errors)
    return Problem(
        422,
        "invalid-storm",
        N_("Invalid storm"),
        Text("Fix the storm: %(fields)s.", fields=reasons),
        errors=reasons.english(),
    )


def storm_answer(value: object) -> dict[str, Any]:
    """Simulate the storm ``value`` asks for; the API's answer.

    :returns: ``{"model", "clients", "seed", "bucket_s", "strategy", "calls",
        "completion_s", "peak_load", "gave_up", "truncated", "series"}`` for one strategy;
        for ``"all"``, ``{"model", "clients", "seed", "bucket_s", "results": [one per
        strategy]}``. ``series`` is ``[{"t_s", "calls"}]``, calls per ``bucket_s``, one
        bucket width for every strategy of the answer.
    :raises Problem: 422 for a bad request (see :func:`parse_storm`).
    """
    storm, strategies = parse_storm(value)
    results = run_storm(storm, strategies)
    bucket_s = bucket_for(max(r.completion_s for r in results))
    head = {
        "model": storm.model,
        "clients": storm.clients,
        "seed": storm.seed,
        "bucket_s": bucket_s,
    }
    if len(strategies) == 1:
        return {**head, **results[0].as_dict(bucket_s)}
    return {**head, "results": [r.as_dict(bucket_s) for r in results]}
