"""The fault plan: what happens to each attempt of a run, in order.

``"ok"`` lets the attempt through untouched; ``"lose_response"`` lets it reach the payment
lab (which charges) and loses the answer on the way back, so the client sees a network
error; a status (``503``, ``429``…) is answered by this layer itself, in front of the
payment lab, as an overloaded server or a proxy would: the request never reaches it.
Attempts past the end of the plan are ``"ok"``. A planned 429 is a rate limiter's: an
attempt that comes back before its ``Retry-After`` has passed (on the lab's virtual clock)
is answered 429 again, and does not move on in the plan.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..engine.problems import Problem
from ..engine.text import N_, Text
from .transport import NetworkError, Transport

FAULT_STATUSES = (400, 402, 408, 409, 422, 429, 500, 502, 503, 504)
"""The statuses a fault plan may answer with."""

FAULT_NAMES = ("ok", "lose_response")

MAX_FAULTS = 10
"""A plan holds at most one fault per attempt a policy allows."""

RETRY_AFTER_S = 3
"""The ``Retry-After`` (s) a planned 429 carries (RFC 6585 §4, RFC 9110 §10.2.3). A planned
503 carries none, so its waits are the strategy's own."""

Fault = str | int


def parse_faults(value: object) -> tuple[Fault, ...]:
    """The fault plan ``value`` describes: a JSON list of ``"ok"``, ``"lose_response"``
    or a status from :data:`FAULT_STATUSES`, at most :data:`MAX_FAULTS` long.

    :raises Problem: 422 ``invalid-faults`` naming the first bad item.
    """
    if not isinstance(value, list) or len(value) > MAX_FAULTS:
        raise _bad_faults(Text("must be a list of at most %(limit)s items", limit=MAX_FAULTS))
    for i, fault in enumerate(value):
        known = fault in FAULT_STATUSES if type(fault) is int else fault in FAULT_NAMES
        if not known:
            raise _bad_faults(
                Text(
                    "must be one of %(choices)s",
                    choices=", ".join(
                        [*(f'"{n}"' for n in FAULT_NAMES), *map(str, FAULT_STATUSES)]
                    ),
                ),
                i,
            )
    return tuple(value)


def _bad_faults(why: Text, index: int | None = None) -> Problem:
    """422 for the whole plan, or for its item ``index`` (from 0): the API's ``errors``
    key is ``faults[0]``, the detail counts from 1, as a reader does (run N)."""
    if index is None:
        where = "faults"
        detail = Text("Fix the fault plan: %(where)s %(why)s.", where=where, why=why)
    else:
        where = f"faults[{index}]"
        detail = Text("Fix the fault plan: item %(n)s %(why)s.", n=index + 1, why=why)
    return Problem(422, "invalid-faults", N_("Invalid fault plan"), detail,
                   errors={where: str(why)})  # fmt: skip


class FaultLayer:
    """A :class:`~.transport.Transport` that applies ``plan`` to the requests it
    forwards to ``transport``, one fault per request, in order. Thread-safe.

    :param clock: now, in s (the lab's virtual clock): a request before the last 429's
        ``Retry-After`` has passed is refused with 429 again (RFC 6585 §4). Without a
        clock, every request takes the next fault.
    """

    def __init__(
        self,
        plan: tuple[Fault, ...],
        transport: Transport,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.plan = plan
        self.transport = transport
        self.clock = clock
        self.sent = 0
        self.not_before: float | None = None
        """When the last 429 lets the client back in (clock's s), or ``None``."""
        self._guard = threading.Lock()

    def __call__(
        self, method: str, path: str, headers: Mapping[str, str], body: Any, /
    ) -> tuple[int, Mapping[str, str], Any]:
        with self._guard:
            now = self.clock() if self.clock else 0.0
            if self.not_before is not None and now < self.not_before:
                # Too early: the rate limiter refuses again, for the time still to wait.
                return _too_many(math.ceil(self.not_before - now))
            fault = self.plan[self.sent] if self.sent < len(self.plan) else "ok"
            self.sent += 1
            if fault == 429 and self.clock is not None:
                self.not_before = now + RETRY_AFTER_S
        if fault == "ok":
            return self.transport(method, path, headers, body)
        if fault == "lose_response":
            # The loss is played here, on the way back, not by arming the payment lab's own
            # one-shot "lose_response" fault: that fault fires only on a fresh charge (a
            # replay would leave it armed for the attendee's next Pay), changes the other
            # lab's settings under the attendee, and races their clicks. Here the payment
            # lab serves the request as it would any other (charge, record, timeline), and
            # only the answer is dropped, which is what a network does.
            self.transport(method, path, headers, body)
            raise NetworkError("the response was lost on the way back")
        status = int(fault)
        if status == 429:
            return _too_many(RETRY_AFTER_S)
        return status, _PROBLEM, {"type": "about:blank", "status": status}


_PROBLEM = {"Content-Type": "application/problem+json"}


def _too_many(retry_after_s: int) -> tuple[int, Mapping[str, str], Any]:
    """A 429 with ``Retry-After`` in s (RFC 6585 §4, RFC 9110 §10.2.3); "about:blank":
    the status code says it all (RFC 9457 §4.2.1)."""
    headers = {**_PROBLEM, "Retry-After": str(max(1, retry_after_s))}
    return 429, headers, {"type": "about:blank", "status": 429}
