"""The lessons path: the lesson engine, and one chapter of lessons per lab.

Lessons read labs; labs never read lessons. A workspace runs the open lesson's checks
after every request (:func:`observe`, on the evidence its chapter reads).

A lab's chapter is a module here (``payments.py``) with a tuple of
:class:`Lesson` (``lab=<the lab's name>``; each lesson's name is a scenario of that lab,
so names are unique across chapters) and a facts module its checks read
(``payment_facts.py``); both are registered below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import natural_facts, payment_facts, queue_facts, retries_facts
from .engine import Check, Evidence, Lesson, Progress, observe
from .natural import CHAPTER as NATURAL
from .payments import PATH
from .queue import QUEUE_PATH
from .retries import CHAPTER as RETRIES_CHAPTER

CHAPTERS: dict[str, tuple[Lesson, ...]] = {
    "payments": PATH,
    "natural": NATURAL,
    "retries": RETRIES_CHAPTER,
    "queue": QUEUE_PATH,
}
"""Each lab's chapter of the path: lab name → its lessons, in order."""

LESSONS: dict[str, Lesson] = {
    lesson.name: lesson for chapter in CHAPTERS.values() for lesson in chapter
}
"""Every lesson of every chapter, by name."""

EVIDENCE: dict[str, Callable[[Any], Evidence]] = {
    "payments": payment_facts.evidence,
    "retries": retries_facts.evidence,
    "queue": queue_facts.evidence,
    "natural": natural_facts.evidence,
}
"""What each lab's lessons read of it: lab name → a function of the lab to its evidence."""


def chapter_of(name: str) -> tuple[Lesson, ...]:
    """The chapter lesson ``name`` belongs to (``KeyError`` for an unknown lesson)."""
    return CHAPTERS[LESSONS[name].lab]


__all__ = [
    "CHAPTERS",
    "EVIDENCE",
    "LESSONS",
    "PATH",
    "Check",
    "Lesson",
    "Progress",
    "chapter_of",
    "observe",
]
