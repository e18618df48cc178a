"""Nine operations on one small account, each applied once and then retried.

Which ones survive a retry on their own? The lab does not keep a table of answers: it
runs the operation ``times`` times on a copy of :data:`START`, snapshots the state after
every attempt, and classifies the operation from what the retries did to it. A retry
that changes nothing is harmless; one that moves money again, sends a second e-mail or
takes another invoice number needs a dedup record ("applied for key X?") in front.

Plain Python, no web framework. Errors are :class:`~demo.engine.problems.Problem` (422).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..engine.problems import Problem
from ..engine.text import N_, Reasons, Text

State = dict[str, Any]
"""The account, as JSON-ready values (see :data:`START`)."""

START: State = {
    "balance": 0,
    "savings": 1000,
    "profile": {"name": "Lan", "plan": "free"},
    "tags": [],
    "items": [7, 8],
    "flag": False,
    "emails": [],
    "invoices": [],
    "next_invoice": 1,
}
"""The fixed starting state of every run: ``balance`` and ``savings`` are whole units
(ints), ``items`` ids, ``emails`` the e-mails sent, ``invoices`` the invoice numbers taken
(``"INV-0001"``…), ``next_invoice`` the counter they are taken from."""

TRANSFER_AMOUNT = 100
"""What ``add_balance`` adds and ``transfer`` moves from ``savings`` to ``balance``."""

MAX_TIMES = 10
"""A run applies an operation at most this many times (1 first attempt, 9 retries)."""

MAX_KEY_LENGTH = 255
KEY_PATTERN = rf"^[\x20-\x7e]{{1,{MAX_KEY_LENGTH}}}(?!\n)$"
"""A dedup key: 1-255 printable ASCII characters (the payment lab's limit, Stripe's)."""
_KEY = re.compile(KEY_PATTERN)

Outcome = tuple[int, Any]
"""What an attempt answered: an HTTP status and a small JSON body."""


def _set_balance(s: State) -> Outcome:
    s["balance"] = 100
    return 200, {"balance": s["balance"]}


def _add_balance(s: State) -> Outcome:
    s["balance"] += TRANSFER_AMOUNT
    return 200, {"balance": s["balance"]}


def _put_profile(s: State) -> Outcome:
    s["profile"] = {"name": "Lan", "plan": "pro"}  # the whole resource, not a change to it
    return 200, dict(s["profile"])


def _patch_append_tag(s: State) -> Outcome:
    s["tags"].append("vip")
    return 200, {"tags": list(s["tags"])}


def _delete_item(s: State) -> Outcome:
    if 7 not in s["items"]:
        return 404, {"error": "item 7 not found"}  # the state is the same; the answer is not
    s["items"].remove(7)
    return 204, None


def _set_flag(s: State) -> Outcome:
    s["flag"] = True
    return 200, {"flag": True}


def _send_email(s: State) -> Outcome:
    email = f"em_{len(s['emails']) + 1:04d}"
    s["emails"].append(email)
    return 202, {"email": email}


def _create_invoice(s: State) -> Outcome:
    number = f"INV-{s['next_invoice']:04d}"
    s["next_invoice"] += 1
    s["invoices"].append(number)
    return 201, {"invoice": number}


def _transfer(s: State) -> Outcome:
    if s["savings"] < TRANSFER_AMOUNT:
        return 409, {"error": "insufficient funds in savings"}
    s["savings"] -= TRANSFER_AMOUNT
    s["balance"] += TRANSFER_AMOUNT
    return 200, {"balance": s["balance"], "savings": s["savings"]}


@dataclass(frozen=True)
class Operation:
    """One operation: ``name`` (the API's), ``code`` (what it does, as the page shows it),
    ``label`` (in words, translatable) and ``run`` (applies it to a state in place)."""

    name: str
    code: str
    label: str
    run: Callable[[State], Outcome]


OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation("set_balance", "SET balance = 100", N_("Set the balance"), _set_balance),
        Operation("add_balance", "balance += 100", N_("Add to the balance"), _add_balance),
        Operation(
            "put_profile",
            'PUT /profile {"name": "Lan", "plan": "pro"}',
            N_("Replace the whole profile"),
            _put_profile,
        ),
        Operation(
            "patch_append_tag", 'PATCH /tags append "vip"', N_("Append a tag"), _patch_append_tag
        ),
        Operation("delete_item", "DELETE /items/7", N_("Delete item 7"), _delete_item),
        Operation("set_flag", "SET flag = true", N_("Set a flag"), _set_flag),
        Operation(
            "send_email",
            'send_email(to="lan", template="welcome")',
            N_("Send an e-mail"),
            _send_email,
        ),
        Operation(
            "create_invoice",
            "INSERT invoice (next number)",
            N_("Create an invoice"),
            _create_invoice,
        ),
        Operation("transfer", "savings -= 100; balance += 100", N_("Transfer money"), _transfer),
    )
}
"""Every operation, in the page's order."""


@dataclass(frozen=True)
class Attempt:
    """One attempt of a run: ``n`` from 1, the ``status`` and ``body`` it answered, the
    ``state`` after it; ``replayed`` when the dedup record answered instead of the
    operation; ``changed`` when it changed the state, ``would_change`` when running the
    operation would have (the dedup record is what kept the state, for a replay)."""

    n: int
    status: int
    body: Any
    state: State
    replayed: bool
    changed: bool
    would_change: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "status": self.status,
            "body": self.body,
            "state": self.state,
            "replayed": self.replayed,
            "changed": self.changed,
            "would_change": self.would_change,
        }


