"""Scenario presets: each pitfall from the field, one link each, with its fix beside it.

A scenario sets the lab's switches (and the client's, on the page), says what to click, and
names the settings that fix it. ``script`` lists the page's buttons to click, in order, so "Run
the steps" does with real clicks what the steps say. The shape of a card is
:class:`~demo.payments.preset.Scenario`, re-exported here. The cards themselves are in
``keys.py`` (the key and the lock) and ``production.py`` (what production adds), in the
failure lab's order."""

from __future__ import annotations

from ..preset import Scenario
from .keys import KEYS
from .production import PRODUCTION

__all__ = ["SCENARIOS", "Scenario"]

SCENARIOS: dict[str, Scenario] = {s.name: s for s in (*KEYS, *PRODUCTION)}
"""Every scenario by its kebab-case name (``/lab/<id>?scenario=<name>``)."""
