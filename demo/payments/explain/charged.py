"""A request that charged: once, as it should, or a second time for the same order
(handed to :mod:`.doubles`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ...engine.text import N_, Text
from ..gateway import LedgerSummary
from ..requests import RequestEntry
from ..settings import Settings
from .doubles import double_after_crash, double_charge, race, race_of_many
from .explanation import Explanation
from .overlaps import overlap, overlapping_charger, racing_chargers


def charged(
    focus: RequestEntry,
    entries: Sequence[RequestEntry],
    summary: LedgerSummary,
    settings: Settings,
    *,
    order_now: str | None = None,
    kept_keys: Collection[str] | None = None,
    now_s: float | None = None,
) -> Explanation:
    """The gateway charged for ``focus``; the ledger (``summary.doubled``) tells whether its
    order was charged more than once, and the log tells why.

    :param order_now: the order the page's form holds now; after New order the advice
        speaks of it, not of a retry of ``focus``'s order.
    :param kept_keys: the keys the store still holds a live record for, and ``now_s``
        the lab's clock (s): ``focus.key`` not among them once its TTL has passed means
        the record expired, and a retry would charge again.
    """
    order = focus.charge.order_id if focus.charge else "?"
    doubled = order in summary.doubled
    twin = overlapping_charger(focus, entries)
    if doubled and twin is not None and focus.key is not None and twin.key == focus.key:
        racers = racing_chargers(focus, twin, entries)
        return race(focus, twin, order) if len(racers) == 2 else race_of_many(racers, order)
    rejected = next(
        (e for e in entries if e.key == focus.key and e.outcome == "in_use" and e.id != focus.id),
        None,
    )
    if rejected is not None and twin is None and overlap(focus, rejected):
        return _duplicate_rejected(rejected)
    earlier = [e for e in entries if e.id < focus.id and e.key == focus.key and e.key is not None]
    crashed = next((e for e in reversed(earlier) if e.outcome == "crashed"), None)
    if crashed is not None:
        if doubled:
            return double_after_crash(crashed, order, focus)
        return _after_crash(focus, crashed)
    if doubled:
        # Its cause under the settings it ran with: a TTL or store changed since must not
        # rewrite why it charged twice.
        return double_charge(focus, earlier, order, focus.settings or settings)
    expired = (
        kept_keys is not None
        and now_s is not None
        and focus.key not in kept_keys
        and focus.settings is not None
        and now_s - focus.at >= focus.settings.ttl_s
    )
    apart = settings.instances > 1 and settings.store_scope == "per_instance"
    # Another tab, or a request from outside the page, may have moved the form to an order
    # already paid: Pay would not charge it "once" then.
    paid_now = any(e.charge is not None and e.charge.order_id == order_now for e in entries)
    advice = _retry_advice(focus, order, order_now, expired=expired, apart=apart, paid_now=paid_now)
    return _once(focus, earlier, order, advice)


RETRY = N_(
    "A Retry from here sends the same key and body: it would replay this response, not charge "
    "again."
)


def _retry_advice(
    focus: RequestEntry,
    order: str,
    order_now: str | None,
    *,
    expired: bool,
    apart: bool,
    paid_now: bool = False,
) -> str | Text:
    """What the next click would do, said only while it is still true: not after New
    order (the form holds another intent; ``paid_now``: one charged already), nor after the
    record expired (lesson 7), nor while each instance keeps its own store (``apart``,
    lesson 8: the balancer sends the Retry to the next instance, which never saw the key).
    Nor of a charge the retry lab's client made: this page's form never held its order."""
    if focus.from_retry_lab:
        return Text(
            "A Retry from this page sends the form's own order (%(new)s), not this one: the "
            "retry lab's client sent it, through this lab's gateway.",
            new=order_now or "?",
        )
    if order_now is not None and order_now != order and paid_now:
        return Text(
            "The form now holds order %(new)s, moved there by a later request (another tab, "
            "or one sent from outside the page), and that order has a charge already: see "
            "the ledger. Order %(order)s keeps its record and its charge.",
            new=order_now,
            order=order,
        )
    if order_now is not None and order_now != order:
        return Text(
            "The form now holds order %(new)s: a new intent with its own key, so Pay "
            "charges it once. Order %(order)s keeps its record and its charge.",
            new=order_now,
            order=order,
        )
    if expired:
        return Text(
            "The record of key %(key)s has expired (its TTL ran out): a Retry now is a "
            "new intent to the store, and charges again.",
            key=focus.key,
        )
    if apart and focus.key is not None:
        return Text(
            "The balancer sends the next request to the next instance, and each instance "
            "keeps its own store: a Retry from here reaches a store that never saw key "
            "%(key)s, and charges again.",
            key=focus.key,
        )
    return RETRY


def _duplicate_rejected(rejected: RequestEntry) -> Explanation:
    """Charged once, while a duplicate (``rejected``) got 409: in-flight set to reject."""
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


def _after_crash(focus: RequestEntry, crashed: RequestEntry) -> Explanation:
    """The earlier attempt crashed before the gateway charged: this retry charged once."""
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


def _once(
    focus: RequestEntry, earlier: Sequence[RequestEntry], order: str, retry: str | Text
) -> Explanation:
    """A single charge: without a key, after a failure that released the key, or new;
    ``retry`` says what a retry would do now."""
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
    headline = Text("CHARGED — %(charge)s for order %(order)s", charge=focus.charge_id, order=order)
    failed = earlier[-1] if earlier else None
    if failed is not None and failed.outcome == "error":
        # Lesson 9: the gateway failed before charging, so the key was released; this is
        # the same key's retry, not a new key.
        return Explanation(
            "charged",
            headline,
            (
                Text(
                    "The same key %(key)s, retried: #%(id)s failed before the gateway charged "
                    "(%(status)s), so the server released the key, and this retry ran the "
                    "handler again and charged once.",
                    key=focus.key,
                    id=failed.id,
                    status=failed.status,
                ),
                retry,
            ),
        )
    new = (
        N_(
            "The key %(key)s was new: the server took the per-key lock, reserved the "
            "key, called the gateway and stored the response."
        )
        if focus.lock
        else N_("The key %(key)s was new: the server called the gateway and stored the response.")
    )
    return Explanation("charged", headline, (Text(new, key=focus.key), retry))
