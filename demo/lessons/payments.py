"""The payment lab's chapter of the lessons path: ten lessons, in workshop order."""

from __future__ import annotations

from ..engine.text import N_
from .engine import Check, Lesson
from .payment_facts import (
    HORIZON_S,
    concurrent_double,
    concurrent_once,
    crashed_after_charge,
    interleaved_once,
    lost,
    money,
    pairs,
    same_order,
    then,
    ttl,
)


def _lesson(
    name: str, goal: str, hints: tuple[str, ...], takeaway: str, *checks: Check,
    unmet_note: str = "", case_note: str = "",
) -> Lesson:  # fmt: skip
    return Lesson(name, goal, hints, checks, takeaway, lab="payments", unmet_note=unmet_note,
                  case_note=case_note)  # fmt: skip


PATH: tuple[Lesson, ...] = (
    _lesson(
        "double-click",
        N_("See a double click charge twice without a key, and once with one."),
        (
            N_("Double-submit sends two real requests at the same moment, like a double click."),
            N_("After the double charge, press Apply the fix: the client then sends a stable key."),
        ),
        N_("The server can only deduplicate what the client marks as the same intent."),
        Check(
            "keyless-double",
            N_("Two requests without a key both charged"),
            # Step mode too: without a key no lock holds either request back, so stepped
            # lanes charge twice as a double click does (run U: "MISMATCH", the check open).
            lambda ev: any(
                concurrent_double(ev, keyed=False, lock=lock, stepped=stepped)
                for lock in (True, False)
                for stepped in (False, True)
            ),
        ),
        Check(
            "keyed-once",
            N_("Two requests with one key charged once; the other replayed"),
            lambda ev: concurrent_once(ev),
        ),
        case_note=N_(
            "The first check asks for two requests at the same moment, as a double click "
            "sends them: press Double-submit. Requests sent one after another (Pay, then Pay) "
            "charge too, but show no race."
        ),
    ),
    _lesson(
        "lost-response",
        N_(
            "A response is lost: a retry with a new key charges again, one with the same key "
            "replays."
        ),
        (
            N_(
                "The Ledger shows the first charge although the page got no answer: the money "
                "moved, and only the server knows it."
            ),
            N_("Retry with a new key is what a client that makes a key per attempt does."),
            N_("With the fix, Retry sends the same key: watch the REPLAYED badge."),
        ),
        N_("Retry with the key of the first attempt: only the server knows whether it charged."),
        Check(
            "new-key-double",
            N_("After a lost response, a retry with a new key charged the order again"),
            lambda ev: then(
                ev,
                lost,
                lambda a, b: b.key != a.key and same_order(a, b) and b.outcome == "charged",
            ),
        ),
        Check(
            "same-key-replay",
            N_("After a lost response, a retry with the same key replayed"),
            lambda ev: then(ev, lost, lambda a, b: b.key == a.key and b.outcome == "replayed"),
        ),
    ),
    _lesson(
        "key-reuse",
        N_("Reuse a key with another amount and get a refusal, not a charge."),
        (
            N_("First case: Change amount & resend keeps the key and adds 1,000 to the amount."),
            N_("The store compares fingerprints: a different body is a different request."),
            N_(
                "Second case: New order makes a new intent, so a new key; its first Pay charges "
                "once."
            ),
        ),
        N_("One key, one request body: a changed body needs a new key."),
        Check(
            "refused",
            N_("A key reused with another body was refused and charged nothing"),
            lambda ev: any(
                e.outcome == "conflict" and e.key is not None and ev.charges_for_key(e.key) == 1
                for e in ev.requests
            ),
        ),
        Check(
            "new-intent",
            N_("A new order under its own key charged once"),
            lambda ev: any(
                e.outcome == "charged"
                and e.key is not None
                and any(
                    x.key not in (None, e.key) and x.started < e.started and not same_order(x, e)
                    for x in ev.every
                )
                for e in ev.requests
            ),
        ),
    ),
    _lesson(
        "race",
        N_("With the lock off, two concurrent duplicates both charge; with it on, once."),
        (
            N_("Both requests look the key up before either saves a record."),
            N_("Apply the fix switches the per-key lock on: the second request waits."),
            N_(
                "Ticking Lock by hand? Press New order first: the old order already has its "
                "record, so both requests would simply replay it."
            ),
        ),
        N_("Check-then-act needs a lock or an atomic reservation, or it is a TOCTOU race."),
        Check(
            "lock-off-double",
            N_("With the lock off, two requests with one key both charged"),
            lambda ev: concurrent_double(ev, keyed=True, lock=False),
        ),
        Check(
            "lock-on-once",
            N_("With the lock on, two requests with one key charged once"),
            lambda ev: concurrent_once(ev),
        ),
    ),
    _lesson(
        "slow-motion",
        N_(
            "Be the scheduler: step two requests by hand into a double charge, then see the "
            "lock stop you."
        ),
        (
            N_("Press Double-submit: both requests stop at their first step. Step A, then B."),
            N_("Let both pass lookup before either saves a record: keys a and b step the lanes."),
            N_("With the lock on, B says it is blocked: it waits for A's lock."),
            N_(
                "If A ran to its end before B reached the lock, B found A's record and "
                "replayed without waiting: that does not count. Press New order, step A until "
                "it holds the lock, then step B into it."
            ),
        ),
        N_("The race is a matter of order: the lock forces the only safe one."),
        Check(
            "stepped-double",
            N_("In step mode, with the lock off, both requests charged"),
            lambda ev: concurrent_double(ev, keyed=True, lock=False, stepped=True),
        ),
        Check(
            "stepped-once",
            # Either lane may hold the lock: the one stepped first does (run Q: B first).
            N_(
                "In step mode, with the lock on, one request waited for the other's lock "
                "while it was held, then replayed"
            ),
            lambda ev: interleaved_once(ev),
        ),
        unmet_note=N_(
            "One charge, as expected, yet the last check is open: it asks for B to wait on "
            "A's lock while A holds it. If A ran to its end first, B found A's record and "
            "replayed without waiting. Press New order, step A until it holds the lock, then "
            "step B into it."
        ),
    ),
    _lesson(
        "crash-window",
        N_(
            "The instance dies between the charge and the record: see the retry charge again, "
            "then the key passed on to the gateway recover it."
        ),
        (
            N_("The crash comes after the gateway charged and before the record was saved."),
            N_("The fix reserves the key first and passes it on to the gateway."),
        ),
        N_("Pass the idempotency key downstream: the side effect must be idempotent too."),
        Check(
            "crash-double",
            N_("After a crash, a retry with the same key charged the order again"),
            lambda ev: then(
                ev,
                crashed_after_charge,
                lambda a, b: b.key == a.key and b.outcome == "charged" and same_order(a, b),
            ),
        ),
        Check(
            "crash-recovered",
            N_("After a crash, the retry got the first charge back from the gateway"),
            lambda ev: then(
                ev, crashed_after_charge, lambda a, b: b.key == a.key and b.outcome == "recovered"
            ),
        ),
    ),
    _lesson(
        "ttl-expiry",
        N_("Retry after the record has expired, then with a TTL that covers the retry."),
        (
            N_(
                "+25 h moves the lab's clock, not yours: past the 24 h TTL the lesson sets. A "
                "record keeps the TTL it was saved with: after changing Key TTL, press New order."
            ),
            N_("The fix keeps keys 72 h: longer than the client may retry."),
        ),
        N_("The TTL must cover the client's retry horizon."),
        Check(
            "expired-double",
            N_("A retry after the TTL charged again"),
            lambda ev: then(
                ev,
                lambda a: a.outcome == "charged" and a.key is not None,
                lambda a, b: (
                    b.key == a.key
                    and b.fingerprint == a.fingerprint
                    and b.outcome == "charged"
                    and b.at - a.at >= ttl(a)
                ),
            ),
        ),
        Check(
            "long-ttl-replay",
            N_("A retry a day later, within the TTL, replayed"),
            lambda ev: then(
                ev,
                lambda a: a.outcome == "charged" and a.key is not None,
                lambda a, b: (
                    b.key == a.key
                    and b.outcome == "replayed"
                    and b.charge_id == a.charge_id
                    and HORIZON_S <= b.at - a.at < ttl(a)
                ),
            ),
        ),
    ),
    _lesson(
        "multi-instance",
        N_("Two instances, each with its own store, both charge; a shared store replays."),
        (
            N_(
                "The balancer sends Pay to i1 and Retry to i2: look at the i1 / i2 badge of "
                "each request in the Request timeline."
            ),
            N_("The fix shares one store between the instances, like Redis."),
        ),
        N_("Idempotency records belong in storage every instance shares."),
        Check(
            "per-instance-double",
            N_("The same key charged on two instances"),
            lambda ev: any(
                a.key is not None
                and a.key == b.key
                and a.instance != b.instance
                and money(a)
                and money(b)
                for a, b in pairs(ev.requests)
            ),
        ),
        Check(
            "shared-replay",
            N_("Another instance replayed the first one's charge"),
            lambda ev: then(
                ev,
                lambda a: a.outcome == "charged" and a.key is not None,
                lambda a, b: (
                    b.key == a.key
                    and b.instance != a.instance
                    and b.outcome == "replayed"
                    and b.charge_id == a.charge_id  # a's charge, not its own instance's
                ),
            ),
        ),
    ),
    _lesson(
        "decline",
        N_("A decline is stored and replayed; a transport failure releases the key."),
        (
            N_("402 is the gateway's answer: the same request gets the same answer."),
            N_(
                "The second case makes the gateway fail once before charging (502): the key is "
                "released."
            ),
        ),
        N_("Store business results, including errors; never store a failure to get one."),
        Check(
            "decline-replayed",
            N_("A declined payment was replayed as the same 402"),
            lambda ev: then(
                ev,
                lambda a: a.outcome == "declined",
                lambda a, b: b.key == a.key and b.outcome == "replayed" and b.status == 402,
            ),
        ),
        Check(
            "error-retried",
            N_("After a gateway failure, the retry with the same key charged"),
            lambda ev: then(
                ev,
                lambda a: a.outcome == "error" and a.key is not None,
                lambda a, b: b.key == a.key and b.outcome == "charged",
            ),
        ),
    ),
    _lesson(
        "email-once",
        N_("The charge is safe after a crash; make the receipt e-mail safe too."),
        (
            N_("The e-mail is our own side effect: the gateway cannot deduplicate it."),
            N_("The fix writes the e-mail to an outbox with the record, in one atomic step."),
        ),
        N_("Every side effect needs its own idempotency: an outbox sends once per key."),
        Check(
            "email-twice",
            N_("One order got two receipt e-mails"),
            lambda ev: any(
                sum(1 for m in ev.emails if m.order_id == e.order_id) >= 2 for e in ev.emails
            ),
        ),
        Check(
            "email-once",
            N_("After a crash and a retry, the outbox sent one e-mail"),
            lambda ev: then(
                ev,
                lambda a: (
                    crashed_after_charge(a)
                    and a.settings is not None
                    and a.settings.email == "outbox"
                ),
                lambda a, b: (
                    b.key == a.key
                    and b.outcome in ("recovered", "charged")
                    and sum(1 for m in ev.emails if m.idempotency_key == a.key) == 1
                ),
            ),
        ),
    ),
)
"""The path, in workshop order: about 4 minutes a lesson."""
