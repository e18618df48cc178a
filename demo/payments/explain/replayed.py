"""A retry that charged nothing new: our store replayed the stored response, or the
gateway, given the key, returned the first charge (a recovery)."""

from __future__ import annotations

from collections.abc import Sequence

from ...engine.stepping import PAUSED_MS
from ...engine.text import N_, Number, Text
from ..gateway import LedgerSummary
from ..requests import RequestEntry
from ..settings import Settings
from .explanation import Explanation, ttl_words
from .no_answer import LEASE
from .overlaps import overlap, overlapping_charger


def replayed(
    focus: RequestEntry,
    entries: Sequence[RequestEntry],
    summary: LedgerSummary,
    order_now: str | None = None,
) -> Explanation:
    """The store had the key with the same fingerprint: the stored response, replayed.
    ``order_now``: the order the page's form holds now; after New order the advice to press
    it is done, and the sentence names the order the form holds instead."""
    if focus.status == 402:
        return Explanation(
            "replayed",
            N_("REPLAYED — the same 402 decline"),
            (
                N_(
                    "The decline was stored like any business result, so the retry got it back "
                    "without asking the gateway again. Retrying a decline is pointless; a new "
                    "card is a new intent."
                ),
            ),
        )
    sentences: list[str | Text] = [
        Text(
            "The key %(key)s was already in the store with the same fingerprint, so the "
            "server sent back the stored response (%(charge)s) with "
            "Idempotent-Replayed: true. The gateway was not called.",
            key=focus.key,
            charge=focus.charge_id,
        ),
    ]
    waited = _waited(focus, entries)
    if waited is not None:
        sentences.insert(0, waited)
    order = focus.charge.order_id if focus.charge else None
    no_race = _no_race(focus, entries, order, order_now)
    if no_race is not None:
        sentences.append(no_race)
    overwritten = _overwritten(focus, entries)
    if overwritten is not None:
        sentences.append(overwritten)
    shared = _shared_store(focus, entries)
    if shared is not None:
        sentences.append(shared)
    kept = _kept_ttl(focus, entries)
    if kept is not None:
        sentences.append(kept)
    if order in summary.doubled:
        sentences.append(
            Text(
                "The ledger still shows order %(order)s charged more than once, from earlier "
                "requests: a replay cannot undo a double charge that already happened.",
                order=order,
            )
        )
    return Explanation(
        "replayed",
        Text("REPLAYED — %(charge)s again, no new charge", charge=focus.charge_id),
        tuple(sentences),
    )


def _no_race(
    focus: RequestEntry, entries: Sequence[RequestEntry], order: str | None, order_now: str | None
) -> str | Text | None:
    """Both lanes of a double submit replayed (:func:`_both_replayed`): nothing raced. The
    way to race again is New order, or, once pressed, the order the form holds now."""
    if not _both_replayed(focus, entries):
        return None
    if order_now not in (None, order):
        return Text(
            "Both requests of this double submit found the record an earlier charge had "
            "saved, so both replayed: nothing raced, and the lock had nothing to guard. "
            "The form now holds order %(new)s, a new key with no record yet: press "
            "Double-submit to race two requests again.",
            new=order_now,
        )
    return N_(
        "Both requests of this double submit found the record an earlier charge had "
        "saved, so both replayed: nothing raced, and the lock had nothing to guard. "
        "To race two requests again, press New order first: a new key, with no "
        "record yet."
    )


def _overwritten(focus: RequestEntry, entries: Sequence[RequestEntry]) -> Text | None:
    """Lesson 4, the Lock ticked afterwards: two racers charged under this key at once
    (the lock off), and each saved its response into the same store; the later save
    overwrote the first. The replay names the survivor, so say why it is not the first
    charge. (A record that expired and was charged afresh is no race: no overlap.)"""
    survivor = next(
        (e for e in entries if e.outcome == "charged" and e.charge_id == focus.charge_id), None
    )
    if survivor is None:
        return None
    lost = [
        e.charge_id
        for e in entries
        if e.key == focus.key
        and e.outcome == "charged"
        and e.charge_id != focus.charge_id
        and overlap(e, survivor)
        and _same_store(e, survivor)
    ]
    if not lost:
        return None
    return Text(
        "Requests with this key charged at the same time, and each saved its response "
        "under it: the later save overwrote %(lost)s. The store keeps the last one, so "
        "%(charge)s is what replays, while %(lost)s stays in the ledger, charged, and no "
        "answer names it.",
        lost=", ".join(str(c) for c in lost),
        charge=focus.charge_id,
    )


