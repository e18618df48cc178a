"""What the payment lab's lessons check: its evidence (requests, ledger, mailbox), and
the facts the checks are written in (two requests overlapped, the money moved twice…).

Checks read the lab's public state only (:class:`~demo.payments.lab.PaymentsLab`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..payments.gateway import Charge
from ..payments.lab import PaymentsLab
from ..payments.requests import Email, RequestEntry

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

    def since(self, started_after: float) -> Evidence:
        """The requests that arrived after ``started_after`` (perf_counter s); every
        request so far kept as ``every``, for context."""
        later = [e for e in self.requests if e.started > started_after]
        return Evidence(later, self.charges, self.emails, self.requests)

    def charges_for_key(self, key: str | None) -> int:
        return sum(1 for c in self.charges if c.idempotency_key == key and not c.replayed)

    def charges_for_order(self, order_id: str) -> int:
        return sum(1 for c in self.charges if c.order_id == order_id and not c.replayed)


Test1 = Callable[["RequestEntry"], bool]
Test2 = Callable[["RequestEntry", "RequestEntry"], bool]


# -- facts over the evidence ---------------------------------------------------


def overlap(a: RequestEntry, b: RequestEntry) -> bool:
    return (
        a.finished is not None
        and b.finished is not None
        and a.started < b.finished
        and b.started < a.finished
    )


def pairs(requests: Sequence[RequestEntry]) -> Iterable[tuple[RequestEntry, RequestEntry]]:
    """Every (earlier, later) pair of requests, by arrival."""
    for i, first in enumerate(requests):
        for later in requests[i + 1 :]:
            yield first, later


def money(entry: RequestEntry) -> bool:
    """The request moved money: it charged (a crash after the charge counts too)."""
    return entry.outcome == "charged" or (
        entry.outcome == "crashed" and entry.step("gateway charge") is not None
    )


def concurrent_double(ev: Evidence, *, keyed: bool, lock: bool, stepped: bool = False) -> bool:
    for a, b in pairs(ev.requests):
        same = a.key == b.key and (a.key is not None) == keyed
        if not (same and overlap(a, b) and money(a) and money(b)):
            continue
        if (
            a.lock == lock
            and in_step_mode(a) == stepped
            and a.charge is not None
            and ev.charges_for_order(a.charge.order_id) >= 2
        ):
            return True
    return False


def concurrent_once(ev: Evidence, *, stepped: bool = False) -> bool:
    for a, b in pairs(ev.requests):
        if a.key is None or a.key != b.key or not overlap(a, b) or not a.lock:
            continue
        outcomes = {a.outcome, b.outcome}
        if (
            "charged" in outcomes
            and outcomes & {"replayed", "in_use"}
            and in_step_mode(a) == stepped
            and ev.charges_for_key(a.key) == 1
        ):
            return True
    return False


def at(entry: RequestEntry, step: str) -> float | None:
    """When ``entry`` passed ``step`` (its last such step), in ``time.perf_counter`` seconds."""
    found = [s for s in entry.steps if s.name == step]
    return entry.started + found[-1].at_ms / 1000 if found else None


def waited_on_held_lock(holder: RequestEntry, waiter: RequestEntry) -> bool:
    """``waiter`` blocked on the per-key lock while ``holder`` held it: it began to wait
    after ``holder`` took the lock and before ``holder`` let it go, and took the lock
    only once ``holder`` had saved its record.

    Times come from the request log (``lock acquire`` carries ``waited_ms``, counted from
    the moment the waiter tried the lock). The holder lets the lock go between its
    ``record save`` and its answer (``respond``, or ``response lost``), so that answer
    bounds the hold.
    """
    taken = at(holder, "lock acquire")
    saved = at(holder, "record save")
    let_go = at(holder, "respond") or at(holder, "response lost") or holder.finished
    acquired = at(waiter, "lock acquire")
    step = waiter.step("lock acquire")
    if taken is None or saved is None or let_go is None or acquired is None or step is None:
        return False
    began = acquired - float(step.detail.get("waited_ms", 0)) / 1000
    return taken <= began < let_go and acquired >= saved


def interleaved_once(ev: Evidence) -> bool:
    """Step mode, lock on: the second request waited on the first one's lock while the
    first held it, then replayed; the key charged once."""
    for a, b in pairs(ev.requests):
        if a.key is None or a.key != b.key or not (a.lock and b.lock):
            continue
        if not (in_step_mode(a) and in_step_mode(b) and overlap(a, b)):
            continue
        for holder, waiter in ((a, b), (b, a)):
            if (
                holder.outcome == "charged"
                and waiter.outcome == "replayed"
                and waited_on_held_lock(holder, waiter)
                and ev.charges_for_key(a.key) == 1
            ):
                return True
    return False


def in_step_mode(entry: RequestEntry) -> bool:
    return entry.settings is not None and entry.settings.step_mode


def then(ev: Evidence, first: Test1, later: Test2) -> bool:
    """Some request passed ``first``, and a later one passed ``later`` with it. The later
    one must be new (after the check before was met); the first may be older."""
    recent = {id(e) for e in ev.requests}
    pool = ev.every or ev.requests
    return any(first(a) and later(a, b) for a, b in pairs(pool) if id(b) in recent)


def lost(entry: RequestEntry) -> bool:
    return not entry.delivered and entry.outcome == "charged"


def crashed_after_charge(entry: RequestEntry) -> bool:
    return entry.outcome == "crashed" and entry.step("gateway charge") is not None


def same_order(a: RequestEntry, b: RequestEntry) -> bool:
    return a.charge is not None and b.charge is not None and a.charge.order_id == b.charge.order_id


def ttl(entry: RequestEntry) -> int:
    return entry.settings.ttl_s if entry.settings else HORIZON_S


def evidence(lab: PaymentsLab) -> Evidence:
    """The newest :data:`RECENT` finished requests, with the ledger and the mailbox."""
    done = [e for e in lab.requests() if e.finished is not None][-RECENT:]
    return Evidence(done, lab.gateway.ledger(), lab.emails())
