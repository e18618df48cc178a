"""The retry lab page's forms, read into the JSON requests the lab's API takes.

The page posts plain HTML forms (checkbox groups, a preset or a free fault list); these
functions turn them into ``{"policy": …, "faults": …}`` and the storm request, and leave
every check to the lab (:meth:`~demo.retries.lab.RetriesLab.run` answers 422
problem+json for a bad value, which the page shows in its notice line)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from werkzeug.datastructures import MultiDict

from ...engine.text import N_

FAULT_PRESETS: tuple[tuple[tuple[str | int, ...], str], ...] = (
    (("lose_response", 503, "ok"), N_("lost answer, overloaded, then served")),
    (("lose_response", "ok"), N_("charged, answer lost, then served")),
    ((429, "ok"), N_("429 with Retry-After: 3, then served")),
    ((503, 503, "ok"), N_("overloaded twice, then served")),
    ((502, 502, 502, 502, 502), N_("a bad gateway, five times")),
    ((400,), N_("400: the request is wrong")),
    ((402,), N_("402: the card was declined")),
)
"""The fault plans the page offers in one click (the issue's examples), each with what it
plays. Any other plan goes in the free list."""

_INT = re.compile(r"-?[0-9]{1,9}")
_POLICY_INTS = ("max_attempts", "base_ms", "cap_ms")
_STORM_INTS = ("clients", "base_ms", "cap_ms", "capacity_per_s", "outage_s", "seed")


def _number(value: str) -> int | str:
    """A form field as the JSON value it stands for: an integer if it reads as one, else
    the text itself (the lab then says why it is refused)."""
    text = value.strip()
    return int(text) if _INT.fullmatch(text) else text


def _retry_on(value: str) -> str | int:
    return value if value == "network" else _number(value)


def policy_from(form: MultiDict[str, str]) -> dict[str, Any]:
    """The policy the editor holds: every member (an unticked box is ``false``)."""
    policy: dict[str, Any] = {name: _number(form.get(name, "")) for name in _POLICY_INTS}
    policy["strategy"] = form.get("strategy", "")
    policy["retry_on"] = [_retry_on(v) for v in form.getlist("retry_on")]
    policy["respect_retry_after"] = form.get("respect_retry_after") == "on"
    policy["same_key"] = form.get("same_key") == "on"
    return policy


def faults_from(form: MultiDict[str, str]) -> Any:
    """The fault plan: a preset (``faults_choice`` its index), or the free list
    (``faults_choice=custom``; ``lose_response, 503, ok`` or a JSON list)."""
    choice = form.get("faults_choice", "custom")
    if choice.isdigit() and int(choice) < len(FAULT_PRESETS):
        return list(FAULT_PRESETS[int(choice)][0])
    text = form.get("faults", "").strip()
    if text.startswith("["):
        try:
            return json.loads(text)
        except ValueError:
            return text  # the lab refuses it: "must be a list"
    return [_fault(token) for token in re.split(r"[\s,]+", text) if token]


def _fault(token: str) -> str | int:
    token = token.strip("\"'")
    return int(token) if token.isdigit() else token


def plan_text(faults: tuple[str | int, ...] | list[str | int]) -> str:
    """A fault plan as the free list shows it: ``lose_response, 503, ok``."""
    return ", ".join(str(f) for f in faults)


def preset_index(faults: tuple[str | int, ...] | list[str | int]) -> int | None:
    """The preset holding ``faults``, if one does."""
    return next((i for i, (plan, _) in enumerate(FAULT_PRESETS) if tuple(faults) == plan), None)


def storm_from(form: MultiDict[str, str]) -> dict[str, Any]:
    """The storm request the storm form holds (``budget`` only when its box is ticked)."""
    storm: dict[str, Any] = {name: _number(form.get(name, "")) for name in _STORM_INTS}
    storm["model"] = form.get("model", "")
    storm["strategy"] = form.get("strategy", "")
    if form.get("budget") == "on":
        storm["budget"] = {
            "burst": _number(form.get("budget_burst", "")),
            "per_s": _number(form.get("budget_per_s", "")),
        }
    return storm


def storm_shown(request: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """What the storm form shows: the lab's storm request over the defaults."""
    shown = {**defaults, **request}
    budget = request.get("budget")
    shown["budget_on"] = isinstance(budget, Mapping)
    shown["budget"] = budget if isinstance(budget, Mapping) else defaults["budget"]
    return shown