def _kept_ttl(focus: RequestEntry, entries: Sequence[RequestEntry]) -> Text | None:
    """Lesson 7, the TTL changed by hand after the Pay: the record keeps the TTL it was
    saved with (``Record.expires_at``), so a retry past the TTL set now still replays."""
    saver = next(
        (e for e in reversed(entries) if e.charge_id == focus.charge_id and e.outcome == "charged"),
        None,
    )
    then, now = (saver.settings if saver else None), focus.settings
    if saver is None or then is None or now is None or then.ttl_s == now.ttl_s:
        return None
    if focus.at - saver.at < now.ttl_s:
        return None  # within either TTL: the change made no difference to this replay
    return Text(
        "Its record was saved under a TTL of %(then)s and keeps it: the TTL set since "
        "(%(now)s) counts only for records saved after the change. Press New order to pay "
        "an order under %(now)s.",
        then=ttl_words(then.ttl_s),
        now=ttl_words(now.ttl_s),
    )


def _same_store(a: RequestEntry, b: RequestEntry) -> bool:
    """``a`` and ``b`` saved into one store: one instance, or a store shared by all."""
    shared = a.settings is None or a.settings.store_scope == "shared"
    return a.instance == b.instance or shared


def _shared_store(focus: RequestEntry, entries: Sequence[RequestEntry]) -> Text | None:
    """Lesson 8: only another instance charged this key, yet ``focus``'s found its record:
    a shared store. (With a store per instance it would have charged again.)"""
    savers = [
        e for e in entries if e.key == focus.key and e.outcome == "charged" and e.id < focus.id
    ]
    if not savers or any(e.instance == focus.instance for e in savers):
        return None
    return Text(
        "Instance %(here)s served this request; #%(id)s was charged on %(there)s. The store "
        "is shared, so %(here)s found %(there)s's record.",
        here=focus.instance,
        id=savers[-1].id,
        there=savers[-1].instance,
    )


def _both_replayed(focus: RequestEntry, entries: Sequence[RequestEntry]) -> bool:
    """A concurrent duplicate of ``focus`` (same key; in flight together, or the other
    lane of one Double-submit click) replayed too: the key's record was there before
    both, so the pair could not race (lesson 4, the Lock ticked by hand on the order
    already charged). Two replays of a stored record take well under 1 ms each, so the
    click's two lanes may not overlap in time."""
    return any(
        e.id != focus.id
        and e.key == focus.key
        and e.outcome == "replayed"
        and (overlap(focus, e) or _one_click(focus, e))
        and overlapping_charger(e, entries) is None
        for e in entries
    )


def _one_click(a: RequestEntry, b: RequestEntry) -> bool:
    """``a`` and ``b`` are the two lanes of one Double-submit: next to each other in the
    log, one sent as lane A, the other as lane B (the page's ``X-Lab-Action``)."""
    lanes = {a.action, b.action}
    return abs(a.id - b.id) == 1 and lanes == {"Double-submit A", "Double-submit B"}


def _waited(focus: RequestEntry, entries: Sequence[RequestEntry]) -> Text | None:
    """Why the replay came late: it waited (at least 1 ms) for the first request's lock."""
    acquired = focus.step("lock acquire")
    waited = float(acquired.detail.get("waited_ms", 0)) if acquired else 0.0
    if waited < 1:
        return None
    first = overlapping_charger(focus, entries)
    who: str | Text = f"#{first.id}" if first else Text("the first request")
    ms = Number(round(waited))
    if first is not None and _paused_holding_lock(first):
        # In step mode the wait is the attendee's doing: the holder stood paused.
        return Text(
            "This request waited %(ms)s ms for the per-key lock, which %(who)s held: in "
            "step mode %(who)s stood paused until you stepped it on. Once %(who)s had "
            "saved its record and let the lock go, this request looked the key up again "
            "and found the finished record.",
            who=who,
            ms=ms,
        )
    return Text(
        "This request arrived while %(who)s was still charging. It waited %(ms)s ms "
        "for the per-key lock, looked the key up again, and found the finished record.",
        who=who,
        ms=ms,
    )


