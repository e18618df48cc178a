"""The step boundaries the operations lab writes on its timeline, and the detail each
carries (:class:`~demo.engine.timeline.StepKind`): one table, so the lab's marks and its
page cannot drift apart (``tests/test_natural_core.py`` checks every mark against it)."""

from __future__ import annotations

from ..engine.timeline import Detail, StepKind


def _bool(value: object) -> bool:
    return isinstance(value, bool)


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


BOOL = Detail("must be true or false", _bool)
COUNT = Detail("must be a non-negative integer", _int)

STEPS: dict[str, StepKind] = {
    "arrive": StepKind({}),
    # a run's attempts: how many, how many the dedup record answered, how many changed
    # the state; then one per write of the delayed duplicate (3)
    "attempts": StepKind({"n": COUNT, "replayed": COUNT, "changed": COUNT}),
    "write": StepKind(
        {
            "client": Detail("must be A or B", lambda v: v in ("A", "B")),
            "status": COUNT,
            "balance": COUNT,
        },
        at_most=3,
    ),  # fmt: skip
    "viewer": StepKind({"viewer": COUNT, "new": BOOL, "prefetch": BOOL}),
    "window": StepKind({"counted": BOOL, "window_s": COUNT}),
    "respond": StepKind({}),
}
"""Every step name the operations lab marks, with its detail members."""
