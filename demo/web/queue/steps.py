"""A queue scenario's clicks as the numbered steps its card lists: the same clicks "Run the
scenario" runs (:meth:`~demo.queue.lab.QueueLab.play`), said as the buttons that do them,
so an attendee can run them by hand."""

from __future__ import annotations

from typing import Any

from ...engine.text import Number, Text
from ...queue.scenarios import Click, Scenario
from .words import CRASH_POINTS, MODES


def scenario_steps(scenario: Scenario, fixed: bool) -> list[Text]:
    """The steps of ``scenario`` (its fix's clicks when ``fixed`` and it has its own), one
    per click; a click repeated right after itself is one step ("Press Work, twice")."""
    return [_step(kind, arg, times) for (kind, arg), times in _runs(scenario, fixed)]


def steps_done(scenario: Scenario, fixed: bool, played: int) -> int:
    """How many of :func:`scenario_steps` the first ``played`` clicks have done whole:
    the card ticks them, so Next step's press shows which step it did (run T)."""
    done = clicks = 0
    for _, times in _runs(scenario, fixed):
        clicks += times
        if clicks > played:
            break
        done += 1
    return done


def _runs(scenario: Scenario, fixed: bool) -> list[tuple[Click, int]]:
    clicks = scenario.fix_clicks if fixed and scenario.fix_clicks else scenario.clicks
    runs: list[tuple[Click, int]] = []
    for click in clicks:
        if runs and runs[-1][0] == click:
            runs[-1] = (click, runs[-1][1] + 1)
        else:
            runs.append((click, 1))
    return runs


def crash_step(crash_at: str) -> Text:
    """The step that arms the crash ``crash_at`` (a key of ``CRASH_POINTS``)."""
    return Text(
        "Set Crash (once) to “%(where)s”, in the settings.", where=Text(CRASH_POINTS[crash_at])
    )


def _step(kind: str, arg: Any, times: int) -> Text:
    if kind == "enqueue":
        return Text("Choose the job %(job)s and press Enqueue.", job=arg["id"])
    if kind == "producer_retry":
        return Text("Press Producer retry: the same job again, as a second message.")
    if kind == "work":
        return Text("Press Work, twice.") if times == 2 else Text("Press Work.")
    if kind == "advance":
        return Text("Press +%(seconds)s s on the lab clock: past the visibility timeout.",
                    seconds=arg)  # fmt: skip
    if kind == "settings" and "crash_at" in arg:
        return crash_step(arg["crash_at"])
    if kind == "simulate":
        return Text(
            "In the simulator: %(mode)s, %(messages)s messages, loss %(loss)s, ack loss "
            "%(ack_loss)s; press Simulate.",
            mode=Text(MODES[arg["mode"]]), messages=Number(arg["messages"]),
            loss=_rate(arg["loss"]), ack_loss=_rate(arg["ack_loss"]),
        )  # fmt: skip
    raise ValueError(f"a scenario click the steps cannot say: {kind!r}")


def _rate(value: float) -> Number:
    """A rate (``0.2``) with the decimals it has, in the reader's language ("0.2", "0,2")."""
    return Number(value, len(repr(float(value)).partition(".")[2].rstrip("0")))
