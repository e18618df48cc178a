"""Which requests of the log were in flight at the same time (races and duplicates)."""

from __future__ import annotations

from collections.abc import Sequence

from ..requests import RequestEntry


def overlap(a: RequestEntry, b: RequestEntry) -> bool:
    """Whether ``a`` and ``b`` were in flight together (an unfinished one ends as it starts)."""
    a_end, b_end = a.finished or a.started, b.finished or b.started
    return a.started <= b_end and b.started <= a_end


def overlapping_charger(
    focus: RequestEntry, entries: Sequence[RequestEntry]
) -> RequestEntry | None:
    """Another request with the same key that charged while ``focus`` was in flight: one
    that answered CHARGED, or one still in flight past its gateway charge (step mode: B
    paused after charging while A ran to its end; the money moved all the same)."""
    end = focus.finished or focus.started
    for other in entries:
        if other.id == focus.id or other.key != focus.key or not _charged(other):
            continue
        other_end = other.finished or other.started
        if other.started <= end and focus.started <= other_end:
            return other
    return None


def racing_chargers(
    focus: RequestEntry, twin: RequestEntry, entries: Sequence[RequestEntry]
) -> list[RequestEntry]:
    """``focus``, ``twin`` and every other request with their key that charged while one of
    them was in flight (two tabs each sending a Double-submit: four), oldest first."""
    group = {focus.id: focus, twin.id: twin}
    grew = True
    while grew:
        grew = False
        for other in entries:
            if other.id in group or other.key != focus.key or not _charged(other):
                continue
            if any(overlap(other, member) for member in group.values()):
                group[other.id] = other
                grew = True
    return sorted(group.values(), key=lambda e: e.id)


def _charged(entry: RequestEntry) -> bool:
    """Answered CHARGED, or still in flight past its gateway charge (the money moved)."""
    return entry.outcome == "charged" or (
        not entry.finished and entry.step("gateway charge") is not None
    )
