"""Plain-language explanations of what just happened, computed from the lab's real log.

Each explanation answers *why*: why the retry replayed, why the 409, why two charges,
and what the lock changes. No web framework; the page only formats the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .gateway import LedgerSummary
from .lab import RequestEntry, Settings

Tone = Literal["idle", "charged", "replayed", "conflict", "error", "double"]


@dataclass(frozen=True)
class Explanation:
    """A headline and one to three sentences; ``tone`` picks the badge and colour."""

    tone: Tone
    headline: str
    sentences: tuple[str, ...]


def explain(
    entries: Sequence[RequestEntry],
    summary: LedgerSummary,
    focus: RequestEntry | None = None,
    settings: Settings | None = None,
    emails: int = 0,
) -> Explanation:
    """Explain ``focus`` (default: the latest finished request) among ``entries``.

    :param entries: the lab's request log, oldest first.
    :param summary: the ledger summary, to name double charges.
    :param settings: the lab's settings now (TTL, store scope), to name causes.
    :param emails: receipt e-mails sent so far.
    """
    settings = settings or Settings()
    finished = [e for e in entries if e.finished is not None]
    if focus is None:
        focus = finished[-1] if finished else None
    if focus is None and entries and settings.step_mode:
        return Explanation(
            "idle",
            "STEP MODE — you are the scheduler",
            (
                "Each request waits at a step boundary of the real handler until you step it. "
                "Step them in any order; the code view shows the line each one stands on.",
            ),
        )
    if focus is None and entries:
        return Explanation(
            "idle",
            "IN FLIGHT — waiting for the answer",
            (
                "The request has reached the server and is on its way through the steps on the "
                "timeline; the gateway takes the latency you set.",
            ),
        )
    if focus is None or focus.finished is None:
        return Explanation(
            "idle",
            "Nothing sent yet",
            (
                "Press Pay to charge the order once. Then press Retry: it sends the same "
                "idempotency key and body again, as a client does after a timeout. (In a "
                "scenario, follow the steps on its card.)",
            ),
        )
    if focus.outcome == "crashed":
        after = focus.step("crash")
        step = after.detail.get("after", "?") if after else "?"
        charged = "after the gateway charged " if step in ("gateway charge", "record save") else ""
        return Explanation(
            "error",
            "CRASHED — the instance died mid-request",
            (
                f"The instance serving #{focus.id} died {charged}(at the step boundary after "
                f"'{step}'). The client saw the connection drop: it cannot tell whether it paid.",
                "Retry with the same key and watch what the store and the gateway make of it.",
            ),
        )
    if not focus.delivered:
        return Explanation(
            "error",
            "NO RESPONSE — did it charge?",
            (
                f"The server charged ({focus.charge_id}) and saved the record, but the response "
                "never reached the client.",
                "Retry with the same key: the store replays the stored response. A new key "
                "would be a new intent, and would charge again.",
            ),
        )
    if focus.outcome == "in_use" and settings.in_flight == "wait":
        return Explanation(
            "conflict",
            f"{focus.status} — gave up waiting for the lock",
            (
                "Another request with this key held the per-key lock too long, so this one "
                "stopped waiting and answered 409 with Retry-After, charging nothing. A retry "
                "after the first finishes gets its replay.",
            ),
        )
    if focus.outcome == "in_use":
        return Explanation(
            "conflict",
            f"{focus.status} — the first request is still in flight",
            (
                "The key was in progress and in-flight duplicates are rejected (Stripe, IETF "
                "draft): 409 with Retry-After, nothing charged.",
                "Retry after the first one finishes and you get its replay. With in-flight set "
                "to wait, the duplicate would have waited for the lock instead.",
            ),
        )
    if focus.outcome == "declined":
        return Explanation(
            "conflict",
            "402 — card declined",
            (
                "The gateway declined: a business answer, not a failure. The server stored it, "
                "so every retry with this key replays the same 402 and charges nothing.",
            ),
        )
    if focus.outcome == "invalid":
        return Explanation(
            "error",
            f"{focus.status} — refused before anything ran",
            (
                f"{focus.problem or 'The request was invalid'}: "
                f"{focus.problem_detail or 'see the response body.'}",
                "Validation runs first and stores nothing, so the same key can be retried "
                "with a corrected request.",
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
        return _replayed(focus, entries, summary)
    if focus.outcome == "recovered":
        crashed = any(
            e.key == focus.key and e.outcome == "crashed" and e.id < focus.id for e in entries
        )
        if crashed:
            sentences = [
                "An earlier attempt with this key crashed after the gateway charged. This "
                "retry found the key in progress with nobody holding its lock, reclaimed it "
                "and called the gateway again with the idempotency key passed on: the gateway "
                f"returned the first charge ({focus.charge_id}) instead of taking the money "
                "twice.",
            ]
        else:
            sentences = [
                "This request got past our store (the lock is off, the record expired, or "
                "another instance served the first), so it called the gateway again. But the "
                "idempotency key went on to the gateway too, and the gateway had seen it: it "
                f"returned the first charge ({focus.charge_id}). Its idempotency caught what "
                "ours missed.",
            ]
        if settings.email == "inline" and emails > summary.intended:
            sentences.append(
                f"But the receipt e-mail is our own side effect: the re-run sent it again "
                f"({emails} e-mails for {summary.intended} order). An outbox written with the "
                "record sends it once."
            )
        return Explanation(
            "charged", f"RECOVERED — {focus.charge_id}, charged once", tuple(sentences)
        )
    return _charged(focus, entries, summary, settings)


def _conflict(focus: RequestEntry, entries: Sequence[RequestEntry]) -> Explanation:
    first = next(
        (
            e
            for e in entries
            if e.key == focus.key
            and e.charge
            and e.fingerprint != focus.fingerprint
            and e.outcome in ("charged", "declined", "crashed")
        ),
        None,
    )
    bodies = ""
    if first and first.charge and focus.charge:
        was, now = first.charge.as_dict(), focus.charge.as_dict()
        changed = [
            f"{name} {was[name]!r} → {now[name]!r}" for name in was if was[name] != now[name]
        ]
        bodies = f" ({', '.join(changed)})" if changed else ""
    word = "CONFLICT" if focus.status == 409 else "REFUSED"
    return Explanation(
        "conflict",
        f"{focus.status} {word} — same key, different request",
        (
            f"The key {focus.key} was first used with another body{bodies}, so the fingerprints "
            "differ. "
            "The server refused before taking any lock and charged nothing: one key stands for "
            "one intent.",
            "To pay a different amount, start a New order: a new intent gets a new key.",
        ),
    )


def _replayed(
    focus: RequestEntry, entries: Sequence[RequestEntry], summary: LedgerSummary
) -> Explanation:
    if focus.status == 402:
        return Explanation(
            "replayed",
            "REPLAYED — the same 402 decline",
            (
                "The decline was stored like any business result, so the retry got it back "
                "without asking the gateway again. Retrying a decline is pointless; a new card "
                "is a new intent.",
            ),
        )
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
    order = focus.charge.order_id if focus.charge else None
    if order in summary.doubled:
        sentences.append(
            f"The ledger still shows order {order} charged more than once, from earlier "
            "requests: a replay cannot undo a double charge that already happened."
        )
    return Explanation(
        "replayed", f"REPLAYED — {focus.charge_id} again, no new charge", tuple(sentences)
    )


def _charged(
    focus: RequestEntry,
    entries: Sequence[RequestEntry],
    summary: LedgerSummary,
    settings: Settings,
) -> Explanation:
    order = focus.charge.order_id if focus.charge else "?"
    doubled = order in summary.doubled
    twin = _overlapping_charger(focus, entries)
    if doubled and twin is not None and focus.key is not None and twin.key == focus.key:
        return _race(focus, twin, order)
    earlier = [e for e in entries if e.id < focus.id and e.key == focus.key and e.key is not None]
    rejected = next(
        (e for e in entries if e.key == focus.key and e.outcome == "in_use" and e.id != focus.id),
        None,
    )
    if rejected is not None and twin is None and _overlap(focus, rejected):
        return Explanation(
            "conflict",
            f"CHARGED once; #{rejected.id} got {rejected.status} — it was in flight",
            (
                f"#{rejected.id} arrived while this request was still charging. In-flight "
                f"duplicates are rejected (Stripe, IETF draft): {rejected.status} with "
                "Retry-After, nothing charged. The client retries later and gets the replay.",
                "With in-flight set to wait, it would have waited for the lock and replayed.",
            ),
        )
    crashed = next((e for e in reversed(earlier) if e.outcome == "crashed"), None)
    if crashed is not None and not doubled:
        return Explanation(
            "charged",
            f"CHARGED — {focus.charge_id}, once, after a crash",
            (
                f"#{crashed.id} crashed before the gateway charged. This retry found nothing "
                "charged yet, reclaimed the key and charged once.",
            ),
        )
    if crashed is not None:
        return Explanation(
            "double",
            f"DOUBLE CHARGE — order {order}, after a crash",
            (
                f"#{crashed.id} crashed after the gateway charged and before the record was "
                "saved. This retry found the key in progress with nobody holding its lock, "
                "reclaimed it and charged again: the gateway had no way to know.",
                "The fix: pass the idempotency key on to the gateway (recovery: downstream key).",
            ),
        )
    paid = next((e for e in reversed(earlier) if e.outcome in ("charged", "replayed")), None)
    if (
        doubled
        and paid is not None
        and paid.instance != focus.instance
        and (settings.store_scope == "per_instance")
    ):
        return Explanation(
            "double",
            f"DOUBLE CHARGE — order {order}, on another instance",
            (
                f"#{paid.id} was served by {paid.instance}; this retry reached {focus.instance}, "
                "whose store had never seen the key. Dedup only in process memory does not "
                "survive a second instance.",
                "The fix: one store shared by every instance.",
            ),
        )
    if doubled and paid is not None and focus.at - paid.at >= settings.ttl_s:
        return Explanation(
            "double",
            f"DOUBLE CHARGE — order {order}, after the key expired",
            (
                f"The record of {focus.key} expired (TTL {settings.ttl_s // 3600} h) before this "
                "retry, so the store saw a new intent and charged again.",
                "Keep keys at least as long as clients may retry.",
            ),
        )
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

    lookup = second.step("lookup")
    if lookup is not None and lookup.detail.get("hit"):
        # The lock was switched off while the first was running: the second saw its
        # reservation, but nothing made it wait.
        how = (
            f"#{second.id} found #{first.id}'s record still in progress "
            f"({at(second, 'lookup')}); with the Lock off nothing made it wait, so it charged too."
        )
    else:
        how = (
            f"Both looked the key up ({at(first, 'lookup')} and {at(second, 'lookup')}) before "
            f"either saved its record ({at(first, 'record save')}), so both found nothing and "
            "both charged."
        )
    return Explanation(
        "double",
        f"DOUBLE CHARGE — order {order} paid twice with one key",
        (
            f"Requests #{first.id} and #{second.id} carried the same key {a.key} and "
            f"overlapped. {how}",
            "That is a TOCTOU race: the check and the act are separate steps, and the Lock is "
            "off. With the Lock on, the second request waits for the first, looks again and "
            "replays.",
        ),
    )


def _overlap(a: RequestEntry, b: RequestEntry) -> bool:
    a_end, b_end = a.finished or a.started, b.finished or b.started
    return a.started <= b_end and b.started <= a_end


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
