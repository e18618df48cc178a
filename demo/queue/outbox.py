"""The outbox relay: sends the outbox rows to the mailbox, then marks each one sent.

The relay is at-least-once too: a crash after the send and before the mark
(``relay_after_send``) sends the row again on the next run. Unless the relay passes the
row id as a stable message id that the provider dedups on (``provider_dedup``): the same
move as the downstream key of the payment lab.
"""

from __future__ import annotations

import threading

from ..engine.clock import Clock
from ..engine.timeline import Trace
from .dedup import ConsumerDb
from .mailbox import Mailbox


class Relay:
    """The one relay process of a lab: :meth:`run` sends every unsent outbox row.

    Runs after every work call; a run that finds another one going skips (one relay).
    """

    def __init__(self, db: ConsumerDb, mailbox: Mailbox, clock: Clock) -> None:
        self.db, self.mailbox, self.clock = db, mailbox, clock
        self._running = threading.Lock()

    def run(self, *, provider_dedup: bool, trace: Trace) -> list[str]:
        """Send the unsent rows, oldest first; returns the ids of the e-mails that left
        (a repeat the provider dropped is traced, not returned).

        The crash ``relay_after_send`` is raised by ``trace("relay send")``: the row then
        stays unsent, and the next run sends it again.
        """
        if not self._running.acquire(blocking=False):
            return []
        sent: list[str] = []
        try:
            for row in self.db.unsent():
                email, new = self.mailbox.send(
                    idempotency_key=row.idempotency_key,
                    message_id=row.message_id,
                    job_id=row.job_id,
                    via="relay",
                    sent_at=self.clock(),
                    outbox_row=row.row_id,
                    provider_message_id=row.row_id if provider_dedup else None,
                )
                if new:
                    sent.append(email)
                trace("relay send", row=row.row_id, email=email, dropped=not new)
                self.db.mark_sent(row.row_id)
                trace("relay mark", row=row.row_id)
        finally:
            self._running.release()
        return sent
