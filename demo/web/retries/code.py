"""The retry lab's code view: the client's real source, read at run time with
:mod:`inspect`, so what the attendee reads is what runs (as the payment lab's code view).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...retries import client, policy

SHOWN: tuple[Callable[..., Any], ...] = (client.charge_with_retries, policy.backoff_ms)
"""The lesson (the client on tenacity), then the one backoff formula it waits by."""


@dataclass(frozen=True)
class Line:
    """One source line: its number in its module (0 for a heading), and its text."""

    number: int
    text: str


@functools.cache
def client_lines() -> tuple[Line, ...]:
    """The lines of :data:`SHOWN`, each function headed by its module's path."""
    lines: list[Line] = []
    for function in SHOWN:
        source, first = inspect.getsourcelines(function)
        module = function.__module__.replace(".", "/") + ".py"
        lines.append(Line(0, f"# {module}"))
        lines.extend(Line(first + n, text.rstrip("\n")) for n, text in enumerate(source))
        lines.append(Line(0, " "))
    return tuple(lines[:-1])
