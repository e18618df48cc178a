"""The lessons path: the lesson engine, and one chapter of lessons per lab.

Lessons read labs; labs never read lessons. A workspace runs the open lesson's checks
after every request (:func:`observe`, on the evidence its chapter reads)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import payment_facts
from .engine import Check, Evidence, Lesson, Progress, observe
from .payments import PATH

LESSONS: dict[str, Lesson] = {lesson.name: lesson for lesson in PATH}
"""Every lesson of the path, by name."""

EVIDENCE: dict[str, Callable[[Any], Evidence]] = {"payments": payment_facts.evidence}
"""What each lab's lessons read of it: lab name → a function of the lab to its evidence."""

__all__ = ["EVIDENCE", "LESSONS", "PATH", "Check", "Lesson", "Progress", "observe"]
