"""The storm chart: the load on the server over time, one small panel per strategy, side
by side on the same scales, drawn as SVG on the server (no chart library, no script).

:func:`storm_chart` turns the storm answer (:func:`~demo.retries.storm_input.storm_answer`)
into plain geometry that ``templates/retries/_partials/storm_chart.html`` writes out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

COLUMNS = 3
PANEL_W, PANEL_H = 300, 118
"""One strategy's plot area, in SVG units (the chart scales to the page's width)."""
GAP_X, GAP_Y, LEFT, TOP, BOTTOM = 22, 46, 58, 34, 22


@dataclass(frozen=True)
class Bar:
    """One bucket of a panel: its box, and the load it stands for (calls per s)."""

    x: float
    y: float
    w: float
    h: float
    t_s: float
    per_s: float


@dataclass(frozen=True)
class Panel:
    """One strategy's panel: where it sits, its bars, and the numbers in its title."""

    strategy: str
    x: float
    y: float
    bars: tuple[Bar, ...]
    calls: int
    completion_s: float
    peak_load: float
    gave_up: int
    fewest: bool


@dataclass(frozen=True)
class Chart:
    """The whole chart: size, shared scales (``y_max`` calls per s, ``x_max`` s), ticks."""

    width: int
    height: int
    panel_w: int
    panel_h: int
    panels: tuple[Panel, ...]
    x_max: float
    y_max: float
    y_ticks: tuple[tuple[float, float], ...]  # (calls per s, offset from the panel's top)
    x_ticks: tuple[tuple[float, float], ...]  # (seconds, offset from the panel's left)
    bucket_s: float
    model: str
    clients: int


def results_of(answer: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The answer's results: one per strategy (``"all"``), or the single one."""
    results = answer.get("results")
    return list(results) if isinstance(results, list) else [answer]


def _nice(value: float) -> float:
    """The smallest 1, 2 or 5 × 10ⁿ at least ``value`` (the time axis's end)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return float(next(m * power for m in (1, 2, 5, 10) if m * power >= value))


def _decade(value: float) -> float:
    """The smallest power of ten at least ``value``, and at least 10 (the load axis's end)."""
    return float(10 ** max(1, math.ceil(math.log10(max(value, 1.0)))))


def _height(per_s: float, y_max: float) -> float:
    """A load's bar height: on a log scale (1 call/s at the bottom, ``y_max`` at the
    top), so the small synchronised waves after the first burst still show."""
    if per_s <= 0:
        return 0.0
    return PANEL_H * max(math.log10(per_s), 0.0) / math.log10(y_max) if per_s > 1 else 1.5


def storm_chart(answer: Mapping[str, Any]) -> Chart:
    """The chart of storm ``answer``: every strategy on the same time and load scales, so
    the panels compare at a glance; the load of a bucket is its calls ÷ ``bucket_s``
    (calls per s), on a log scale (a burst of thousands beside waves of tens)."""
    results = results_of(answer)
    bucket_s = float(answer.get("bucket_s") or 1.0)
    x_max = _nice(max((len(r["series"]) * bucket_s for r in results), default=1.0))
    peak = max((p["calls"] for r in results for p in r["series"]), default=0) / bucket_s
    y_max = _decade(peak)
    fewest = min(r["calls"] for r in results)
    panels = tuple(
        _panel(r, i, bucket_s, x_max, y_max, fewest=len(results) > 1 and r["calls"] == fewest)
        for i, r in enumerate(results)
    )
    rows = math.ceil(len(results) / COLUMNS)
    columns = min(COLUMNS, len(results))
    return Chart(
        width=LEFT + columns * PANEL_W + (columns - 1) * GAP_X + 12,
        height=TOP + rows * PANEL_H + (rows - 1) * GAP_Y + BOTTOM,
        panel_w=PANEL_W,
        panel_h=PANEL_H,
        panels=panels,
        x_max=x_max,
        y_max=y_max,
        y_ticks=tuple(
            (10.0**e, PANEL_H - _height(10.0**e, y_max))
            for e in range(0, round(math.log10(y_max)) + 1)
        ),
        x_ticks=tuple((v, PANEL_W * v / x_max) for v in (0.0, x_max / 2, x_max)),
        bucket_s=bucket_s,
        model=str(answer.get("model", "")),
        clients=int(answer.get("clients", 0)),
    )


def _panel(
    result: Mapping[str, Any],
    index: int,
    bucket_s: float,
    x_max: float,
    y_max: float,
    *,
    fewest: bool,
) -> Panel:
    x = LEFT + (index % COLUMNS) * (PANEL_W + GAP_X)
    y = TOP + (index // COLUMNS) * (PANEL_H + GAP_Y)
    width = PANEL_W * bucket_s / x_max
    bars = []
    for point in _points(result["series"]):
        per_s = point["calls"] / bucket_s
        h = _height(per_s, y_max)
        bars.append(Bar(PANEL_W * point["t_s"] / x_max, PANEL_H - h, width, h, point["t_s"], per_s))
    return Panel(
        strategy=str(result["strategy"]),
        x=x,
        y=y,
        bars=tuple(bars),
        calls=int(result["calls"]),
        completion_s=float(result["completion_s"]),
        peak_load=float(result["peak_load"]),
        gave_up=int(result.get("gave_up", 0)),
        fewest=fewest,
    )


def _points(series: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The buckets worth a bar (an empty one draws nothing)."""
    return [p for p in series if p["calls"]]
