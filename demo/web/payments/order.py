"""The order form: one payment intent, one idempotency key derived from it."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ...payments.charges import MAX_AMOUNT

KEY_TEMPLATE = "t1:u7:pay:order-{order}:v1"
"""A stable key per intent: tenant, actor, operation, business id, version."""


def intent_key(order_id: str) -> str:
    """The idempotency key the page derives for paying ``order_id``: one intent, one key.
    A character of the order id outside printable ASCII is percent-encoded (UTF-8), as
    js/key-field.js does: ``đơn-1`` → ``order-%C4%91%C6%A1n-1``, a key any HTTP header
    carries (a key the page builds must always be sendable). A comma too (``a,b`` →
    ``order-a%2Cb``): the server refuses a key holding one (charges.parse_idempotency_key)."""
    part = "".join(c if "!" <= c <= "~" and c != "," else quote(c, safe="") for c in order_id)
    return KEY_TEMPLATE.replace("{order}", part)


def order_form(order_id: str, amount: int) -> dict[str, Any]:
    """What the order form shows: ``{"order_id", "amount" (minor units), "currency",
    "key", "max_amount"}`` (the most a charge may be, minor units: Change amount & resend
    stays under it)."""
    return {
        "order_id": order_id,
        "amount": amount,
        "currency": "VND",
        "key": intent_key(order_id),
        "max_amount": MAX_AMOUNT,
    }
