"""The lessons path: each lesson is a scenario with a win condition, hints and a takeaway.

A lesson is "achieved" when every one of its checks has held, at some point, on the
lab's real state: its request log (what each request did, step by step), the gateway's
ledger and the mailbox. Checks are plain functions over that state, so what the card
says is what the code did. A check that held stays met (progress is kept per lab), so
"see it fail, then apply the fix" can span the reset the fix brings.

Plain Python, no web framework: the lab calls :func:`observe` after every request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .engine.text import N_

if TYPE_CHECKING:
    from .lab import Email, RequestEntry
    from .payments.gateway import Charge

RECENT = 40
"""Checks look at this many of the newest finished requests (the log keeps 200)."""

HORIZON_S = 24 * 3600
"""A retry a day later: what a client's retry horizon must be covered for."""


@dataclass(frozen=True)
class Evidence:
    """What the lab holds now: finished requests (oldest first), charges and e-mails.

    ``requests`` are the ones a check may be met by; ``every`` also holds the earlier
    ones (what happened before the check before it was met), for context.
    """

    requests: Sequence[RequestEntry]
    charges: Sequence[Charge]
    emails: Sequence[Email]
    every: Sequence[RequestEntry] = ()

    def charges_for_key(self, key: str | None) -> int:
        return sum(1 for c in self.charges if c.idempotency_key == key and not c.replayed)

    def charges_for_order(self, order_id: str) -> int:
        return sum(1 for c in self.charges if c.order_id == order_id and not c.replayed)


Test = Callable[[Evidence], bool]
Test1 = Callable[["RequestEntry"], bool]
Test2 = Callable[["RequestEntry", "RequestEntry"], bool]


@dataclass(frozen=True)
class Check:
    """One thing the attendee must make happen: ``label`` says it, ``test`` sees it."""

    id: str
    label: str
    test: Test


@dataclass(frozen=True)
class Lesson:
    """One stop on the path.

    :param name: the scenario it opens (``/lab/<id>?lesson=<name>``).
    :param goal: what the attendee will see happen, in one sentence.
    :param hints: revealed one at a time.
    :param checks: every one must hold once for "lesson achieved".
    :param takeaway: the sentence to remember.
    """

    name: str
    goal: str
    hints: tuple[str, ...]
    checks: tuple[Check, ...]
    takeaway: str


@dataclass
class Progress:
    """One lab's progress in one lesson: checks met so far (with when, as
    ``time.perf_counter()`` seconds), hints shown."""

    met_at: dict[str, float] = field(default_factory=dict)
    hints: int = 0

    @property
    def met(self) -> set[str]:
        return set(self.met_at)

    def achieved(self, lesson: Lesson) -> bool:
        return all(c.id in self.met for c in lesson.checks)


# -- facts over the evidence ---------------------------------------------------


def _overlap(a: RequestEntry, b: RequestEntry) -> bool:
    return (
        a.finished is not None
        and b.finished is not None
        and a.started < b.finished
        and b.started < a.finished
    )


def _pairs(requests: Sequence[RequestEntry]) -> Iterable[tuple[RequestEntry, RequestEntry]]:
    """Every (earlier, later) pair of requests, by arrival."""
    for i, first in enumerate(requests):
        for later in requests[i + 1 :]:
            yield first, later


def _money(entry: RequestEntry) -> bool:
    """The request moved money: it charged (a crash after the charge counts too)."""
    return entry.outcome == "charged" or (
        entry.outcome == "crashed" and entry.step("gateway charge") is not None
    )


def _concurrent_double(ev: Evidence, *, keyed: bool, lock: bool, stepped: bool = False) -> bool:
    for a, b in _pairs(ev.requests):
        same = a.key == b.key and (a.key is not None) == keyed
        if not (same and _overlap(a, b) and _money(a) and _money(b)):
            continue
        if (
            a.lock == lock
            and _stepped(a) == stepped
            and a.charge is not None
            and ev.charges_for_order(a.charge.order_id) >= 2
        ):
            return True
    return False


def _concurrent_once(ev: Evidence, *, stepped: bool = False) -> bool:
    for a, b in _pairs(ev.requests):
        if a.key is None or a.key != b.key or not _overlap(a, b) or not a.lock:
            continue
        outcomes = {a.outcome, b.outcome}
        if (
            "charged" in outcomes
            and outcomes & {"replayed", "in_use"}
            and _stepped(a) == stepped
            and ev.charges_for_key(a.key) == 1
        ):
            return True
    return False


