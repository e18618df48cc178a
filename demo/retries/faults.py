"""The fault plan: what happens to each attempt of a run, in order.

``"ok"`` lets the attempt through untouched; ``"lose_response"`` lets it reach the payment
lab (which charges) and loses the answer on the way back, so the client sees a network
error; a status (``503``, ``429``…) is answered by this layer itself, in front of the
payment lab, as an overloaded server or a proxy would: the request never reaches it.
Attempts past the end of the plan are ``"ok"``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
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
        raise _bad_faults(
            "faults", Text("must be a list of at most %(limit)s items", limit=MAX_FAULTS)
        )
    for i, fault in enumerate(value):
        known = fault in FAULT_STATUSES if type(fault) is int else fault in FAULT_NAMES
        if not known:
            raise _bad_faults(
                f"faults[{i}]",
                Text(
                    "must be one of %(choices)s",
                    choices=", ".join(
                        [*(f'"{n}"' for n in FAULT_NAMES), *map(str, FAULT_STATUSES)]
                    ),
                ),
            )
    return tuple(value)


def _bad_faults(where: str, why: Text) -> Problem:
    return Problem(
        422,
        "invalid-faults",
        N_("Invalid fault plan"),
        Text("Fix the fault plan: %(where)s %(why)s.", where=where, why=why),
        errors={where: str(why)},
    )


class FaultLayer:
    """A :class:`~.transport.Transport` that applies ``plan`` to the requests it
    forwards to ``transport``, one fault per request, in order. Thread-safe."""

    def __init__(self, plan: tuple[Fault, ...], transport: Transport) -> None:
        self.plan = plan
        self.transport = transport
        self.sent = 0
        self._guard = threading.Lock()

    def __call__(
        self, method: str, path: str, headers: Mapping[str, str], body: Any, /
    ) -> tuple[int, Mapping[str, str], Any]:
        with self._guard:
            fault = self.plan[self.sent] if self.sent < len(self.plan) else "ok"
            self.sent += 1
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
        answer: dict[str, str] = {"Content-Type": "application/problem+json"}
        if status == 429:
            answer["Retry-After"] = str(RETRY_AFTER_S)
        # "about:blank": the status code says it all (RFC 9457 §4.2.1).
        return status, answer, {"type": "about:blank", "status": status}
