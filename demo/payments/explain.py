"""Plain-language explanations of what just happened, computed from the lab's real log.

Each explanation answers *why*: why the retry replayed, why the 409, why two charges,
and what the lock changes. No web framework; the page only formats the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..engine.text import N_, Text
from .gateway import LedgerSummary
from .requests import RequestEntry
from .settings import Settings
from .step_names import step_name

Tone = Literal["idle", "charged", "replayed", "conflict", "error", "double"]


@dataclass(frozen=True)
class Explanation:
    """A headline and one to three sentences; ``tone`` picks the badge and colour.

    Texts are marked for translation (a literal marked with ``N_``, or a
    :class:`~demo.engine.text.Text` with parameters): the page translates them; ``str()`` of
    each gives the English.
    """

    tone: Tone
    headline: str | Text
    sentences: tuple[str | Text, ...]


def explain(
    entries: Sequence[RequestEntry],
    summary: LedgerSummary,
    focus: RequestEntry | None = None,
    settings: Settings | None = None,
    emails: int = 0,
    first_click: str = "Pay",
) -> Explanation:
    """Explain ``focus`` (default: the latest finished request) among ``entries``.

    :param entries: the lab's request log, oldest first.
    :param summary: the ledger summary, to name double charges.
    :param settings: the lab's settings now (TTL, store scope), to name causes.
    :param emails: receipt e-mails sent so far.
    :param first_click: the open lesson's first button (``data-action`` name), which
        the hint before any request names.
    """
    settings = settings or Settings()
    finished = [e for e in entries if e.finished is not None]
    if focus is None:
        focus = finished[-1] if finished else None
    if focus is None and entries and settings.step_mode:
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
    if focus is None and entries:
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
    if (focus is None or focus.finished is None) and first_click == "Double-submit":
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
    if focus is None or focus.finished is None:
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
    if focus.outcome == "crashed":
        after = focus.step("crash")
        step = after.detail.get("after", "?") if after else "?"
        died = (
            N_(
                "The instance serving #%(id)s died after the gateway charged (at the step "
                "boundary after '%(step)s'). The client saw the connection drop: it cannot tell "
                "whether it paid."
            )
            if step in ("gateway charge", "record save")
            else N_(
                "The instance serving #%(id)s died (at the step boundary after '%(step)s'). The "
                "client saw the connection drop: it cannot tell whether it paid."
            )
        )
        return Explanation(
            "error",
            N_("CRASHED — the instance died mid-request"),
            (
                Text(died, id=focus.id, step=step_name(step)),
                N_("Retry with the same key and watch what the store and the gateway make of it."),
            ),
        )
    if not focus.delivered:
        return Explanation(
            "error",
            N_("NO RESPONSE — did it charge?"),
            (
                Text(
                    "The server charged (%(charge)s) and saved the record, but the response "
                    "never reached the client.",
                    charge=focus.charge_id,
                ),
                N_(
                    "Retry with the same key: the store replays the stored response. A new key "
                    "would be a new intent, and would charge again."
                ),
            ),
        )
    if focus.outcome == "in_use" and settings.in_flight == "wait":
        return Explanation(
            "conflict",
            Text("%(status)s — gave up waiting for the lock", status=focus.status),
            (
                N_(
                    "Another request with this key held the per-key lock too long, so this one "
                    "stopped waiting and answered 409 with Retry-After, charging nothing. A retry "
                    "after the first finishes gets its replay."
                ),
            ),
        )
    if focus.outcome == "in_use":
        return Explanation(
            "conflict",
            Text("%(status)s — the first request is still in flight", status=focus.status),
            (
                N_(
                    "The key was in progress and in-flight duplicates are rejected (Stripe, IETF "
                    "draft): 409 with Retry-After, nothing charged."
                ),
                N_(
                    "Retry after the first one finishes and you get its replay. With in-flight "
                    "set to wait, the duplicate would have waited for the lock instead."
                ),
            ),
        )
    if focus.outcome == "declined":
        return Explanation(
            "conflict",
            N_("402 — card declined"),
            (
                N_(
                    "The gateway declined: a business answer, not a failure. The server stored "
                    "it, so every retry with this key replays the same 402 and charges nothing."
                ),
            ),
        )
    if focus.outcome == "invalid":
        return Explanation(
            "error",
            Text("%(status)s — refused before anything ran", status=focus.status),
            (
                # The problem's title and detail were translated when its body was built.
                Text(
                    "%(title)s: %(detail)s",
                    title=focus.problem or Text("The request was invalid"),
                    detail=focus.problem_detail or Text("see the response body."),
                ),
                N_(
                    "Validation runs first and stores nothing, so the same key can be retried "
                    "with a corrected request."
                ),
            ),
        )
    if focus.outcome == "error" and focus.step("gateway timeout") is not None:
        return _timed_out(focus)
    if focus.outcome == "in_doubt":
        return Explanation(
            "conflict",
            Text("%(status)s IN DOUBT — nothing charged again", status=focus.status),
            (
                N_(
                    "An earlier attempt with this key timed out after the gateway took the "
                    "charge. The server cannot tell whether it paid, so it kept the key in "
                    "doubt instead of releasing it: this retry charged nothing."
                ),
                N_(
                    "Had the key gone on to the gateway from the first attempt (recovery: "
                    "downstream key), a re-run would be safe either way: the gateway returns "
                    "the first charge, if there was one."
                ),
            ),
        )
    if focus.outcome == "error":
        return Explanation(
            "error",
            Text("%(status)s — the gateway failed", status=focus.status),
            (
                N_(
                    "The gateway failed before charging. The server released the key instead of "
                    "leaving it in progress, so a retry with the same key runs again."
                ),
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
        timed_out = any(
            e.key == focus.key and e.step("gateway timeout") is not None and e.id < focus.id
            for e in entries
        )
        sentences: list[str | Text] = [
            Text(
                "An earlier attempt with this key timed out after the gateway charged. The "
                "key goes on to the gateway, so running the charge again is safe: the gateway "
                "returned the first charge (%(charge)s) instead of taking the money twice.",
                charge=focus.charge_id,
            )
            if timed_out
            else Text(
                "An earlier attempt with this key crashed after the gateway charged. This "
                "retry found the key in progress with nobody holding its lock, reclaimed it "
                "and called the gateway again with the idempotency key passed on: the gateway "
                "returned the first charge (%(charge)s) instead of taking the money twice.",
                charge=focus.charge_id,
            )
            if crashed
            else Text(
                "This request got past our store (the lock is off, the record expired, or "
                "another instance served the first), so it called the gateway again. But the "
                "idempotency key went on to the gateway too, and the gateway had seen it: it "
                "returned the first charge (%(charge)s). Its idempotency caught what ours "
                "missed.",
                charge=focus.charge_id,
            )
        ]
        if crashed:
            sentences.append(_LEASE)
        if settings.email == "inline" and emails > summary.intended:
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
        return Explanation(
            "charged",
            Text("RECOVERED — %(charge)s, charged once", charge=focus.charge_id),
            tuple(sentences),
        )
    return _charged(focus, entries, summary, settings)


_LEASE = N_(
    "A free lock proves the holder dead only inside one process. Across instances a real "
    "system waits for the record's deadline (a lease, 30 s here) before reclaiming it, and "
    "keeps the reservation in the shared store."
)
"""How a real system tells a dead holder from a slow one (README: "A dead holder or a
slow one?")."""


def _timed_out(focus: RequestEntry) -> Explanation:
    if focus.key is None:
        then: str | Text = N_(
            "No key was sent: a retry would charge again, and nobody could tell it from a "
            "second payment."
        )
    elif focus.step("release") is not None:
        then = N_(
            "The key went on to the gateway (recovery: downstream key), so the server released "
            "it: a retry runs again, and the gateway returns the first charge instead of a "
            "second one."
        )
    else:
        then = N_(
            "Releasing the key here would let a retry charge again, so the server kept it, "
            "marked in doubt: a retry with it charges nothing until the outcome is known."
        )
    return Explanation(
        "error",
        Text("%(status)s — the gateway timed out, after charging", status=focus.status),
        (
            N_(
                "The gateway took the money, but its answer never came back. A timeout (or a "
                "502) is ambiguous: the server cannot tell it from a failure before the charge."
            ),
            then,
        ),
    )


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
    headline = (
        N_("%(status)s CONFLICT — same key, different request")
        if focus.status == 409
        else N_("%(status)s REFUSED — same key, different request")
    )
    return Explanation(
        "conflict",
        Text(headline, status=focus.status),
        (
            Text(
                "The key %(key)s was first used with another body%(bodies)s, so the "
                "fingerprints differ. The server refused before taking any lock and charged "
                "nothing: one key stands for one intent.",
                key=focus.key,
                bodies=bodies,
            ),
            N_("To pay a different amount, start a New order: a new intent gets a new key."),
        ),
    )


def _replayed(
    focus: RequestEntry, entries: Sequence[RequestEntry], summary: LedgerSummary
) -> Explanation:
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
    acquired = focus.step("lock acquire")
    waited = float(acquired.detail.get("waited_ms", 0)) if acquired else 0.0
    sentences: list[str | Text] = [
        Text(
            "The key %(key)s was already in the store with the same fingerprint, so the "
            "server sent back the stored response (%(charge)s) with "
            "Idempotent-Replayed: true. The gateway was not called.",
            key=focus.key,
            charge=focus.charge_id,
        ),
    ]
    if waited >= 1:
        first = _overlapping_charger(focus, entries)
        who: str | Text = f"#{first.id}" if first else Text("the first request")
        ms = f"{waited:.0f}"
        stepped = focus.settings is not None and focus.settings.step_mode
        sentences.insert(
            0,
            # In step mode the wait is the attendee's doing: the holder stood paused.
            Text(
                "This request waited %(ms)s ms for the per-key lock, which %(who)s held: in "
                "step mode %(who)s stood paused until you stepped it on. Once %(who)s had "
                "saved its record and let the lock go, this request looked the key up again "
                "and found the finished record.",
                who=who,
                ms=ms,
            )
            if stepped
            else Text(
                "This request arrived while %(who)s was still charging. It waited %(ms)s ms "
                "for the per-key lock, looked the key up again, and found the finished record.",
                who=who,
                ms=ms,
            ),
        )
    order = focus.charge.order_id if focus.charge else None
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
            Text(
                "CHARGED once; #%(id)s got %(status)s — it was in flight",
                id=rejected.id,
                status=rejected.status,
            ),
            (
                Text(
                    "#%(id)s arrived while this request was still charging. In-flight "
                    "duplicates are rejected (Stripe, IETF draft): %(status)s with "
                    "Retry-After, nothing charged. The client retries later and gets the replay.",
                    id=rejected.id,
                    status=rejected.status,
                ),
                N_("With in-flight set to wait, it would have waited for the lock and replayed."),
            ),
        )
    crashed = next((e for e in reversed(earlier) if e.outcome == "crashed"), None)
    if crashed is not None and not doubled:
        return Explanation(
            "charged",
            Text("CHARGED — %(charge)s, once, after a crash", charge=focus.charge_id),
            (
                Text(
                    "#%(id)s crashed before the gateway charged. This retry found nothing "
                    "charged yet, reclaimed the key and charged once.",
                    id=crashed.id,
                ),
            ),
        )
    if crashed is not None:
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
                N_(
                    "The fix: pass the idempotency key on to the gateway (recovery: downstream "
                    "key)."
                ),
                _LEASE,
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
            Text("DOUBLE CHARGE — order %(order)s, on another instance", order=order),
            (
                Text(
                    "#%(id)s was served by %(first)s; this retry reached %(this)s, whose store "
                    "had never seen the key. Dedup only in process memory does not survive a "
                    "second instance.",
                    id=paid.id,
                    first=paid.instance,
                    this=focus.instance,
                ),
                N_("The fix: one store shared by every instance."),
            ),
        )
    if doubled and paid is not None and focus.at - paid.at >= settings.ttl_s:
        return Explanation(
            "double",
            Text("DOUBLE CHARGE — order %(order)s, after the key expired", order=order),
            (
                Text(
                    "The record of %(key)s expired (TTL %(hours)s h) before this retry, so the "
                    "store saw a new intent and charged again.",
                    key=focus.key,
                    hours=settings.ttl_s // 3600,
                ),
                N_("Keep keys at least as long as clients may retry."),
            ),
        )
    if doubled and focus.key is None:
        return Explanation(
            "double",
            Text("DOUBLE CHARGE — order %(order)s paid again", order=order),
            (
                N_(
                    "This request had no Idempotency-Key, so the server could not tell a retry "
                    "from a new payment and charged again."
                ),
                N_("Give every attempt of one intent the same key."),
            ),
        )
    if doubled:
        return Explanation(
            "double",
            Text("DOUBLE CHARGE — order %(order)s paid again", order=order),
            (
                Text(
                    "The key %(key)s was new to the store, so it charged. But order %(order)s "
                    "had already been paid under another key: the store deduplicates keys, not "
                    "orders.",
                    key=focus.key,
                    order=order,
                ),
                N_("Derive the key from the intent (order, operation, version), never per click."),
            ),
        )
    if focus.key is None:
        return Explanation(
            "charged",
            Text("CHARGED — %(charge)s, without a key", charge=focus.charge_id),
            (
                N_(
                    "No Idempotency-Key was sent, so nothing protects this payment: a retry "
                    "would charge again."
                ),
            ),
        )
    return Explanation(
        "charged",
        Text("CHARGED — %(charge)s for order %(order)s", charge=focus.charge_id, order=order),
        (
            Text(
                N_(
                    "The key %(key)s was new: the server took the per-key lock, reserved the "
                    "key, called the gateway and stored the response."
                )
                if focus.lock
                else N_(
                    "The key %(key)s was new: the server called the gateway and stored the "
                    "response."
                ),
                key=focus.key,
            ),
            N_(
                "Press Retry: the same key and body replay this response instead of charging again."
            ),
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
        how = Text(
            "#%(second)s found #%(first)s's record still in progress (%(at)s); with the Lock "
            "off nothing made it wait, so it charged too.",
            second=second.id,
            first=first.id,
            at=at(second, "lookup"),
        )
    else:
        how = Text(
            "Both looked the key up (%(first_at)s and %(second_at)s) before either saved its "
            "record (%(save_at)s), so both found nothing and both charged.",
            first_at=at(first, "lookup"),
            second_at=at(second, "lookup"),
            save_at=at(first, "record save"),
        )
    return Explanation(
        "double",
        Text("DOUBLE CHARGE — order %(order)s paid twice with one key", order=order),
        (
            Text(
                "Requests #%(first)s and #%(second)s carried the same key %(key)s and "
                "overlapped. %(how)s",
                first=first.id,
                second=second.id,
                key=a.key,
                how=how,
            ),
            N_(
                "That is a TOCTOU race: the check and the act are separate steps, and these "
                "requests ran with the Lock off. With the Lock on, the second request waits for "
                "the first, looks again and replays."
            ),
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