def _at(entry: RequestEntry, step: str) -> float | None:
    """When ``entry`` passed ``step`` (its last such step), in ``time.perf_counter`` seconds."""
    found = [s for s in entry.steps if s.name == step]
    return entry.started + found[-1].at_ms / 1000 if found else None


def _waited_on_held_lock(holder: RequestEntry, waiter: RequestEntry) -> bool:
    """``waiter`` blocked on the per-key lock while ``holder`` held it: it began to wait
    after ``holder`` took the lock and before ``holder`` let it go, and took the lock
    only once ``holder`` had saved its record.

    Times come from the request log (``lock acquire`` carries ``waited_ms``, counted from
    the moment the waiter tried the lock). The holder lets the lock go between its
    ``record save`` and its answer (``respond``, or ``response lost``), so that answer
    bounds the hold.
    """
    taken = _at(holder, "lock acquire")
    saved = _at(holder, "record save")
    let_go = _at(holder, "respond") or _at(holder, "response lost") or holder.finished
    acquired = _at(waiter, "lock acquire")
    step = waiter.step("lock acquire")
    if taken is None or saved is None or let_go is None or acquired is None or step is None:
        return False
    began = acquired - float(step.detail.get("waited_ms", 0)) / 1000
    return taken <= began < let_go and acquired >= saved


def _interleaved_once(ev: Evidence) -> bool:
    """Step mode, lock on: the second request waited on the first one's lock while the
    first held it, then replayed; the key charged once."""
    for a, b in _pairs(ev.requests):
        if a.key is None or a.key != b.key or not (a.lock and b.lock):
            continue
        if not (_stepped(a) and _stepped(b) and _overlap(a, b)):
            continue
        for holder, waiter in ((a, b), (b, a)):
            if (
                holder.outcome == "charged"
                and waiter.outcome == "replayed"
                and _waited_on_held_lock(holder, waiter)
                and ev.charges_for_key(a.key) == 1
            ):
                return True
    return False


def _stepped(entry: RequestEntry) -> bool:
    return entry.settings is not None and entry.settings.step_mode


def _then(ev: Evidence, first: Test1, later: Test2) -> bool:
    """Some request passed ``first``, and a later one passed ``later`` with it. The later
    one must be new (after the check before was met); the first may be older."""
    recent = {id(e) for e in ev.requests}
    pool = ev.every or ev.requests
    return any(first(a) and later(a, b) for a, b in _pairs(pool) if id(b) in recent)


def _lost(entry: RequestEntry) -> bool:
    return not entry.delivered and entry.outcome == "charged"


def _crashed_after_charge(entry: RequestEntry) -> bool:
    return entry.outcome == "crashed" and entry.step("gateway charge") is not None


def _same_order(a: RequestEntry, b: RequestEntry) -> bool:
    return a.charge is not None and b.charge is not None and a.charge.order_id == b.charge.order_id


def _ttl(entry: RequestEntry) -> int:
    return entry.settings.ttl_s if entry.settings else HORIZON_S


# -- the path --------------------------------------------------------------------


