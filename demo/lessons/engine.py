"""The lesson engine: a lesson is a scenario with a win condition, hints and a takeaway.

A lesson is "achieved" when every one of its checks has held, at some point, on a lab's
real state. Checks are plain functions over that state (a lab's *evidence*), so what the
card says is what the code did. A check that held stays met (progress is kept per
workspace), so "see it fail, then apply the fix" can span the reset the fix brings.

Plain Python, no web framework, and no lab: each lab's chapter of lessons
(:mod:`demo.lessons.payments`) says what evidence its checks read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


class Evidence(Protocol):
    """What a chapter's checks read: a lab's state at one moment."""

    def since(self, started_after: float) -> Any:
        """The same evidence, its requests cut to those that arrived after
        ``started_after`` (``time.perf_counter`` s), the earlier ones kept as context."""
        ...


@dataclass(frozen=True)
class Check:
    """One thing the attendee must make happen: ``label`` says it, ``test`` sees it."""

    id: str
    label: str
    test: Callable[[Any], bool]


@dataclass(frozen=True)
class Lesson:
    """One stop on the path.

    :param name: the scenario it opens (``/lab/<id>?lesson=<name>``).
    :param goal: what the attendee will see happen, in one sentence.
    :param hints: revealed one at a time.
    :param checks: every one must hold once for "lesson achieved".
    :param takeaway: the sentence to remember.
    :param lab: the lab whose evidence the checks read (a key of the workspace's labs).
    :param unmet_note: what a check still open asks beyond the numbers, said when the card's
        numbers read "as expected" with the fix on (lesson 5: B must wait on A's lock; A
        stepped to its end first leaves one charge and the check open).
    :param case_note: the same before the fix, said when the case's first check is still
        open under extra charges (lesson 1: two Pays one after the other are two intents,
        not the double click the check asks for).
    """

    name: str
    goal: str
    hints: tuple[str, ...]
    checks: tuple[Check, ...]
    takeaway: str
    lab: str = ""
    unmet_note: str = ""
    case_note: str = ""

    def hints_for(self, fixed: bool) -> tuple[str, ...]:
        """The hints in the order "Show a hint" reveals them: in the second case (``fixed``)
        last first, as a lesson's hints run from its failure to its fix."""
        return self.hints[::-1] if fixed else self.hints


@dataclass
class Progress:
    """One lab's progress in one lesson: checks met so far (with when, as
    ``time.perf_counter()`` seconds), hints shown."""

    met_at: dict[str, float] = field(default_factory=dict)
    hints: int = 0

    @property
    def met(self) -> set[str]:
        return set(self.met_at)

    def achieved(self, lesson: Lesson) -> bool:
        return all(c.id in self.met for c in lesson.checks)


def observe(lesson: Lesson, progress: Progress, ev: Evidence, now: float) -> None:
    """Mark the checks of ``lesson`` that hold on ``ev``.

    Checks are met in order: "see it fail, *then* fix it". Each one looks only at the
    requests that arrived after the check before it was met (at ``now``, perf_counter s).
    """
    since = float("-inf")
    for check in lesson.checks:
        if check.id in progress.met_at:
            since = progress.met_at[check.id]
            continue
        if not check.test(ev.since(since)):
            break
        progress.met_at[check.id] = since = now
