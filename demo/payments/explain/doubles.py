"""Two charges for one order, and the cause the log shows: a race with the lock off, a
crash before the record, another instance's store, an expired key, no key, another key."""

from __future__ import annotations

from collections.abc import Sequence

from ...engine.stepping import PAUSED_MS
from ...engine.text import N_, Number, Text
from ..requests import RequestEntry
from ..settings import Settings
from .explanation import Explanation, ttl_words
from .no_answer import LEASE


def race(a: RequestEntry, b: RequestEntry, order: str) -> Explanation:
    """``a`` and ``b`` carried one key, overlapped, and both charged (TOCTOU, lock off)."""
    first, second = sorted((a, b), key=lambda e: e.started)
    return Explanation(
        "double",
        # Two requests, whatever the order's count: an earlier charge may precede them.
        Text("DOUBLE CHARGE — two requests with one key both charged order %(order)s", order=order),
        (
            Text(
                "Requests #%(first)s and #%(second)s carried the same key %(key)s and "
                "overlapped. %(how)s",
                first=first.id,
                second=second.id,
                key=a.key,
                how=_how_both_charged(first, second),
            ),
            N_(
                "That is a TOCTOU race: the check and the act are separate steps, and these "
                "requests ran with the Lock off. With the Lock on, the second request waits for "
                "the first, looks again and replays."
            ),
        ),
    )


def _how_both_charged(first: RequestEntry, second: RequestEntry) -> Text:
    """The race's steps, timed from the first request's arrival (``+12 ms``)."""
    origin = first.started

    def at(entry: RequestEntry, step: str) -> str | Text:
        found = entry.step(step)
        if found is None:
            return "?"
        ms = Number((entry.started - origin) * 1000 + found.at_ms)
        # In step mode the wall clock holds the attendee's think time (as the timeline's
        # "paused by you" marks do): say how much of it, or the race reads as 30 s slow.
        paused = sum(
            float(s.detail.get(PAUSED_MS) or 0) for s in entry.steps if s.at_ms < found.at_ms
        )
        if paused >= 1:
            return Text(
                "+%(ms)s ms, %(paused)s ms of it paused by you", ms=ms, paused=Number(paused)
            )
        return Text("+%(ms)s ms", ms=ms)

    lookup = second.step("lookup")
    if lookup is not None and lookup.detail.get("hit"):
        # The lock was switched off while the first was running: the second saw its
        # reservation, but nothing made it wait.
        return Text(
            "#%(second)s found #%(first)s's record still in progress (%(at)s); with the Lock "
            "off nothing made it wait, so it charged too.",
            second=second.id,
            first=first.id,
            at=at(second, "lookup"),
        )
    return Text(
        "Both looked the key up (%(first_at)s and %(second_at)s) before either saved its "
        "record (%(save_at)s), so both found nothing and both charged.",
        first_at=at(first, "lookup"),
        second_at=at(second, "lookup"),
        save_at=at(first, "record save"),
    )


def double_after_crash(
    crashed: RequestEntry, order: str, retry: RequestEntry | None = None
) -> Explanation:
    """``crashed`` died after the gateway charged and before its record: the retry reclaimed
    the key and charged again. When ``retry`` passed the key on to the gateway but
    ``crashed`` had charged without it (recovery switched on between the two), the fix was
    on too late for this order: the explanation says so. When ``retry`` reclaimed nothing
    (its lookup missed: the crash's record in progress had expired), the expiry is why."""
    if retry is not None and retry.step("reclaim") is None and retry.settings is not None:
        return _expired(order, retry.settings.ttl_s, retry.key, crashed)
    late = (
        retry is not None
        and retry.settings is not None
        and retry.settings.recovery == "downstream_key"
        and (crashed.settings is None or crashed.settings.recovery != "downstream_key")
    )
    fix = (
        Text(
            "This retry passed the key on to the gateway (Crash recovery: key to gateway), but "
            "#%(id)s had charged without it, so the gateway could not match the two. The fix "
            "works for a charge made with it: try it on a New order.",
            id=crashed.id,
        )
        if late
        else N_(
            "The fix: pass the idempotency key on to the gateway (Crash recovery: key to gateway)."
        )
    )
    return Explanation(
        "double",
        Text("DOUBLE CHARGE — order %(order)s, after a crash", order=order),
        (
            Text(
                "#%(id)s crashed after the gateway charged and before the record was "
                "saved. This retry found the key in progress with nobody holding its lock, "
                "reclaimed it and charged again: the gateway had no way to know.",
                id=crashed.id,
            ),
            fix,
            LEASE,
        ),
    )


def double_charge(
    focus: RequestEntry, earlier: Sequence[RequestEntry], order: str, settings: Settings
) -> Explanation:
    """``order`` was paid before; ``earlier`` holds the requests before ``focus`` with its key.

    The first cause that fits: the paid request was served by another instance with its own
    store, its record expired (at the TTL it was saved with), the stores were started
    afresh (Instances or Store changed since) or the record was evicted, no key was sent,
    or another key was.
    """
    paid = next((e for e in reversed(earlier) if e.outcome in ("charged", "replayed")), None)
    if (
        paid is not None
        and paid.instance != focus.instance
        and (settings.store_scope == "per_instance")
    ):
        return _another_instance(focus, paid, order)
    # A record keeps the TTL it was saved with (Record.expires_at): a TTL set since counts
    # for records saved after it.
    saver = next((e for e in reversed(earlier) if e.outcome == "charged"), None)
    ttl_s = saver.settings.ttl_s if saver is not None and saver.settings else settings.ttl_s
    if saver is not None and focus.at - saver.at >= ttl_s:
        return _expired(order, ttl_s, focus.key)
    if paid is not None and focus.key is not None:
        return _record_gone(focus, paid, order, settings)
    if focus.key is None:
        return Explanation(
            "double",
            Text("DOUBLE CHARGE — order %(order)s paid again", order=order),
            (
                N_(
                    "This request had no Idempotency-Key, so the server could not tell a "
                    "repeat of the same intent (a double click, a retry) from a new payment, "
                    "and charged again."
                ),
                N_("Give every attempt of one intent the same key."),
            ),
        )
    return _another_key(focus, order)