@dataclass(frozen=True)
class Run:
    """An operation applied once, then retried ``times - 1`` times (see :func:`apply`)."""

    operation: str
    times: int
    dedup: bool
    key: str
    attempts: tuple[Attempt, ...]

    @property
    def final_state(self) -> State:
        return self.attempts[-1].state

    @property
    def natural(self) -> bool:
        """Naturally idempotent: no retry changed the state, nor would have without the
        dedup record. Vacuously true for a run without retries (``times`` 1)."""
        return not any(a.would_change for a in self.attempts[1:])

    @property
    def same_state(self) -> bool:
        """The state after every retry is the state after the first attempt."""
        return all(a.state == self.attempts[0].state for a in self.attempts[1:])

    @property
    def same_response(self) -> bool:
        """Every retry answered what the first attempt answered (status and body)."""
        first = self.attempts[0]
        return all((a.status, a.body) == (first.status, first.body) for a in self.attempts[1:])

    def as_dict(self) -> dict[str, Any]:
        """The API's answer (``POST …/natural/api/apply``)."""
        return {
            "operation": self.operation,
            "code": OPERATIONS[self.operation].code,
            "times": self.times,
            "dedup": self.dedup,
            "key": self.key,
            "attempts": [a.as_dict() for a in self.attempts],
            "final_state": self.final_state,
            "natural": self.natural,
            "same_state": self.same_state,
            "same_response": self.same_response,
            "dedup_table": (
                [{"key": self.key, "applied": True, "status": self.attempts[0].status}]
                if self.dedup
                else []
            ),
        }


def apply(operation: str, times: int, *, dedup: bool, key: str) -> Run:
    """Apply ``operation`` once to a fresh copy of :data:`START`, then retry it
    ``times - 1`` more times, as a client whose response got lost would.

    With ``dedup``, an "applied for key X?" table sits in front: the first attempt runs
    and its response is stored under ``key``; every retry finds the key and gets the
    stored response back, the operation not run. To classify the operation all the same,
    each replayed retry also runs on a scratch copy of the state: ``would_change``.
    Arguments are trusted (see :func:`parse_apply`).
    """
    op = OPERATIONS[operation]
    state = copy.deepcopy(START)
    table: dict[str, Outcome] = {}
    attempts = []
    for n in range(1, times + 1):
        before = copy.deepcopy(state)
        stored = table.get(key) if dedup else None
        if stored is not None:
            scratch = copy.deepcopy(state)
            op.run(scratch)
            status, body = stored
            would_change = scratch != before
        else:
            status, body = op.run(state)
            if dedup:
                table[key] = (status, copy.deepcopy(body))
            would_change = state != before
        attempts.append(
            Attempt(
                n,
                status,
                copy.deepcopy(body),
                copy.deepcopy(state),
                replayed=stored is not None,
                changed=state != before,
                would_change=would_change,
            )
        )
    return Run(operation, times, dedup, key, tuple(attempts))


def parse_apply(body: object) -> tuple[str, int, bool, str]:
    """Check an apply request's body: ``{"operation", "times", "dedup", "key"}``.

    ``times`` defaults to 3, ``dedup`` to false, ``key`` to ``"<operation>:1"``.
    Returns ``(operation, times, dedup, key)``.

    :raises Problem: 422 naming each bad member (an unknown operation, ``times`` not an
        integer from 1 to 10 (``true`` and ``2.0`` are not), ``dedup`` not a boolean, a
        key not 1-255 printable ASCII characters, a member the API does not know).
    """
    if not isinstance(body, dict):
        raise invalid_request({"body": N_("must be a JSON object")})
    errors: dict[str, str | Text] = {}
    for name in body:
        if name not in ("operation", "times", "dedup", "key"):
            errors[str(name)] = N_("is not a known field")
    operation = body.get("operation")
    if not isinstance(operation, str) or operation not in OPERATIONS:
        errors["operation"] = Text(
            "must be one of %(choices)s", choices=", ".join(f'"{n}"' for n in OPERATIONS)
        )
    times = body.get("times", 3)
    if isinstance(times, bool) or not isinstance(times, int) or not 1 <= times <= MAX_TIMES:
        errors["times"] = Text("must be an integer from %(low)s to %(high)s", low=1, high=MAX_TIMES)
    dedup = body.get("dedup", False)
    if not isinstance(dedup, bool):
        errors["dedup"] = N_("must be true or false")
    key = body.get("key", f"{operation}:1")
    if not isinstance(key, str) or not _KEY.match(key):
        errors["key"] = N_("must be 1-255 printable ASCII characters")
    if errors:
        raise invalid_request(errors)
    assert isinstance(operation, str) and isinstance(times, int) and isinstance(dedup, bool)
    assert isinstance(key, str)
    return operation, times, dedup, key


def invalid_request(errors: dict[str, str | Text]) -> Problem:
    """A 422 ``invalid-natural-request`` naming each bad member of a request body."""
    reasons = Reasons(errors)
    return Problem(
        422,
        "invalid-natural-request",
        N_("Invalid operations request"),
        Text("Fix the request: %(fields)s.", fields=reasons),
        errors=reasons.english(),
    )
