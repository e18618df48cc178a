"""The delivery-semantics chart: side effects, duplicate side effects and lost jobs
against the link's loss rate (messages and acks lost alike), for the three modes side by
side, each on its own y scale. Each point is a real run
of :func:`demo.queue.simulator.simulate`; drawn as SVG on the server (no chart library)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ...queue.simulator import MODES, simulate

LOSSES = tuple(round(0.1 * n, 1) for n in range(10))
"""The loss rates on the x axis: 0 to 0.9."""
POINT_MESSAGES = 1000
"""Messages per point: enough for smooth lines, 30 runs in a few ms."""
MEASURES = ("effects", "duplicate_effects", "lost")
PANEL_W, PANEL_H, GAP, LEFT, TOP, BOTTOM = 224, 150, 42, 46, 28, 34


@dataclass(frozen=True)
class Panel:
    """One mode's plot: its x offset (px), its y axis top (per message), and one polyline
    (``"x,y x,y …"``) per measure."""

    mode: str
    x: int
    y_max: float
    lines: dict[str, str]


def semantics_chart(last: dict[str, Any] | None) -> dict[str, Any]:
    """The chart, on the last simulation's ``seed`` (42 before any): ``panels``
    (:class:`Panel`), ``ticks`` (x labels with their px), sizes in px, and ``marker`` (the
    last run's loss as a px offset inside each panel, or ``None``) with ``last_mode``."""
    seed = int(last["seed"]) if last else 42
    points = _points(seed)
    panels = []
    for n, mode in enumerate(MODES):
        x0 = LEFT + n * (PANEL_W + GAP)
        top = max(1.0, max(v for values in points[mode].values() for v in values))
        y_max = float(int(top * 2 + 0.999)) / 2  # up to the next half
        lines = {
            measure: " ".join(
                f"{x0 + _x(loss):.1f},{TOP + _y(v, y_max):.1f}"
                for loss, v in zip(LOSSES, points[mode][measure], strict=True)
            )
            for measure in MEASURES
        }
        panels.append(Panel(mode, x0, y_max, lines))
    return {
        "panels": panels,
        "ticks": [(loss, _x(loss)) for loss in (0.0, 0.3, 0.6, 0.9)],
        "width": LEFT + 3 * PANEL_W + 2 * GAP + 10,
        "height": TOP + PANEL_H + BOTTOM,
        "panel_w": PANEL_W,
        "panel_h": PANEL_H,
        "top": TOP,
        "marker": _x(float(last["loss"])) if last else None,
        "last_mode": last["mode"] if last else None,
    }


def _x(loss: float) -> float:
    return loss / LOSSES[-1] * PANEL_W


def _y(value: float, y_max: float) -> float:
    return PANEL_H - value / y_max * PANEL_H


@functools.lru_cache(maxsize=32)
def _points(seed: int) -> dict[str, dict[str, list[float]]]:
    """Per mode and measure, the count per message at each loss rate (real runs, with
    ``loss`` = ``ack_loss``)."""
    out: dict[str, dict[str, list[float]]] = {}
    for mode in MODES:
        runs = [
            simulate(mode=mode, messages=POINT_MESSAGES, loss=loss, ack_loss=loss, seed=seed)
            for loss in LOSSES
        ]
        out[mode] = {m: [getattr(r, m) / POINT_MESSAGES for r in runs] for m in MEASURES}
    return out