def _another_instance(focus: RequestEntry, paid: RequestEntry, order: str) -> Explanation:
    return Explanation(
        "double",
        Text("DOUBLE CHARGE — order %(order)s, on another instance", order=order),
        (
            Text(
                "#%(id)s was served by %(first)s; this request reached %(this)s, whose store "
                "had never seen the key. Dedup only in process memory does not survive a "
                "second instance.",
                id=paid.id,
                first=paid.instance,
                this=focus.instance,
            ),
            N_("The fix: one store shared by every instance."),
        ),
    )


def _record_gone(
    focus: RequestEntry, paid: RequestEntry, order: str, settings: Settings
) -> Explanation:
    """``paid`` charged or replayed with ``focus``'s key, and its record was gone: the stores
    were started afresh (Instances or Store changed since), or, with neither changed, the
    store's cap evicted the record (``IdempotencyStore.max_records``)."""
    before = paid.settings
    restarted = before is not None and (before.instances, before.store_scope) != (
        settings.instances,
        settings.store_scope,
    )
    why = (
        Text(
            "#%(id)s paid with the same key %(key)s. Then Instances or Store changed, which "
            "starts the instances afresh with empty stores, as a deploy does to records kept "
            "in process memory: this request found nothing and charged again.",
            id=paid.id,
            key=focus.key,
        )
        if restarted
        else Text(
            "#%(id)s paid with the same key %(key)s, but its record was no longer in the "
            "store: the store keeps a bounded number of records and evicted it. This request "
            "found nothing and charged again.",
            id=paid.id,
            key=focus.key,
        )
    )
    return Explanation(
        "double",
        Text("DOUBLE CHARGE — order %(order)s, its record gone", order=order),
        (
            why,
            N_("Keep records in a store that outlives the instances and holds them for the TTL."),
        ),
    )


def _expired(
    order: str, ttl_s: int, key: str | None, crashed: RequestEntry | None = None
) -> Explanation:
    """The record for ``key`` expired at its TTL (``ttl_s``) before this request, which
    charged again; after ``crashed`` (the record it left in progress), passing the key on
    to the gateway is the fix too."""
    why = (
        Text(
            "#%(id)s crashed after the gateway charged and before the record was saved, "
            "so its key stayed in progress. That record expired (TTL %(ttl)s) before this "
            "request with the same key: the store found nothing and charged again.",
            id=crashed.id,
            ttl=ttl_words(ttl_s),
        )
        if crashed is not None
        else Text(
            "The record of %(key)s expired (TTL %(ttl)s) before this retry, so the "
            "store saw a new intent and charged again.",
            key=key,
            ttl=ttl_words(ttl_s),
        )
    )
    fix = (
        N_(
            "Keep keys at least as long as clients may retry, and pass the key on to the "
            "gateway (Crash recovery: key to gateway): the gateway then knows the charge."
        )
        if crashed is not None
        else N_("Keep keys at least as long as clients may retry.")
    )
    return Explanation(
        "double",
        Text("DOUBLE CHARGE — order %(order)s, after the key expired", order=order),
        (why, fix),
    )


def _another_key(focus: RequestEntry, order: str) -> Explanation:
    return Explanation(
        "double",
        Text("DOUBLE CHARGE — order %(order)s paid again", order=order),
        (
            Text(
                "The key %(key)s was new to the store, so it charged. But order %(order)s "
                "had already been paid under another key, or with none: the store "
                "deduplicates keys, not orders.",
                key=focus.key,
                order=order,
            ),
            N_("Derive the key from the intent (order, operation, version), never per click."),
        ),
    )


def race_of_many(racers: Sequence[RequestEntry], order: str) -> Explanation:
    """Three or more requests (``racers``, oldest first) carried one key, overlapped, and
    all charged: two tabs each sending a Double-submit with the Lock off."""
    first = min(racers, key=lambda e: e.started)
    saved = [
        (e.started - first.started) * 1000 + step.at_ms
        for e in racers
        if (step := e.step("record save")) is not None
    ]
    looked = [
        (e.started - first.started) * 1000 + step.at_ms
        for e in racers
        if (step := e.step("lookup")) is not None and not step.detail.get("hit")
    ]
    blind = len(looked) == len(racers) and (not saved or max(looked) < min(saved))
    return Explanation(
        "double",
        Text(
            "DOUBLE CHARGE — %(count)s requests with one key all charged order %(order)s",
            count=len(racers),
            order=order,
        ),
        (
            Text(
                "Requests %(ids)s carried the same key %(key)s and overlapped. %(how)s",
                ids=", ".join(f"#{e.id}" for e in racers),
                key=first.key,
                how=N_(
                    "Each looked the key up before any of them saved its record, so each "
                    "found nothing and each charged."
                )
                if blind
                else N_("With the Lock off nothing made one wait for another, so each charged."),
            ),
            N_(
                "That is a TOCTOU race: the check and the act are separate steps, and these "
                "requests ran with the Lock off. With the Lock on, each later request waits "
                "for the one holding the lock, looks again and replays."
            ),
        ),
    )
