"""The operations lab's lessons: each check is met by what really ran, in order, and
not by the opposite outcome."""

from __future__ import annotations

import time

from demo.lessons.engine import Lesson, Progress, observe
from demo.lessons.natural import CHAPTER
from demo.lessons.natural_facts import evidence
from demo.natural.lab import NaturalLab
from demo.natural.operations import OPERATIONS

LESSONS = {lesson.name: lesson for lesson in CHAPTER}


def _check(lab: NaturalLab, lesson: Lesson, progress: Progress) -> set[str]:
    observe(lesson, progress, evidence(lab), time.perf_counter())
    return progress.met


def test_the_chapter_names_are_the_scenarios() -> None:
    from demo.natural.scenarios import SCENARIOS

    assert list(LESSONS) == list(SCENARIOS)


def test_set_vs_add() -> None:
    lab, lesson, progress = NaturalLab(), LESSONS["set-vs-add"], Progress()
    lab.apply({"operation": "add_balance", "times": 3, "dedup": True})  # the fix first: no
    lab.apply({"operation": "set_balance", "times": 3})
    assert _check(lab, lesson, progress) == set()
    lab.apply({"operation": "add_balance", "times": 3})
    assert _check(lab, lesson, progress) == {"set-natural-add-not"}
    lab.apply({"operation": "add_balance", "times": 1, "dedup": True})  # no retry: no proof
    assert not progress.achieved(lesson) and not _check(lab, lesson, progress) - {
        "set-natural-add-not"
    }
    lab.apply({"operation": "add_balance", "times": 3, "dedup": True})
    _check(lab, lesson, progress)
    assert progress.achieved(lesson)


def test_which_are_natural() -> None:
    lab, lesson, progress = NaturalLab(), LESSONS["which-are-natural"], Progress()
    names = list(OPERATIONS)
    for name in names[:-1]:
        lab.apply({"operation": name, "times": 2})
    assert _check(lab, lesson, progress) == set()
    lab.apply({"operation": names[-1], "times": 2})
    assert _check(lab, lesson, progress) == {"all-sorted"}
    for name in names:
        lab.apply({"operation": name, "times": 2, "dedup": True})
    _check(lab, lesson, progress)
    assert progress.achieved(lesson)


def test_lost_update() -> None:
    lab, lesson, progress = NaturalLab(), LESSONS["lost-update"], Progress()
    lab.delayed({"conditional": True})
    assert _check(lab, lesson, progress) == set()
    lab.delayed({"conditional": False})
    assert _check(lab, lesson, progress) == {"update-lost"}
    lab.delayed({"conditional": True})
    _check(lab, lesson, progress)
    assert progress.achieved(lesson)


def test_tracking_pixel() -> None:
    lab, lesson, progress = NaturalLab(), LESSONS["tracking-pixel"], Progress()
    first = lab.view_pixel("42", None, prefetch=False)
    lab.view_pixel("42", None, prefetch=False)  # another viewer: not a repeat
    assert _check(lab, lesson, progress) == set()
    lab.view_pixel("42", first.viewer, prefetch=True)
    assert _check(lab, lesson, progress) == {"counted-twice"}
    lab.update_settings({"pixel_dedup_window_s": 1800})
    lab.view_pixel("42", None, prefetch=False)  # a new viewer's first view counts
    assert _check(lab, lesson, progress) == {"counted-twice"}
    lab.view_pixel("42", first.viewer, prefetch=False)  # within 1800 s of its last count
    _check(lab, lesson, progress)
    assert progress.achieved(lesson)
    assert lab.state()["views"] == {"42": 4}
