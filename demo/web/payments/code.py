"""The code view: the handler's real source, read at run time from the module, with the
line where each paused request stands. Not a copy in a template: what the attendee
reads is what runs."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...engine.text import N_
from ...payments import idempotency
from ...payments.endpoint import ChargeEndpoint

_TRACE = re.compile(r'trace\(\s*"([^"]+)"')
SHOWN: tuple[Callable[..., Any], ...] = (
    idempotency.execute,
    idempotency._answer_from,  # noqa: SLF001 - the handler's own helpers, shown as they are
    idempotency._charge_and_save,  # noqa: SLF001
)


@dataclass(frozen=True)
class Line:
    """One source line: its number in the module, its text, the step point it holds
    (``"lookup#2"`` for the second ``lookup``), and the lock branch it belongs to."""

    number: int
    text: str
    point: str | None
    branch: str | None  # "lock-free", "lock", "recovery" (the crash-window fix) or None


@functools.cache
def handler_lines() -> tuple[Line, ...]:
    """The lines of :func:`~demo.payments.idempotency.execute` and the helpers it calls."""
    lines: list[Line] = []
    for function in SHOWN:
        source, first = inspect.getsourcelines(function)
        seen: dict[str, int] = {}
        branch: str | None = None
        in_doc = False
        for offset, text in enumerate(source):
            stripped = text.strip()
            # The docstring is for readers of the module; here its first line stands for it.
            if in_doc or (stripped.startswith('"""') and offset < 12):
                closed = stripped.endswith('"""') and (in_doc or len(stripped) > 3)
                if not in_doc:
                    summary = stripped.rstrip('"').rstrip() + (' …"""' if not closed else '"""')
                    indent = text[: len(text) - len(text.lstrip())]
                    lines.append(Line(first + offset, indent + summary, None, None))
                in_doc = not closed
                continue
            if function is idempotency.execute and stripped.startswith("if not lock:"):
                branch = "lock-free"
            elif function is idempotency.execute and stripped.startswith("# 2b."):
                branch = "lock"
            joined = text + (source[offset + 1] if offset + 1 < len(source) else "")
            match = _TRACE.search(joined) if "trace(" in text else None
            point = "lock#blocked" if "with store.lock(" in text else None
            if match:
                seen[match.group(1)] = seen.get(match.group(1), 0) + 1
                point = f"{match.group(1)}#{seen[match.group(1)]}"
            lines.append(Line(first + offset, text.rstrip("\n"), point, branch))
        lines.append(Line(0, " ", None, None))
    # And where the side effect leaves the lab: the gateway call, with its downstream key.
    source, first = inspect.getsourcelines(ChargeEndpoint._charge)  # noqa: SLF001
    start = next(n for n, text in enumerate(source) if "world.gateway.charge(" in text)
    end = next(n for n in range(start, len(source)) if source[n].strip() == ")")
    # The one line that is not source: a heading, translated on the page (``|t``).
    lines.append(
        Line(
            0,
            N_("# demo/payments/endpoint.py, ChargeEndpoint._charge: the side effect"),
            None,
            None,
        )
    )
    for offset in range(start, end + 1):
        text = source[offset]
        branch = "recovery" if "downstream_key=" in text else None
        lines.append(Line(first + offset, text.rstrip("\n"), None, branch))
    return tuple(lines)


def where(step: str, occurrence: int) -> str:
    """The step point a paused request stands at, as :func:`handler_lines` names it."""
    if step == "lookup" and occurrence >= 2:
        return "lookup#2"
    return f"{step}#1"
