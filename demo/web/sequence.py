"""The sequence diagram of a lab's recent requests: lifelines for the client, the
instances, the store and the gateway; one arrow per step, in the order they really
happened across requests, so a race reads top to bottom. Drawn as SVG on the server."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..gateway import LedgerSummary
from ..lab import RequestEntry

LANE_W = 170
TOP = 70
ROW_H = 26
COLOURS = ("#0b57d0", "#b3141b", "#6b2d8f", "#1e7b34", "#a35200", "#55606b")


@dataclass(frozen=True)
class Arrow:
    """One message: from one lifeline to another, at row ``row``, for request ``who``."""

    row: int
    x1: float
    x2: float
    text: str
    colour: str
    who: str
    dashed: bool = False


@dataclass(frozen=True)
class Diagram:
    """Everything the SVG template draws."""

    width: int
    height: int
    lifelines: tuple[tuple[str, float], ...]
    arrows: tuple[Arrow, ...]
    notes: tuple[tuple[int, float, str, str], ...]  # row, x, text, colour


def diagram(entries: Sequence[RequestEntry], summary: LedgerSummary, limit: int = 6) -> Diagram:
    """The diagram of the last ``limit`` requests."""
    shown = list(entries)[-limit:]
    instances = sorted({e.instance for e in shown}) or ["i1"]
    names = ["Client", *(f"Instance {i}" for i in instances), "Store", "Gateway"]
    x = {name: 40 + LANE_W / 2 + n * LANE_W for n, name in enumerate(names)}
    events: list[tuple[float, int, str, RequestEntry, Mapping[str, Any]]] = []
    for order, entry in enumerate(shown):
        events.append((entry.started, order, "request", entry, {}))
        for step in entry.steps:
            at = entry.started + step.at_ms / 1000
            events.append((at, order, step.name, entry, step.detail))
        if entry.finished is not None:
            events.append((entry.finished + 1e-9, order, "answer", entry, {}))
    events.sort(key=lambda e: (e[0], e[1]))

    arrows: list[Arrow] = []
    notes: list[tuple[int, float, str, str]] = []
    row = 0
    for _, order, name, entry, detail in events:
        colour = COLOURS[order % len(COLOURS)]
        who = f"#{entry.id}"
        inst = x[f"Instance {entry.instance}"]
        if name == "request":
            key = entry.key or "no key"
            arrows.append(
                Arrow(row, x["Client"], inst, f"{who} POST /charges {key[:24]}", colour, who)
            )
        elif name == "lookup":
            found = "hit" if detail.get("hit") else "miss"
            again = "look again" if detail.get("again") else "lookup"
            arrows.append(Arrow(row, inst, x["Store"], f"{who} {again}: {found}", colour, who))
        elif name == "lock acquire":
            arrows.append(Arrow(row, inst, x["Store"], f"{who} lock (key)", colour, who))
        elif name == "reserve":
            arrows.append(Arrow(row, inst, x["Store"], f"{who} reserve: in progress", colour, who))
        elif name == "gateway charge":
            arrows.append(Arrow(row, inst, x["Gateway"], f"{who} charge", colour, who))
        elif name == "gateway replay":
            arrows.append(
                Arrow(row, x["Gateway"], inst, f"{who} same charge again", colour, who, True)
            )
        elif name == "record save":
            arrows.append(Arrow(row, inst, x["Store"], f"{who} save record", colour, who))
        elif name == "crash":
            notes.append((row, inst, f"{who} ✕ instance crashed", colour))
        elif name == "answer":
            arrows.append(
                Arrow(
                    row, inst, x["Client"], f"{who} {_outcome(entry, summary)}", colour, who, True
                )
            )
        else:
            continue
        row += 1
    height = TOP + max(row, 1) * ROW_H + 40
    width = int(40 * 2 + LANE_W * len(names))
    return Diagram(width, height, tuple(x.items()), tuple(arrows), tuple(notes))


def _outcome(entry: RequestEntry, summary: LedgerSummary) -> str:
    if not entry.delivered:
        return "✕ no response"
    doubled = entry.charge is not None and entry.charge.order_id in summary.doubled
    words = {
        "charged": "201 CHARGED" + (" — DOUBLE CHARGE" if doubled else ""),
        "recovered": "201 (first charge again)",
        "replayed": f"{entry.status} REPLAYED",
        "conflict": f"{entry.status} CONFLICT",
        "in_use": f"{entry.status} IN USE",
        "declined": "402 DECLINED",
    }
    return words.get(entry.outcome, f"{entry.status} ERROR")
