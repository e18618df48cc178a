"""The payment lab's ledger as the retry lab reads it: through its public API
(``GET /api/state``), never its objects."""

from __future__ import annotations

from typing import Any

from ..engine.problems import Problem
from ..engine.text import N_
from .transport import NetworkError, Transport


def payment_state(send: Transport, *, before: bool = False) -> dict[str, Any]:
    """The payment lab's state, through its public API (``GET /api/state``).

    :param before: the run has not started: refuse it (409) if the payment lab is in step
        mode, where every attempt would wait until stepped by hand (up to 120 s each).
    :raises Problem: 502 ``payment-lab-unreachable`` if it cannot be read; 409
        ``payment-lab-stepping`` (see ``before``).
    """
    try:
        status, _, state = send("GET", "/api/state", {}, None)
    except NetworkError:
        status, state = 0, None
    if status != 200 or not isinstance(state, dict) or not isinstance(state.get("charges"), list):
        raise Problem(
            502,
            "payment-lab-unreachable",
            N_("Payment lab unreachable"),
            N_("The payment lab's state could not be read, so the run's charges are unknown."),
        )
    settings = state.get("settings")
    if before and isinstance(settings, dict) and settings.get("step_mode") is True:
        raise Problem(
            409,
            "payment-lab-stepping",
            N_("Payment lab in step mode"),
            N_(
                "The payment lab is in step mode: every attempt would wait there until "
                "stepped. Turn step mode off in the payment lab, then run again."
            ),
        )
    return state


def charges_for(state: dict[str, Any], order_id: str) -> int:
    """How many charges the payment lab's ledger holds for ``order_id``."""
    return sum(1 for c in state["charges"] if isinstance(c, dict) and c.get("order_id") == order_id)
