"""The workspace's clock: the real clock plus an offset the attendee moves forward, so a
24 h TTL can expire in front of the room without anyone waiting a day."""

from __future__ import annotations

import threading
from collections.abc import Callable

from .problems import Problem
from .text import N_, Text

Clock = Callable[[], float]
"""A clock in seconds (``time.time`` and ``time.monotonic`` are clocks)."""

MAX_ADVANCE_S = 30 * 24 * 3600
"""The most one :meth:`VirtualClock.advance` may move the clock, in seconds (30 days)."""

MAX_OFFSET_S = 10**9
"""The furthest the clock may run ahead of the real one, in seconds (about 31 years): a
lab's exported history holds the offset, and must open again (:mod:`demo.history`)."""


class VirtualClock:
    """A clock in seconds: a base clock plus ``offset_s``, which :meth:`advance` moves.

    The stores and the gateway hold this, not the workspace, so a workspace holds no
    reference cycle and its memory goes back the moment the registry drops it.
    """

    def __init__(self, base: Clock) -> None:
        self.base = base
        self.offset_s = 0.0
        self._guard = threading.Lock()

    def __call__(self) -> float:
        return self.base() + self.offset_s

    def advance(self, seconds: object) -> float:
        """Move the clock forward (to show TTL expiry); returns the new offset, in s.

        :raises Problem: 422 unless ``seconds`` is an integer from 1 to 30 days, and one
            that keeps the offset within ``MAX_OFFSET_S``.
        """
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int)
            or not 1 <= seconds <= MAX_ADVANCE_S
        ):
            raise Problem(
                422,
                "invalid-clock",
                N_("Invalid clock change"),
                Text("advance_s must be an integer from 1 to %(limit)s.", limit=MAX_ADVANCE_S),
                errors={"advance_s": f"must be an integer from 1 to {MAX_ADVANCE_S}"},
            )
        with self._guard:
            if self.offset_s + seconds > MAX_OFFSET_S:
                raise Problem(
                    422,
                    "invalid-clock",
                    N_("Invalid clock change"),
                    Text("The lab clock runs at most %(limit)s s (about 31 years) ahead of real "
                         "time: Reset the lab to start it over.", limit=MAX_OFFSET_S),
                    errors={"advance_s": f"moves the clock past {MAX_OFFSET_S} s ahead"},
                )  # fmt: skip
            self.offset_s += seconds
            return self.offset_s

    def sleep(self, seconds: float) -> None:
        """Let ``seconds`` of virtual time pass at once, sleeping for none: a retrying
        client's backoff (the retry lab) costs no real time. Moves the clock forward."""
        if seconds > 0:
            with self._guard:
                self.offset_s = min(self.offset_s + seconds, MAX_OFFSET_S)
