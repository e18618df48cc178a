"""The queue lab's sequence diagram: lifelines for the producer, the broker, the worker
and the mailbox; one arrow or note per step of the last producer sends and work calls, in
the order they happened. Drawn as SVG on the server (``templates/queue/_partials/
sequence.svg``), from the same timeline entries the lanes show."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...engine.text import N_, Text, translate
from ...queue.entries import WorkEntry

X = {"producer": 90.0, "broker": 290.0, "worker": 490.0, "mailbox": 690.0}
"""Each lifeline's x, px."""
LIFELINES: tuple[tuple[str, float], ...] = (
    (N_("Producer"), X["producer"]),
    (N_("Broker"), X["broker"]),
    (N_("Worker"), X["worker"]),
    (N_("Mailbox"), X["mailbox"]),
)
WIDTH = 780
TOP = 66
ROW_H = 24
COLOURS = {"ok": "#1b1f24", "effect": "#0b57d0", "bad": "#b3141b", "quiet": "#55606b"}


@dataclass(frozen=True)
class Row:
    """One arrow (``x1`` → ``x2``) or, when ``x1 == x2``, a note on that lifeline, at
    height ``y`` (px); ``label`` already in the page's language."""

    y: float
    x1: float
    x2: float
    label: str
    colour: str
    dashed: bool = False


@dataclass(frozen=True)
class Diagram:
    """What the SVG template draws; sizes in px."""

    width: int
    height: int
    lifelines: tuple[tuple[str, float], ...]
    rows: tuple[Row, ...]


def diagram(entries: Sequence[WorkEntry]) -> Diagram:
    """The diagram of ``entries`` (oldest first); labels translated here (needs a
    request context)."""
    rows: list[Row] = []
    y = float(TOP)
    for entry in entries:
        for x1, x2, label, tone, dashed in _moves(entry.as_dict()):
            y += ROW_H
            rows.append(Row(y, X[x1], X[x2], translate(label), COLOURS[tone], dashed))
    height = int(y + ROW_H)
    lifelines = tuple((translate(name), x) for name, x in LIFELINES)
    return Diagram(WIDTH, max(height, TOP + 2 * ROW_H), lifelines, tuple(rows))


Move = tuple[str, str, "str | Text", str, bool]
"""(from lifeline, to lifeline, label, tone, dashed); from == to is a note."""


def _moves(e: dict[str, Any]) -> list[Move]:
    """The arrows and notes of one entry, step by step."""
    if e["action"] != "work":
        label = Text("publish %(job)s → %(id)s", job=e["job_id"], id=e["message_id"])
        return [("producer", "broker", label, "ok", False)]
    moves: list[Move] = []
    if e["outcome"] == "idle":
        moves.append(("worker", "broker", N_("receive: nothing visible"), "quiet", True))
    for step in e["steps"]:
        moves.extend(_step(e, step["name"], step["detail"]))
    if e["outcome"] == "lost":
        moves.append(("worker", "worker", N_("job lost, no error"), "bad", False))
    return moves


def _step(e: dict[str, Any], name: str, d: dict[str, Any]) -> list[Move]:
    if name == "receive":
        label = Text("%(id)s, receive %(n)s", id=d.get("message_id"), n=d.get("receive_count"))
        return [("broker", "worker", label, "ok", False)]
    if name == "dedup check":
        seen = N_("dedup: key completed") if d.get("seen") else N_("dedup: key not seen")
        return [("worker", "worker", seen, "quiet", False)]
    if name == "side effect" and d.get("via") == "outbox":
        return [("worker", "worker", N_("outbox row + dedup record"), "effect", False)]
    if name == "side effect":
        label = Text("send e-mail %(id)s", id=d.get("email"))
        return [("worker", "mailbox", label, "effect", False)]
    if name == "record" and d.get("dedup") and not d.get("with_outbox"):
        return [("worker", "worker", N_("record: key completed"), "quiet", False)]
    if name == "ack":
        return [("worker", "broker", Text("ack %(id)s", id=e["message_id"]), "ok", True)]
    if name == "relay send" and d.get("dropped"):
        label = Text("relay: %(row)s again, dropped", row=d.get("row"))
        return [("worker", "mailbox", label, "quiet", True)]
    if name == "relay send":
        label = Text("relay: send %(row)s → %(id)s", row=d.get("row"), id=d.get("email"))
        return [("worker", "mailbox", label, "effect", False)]
    if name == "crash":
        label = Text("crash after %(step)s", step=d.get("after"))
        return [("worker", "worker", label, "bad", False)]
    if name == "handler error":
        return [("worker", "worker", N_("handler error: no ack"), "bad", False)]
    return []
