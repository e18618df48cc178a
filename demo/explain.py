"""Plain-language explanations of what just happened, computed from the lab's real log.

Each explanation answers *why*: why the retry replayed, why the 409, why two charges,
and what the lock changes. No web framework; the page only formats the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .gateway import LedgerSummary
from .lab import RequestEntry

Tone = Literal["idle", "charged", "replayed", "conflict", "error", "double"]


@dataclass(frozen=True)
class Explanation:
    """A headline and one to three sentences; ``tone`` picks the badge and colour."""

    tone: Tone
    headline: str
    sentences: tuple[str, ...]


def explain(
    entries: Sequence[RequestEntry], summary: LedgerSummary, focus: RequestEntry | None = None
) -> Explanation:
    """Explain ``focus`` (default: the latest finished request) among ``entries``.

    :param entries: the lab's request log, oldest first.
    :param summary: the ledger summary, to name double charges.
    """
    finished = [e for e in entries if e.finished is not None]
    if focus is None:
        focus = finished[-1] if finished else None
    if focus is None or focus.finished is None:
        return Explanation(
            "idle",
            "Nothing sent yet",
            (
                "Press Pay to charge the order once. Then press Retry: it sends the same "
                "idempotency key and body again, as a client does after a timeout.",
            ),
        )
    if focus.outcome == "invalid":
        return Explanation(
            "error",
            f"{focus.status} — refused before anything ran",
            (
                f"{focus.problem or 'The request was invalid'}. Validation runs first and stores "
                "nothing, so the same key can be retried with a corrected request.",
            ),
        )
    if focus.outcome == "error":
        return Explanation(
            "error",
            f"{focus.status} — the gateway failed",
            (
                "The gateway failed before charging. The server released the key instead of "
                "leaving it in progress, so a retry with the same key runs again.",
            ),
        )
    if focus.outcome == "conflict":
        return _conflict(focus, entries)
    if focus.outcome == "replayed":
        return _replayed(focus, entries)
    return _charged(focus, entries, summary)


def _conflict(focus: RequestEntry, entries: Sequence[RequestEntry]) -> Explanation:
    if focus.problem and "in use" in focus.problem:
        return Explanation(
            "conflict",
            "409 — key still in use",
            ("Another request with this key held the lock for too long; nothing was charged.",),
        )
    first = next(
        (
            e
            for e in entries
            if e.key == focus.key
            and e.charge
            and e.fingerprint != focus.fingerprint
            and e.outcome == "charged"
        ),
        None,
    )
    bodies = (
        f" (amount {first.charge.amount:,}, now {focus.charge.amount:,})"
        if first and first.charge and focus.charge
        else ""
    )
    return Explanation(
        "conflict",
        "409 CONFLICT — same key, different request",
        (
            f"The key {focus.key} was first used with another body{bodies}, so the fingerprints "
            "differ. "
            "The server refused before taking any lock and charged nothing: one key stands for "
            "one intent.",
            "To pay a different amount, start a New order: a new intent gets a new key.",
        ),
    )


def _replayed(focus: RequestEntry, entries: Sequence[RequestEntry]) -> Explanation:
    acquired = focus.step("lock acquire")
    waited = float(acquired.detail.get("waited_ms", 0)) if acquired else 0.0
    sentences = [
        f"The key {focus.key} was already in the store with the same fingerprint, so the "
        f"server sent back the stored response ({focus.charge_id}) with "
        "Idempotent-Replayed: true. The gateway was not called.",
    ]
    if waited >= 1:
        first = _overlapping_charger(focus, entries)
        who = f"#{first.id}" if first else "the first request"
        sentences.insert(
            0,
            f"This request arrived while {who} was still charging. It waited {waited:.0f} ms "
            "for the per-key lock, looked the key up again, and found the finished record.",
        )
    return Explanation(
        "replayed", f"REPLAYED — {focus.charge_id} again, no new charge", tuple(sentences)
    )


def _charged(
    focus: RequestEntry, entries: Sequence[RequestEntry], summary: LedgerSummary
) -> Explanation:
    order = focus.charge.order_id if focus.charge else "?"
    doubled = order in summary.doubled
    twin = _overlapping_charger(focus, entries)
    if doubled and twin is not None and focus.key is not None and twin.key == focus.key:
        return _race(focus, twin, order)
    if doubled and focus.key is None:
        return Explanation(
            "double",
            f"DOUBLE CHARGE — order {order} paid again",
            (
                "This request had no Idempotency-Key, so the server could not tell a retry "
                "from a new payment and charged again.",
                "Give every attempt of one intent the same key.",
            ),
        )
    if doubled:
        return Explanation(
            "double",
            f"DOUBLE CHARGE — order {order} paid again",
            (
                f"The key {focus.key} was new to the store, so it charged. But order {order} "
                "had already been paid under another key: the store deduplicates keys, not "
                "orders.",
                "Derive the key from the intent (order, operation, version), never per click.",
            ),
        )
    if focus.key is None:
        return Explanation(
            "charged",
            f"CHARGED — {focus.charge_id}, without a key",
            (
                "No Idempotency-Key was sent, so nothing protects this payment: a retry would "
                "charge again.",
            ),
        )
    return Explanation(
        "charged",
        f"CHARGED — {focus.charge_id} for order {order}",
        (
            f"The key {focus.key} was new: the server "
            + ("took the per-key lock, reserved the key, " if focus.lock else "")
            + "called the gateway and stored the response.",
            "Press Retry: the same key and body replay this response instead of charging again.",
        ),
    )


def _race(a: RequestEntry, b: RequestEntry, order: str) -> Explanation:
    first, second = sorted((a, b), key=lambda e: e.started)
    origin = first.started

    def at(entry: RequestEntry, step: str) -> str:
        found = entry.step(step)
        if found is None:
            return "?"
        return f"+{(entry.started - origin) * 1000 + found.at_ms:.0f} ms"

    return Explanation(
        "double",
        f"DOUBLE CHARGE — order {order} paid twice with one key",
        (
            f"Requests #{first.id} and #{second.id} carried the same key {a.key} and overlapped. "
            f"Both looked the key up ({at(first, 'lookup')} and {at(second, 'lookup')}) before "
            f"either saved its record ({at(first, 'record save')}), so both found nothing and both "
            "charged.",
            "That is a TOCTOU race: the check and the act are separate steps, and the Lock is off. "
            "With the Lock on, the second request waits for the first, looks again and replays.",
        ),
    )


def _overlapping_charger(
    focus: RequestEntry, entries: Sequence[RequestEntry]
) -> RequestEntry | None:
    """Another request with the same key that charged while ``focus`` was in flight."""
    end = focus.finished or focus.started
    for other in entries:
        if other.id == focus.id or other.key != focus.key or other.outcome != "charged":
            continue
        other_end = other.finished or other.started
        if other.started <= end and focus.started <= other_end:
            return other
    return None
