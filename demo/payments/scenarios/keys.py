"""The key and the lock: a double click with no key, a lost response retried, a new key per
click, a key reused for another body, and the TOCTOU race between two duplicates (at full
speed, and stepped by hand)."""

from __future__ import annotations

from ...engine.text import N_
from ..preset import Scenario

KEYS: tuple[Scenario, ...] = (
    Scenario(
        "double-click",
        N_("Double-click without a key"),
        N_("See a double click pay twice when the client sends no idempotency key."),
        (N_("Press Double-submit: two requests leave at the same moment, with no key."),),
        N_(
            "Without a key the server cannot tell a duplicate from a second payment, so each "
            "request charges."
        ),
        N_(
            "Send a stable key per intent (Key strategy: stable key per intent): the second "
            "request then waits and replays."
        ),
        ("Double-submit",),
        client={"key_strategy": "none"},
        fix_client={"key_strategy": "stable"},
        fix_steps=(
            N_(
                "Press Double-submit: two requests leave at the same moment, with the same "
                "stable key."
            ),
        ),
        fix_badges=(N_("fix OFF: no key sent"), N_("fix ON: a stable key")),
    ),
    Scenario(
        "lost-response",
        N_("Lost response"),
        N_("The server charged, but the response never arrived. Is it safe to retry?"),
        (
            N_("Press Pay: the server charges and saves, then the response is lost."),
            N_("Press “Retry with a new key”, as a client that makes a key per attempt does."),
        ),
        N_(
            "A new key is a new intent to the server: it charges again. The client could not "
            "know the first attempt had succeeded."
        ),
        N_(
            "Retry with the same key: the server replays the stored response, charging "
            "nothing. By hand: press New order, press Lose the response in the Failure lab, "
            "then Pay, then Retry."
        ),
        ("Pay", "Retry with a new key"),
        settings={"fault": "lose_response"},
        fix={"fault": "lose_response"},
        fix_badges=(N_("fix OFF: Retry with a new key"), N_("fix ON: Retry with the same key")),
        fix_script=("Pay", "Retry"),
        fix_steps=(
            N_("Press Pay: the server charges and saves, then the response is lost."),
            N_("Press Retry: the same key again."),
        ),
    ),
    Scenario(
        "key-per-click",
        N_("A new random key per click"),
        N_("See why a request id is not an idempotency key."),
        (N_("Press Pay."), N_("Press Retry: the client makes a fresh random key for it.")),
        N_(
            "Each click carries a new key, so the store never sees the same key twice and "
            "every attempt charges."
        ),
        N_("Derive the key from the intent: tenant, actor, operation, business id, version."),
        ("Pay", "Retry"),
        client={"key_strategy": "random"},
        fix_client={"key_strategy": "stable"},
        fix_badges=(N_("fix OFF: a new key per click"), N_("fix ON: a stable key")),
    ),
    Scenario(
        "key-reuse",
        N_("Same key, another body"),
        N_("Reuse a key with another amount and see the server refuse."),
        (N_("Press Pay."), N_("Press Change amount & resend: same key, amount + 1,000.")),
        N_(
            "The fingerprint of the new body differs from the stored one. The server answers "
            "409 and charges nothing: replaying the old charge for a new amount would be a lie."
        ),
        N_(
            "A different intent gets a new key: Pay, then New order, then Pay again, in an "
            "empty lab: Try the second case empties it (by hand after the first case, this "
            "order's key still holds that case's record)."
        ),
        ("Pay", "Change amount"),
        fix_script=("Pay", "New order", "Pay"),
        fix_steps=(
            N_(
                "The lab starts empty for this case. Press Pay: the first order is charged "
                "under its own key."
            ),
            N_("Press New order: a new intent, a new key."),
            N_(
                "Press Pay: the new order's first request charges once under its new key. "
                "Another amount is another intent too (the first case's 409): a new key."
            ),
        ),
        fix_goal=N_("Give a new order its own key and see it charge once."),
        defence=True,
    ),
    Scenario(
        "race",
        N_("The race: two requests, one key"),
        N_("Make two concurrent duplicates both charge, then stop them with the lock."),
        (N_("Press Double-submit: two requests, one key, at the same moment."),),
        N_(
            "Both requests looked the key up before either saved a record, so both charged: "
            "a TOCTOU race between check and act."
        ),
        N_("Switch the per-key Lock on: the second request waits, looks again and replays."),
        ("Double-submit",),
        settings={"lock": False},
        fix={"lock": True},
    ),
    Scenario(
        "slow-motion",
        N_("Slow-motion race (step mode)"),
        N_("Step two duplicates by hand: you are the scheduler."),
        (
            N_("Press Double-submit: both requests stop at their first step."),
            N_(
                "Both lanes stop after lookup: neither found the key. Step A: it stops at "
                "charging, right before the gateway call. Step B: it stops there too. Step A "
                "again: it charges (the money moves). Step B again: it charges too. "
                "Then press Run A to the end, then Run B to the end."
            ),
        ),
        N_(
            "Both requests passed lookup before either saved a record: whoever schedules "
            "the steps decides whether the duplicate charges."
        ),
        N_("Switch the per-key Lock on: B is blocked at the lock until A has saved its record."),
        ("Double-submit",),
        settings={"lock": False, "step_mode": True},
        fix={"lock": True, "step_mode": True},
        fix_steps=(
            N_("Press Double-submit: both requests stop at their first step."),
            N_("Step A twice, until it holds the lock (stopped after lock acquire)."),
            N_(
                "Step B: it stops at the lock, about to wait for A's lock. Step B again: now "
                "B is blocked, waiting for A's lock."
            ),  # fmt: skip
            N_(
                "Run A to its end: B takes the lock the moment A lets go (its lane's wait "
                "counts from B's first wait until then, your pauses included)."
            ),
            N_(
                "Step B on, one step a press: after lookup again (a hit: A's record), after "
                "the fingerprint check, at respond with its replay, then finished: REPLAYED."
            ),  # fmt: skip
        ),
    ),
)
