"""The order form: one payment intent, one idempotency key derived from it."""

from __future__ import annotations

from typing import Any

KEY_TEMPLATE = "t1:u7:pay:order-{order}:v1"
"""A stable key per intent: tenant, actor, operation, business id, version."""


def intent_key(order_id: str) -> str:
    """The idempotency key the page derives for paying ``order_id``: one intent, one key."""
    return KEY_TEMPLATE.replace("{order}", order_id)


def order_form(order_id: str, amount: int) -> dict[str, Any]:
    """What the order form shows: ``{"order_id", "amount" (minor units), "currency",
    "key"}``."""
    return {"order_id": order_id, "amount": amount, "currency": "VND", "key": intent_key(order_id)}
