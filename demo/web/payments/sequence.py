"""The sequence diagram of a lab's recent requests: lifelines for the client, the
instances, the store and the gateway; one arrow per step, in the order they really
happened across requests, so a race reads top to bottom. Drawn as SVG on the server."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...engine.text import N_, Text, translate
from ...payments.gateway import LedgerSummary
from ...payments.requests import RequestEntry

LANE_W = 170
TOP = 70
ROW_H = 26
LINE_H = 14  # one more line of a wrapped label
CHAR_W = 7.2  # px of the widest common glyphs at 12 px DejaVu Sans: labels never overflow
MAX_LINES = 4  # a 60-character key still shows whole; a longer one ends in "…"
COLOURS = ("#0b57d0", "#b3141b", "#6b2d8f", "#1e7b34", "#a35200", "#55606b")


@dataclass(frozen=True)
class Arrow:
    """One message: from one lifeline to another at height ``y`` (px), for request ``who``.

    ``lines`` is the label wrapped to fit between the two lifelines (the last line ends
    with "…" when cut); ``full`` is the whole label, the SVG ``<title>`` tooltip."""

    y: float
    x1: float
    x2: float
    lines: tuple[str, ...]
    full: str
    colour: str
    who: str
    dashed: bool = False
    bold: bool = False


@dataclass(frozen=True)
class Note:
    """A boxed remark on one lifeline (the crash), at height ``y`` (px)."""

    y: float
    x: float
    lines: tuple[str, ...]
    full: str
    colour: str


@dataclass(frozen=True)
class Diagram:
    """Everything the SVG template draws; sizes in px."""

    width: int
    height: int
    lifelines: tuple[tuple[str | Text, float], ...]
    arrows: tuple[Arrow, ...]
    notes: tuple[Note, ...]
    caption: str | Text = ""


def fit(text: str, width_px: float, max_lines: int = MAX_LINES) -> tuple[str, ...]:
    """``text`` wrapped at spaces into lines of at most ``width_px`` (at :data:`CHAR_W` per
    character), a word too long for one line cut across lines, at most ``max_lines``
    lines, the last ending with "…" when the text goes on."""
    limit = max(int(width_px // CHAR_W), 4)
    lines: list[str] = []
    line = ""
    for word in text.split():
        while len(word) > limit:  # a long key has no spaces: cut it where the line ends
            room = limit - len(line) - (1 if line else 0)
            if room < 4:
                lines.append(line)
                line, room = "", limit
            lines.append(f"{line} {word[:room]}".strip())
            line, word = "", word[room:]
        if line and len(line) + 1 + len(word) > limit:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    if line:
        lines.append(line)
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: limit - 1].rstrip() + "…"
    return tuple(lines) or ("",)


Event = tuple[float, int, str, RequestEntry, Mapping[str, Any]]
"""A moment of the diagram: (when, in s; the request's order; step name; request; detail)."""

Message = tuple[float, float, str | Text, bool]
"""An arrow to draw: (from x, to x, label, dashed)."""


def diagram(entries: Sequence[RequestEntry], summary: LedgerSummary, limit: int = 6) -> Diagram:
    """The diagram of the last ``limit`` requests.

    With a store per instance (``store_scope="per_instance"``) each instance gets its own
    Store lifeline next to it, and the caption says the records and lock do not span
    instances; with a shared store, one Store lifeline serves them all. Labels are
    translated here (in a request context) so they can be wrapped to fit their arrow."""
    shown = list(entries)[-limit:]
    instances = sorted({e.instance for e in shown}) or ["i1"]
    settings = shown[-1].settings if shown else None  # None for an imported history
    per_instance = settings is not None and settings.store_scope == "per_instance"
    several = len(instances) > 1 or (settings is not None and settings.instances > 1)
    x = _lifelines(shown, instances, per_instance)
    arrows, notes, y = _draw(_events(shown), x, per_instance, summary)
    caption: str | Text = ""
    if several:
        caption = (
            N_(
                "One store per instance: each store's records and per-key lock cover only "
                "the requests of its own instance."
            )
            if per_instance
            else N_("One shared store: its records and its per-key lock span every instance.")
        )
    height = int(max(y, TOP + ROW_H) + (40 if caption else 20))
    width = int(40 * 2 + LANE_W * len(x))
    labels = _labels(instances)
    lifelines = tuple((labels[name], at) for name, at in x.items())
    return Diagram(width, height, lifelines, tuple(arrows), tuple(notes), caption)


def _lifelines(
    shown: Sequence[RequestEntry], instances: Sequence[str], per_instance: bool
) -> dict[str, float]:
    """Each lifeline's name and x (px), left to right: the client, the instances (each
    with its own store, or one shared store after them), the gateway, the mailbox."""
    if per_instance:
        names = ["Client", *(n for i in instances for n in (f"Instance {i}", f"Store {i}"))]
    else:
        names = ["Client", *(f"Instance {i}" for i in instances), "Store"]
    names.append("Gateway")
    # Lesson 10's second side effect: the receipt e-mail leaves through the mailbox.
    mails = any(s.name == "email send" for e in shown for s in e.steps)
    if mails:
        names.append("Mailbox")
    return {name: 40 + LANE_W / 2 + n * LANE_W for n, name in enumerate(names)}


def _labels(instances: Sequence[str]) -> dict[str, str | Text]:
    """The lifelines' headings, translatable."""
    return {
        "Client": N_("Client"),
        **{f"Instance {i}": Text("Instance %(name)s", name=i) for i in instances},
        **{f"Store {i}": Text("Store %(name)s", name=i) for i in instances},
        "Store": N_("Store"),
        "Gateway": N_("Gateway"),
        "Mailbox": N_("Mailbox"),
    }


def _events(shown: Sequence[RequestEntry]) -> list[Event]:
    """Every request's start, steps and answer, in the order they really happened."""
    events: list[Event] = []
    for order, entry in enumerate(shown):
        events.append((entry.started, order, "request", entry, {}))
        for step in entry.steps:
            at = entry.started + step.at_ms / 1000
            events.append((at, order, step.name, entry, step.detail))
        if entry.finished is not None:
            events.append((entry.finished + 1e-9, order, "answer", entry, {}))
    events.sort(key=lambda e: (e[0], e[1]))
    return events


def _draw(
    events: Sequence[Event], x: Mapping[str, float], per_instance: bool, summary: LedgerSummary
) -> tuple[list[Arrow], list[Note], float]:
    """The arrows and notes of ``events``, one row each from the top, and the height (px)
    they reach. A label wrapped to several lines pushes its arrow down."""
    arrows: list[Arrow] = []
    notes: list[Note] = []
    y = float(TOP)
    for _, order, name, entry, detail in events:
        colour = COLOURS[order % len(COLOURS)]
        who = f"#{entry.id}"
        inst = x[f"Instance {entry.instance}"]
        if name == "crash":
            full = translate(Text("%(who)s ✕ instance crashed", who=who))
            lines = fit(full, 150, 2)
            y += (len(lines) - 1) * LINE_H
            notes.append(Note(y, inst, lines, full, colour))
            y += ROW_H
            continue
        store = x[f"Store {entry.instance}"] if per_instance else x["Store"]
        message = _message(name, entry, detail, summary, {**x, "Instance": inst, "Store": store})
        if message is None:
            continue
        x1, x2, label, dashed = message
        full = translate(label)
        lines = fit(full, abs(x2 - x1) - 14)
        y += (len(lines) - 1) * LINE_H  # the label's extra lines sit above its arrow
        bold = name == "answer" and _doubled(entry, summary)
        arrows.append(Arrow(y, x1, x2, lines, full, colour, who, dashed, bold))
        y += ROW_H
    return arrows, notes, y


def _message(
    name: str,
    entry: RequestEntry,
    detail: Mapping[str, Any],
    summary: LedgerSummary,
    x: Mapping[str, float],
) -> Message | None:
    """The arrow of step ``name`` of ``entry``, or ``None`` for a step not drawn. ``x``
    holds the lifelines' x, with ``"Instance"`` and ``"Store"`` those of this request."""
    who = f"#{entry.id}"
    inst, store = x["Instance"], x["Store"]
    if name == "request":
        key: str | Text = entry.key if entry.key else Text("no key")
        text = Text("%(who)s POST /charges %(key)s", who=who, key=key)
        return (x["Client"], inst, text, False)
    if name == "lookup":
        return (inst, store, _lookup(who, detail), False)
    if name == "lock acquire":
        return (inst, store, Text("%(who)s lock (key)", who=who), False)
    if name == "reserve":
        return (inst, store, Text("%(who)s reserve: in progress", who=who), False)
    if name == "gateway charge":
        return (inst, x["Gateway"], Text("%(who)s charge", who=who), False)
    if name == "gateway timeout":
        text = Text("%(who)s charge: the answer times out", who=who)
        return (inst, x["Gateway"], text, False)
    if name == "gateway replay":
        return (x["Gateway"], inst, Text("%(who)s same charge again", who=who), True)
    if name == "record save":
        return (inst, store, Text("%(who)s save record", who=who), False)
    if name == "outbox enqueue":
        text = Text("%(who)s outbox: receipt for %(charge)s", who=who,
                    charge=detail.get("charge_id"))  # fmt: skip
        return (inst, store, text, False)
    if name == "email send":
        key = str(detail["key"]) if detail.get("key") else Text("no key")
        text = Text("%(who)s send receipt %(email)s (key %(key)s)", who=who,
                    email=detail.get("email"), key=key)  # fmt: skip
        return (inst, x["Mailbox"], text, False)
    if name == "answer":
        text = Text("%(who)s %(outcome)s", who=who, outcome=_outcome(entry, summary))
        return (inst, x["Client"], text, True)
    return None


def _lookup(who: str, detail: Mapping[str, Any]) -> Text:
    if detail.get("again"):
        found = (
            N_("%(who)s lookup again: hit")
            if detail.get("hit")
            else N_("%(who)s lookup again: miss")
        )
    else:
        found = N_("%(who)s lookup: hit") if detail.get("hit") else N_("%(who)s lookup: miss")
    return Text(found, who=who)


def _doubled(entry: RequestEntry, summary: LedgerSummary) -> bool:
    """A charge that repeated its order's first one: the first was the payment asked for."""
    return (
        entry.charge is not None
        and entry.charge.order_id in summary.doubled
        and entry.charge_id not in summary.firsts
    )


def _outcome(entry: RequestEntry, summary: LedgerSummary) -> Text:
    if not entry.delivered:
        return Text("✕ no response")
    doubled = _doubled(entry, summary)
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