def _paused_holding_lock(holder: RequestEntry) -> bool:
    """Whether step mode held ``holder`` paused (1 ms or more) while it held the lock: at
    its ``lock acquire`` or a later step. Released at once ("Release all"), it did not:
    the wait was its charge."""
    steps = list(holder.steps)
    held = next((i for i, s in enumerate(steps) if s.name == "lock acquire"), None)
    return held is not None and any(float(s.detail.get(PAUSED_MS) or 0) >= 1 for s in steps[held:])


def recovered(
    focus: RequestEntry,
    entries: Sequence[RequestEntry],
    summary: LedgerSummary,
    settings: Settings,
    emails: int,
) -> Explanation:
    """The handler ran again, but the key went on to the gateway, which returned the first
    charge. Our own side effect (an inline receipt e-mail) may still have gone out twice."""
    crashed = any(
        e.key == focus.key and e.outcome == "crashed" and e.id < focus.id for e in entries
    )
    sentences: list[str | Text] = [_how_recovered(focus, entries, crashed=crashed)]
    if crashed:
        sentences.append(LEASE)
    # The e-mail mode the request ran with, not the lab's now: the headline it was shown
    # with stays the same after the lesson is left (its settings reset) or the fix switched.
    email = (focus.settings or settings).email
    if email == "inline" and emails > summary.intended:
        sentences.append(
            Text(
                "But the receipt e-mail is our own side effect: the re-run sent it again "
                "(%(emails)s e-mails for %(orders)s order). An outbox written with the "
                "record sends it once.",
                emails=emails,
                orders=summary.intended,
            )
        )
        # The money is safe, the customer's inbox is not: no green headline over that.
        return Explanation(
            "double",
            Text(
                "CHARGED ONCE — but the receipt e-mail went out %(emails)s times",
                emails=emails,
            ),
            tuple(sentences),
        )
    if email == "outbox" and 0 < emails <= summary.intended:
        # The fixed run of the e-mail lesson: its point is the e-mail, so say it first.
        sentences.insert(
            0,
            Text(
                "The outbox sent one receipt e-mail: the retry saved it with the record, "
                "and it goes out once per key."
            ),
        )
        return Explanation(
            "charged",
            Text(
                "RECOVERED — %(charge)s, charged once, one receipt e-mail",
                charge=focus.charge_id,
            ),
            tuple(sentences),
        )
    return Explanation(
        "charged",
        Text("RECOVERED — %(charge)s, charged once", charge=focus.charge_id),
        tuple(sentences),
    )


def _how_recovered(focus: RequestEntry, entries: Sequence[RequestEntry], *, crashed: bool) -> Text:
    """What sent the request past our store: an earlier timeout, a crash, or neither."""
    timed_out = any(
        e.key == focus.key and e.step("gateway timeout") is not None and e.id < focus.id
        for e in entries
    )
    if timed_out:
        return Text(
            "An earlier attempt with this key timed out after the gateway charged. The "
            "key goes on to the gateway, so running the charge again is safe: the gateway "
            "returned the first charge (%(charge)s) instead of taking the money twice.",
            charge=focus.charge_id,
        )
    if crashed:
        return Text(
            "An earlier attempt with this key crashed after the gateway charged. This "
            "retry found the key in progress with nobody holding its lock, reclaimed it "
            "and called the gateway again with the idempotency key passed on: the gateway "
            "returned the first charge (%(charge)s) instead of taking the money twice.",
            charge=focus.charge_id,
        )
    return Text(
        "This request got past our store (the lock is off, the record expired, or "
        "another instance served the first), so it called the gateway again. But the "
        "idempotency key went on to the gateway too, and the gateway had seen it: it "
        "returned the first charge (%(charge)s). Its idempotency caught what ours "
        "missed.",
        charge=focus.charge_id,
    )
