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
        charged = other.outcome == "charged" or (
            not other.finished and other.step("gateway charge") is not None
        )
        if other.id == focus.id or other.key != focus.key or not charged:
            continue
        other_end = other.finished or other.started
        if other.started <= end and focus.started <= other_end:
            return other
    return None
