"""The side effect: the mail provider, and the e-mails it sent (a ring buffer)."""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

MAX_EMAILS = 500
"""E-mails the mailbox keeps (the oldest go first)."""


@dataclass(frozen=True)
class Email:
    """One e-mail that left: for which job and key, caused by which broker message,
    sent ``via`` the worker itself (``"worker"``) or the outbox relay (``"relay"``);
    ``outbox_row`` is the row the relay sent, and ``sent_at`` the lab clock, in s."""

    id: str
    idempotency_key: str
    message_id: str
    job_id: str
    via: str
    outbox_row: str | None
    sent_at: float

    def as_dict(self) -> dict[str, Any]:
        """The e-mail as the API spells it."""
        return {
            "email_id": self.id,
            "idempotency_key": self.idempotency_key,
            "message_id": self.message_id,
            "job_id": self.job_id,
            "via": self.via,
            "outbox_row": self.outbox_row,
            "sent_at": self.sent_at,
        }


class Mailbox:
    """The mail provider: every :meth:`send` is an e-mail in the customer's inbox, except
    a send that repeats a ``provider_message_id`` it has seen (the provider dedups on a
    stable message id, as mail APIs do on an idempotency header). Thread-safe.

    :param max_emails: e-mails kept; :param max_ids: message ids remembered for dedup.
    """

    def __init__(self, *, max_emails: int = MAX_EMAILS, max_ids: int = 1000) -> None:
        self._emails: deque[Email] = deque(maxlen=max_emails)
        self._seen: OrderedDict[str, str] = OrderedDict()
        self._max_ids = max_ids
        self._ids = itertools.count(1)
        self._guard = threading.Lock()

    def send(
        self,
        *,
        idempotency_key: str,
        message_id: str,
        job_id: str,
        via: str,
        sent_at: float,
        outbox_row: str | None = None,
        provider_message_id: str | None = None,
    ) -> tuple[str, bool]:
        """Send one e-mail; returns ``(email id, new)``: ``new`` is False when the
        provider dropped it as a repeat of ``provider_message_id`` (the first e-mail's id
        comes back)."""
        with self._guard:
            if provider_message_id is not None and provider_message_id in self._seen:
                return self._seen[provider_message_id], False
            email = Email(
                f"em-{next(self._ids)}",
                idempotency_key,
                message_id,
                job_id,
                via,
                outbox_row,
                sent_at,
            )
            self._emails.append(email)
            if provider_message_id is not None:
                self._seen[provider_message_id] = email.id
                if len(self._seen) > self._max_ids:
                    self._seen.popitem(last=False)
            return email.id, True

    def emails(self) -> list[Email]:
        """The e-mails sent, oldest first."""
        with self._guard:
            return list(self._emails)

    def __len__(self) -> int:
        with self._guard:
            return len(self._emails)
