"""The queue lab's steps: every ``trace("step", …)`` and ``entry.mark("step", …)`` in its
source names a step of its table (:data:`demo.queue.entries.STEPS`) with the detail the
table allows, and every step of the table is written somewhere."""

from __future__ import annotations

import ast
from pathlib import Path

from demo.queue.entries import CRASH_STEPS, STEP_POINTS, STEPS

QUEUE = Path(__file__).resolve().parent.parent / "demo" / "queue"


def _calls() -> list[tuple[str, str, set[str]]]:
    found = []
    for path in sorted(QUEUE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            first = node.args[0]
            traced = isinstance(node.func, ast.Name) and node.func.id == "trace"
            marked = isinstance(node.func, ast.Attribute) and node.func.attr == "mark"
            if (traced or marked) and isinstance(first, ast.Constant):
                found.append((path.name, first.value, {str(k.arg) for k in node.keywords}))
    return found


def test_every_step_written_is_in_the_table() -> None:
    calls = _calls()
    assert len(calls) >= 10  # the reader found the calls
    for where, step, names in calls:
        assert step in STEPS, (where, step)
        assert names <= set(STEPS[step].detail), (where, step, names)
    assert {step for _, step, _ in calls} | {"step timeout"} == set(STEPS)


def test_crash_points_and_step_points_are_steps() -> None:
    assert set(CRASH_STEPS.values()) <= STEP_POINTS <= set(STEPS)


def test_a_real_run_fits_the_table() -> None:
    from demo.queue.jobs import EXAMPLE
    from demo.queue.lab import QueueLab

    lab = QueueLab()
    lab.update_settings({"dedup": True, "outbox": True, "crash_at": "relay_after_send"})
    lab.enqueue(dict(EXAMPLE))
    lab.producer_retry()
    lab.work()
    lab.work()
    for entry in lab.entries():
        for step in entry.steps:
            kind = STEPS[step.name]
            for name, value in step.detail.items():
                assert kind.detail[name].valid(value), (step.name, name, value)