def _lesson(name: str, goal: str, hints: tuple[str, ...], takeaway: str, *checks: Check) -> Lesson:
    return Lesson(name, goal, hints, checks, takeaway)


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
            lambda ev: (
                _concurrent_double(ev, keyed=False, lock=True)
                or _concurrent_double(ev, keyed=False, lock=False)
            ),
        ),
        Check(
            "keyed-once",
            N_("Two requests with one key charged once; the other replayed"),
            lambda ev: _concurrent_once(ev),
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
            lambda ev: _then(
                ev,
                _lost,
                lambda a, b: b.key != a.key and _same_order(a, b) and b.outcome == "charged",
            ),
        ),
        Check(
            "same-key-replay",
            N_("After a lost response, a retry with the same key replayed"),
            lambda ev: _then(ev, _lost, lambda a, b: b.key == a.key and b.outcome == "replayed"),
        ),
    ),
    _lesson(
        "key-reuse",
        N_("Reuse a key with another amount and get a refusal, not a charge."),
        (
            N_("Change amount & resend keeps the key and adds 1,000 to the amount."),
            N_("The store compares fingerprints: a different body is a different request."),
            N_("New order makes a new intent, so a new key."),
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
                    x.key not in (None, e.key) and x.started < e.started and not _same_order(x, e)
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
            lambda ev: _concurrent_double(ev, keyed=True, lock=False),
        ),
        Check(
            "lock-on-once",
            N_("With the lock on, two requests with one key charged once"),
            lambda ev: _concurrent_once(ev),
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
        ),
        N_("The race is a matter of order: the lock forces the only safe one."),
        Check(
            "stepped-double",
            N_("In step mode, with the lock off, both requests charged"),
            lambda ev: _concurrent_double(ev, keyed=True, lock=False, stepped=True),
        ),
        Check(
            "stepped-once",
            N_(
                "In step mode, with the lock on, B waited for A's lock while A held it, "
                "then replayed"
            ),
            lambda ev: _interleaved_once(ev),
        ),
    ),
    _lesson(
        "crash-window",
        N_(
            "The instance dies between the charge and the record: see the retry charge again, "
            "then the downstream key recover it."
        ),
        (
            N_("The crash comes after the gateway charged and before the record was saved."),
            N_("The fix reserves the key first and passes it on to the gateway."),
        ),
        N_("Pass the idempotency key downstream: the side effect must be idempotent too."),
        Check(
            "crash-double",
            N_("After a crash, a retry with the same key charged the order again"),
            lambda ev: _then(
                ev,
                _crashed_after_charge,
                lambda a, b: b.key == a.key and b.outcome == "charged" and _same_order(a, b),
            ),
        ),
        Check(
            "crash-recovered",
            N_("After a crash, the retry got the first charge back from the gateway"),
            lambda ev: _then(
                ev, _crashed_after_charge, lambda a, b: b.key == a.key and b.outcome == "recovered"
            ),
        ),
    ),
    _lesson(
        "ttl-expiry",
        N_("Retry after the record has expired, then with a TTL that covers the retry."),
        (
            N_("+25 h moves the lab's clock, not yours: the record's TTL is 24 h."),
            N_("The fix keeps keys 72 h: longer than the client may retry."),
        ),
        N_("The TTL must cover the client's retry horizon."),
        Check(
            "expired-double",
            N_("A retry after the TTL charged again"),
            lambda ev: _then(
                ev,
                lambda a: a.outcome == "charged" and a.key is not None,
                lambda a, b: (
                    b.key == a.key
                    and b.fingerprint == a.fingerprint
                    and b.outcome == "charged"
                    and b.at - a.at >= _ttl(a)
                ),
            ),
        ),
        Check(
            "long-ttl-replay",
            N_("A retry a day later, within the TTL, replayed"),
            lambda ev: _then(
                ev,
                lambda a: a.outcome == "charged" and a.key is not None,
                lambda a, b: (
                    b.key == a.key
                    and b.outcome == "replayed"
                    and HORIZON_S <= b.at - a.at < _ttl(a)
                ),
            ),
        ),
    ),
    _lesson(
        "multi-instance",
        N_("Two instances, each with its own store, both charge; a shared store replays."),
        (
            N_("The balancer sends Pay to i1 and Retry to i2: look at the lanes' instance."),
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
                and _money(a)
                and _money(b)
                for a, b in _pairs(ev.requests)
            ),
        ),
        Check(
            "shared-replay",
            N_("Another instance replayed the first one's charge"),
            lambda ev: _then(
                ev,
                lambda a: a.outcome == "charged" and a.key is not None,
                lambda a, b: (
                    b.key == a.key and b.instance != a.instance and b.outcome == "replayed"
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
            lambda ev: _then(
                ev,
                lambda a: a.outcome == "declined",
                lambda a, b: b.key == a.key and b.outcome == "replayed" and b.status == 402,
            ),
        ),
        Check(
            "error-retried",
            N_("After a gateway failure, the retry with the same key charged"),
            lambda ev: _then(
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
            lambda ev: _then(
                ev,
                lambda a: (
                    _crashed_after_charge(a)
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

LESSONS: dict[str, Lesson] = {lesson.name: lesson for lesson in PATH}


def evidence(
    requests: Sequence[RequestEntry], charges: Sequence[Charge], emails: Sequence[Email]
) -> Evidence:
    """The newest :data:`RECENT` finished requests, with the ledger and the mailbox."""
    done = [e for e in requests if e.finished is not None][-RECENT:]
    return Evidence(done, charges, emails)


def observe(lesson: Lesson, progress: Progress, ev: Evidence, now: float) -> None:
    """Mark the checks of ``lesson`` that hold on ``ev``.

    Checks are met in order: "see it fail, *then* fix it". Each one looks only at the
    requests that arrived after the check before it was met (at ``now``, perf_counter s).
    """
    since = float("-inf")
    for check in lesson.checks:
        if check.id in progress.met_at:
            since = progress.met_at[check.id]
            continue
        later = Evidence(
            [e for e in ev.requests if e.started > since], ev.charges, ev.emails, ev.requests
        )
        if not check.test(later):
            break
        progress.met_at[check.id] = since = now
