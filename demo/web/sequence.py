"""The sequence diagram of a lab's recent requests: lifelines for the client, the
instances, the store and the gateway; one arrow per step, in the order they really
happened across requests, so a race reads top to bottom. Drawn as SVG on the server."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..gateway import LedgerSummary
from ..lab import RequestEntry
from ..text import N_, Text

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
    text: str | Text
    colour: str
    who: str
    dashed: bool = False


@dataclass(frozen=True)
class Diagram:
    """Everything the SVG template draws."""

    width: int
    height: int
    lifelines: tuple[tuple[str | Text, float], ...]
    arrows: tuple[Arrow, ...]
    notes: tuple[tuple[int, float, str | Text, str], ...]  # row, x, text, colour


def diagram(entries: Sequence[RequestEntry], summary: LedgerSummary, limit: int = 6) -> Diagram:
    """The diagram of the last ``limit`` requests."""
    shown = list(entries)[-limit:]
    instances = sorted({e.instance for e in shown}) or ["i1"]
    names = ["Client", *(f"Instance {i}" for i in instances), "Store", "Gateway"]
    x = {name: 40 + LANE_W / 2 + n * LANE_W for n, name in enumerate(names)}
    labels: dict[str, str | Text] = {
        "Client": N_("Client"),
        **{f"Instance {i}": Text("Instance %(name)s", name=i) for i in instances},
        "Store": N_("Store"),
        "Gateway": N_("Gateway"),
    }
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
    notes: list[tuple[int, float, str | Text, str]] = []
    row = 0
    for _, order, name, entry, detail in events:
        colour = COLOURS[order % len(COLOURS)]
        who = f"#{entry.id}"
        inst = x[f"Instance {entry.instance}"]
        if name == "request":
            key: str | Text = entry.key[:24] if entry.key else Text("no key")
            text = Text("%(who)s POST /charges %(key)s", who=who, key=key)
            arrows.append(Arrow(row, x["Client"], inst, text, colour, who))
        elif name == "lookup":
            arrows.append(Arrow(row, inst, x["Store"], _lookup(who, detail), colour, who))
        elif name == "lock acquire":
            arrows.append(
                Arrow(row, inst, x["Store"], Text("%(who)s lock (key)", who=who), colour, who)
            )
        elif name == "reserve":
            text = Text("%(who)s reserve: in progress", who=who)
            arrows.append(Arrow(row, inst, x["Store"], text, colour, who))
        elif name == "gateway charge":
            arrows.append(
                Arrow(row, inst, x["Gateway"], Text("%(who)s charge", who=who), colour, who)
            )
        elif name == "gateway timeout":
            text = Text("%(who)s charge: the answer times out", who=who)
            arrows.append(Arrow(row, inst, x["Gateway"], text, colour, who))
        elif name == "gateway replay":
            text = Text("%(who)s same charge again", who=who)
            arrows.append(Arrow(row, x["Gateway"], inst, text, colour, who, True))
        elif name == "record save":
            text = Text("%(who)s save record", who=who)
            arrows.append(Arrow(row, inst, x["Store"], text, colour, who))
        elif name == "crash":
            notes.append((row, inst, Text("%(who)s ✕ instance crashed", who=who), colour))
        elif name == "answer":
            text = Text("%(who)s %(outcome)s", who=who, outcome=_outcome(entry, summary))
            arrows.append(Arrow(row, inst, x["Client"], text, colour, who, True))
        else:
            continue
        row += 1
    height = TOP + max(row, 1) * ROW_H + 40
    width = int(40 * 2 + LANE_W * len(names))
    lifelines = tuple((labels[name], at) for name, at in x.items())
    return Diagram(width, height, lifelines, tuple(arrows), tuple(notes))


def _lookup(who: str, detail: Mapping[str, Any]) -> Text:
    if detail.get("again"):
        found = (
            N_("%(who)s look again: hit") if detail.get("hit") else N_("%(who)s look again: miss")
        )
    else:
        found = N_("%(who)s lookup: hit") if detail.get("hit") else N_("%(who)s lookup: miss")
    return Text(found, who=who)


def _outcome(entry: RequestEntry, summary: LedgerSummary) -> Text:
    if not entry.delivered:
        return Text("✕ no response")
    doubled = entry.charge is not None and entry.charge.order_id in summary.doubled
    status = entry.status
    words = {
        "charged": Text("201 CHARGED — DOUBLE CHARGE") if doubled else Text("201 CHARGED"),
        "recovered": Text("201 (first charge again)"),
        "replayed": Text("%(status)s REPLAYED", status=status),
        "conflict": Text("%(status)s CONFLICT", status=status),
        "in_use": Text("%(status)s IN USE", status=status),
        "in_doubt": Text("%(status)s IN DOUBT", status=status),
        "declined": Text("402 DECLINED"),
    }
    return words.get(entry.outcome, Text("%(status)s ERROR", status=status))
