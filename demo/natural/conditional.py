"""A delayed duplicate of a naturally idempotent write, and the conditional write that
stops it (RFC 9110 §13.1.1, ``If-Match``).

``SET balance = 100`` survives a retry that arrives at once. Arriving *late*, after
another client set 50, the same retry puts 100 back: a lost update. With a version (an
ETag) the first client's write carries ``If-Match`` with the version it read; its late
copy carries the same, no longer current, and is answered 412 Precondition Failed.

Plain Python, no web framework.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.text import N_, Text
from .operations import invalid_request


@dataclass
class VersionedBalance:
    """A balance with a version, sent as the strong ETag ``"v<version>"``."""

    balance: int = 0
    version: int = 1

    @property
    def etag(self) -> str:
        return f'"v{self.version}"'

    def put(self, value: int, if_match: str | None) -> int:
        """Set the balance to ``value``, unless ``if_match`` is given and is not the current
        ETag. Returns the status: 200, or 412 (nothing changed)."""
        if if_match is not None and if_match != self.etag:
            return 412
        self.balance = value
        self.version += 1
        return 200


@dataclass(frozen=True)
class Write:
    """One write of the story: ``client`` (``"A"`` or ``"B"``), the ``balance`` it sends,
    the ``if_match`` it carries (``None`` when unconditional), its ``status``, the balance
    and ETag after it, and whether it is the late retry."""

    client: str
    balance: int
    if_match: str | None
    status: int
    balance_after: int
    etag_after: str
    late: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "balance": self.balance,
            "if_match": self.if_match,
            "status": self.status,
            "balance_after": self.balance_after,
            "etag_after": self.etag_after,
            "late": self.late,
        }


def delayed_duplicate(conditional: bool) -> tuple[Write, ...]:
    """Run the three writes on a balance of 0 (version 1) and return them in order:

    1. client A sets 100 (its response is lost, so A will retry);
    2. client B, having read A's 100, sets 50;
    3. A's retry, delayed in the network, arrives last: the same request as write 1.

    Unconditional, write 3 answers 200 and the balance ends at 100: B's 50 is lost.
    With ``conditional`` every write carries ``If-Match`` with the ETag its client read;
    write 3 carries write 1's, stale by now: 412, and the balance stays 50.
    """
    account = VersionedBalance()
    a_read = account.etag  # what A read before its write, and what its retry still carries
    writes = []
    for client, value, late in (("A", 100, False), ("B", 50, False), ("A", 100, True)):
        if_match = (a_read if client == "A" else account.etag) if conditional else None
        status = account.put(value, if_match)
        writes.append(Write(client, value, if_match, status, account.balance, account.etag, late))
    return tuple(writes)


def parse_delayed(body: object) -> bool:
    """Check a delayed-duplicate request's body, ``{"conditional": bool}`` (default false);
    returns ``conditional``.

    :raises Problem: 422 for a body that is not an object, a ``conditional`` that is not
        a boolean, or a member the API does not know.
    """
    errors: dict[str, str | Text] = {}
    if not isinstance(body, dict):
        errors["body"] = N_("must be a JSON object")
        body = {}
    for name in body:
        if name != "conditional":
            errors[str(name)] = N_("is not a known field")
    conditional = body.get("conditional", False)
    if not isinstance(conditional, bool):
        errors["conditional"] = N_("must be true or false")
    if errors:
        raise invalid_request(errors)
    return bool(conditional)
