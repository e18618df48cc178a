"""The code view: the consumer's real source (:func:`demo.queue.worker.consume`), read at
run time with ``inspect``, each ``trace("…")`` line marked with its step, and the lines the
last work call really passed. What the attendee reads is what runs."""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass
from typing import Any

from ...queue import worker

_TRACE = re.compile(r'trace\(\s*"([^"]+)"')


@dataclass(frozen=True)
class Line:
    """One source line: its number in ``demo/queue/worker.py``, its text, and the step
    its ``trace`` call marks (``None`` for other lines)."""

    number: int
    text: str
    step: str | None


@functools.cache
def consumer_lines() -> tuple[Line, ...]:
    """The lines of :func:`~demo.queue.worker.consume`, its docstring cut to one line."""
    source, first = inspect.getsourcelines(worker.consume)
    lines: list[Line] = []
    in_doc = False
    for offset, text in enumerate(source):
        stripped = text.strip()
        if in_doc or (stripped.startswith('"""') and offset < 6):
            closed = stripped.endswith('"""') and (in_doc or len(stripped) > 3)
            if not in_doc:
                indent = text[: len(text) - len(text.lstrip())]
                lines.append(Line(first + offset, indent + stripped.rstrip('"') + ' …"""', None))
            in_doc = not closed
            continue
        match = _TRACE.search(text)
        lines.append(Line(first + offset, text.rstrip("\n"), match.group(1) if match else None))
    return tuple(lines)


def code_view(entry: dict[str, Any] | None) -> dict[str, Any]:
    """The code view for the last work call ``entry`` (its ``as_dict()``, or ``None``).

    :returns: ``lines`` (:class:`Line`), ``passed`` (the numbers of the lines whose
        ``trace`` call ran: only the branch really taken, e.g. not the lines under
        ``if settings.outbox:`` with the outbox off), ``at`` (the number of the last of
        them, where a crash or step mode holds it), ``crashed`` (True when a crash ended
        it there), ``worker``, ``message_id`` and ``dead_lettered`` (the message ids
        the broker moved to the dead-letter queue on that receive).
    """
    shown = {line.number for line in consumer_lines()}
    traced = [n for n in (entry["trace_lines"] if entry else []) if n in shown]
    return {
        "lines": consumer_lines(),
        "passed": set(traced),
        "at": traced[-1] if traced else None,
        "crashed": bool(entry and entry["crashed_at"] not in (None, "relay_after_send")),
        "worker": entry["worker"] if entry else None,
        "message_id": entry["message_id"] if entry else None,
        "dead_lettered": list(entry.get("dead_lettered") or []) if entry else [],
        "running": bool(entry and entry["outcome"] is None),
    }
