"""The fake payment gateway: the side effect the lab protects, and its ledger.

Every call to :meth:`FakeGateway.charge` moves money: it appends a :class:`Charge` to
the ledger. The gateway knows nothing of idempotency keys beyond writing them down,
so a request that reaches it twice charges twice.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from ..engine.clock import Clock

MAX_LATENCY_MS = 3000


class GatewayError(Exception):
    """The gateway failed before charging (a transport failure): nothing was charged."""


class CardDeclined(Exception):
    """The gateway answered, and the answer is no: a business result, not a failure."""


@dataclass(frozen=True)
class Charge:
    """One entry of the ledger: money moved once.

    :param amount: in minor currency units (VND has none smaller than the đồng).
    :param created_at: seconds on the gateway's clock.
    :param idempotency_key: the key the request carried, ``None`` for a keyless request.
    :param replayed: ``True`` when the gateway answered with this earlier charge because
        it saw the same downstream idempotency key again: no money moved.
    """

    id: str
    idempotency_key: str | None
    order_id: str
    amount: int
    currency: str
    created_at: float
    replayed: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The charge as JSON-ready values (``created`` in seconds, unrounded)."""
        return {
            "id": self.id,
            "idempotency_key": self.idempotency_key,
            "order_id": self.order_id,
            "amount": self.amount,
            "currency": self.currency,
            "created": self.created_at,
        }


class FakeGateway:
    """Charges after ``latency_ms`` and records every charge in a bounded ledger.

    :param latency_ms: how long a charge takes, 0–3000 ms; the width of the race window.
    :param max_ledger: the ledger is a ring buffer of this many charges.
    :param clock: seconds, for ``Charge.created_at``.
    :param sleep: ``time.sleep`` by default; tests may pass their own.
    """

    def __init__(
        self,
        *,
        latency_ms: int = 300,
        max_ledger: int = 500,
        clock: Clock = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.latency_ms = latency_ms
        self.clock = clock
        self._sleep = sleep
        self._ledger: deque[Charge] = deque(maxlen=max_ledger)
        self._by_downstream_key: OrderedDict[str, Charge] = OrderedDict()
        self._max_keys = max_ledger
        self._count = 0
        self._lock = threading.Lock()  # guards the ledger, not the latency

    def charge(
        self,
        *,
        order_id: str,
        amount: int,
        currency: str,
        idempotency_key: str | None,
        downstream_key: str | None = None,
        decline: bool = False,
    ) -> Charge:
        """Take the money: wait ``latency_ms``, then append a charge to the ledger.

        Concurrent calls really overlap: the wait holds no lock.

        :param downstream_key: an idempotency key for the gateway itself, as real payment
            providers accept: a second call with it returns the first charge
            (``replayed=True``) and moves no money.
        :param decline: answer with a decline instead of charging.
        :raises CardDeclined: when ``decline`` is set; nothing is charged.
        """
        if self.latency_ms > 0:
            self._sleep(self.latency_ms / 1000)
        if decline:
            raise CardDeclined("card_declined")
        with self._lock:
            if downstream_key is not None and downstream_key in self._by_downstream_key:
                return replace(self._by_downstream_key[downstream_key], replayed=True)
            self._count += 1
            charge = Charge(
                id=f"ch_{self._count:04d}",
                idempotency_key=idempotency_key,
                order_id=order_id,
                amount=amount,
                currency=currency,
                created_at=self.clock(),
            )
            self._ledger.append(charge)
            if downstream_key is not None:
                self._by_downstream_key[downstream_key] = charge
                if len(self._by_downstream_key) > self._max_keys:
                    self._by_downstream_key.popitem(last=False)
        return charge

    def ledger(self) -> list[Charge]:
        """The charges, oldest first (at most ``max_ledger`` of them)."""
        with self._lock:
            return list(self._ledger)

    def restore(self, charges: list[Charge]) -> None:
        """Replace the ledger with ``charges`` (a replayed history); ids go on from there."""
        with self._lock:
            self._ledger.clear()
            self._ledger.extend(charges)
            self._count = len(charges)

    def clear(self) -> None:
        """Empty the ledger; charge ids start again from ``ch_0001``."""
        with self._lock:
            self._ledger.clear()
            self._by_downstream_key.clear()
            self._count = 0


@dataclass(frozen=True)
class LedgerSummary:
    """``charged`` charges for ``intended`` orders; ``doubled``: orders charged more than once;
    ``firsts``: the id of each order's first charge (the one a double charge repeated)."""

    charged: int
    intended: int
    doubled: frozenset[str]
    firsts: frozenset[str] = frozenset()

    @property
    def extra(self) -> int:
        """Charges beyond one per order: the money taken twice."""
        return self.charged - self.intended


def summarise(charges: Iterable[Charge]) -> LedgerSummary:
    """Count charges against intents. One order is one intent: it is paid once.

    A second charge for the same order is a double charge, whichever key it carried.
    """
    charges = list(charges)
    per_order = Counter(c.order_id for c in charges)
    firsts: dict[str, str] = {}
    for c in charges:  # the ledger's order: oldest first
        firsts.setdefault(c.order_id, c.id)
    return LedgerSummary(
        charged=sum(per_order.values()),
        intended=len(per_order),
        doubled=frozenset(o for o, n in per_order.items() if n > 1),
        firsts=frozenset(firsts.values()),
    )
