"""The timeline every lab writes: one entry per request (or job), each a list of the
step boundaries it passed, in a bounded log.

A lab's handler calls one hook at every step boundary, ``trace("lookup", hit=False)``;
the lab records a :class:`Step` on the entry, and step mode (:mod:`demo.engine.stepping`)
and fault injection hang off the same call. A lab declares its steps in a table of
:class:`StepKind` (which detail each carries), so its trace calls, its imported
histories and its page can never drift apart.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar


class Trace(Protocol):
    """The hook called at every step boundary, e.g. ``trace("lookup", hit=False)``."""

    def __call__(self, step: str, /, **detail: Any) -> None: ...


def no_trace(step: str, /, **detail: Any) -> None:
    """A trace that records nothing."""


@dataclass(frozen=True, slots=True)
class Step:
    """One step boundary a request passed: ``at_ms`` after it arrived, with ``detail``."""

    name: str
    at_ms: float
    detail: Mapping[str, Any]


@dataclass(frozen=True)
class Detail:
    """One member a step's detail may hold: ``valid(value)``, and what it must be (words
    for the error an imported history gets when it is not)."""

    what: str
    valid: Callable[[object], bool]


@dataclass(frozen=True)
class StepKind:
    """What a lab writes for one step name: its ``detail`` members (each optional), and
    how often one request can pass it (the payment lab's look-again passes two twice)."""

    detail: Mapping[str, Detail]
    at_most: int = 1


def is_ms(value: object) -> bool:
    """A finite, non-negative number of milliseconds, at most 10⁹."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= 10**9
    )


@dataclass
class Entry:
    """One request on the timeline: what every lab's entries have.

    ``started`` and ``finished`` are ``time.perf_counter()`` seconds, comparable across
    the requests of one process; ``at`` is the workspace's (virtual) clock at arrival, in
    s. ``key`` is the idempotency key it carried, if any.
    """

    id: int
    action: str
    started: float
    at: float = 0.0
    key: str | None = None
    steps: list[Step] = field(default_factory=list)
    finished: float | None = None

    @property
    def duration_ms(self) -> float | None:
        """Arrival to response, in ms; ``None`` while in flight."""
        return None if self.finished is None else (self.finished - self.started) * 1000

    def step(self, name: str) -> Step | None:
        """The first step called ``name``, or ``None``."""
        return next((s for s in self.steps if s.name == name), None)

    def mark(self, name: str, **detail: Any) -> Step:
        """Record step ``name`` now, ``at_ms`` after arrival; returns it."""
        step = Step(name, (time.perf_counter() - self.started) * 1000, detail)
        self.steps.append(step)
        return step


E = TypeVar("E", bound=Entry)


class Timeline(Generic[E]):
    """A lab's request log: a ring buffer of ``max_entries`` entries, oldest first, with
    ids from 1 (again from 1 after :meth:`clear`). Thread-safe."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._entries: deque[E] = deque(maxlen=max_entries)
        self._ids = itertools.count(1)
        self._guard = threading.Lock()

    def next_id(self) -> int:
        """The id of the next entry."""
        return next(self._ids)

    def append(self, entry: E) -> None:
        """Log ``entry``; past ``max_entries`` the oldest one goes."""
        with self._guard:
            self._entries.append(entry)

    def extend(self, entries: list[E]) -> None:
        """Log ``entries`` (an imported history): the newest ``max_entries`` are kept."""
        with self._guard:
            self._entries.extend(entries[-self.max_entries :])

    def entries(self) -> list[E]:
        """The logged entries, oldest first."""
        with self._guard:
            return list(self._entries)

    def last(self) -> E | None:
        """The newest entry, or ``None``."""
        with self._guard:
            return self._entries[-1] if self._entries else None

    def holds(self, entry: E) -> bool:
        """True while ``entry`` is in the log (not dropped, not from before a clear)."""
        with self._guard:
            return any(e is entry for e in self._entries)

    def clear(self) -> None:
        """Empty the log; ids start at 1 again."""
        with self._guard:
            self._entries = deque(maxlen=self.max_entries)
            self._ids = itertools.count(1)

    def __len__(self) -> int:
        with self._guard:
            return len(self._entries)
