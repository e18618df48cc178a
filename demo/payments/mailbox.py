"""The customer's mailbox, and the outbox relay that sends each receipt once per key.

The receipt is the payment lab's second side effect. Sent inline by the handler, it goes
out again whenever the handler runs again (after a crash); written to the outbox with the
record in one atomic step, it is relayed once per key (Brandur Leach: transactional
outbox)."""

from __future__ import annotations

import itertools
import json
import threading
from collections import OrderedDict, deque
from collections.abc import Iterable

from ..engine.clock import Clock
from ..engine.timeline import Trace
from .gateway import Charge
from .requests import Email
from .store import IdempotencyStore


class Mailbox:
    """The e-mails that left (a ring buffer of ``max_emails``), and the keys whose
    receipt the relay has sent (the newest ``max_keys``). Thread-safe.

    :param clock: seconds, for each e-mail's ``sent_at``.
    """

    def __init__(self, *, max_emails: int, max_keys: int, clock: Clock) -> None:
        self._emails: deque[Email] = deque(maxlen=max_emails)
        self._sent_for: OrderedDict[str, None] = OrderedDict()
        self._max_keys = max_keys
        self._ids = itertools.count(1)
        self._clock = clock
        self._guard = threading.Lock()

    def send_receipt(self, key: str | None, charge: Charge) -> Email:
        """The handler sends the receipt itself: once per run of the handler."""
        with self._guard:
            email = Email(
                f"em_{next(self._ids):04d}", key, charge.order_id, charge.id, self._clock()
            )
            self._emails.append(email)
        return email

    def relay(self, stores: Iterable[IdempotencyStore], trace: Trace) -> None:
        """Send the committed outbox messages of ``stores``, at most once per key; each
        e-mail sent is traced (``email send``) on the request that sent it."""
        for store in stores:
            for key, message in store.drain_outbox():
                payload = json.loads(message)
                with self._guard:
                    if key in self._sent_for:
                        continue
                    self._sent_for[key] = None
                    if len(self._sent_for) > self._max_keys:
                        self._sent_for.popitem(last=False)
                    email = Email(
                        f"em_{next(self._ids):04d}",
                        key,
                        payload["order_id"],
                        payload["receipt"],
                        self._clock(),
                        "outbox",
                    )
                    self._emails.append(email)
                # Outside the guard: in step mode the request stops here.
                trace("email send", email=email.id, via="outbox", key=key)

    def restore(self, emails: list[Email]) -> None:
        """Hold ``emails`` (an imported history), the newest ones past the cap."""
        with self._guard:
            self._emails.extend(emails)

    def emails(self) -> list[Email]:
        """The e-mails sent, oldest first."""
        with self._guard:
            return list(self._emails)

    def __len__(self) -> int:
        with self._guard:
            return len(self._emails)
