"""Change tracking without reference cycles: a workspace's labs tell it that something
changed, and it lets go of them the moment the registry drops it."""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from typing import Any


class Changes:
    """A version number that every change bumps, so every open page can catch up (a page
    polls and re-renders when the version moved)."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)  # next() is atomic: concurrent bumps never collide
        self.version = 0

    def touch(self) -> None:
        """Something changed."""
        self.version = next(self._counter)


def weakly(method: Callable[[], Any]) -> Callable[[], None]:
    """``method`` (a bound method) called through a weak reference to its object, so the
    callee holding it keeps no cycle back; once the object is gone, a call does nothing."""
    ref = weakref.WeakMethod(method)

    def call() -> None:
        bound = ref()
        if bound is not None:
            bound()

    return call
