"""The rule every lab's settings patch follows: known names, and values of each setting's
kind (a bool, an integer in its range, or one of its choices)."""

from __future__ import annotations

from collections.abc import Mapping

from .text import N_, Text


def setting_errors(
    current: object,
    changes: Mapping[object, object],
    ranges: Mapping[str, tuple[int, int]],
    choices: Mapping[str, tuple[str, ...]],
) -> dict[str, str | Text]:
    """What is wrong with ``changes`` to the settings dataclass ``current``, by setting
    name; empty when nothing is. A bool setting takes a bool; a setting in ``ranges`` an
    integer from its low to its high (a bool is not one); any other one of its
    ``choices``."""
    errors: dict[str, str | Text] = {}
    known = getattr(current, "__dataclass_fields__", {})
    for name, value in changes.items():
        if name not in known:
            errors[str(name)] = N_("unknown setting")
        elif isinstance(getattr(current, str(name)), bool):
            if not isinstance(value, bool):
                errors[str(name)] = N_("must be true or false")
        elif name in ranges:
            low, high = ranges[str(name)]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                errors[str(name)] = Text(
                    "must be an integer from %(low)s to %(high)s", low=low, high=high
                )
        elif not isinstance(value, str) or value not in choices[str(name)]:
            errors[str(name)] = Text(
                "must be one of %(choices)s",
                choices=", ".join(f'"{c}"' for c in choices[str(name)]),
            )
    return errors


def fix_set_by_hand(
    scenario_settings: Mapping[str, object],
    fix: Mapping[str, object],
    settings: Mapping[str, object],
) -> bool:
    """Whether the lab's ``settings`` already hold every setting a scenario's ``fix``
    changes from its ``scenario_settings``, the fix not applied: the attendee ticked it by
    hand (the payment lab's Lock, the queue lab's Dedup). False for a fix that changes no
    setting."""
    changed = {k: v for k, v in fix.items() if scenario_settings.get(k) != v}
    return bool(changed) and all(settings.get(k) == v for k, v in changed.items())
