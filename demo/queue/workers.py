"""The lab's 1-3 workers: which are busy, and handing a work call a free one."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from ..engine.problems import Problem
from ..engine.text import N_, Text

WORKER_WAIT_S = 5.0
"""How long a work call waits for a free worker (outside step mode) before 429."""

T = TypeVar("T")


class Workers:
    """The workers ``worker-1`` … ``worker-N`` of a lab. Thread-safe."""

    def __init__(self) -> None:
        self._busy: set[str] = set()
        self._free = threading.Condition(threading.Lock())

    def take(self, count: int, *, wait: bool, together: threading.Barrier | None = None) -> str:
        """The first free one of ``count`` workers, marked busy; waits up to 5 s for one
        when ``wait``. ``together``: the calls of one "every worker at once" wait there
        until each holds its own worker (a fast call gave its worker back before the next
        took one, so all three outcomes read worker-1).

        :raises Problem: 429 ``workers-busy`` (``Retry-After: 1``).
        """
        try:
            worker = self._take(count, wait=wait)
        except Problem:
            if together is not None:
                together.abort()  # the others go on without this one
            raise
        if together is not None:
            with contextlib.suppress(threading.BrokenBarrierError):
                together.wait(timeout=WORKER_WAIT_S)
        return worker

    def _take(self, count: int, *, wait: bool) -> str:
        deadline = time.monotonic() + (WORKER_WAIT_S if wait else 0)
        with self._free:
            while True:
                free = [f"worker-{n}" for n in range(1, count + 1)
                        if f"worker-{n}" not in self._busy]  # fmt: skip
                if free:
                    self._busy.add(free[0])
                    return free[0]
                left = deadline - time.monotonic()
                if left <= 0 or not self._free.wait(left):
                    raise Problem(
                        429, "workers-busy", N_("All workers busy"),
                        Text("All %(count)s workers are busy. Step or release them, or add a "
                             "worker, then work again.", count=count),
                        retry_after_s=1,
                    )  # fmt: skip

    def give(self, worker: str) -> None:
        """``worker`` is free again."""
        with self._free:
            self._busy.discard(worker)
            self._free.notify_all()

    def busy(self) -> list[str]:
        """The workers running a work call now."""
        with self._free:
            return sorted(self._busy)


def all_at_once(count: int, call: Callable[[threading.Barrier], T]) -> list[T]:
    """Run ``call`` ``count`` times at the same moment, each on its own thread (a barrier
    releases them together); returns the results. Each call gets a second barrier of the
    ``count``, to meet again at (see :meth:`Workers.take`). A 4xx of some is dropped when
    others answered; when all failed, the first one's problem is raised."""
    start, together, done, errors = threading.Barrier(count), threading.Barrier(count), [], []

    def one() -> None:
        start.wait()
        try:
            done.append(call(together))
        except Problem as problem:
            errors.append(problem)

    threads = [threading.Thread(target=one, daemon=True) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors and not done:
        raise errors[0]
    return done
