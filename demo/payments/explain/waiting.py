"""No answer to explain yet: nothing sent, a request in flight, or step mode holding it."""

from __future__ import annotations

from collections.abc import Sequence

from ...engine.text import N_
from ..requests import RequestEntry
from ..settings import Settings
from .explanation import Explanation


def waiting(
    focus: RequestEntry | None,
    entries: Sequence[RequestEntry],
    settings: Settings,
    first_click: str,
    *,
    in_scenario: bool,
) -> Explanation:
    """Before the first answer: what the lab is waiting for, or which button to press.

    :param focus: the request asked about, unfinished; ``None`` when none has finished.
    :param first_click: the open lesson's first button (``data-action`` name).
    :param in_scenario: a scenario's card is open: the hint points to its steps.
    """
    if focus is None and entries:
        return _stepping() if settings.step_mode else _in_flight()
    if in_scenario and first_click != "Double-submit":
        # The card's steps name the buttons (lesson 2: Retry with a new key, not Retry).
        return Explanation(
            "idle",
            N_("Nothing sent yet"),
            (N_("Press Pay, then follow the steps on the card: each step names its button."),),
        )
    return _nothing_sent(first_click)


def _stepping() -> Explanation:
    return Explanation(
        "idle",
        N_("STEP MODE — you are the scheduler"),
        (
            N_(
                "Each request waits at a step boundary of the real handler until you step "
                "it. Step them in any order; the code view shows the line each one stands on."
            ),
        ),
    )


def _in_flight() -> Explanation:
    return Explanation(
        "idle",
        N_("IN FLIGHT — waiting for the answer"),
        (
            N_(
                "The request has reached the server and is on its way through the steps on "
                "the timeline; the gateway takes the latency you set."
            ),
        ),
    )


def _nothing_sent(first_click: str) -> Explanation:
    if first_click == "Double-submit":
        return Explanation(
            "idle",
            N_("Nothing sent yet"),
            (
                N_(
                    "Press Double-submit: two requests leave at the same moment, like a double "
                    "click. Then follow the steps on the lesson card."
                ),
            ),
        )
    return Explanation(
        "idle",
        N_("Nothing sent yet"),
        (
            N_(
                "Press Pay to charge the order once. Then press Retry: it sends the same "
                "idempotency key and body again, as a client does after a timeout. (In a "
                "scenario, follow the steps on its card.)"
            ),
        ),
    )
