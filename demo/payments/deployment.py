"""The servers behind the payment lab's balancer: 1-3 instances in this one process,
sharing one idempotency store (like Redis) or each with its own (in-process memory)."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass

from ..engine.clock import Clock
from .settings import IN_PROGRESS_S
from .store import IdempotencyStore, Record


@dataclass(frozen=True)
class Instance:
    """One server instance behind the lab's balancer, with the store it talks to."""

    name: str
    store: IdempotencyStore


class Deployment:
    """``count`` instances behind a round-robin balancer, and their stores.

    :param scope: ``"shared"`` (one store for all) or ``"per_instance"``.
    :param ttl_s: how long each store keeps a key, s.
    :param max_records: records per store.
    :param clock: seconds, for record expiry.
    """

    def __init__(
        self, *, count: int, scope: str, ttl_s: int, max_records: int, clock: Clock
    ) -> None:
        self.scope = scope
        self._ttl_s = ttl_s
        self._max_records = max_records
        self._clock = clock
        self.store = self._new_store()
        """The shared store (unused by the instances when each has its own)."""
        self.instances: tuple[Instance, ...] = ()
        self._round_robin = itertools.count()
        self._guard = threading.Lock()
        self.rebuild(count, scope)

    def rebuild(self, count: int, scope: str) -> None:
        """Start ``count`` instances afresh with stores of ``scope``; the shared store is
        kept."""
        self.scope = scope
        self.instances = tuple(
            Instance(f"i{n}", self.store if scope == "shared" else self._new_store())
            for n in range(1, count + 1)
        )

    def next_instance(self) -> Instance:
        """The instance the balancer sends the next request to."""
        with self._guard:
            return self.instances[next(self._round_robin) % len(self.instances)]

    def stores(self) -> list[IdempotencyStore]:
        """Every store, the shared one first."""
        return [self.store, *(i.store for i in self.instances if i.store is not self.store)]

    def set_ttl(self, ttl_s: int) -> None:
        """A new TTL for keys stored from now on, s."""
        self._ttl_s = ttl_s
        for store in self.stores():
            store.ttl_s = ttl_s

    def records(self) -> list[tuple[str, Record]]:
        """Every live record as ``(store name, record)``: ``"shared"`` or an instance's name."""
        if self.scope == "shared":
            return [("shared", r) for r in self.store.records()]
        return [(i.name, r) for i in self.instances for r in i.store.records()]

    def outbox(self) -> list[tuple[str, str]]:
        """The outbox messages committed with a record and not yet relayed, as
        ``(key, message)`` pairs."""
        return [m for store in self.stores() for m in store.pending_outbox()]

    def _new_store(self) -> IdempotencyStore:
        return IdempotencyStore(
            ttl_s=self._ttl_s,
            max_records=self._max_records,
            in_progress_s=IN_PROGRESS_S,
            clock=self._clock,
        )
