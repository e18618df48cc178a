"""The consumer's own database: the dedup table keyed by idempotency key, and the outbox,
written together in one atomic step (one lock stands for the database transaction).

The dedup table, not the number of handler calls, is the source of truth: a key marked
``completed`` has had its side effect, so a later delivery of the same job is acked and
skipped.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, replace
from typing import Any

from .jobs import Job

MAX_KEYS = 1000
"""Keys the dedup table remembers (the oldest go first: a duplicate of a key forgotten
this way would run again, as after a TTL)."""

MAX_ROWS = 200
"""Outbox rows kept, sent ones included (the oldest sent rows go first)."""


@dataclass(frozen=True)
class OutboxRow:
    """An e-mail waiting in the outbox (``sent`` once the relay has marked it)."""

    row_id: str
    idempotency_key: str
    job_id: str
    message_id: str
    sent: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The row as the API spells it."""
        return {
            "row_id": self.row_id,
            "idempotency_key": self.idempotency_key,
            "job_id": self.job_id,
            "message_id": self.message_id,
            "sent": self.sent,
        }


class ConsumerDb:
    """The dedup table and the outbox. Thread-safe; bounded (``max_keys``, ``max_rows``)."""

    def __init__(self, *, max_keys: int = MAX_KEYS, max_rows: int = MAX_ROWS) -> None:
        self._done: OrderedDict[str, str] = OrderedDict()
        self._max_keys = max_keys
        self._rows: OrderedDict[str, OutboxRow] = OrderedDict()
        self._max_rows = max_rows
        self._sent_order: deque[str] = deque()
        self._ids = itertools.count(1)
        self._guard = threading.Lock()

    def completed(self, key: str) -> bool:
        """Has the job of ``key`` had its side effect (the dedup check)?"""
        with self._guard:
            return key in self._done

    def record(self, key: str) -> None:
        """Mark ``key`` completed (the dedup record)."""
        with self._guard:
            self._mark(key)

    def commit(self, job: Job, message_id: str, *, dedup: bool) -> OutboxRow | None:
        """One atomic step: with ``dedup``, insert ``key → completed`` (a unique key: a
        key already there makes the whole step fail), and the outbox row of the e-mail.

        :returns: the new row, or ``None`` when the key was already completed (nothing
            written: a duplicate).
        """
        key = job.idempotency_key
        with self._guard:
            if dedup and key in self._done:
                return None
            if dedup:
                self._mark(key)
            row = OutboxRow(f"ob-{next(self._ids)}", key, job.id, message_id)
            self._rows[row.row_id] = row
            self._trim()
            return row

    def unsent(self) -> list[OutboxRow]:
        """The outbox rows not yet marked sent, oldest first."""
        with self._guard:
            return [r for r in self._rows.values() if not r.sent]

    def mark_sent(self, row_id: str) -> None:
        """The relay has sent ``row_id``."""
        with self._guard:
            row = self._rows.get(row_id)
            if row is not None and not row.sent:
                self._rows[row_id] = replace(row, sent=True)
                self._sent_order.append(row_id)
                self._trim()

    def dedup_table(self) -> list[dict[str, str]]:
        """The dedup table, oldest first: ``[{"key", "state"}]``."""
        with self._guard:
            return [{"key": key, "state": state} for key, state in self._done.items()]

    def outbox(self) -> list[OutboxRow]:
        """The outbox rows kept, oldest first."""
        with self._guard:
            return list(self._rows.values())

    def _mark(self, key: str) -> None:
        self._done[key] = "completed"
        self._done.move_to_end(key)
        if len(self._done) > self._max_keys:
            self._done.popitem(last=False)

    def _trim(self) -> None:
        while len(self._rows) > self._max_rows and self._sent_order:
            self._rows.pop(self._sent_order.popleft(), None)
