"""The fifth new-user run through the ten payment lessons: what it found in the words of
the lesson cards (both languages)."""

from __future__ import annotations

import gettext
import io

import pytest

from demo.lessons.payments import PATH
from demo.payments.scenarios import SCENARIOS
from demo.web.i18n import TRANSLATIONS

VI = gettext.GNUTranslations(io.BytesIO((TRANSLATIONS / "vi/LC_MESSAGES/messages.mo").read_bytes()))


@pytest.mark.parametrize("name", [lesson.name for lesson in PATH])
def test_every_lesson_badge_names_what_the_fix_switched(name: str) -> None:
    """Finding 2: lesson 4's badge said only "fix ON" after Apply the fix (lesson 1's says
    "fix ON: a stable key"). A defence's badge says "second case" instead."""
    scenario = SCENARIOS[name]
    if scenario.defence:
        return
    off, on = scenario.badge_for(False), scenario.badge_for(True)
    assert on.startswith("fix ON: ") and len(on) > len("fix ON: ")
    assert off.startswith("fix OFF: ") and len(off) > len("fix OFF: ")
    assert VI.gettext(on).startswith("cách sửa: BẬT, ")
    assert VI.gettext(off).startswith("cách sửa: TẮT, ")


def test_lesson_4_badge_says_the_lock_is_on() -> None:
    assert SCENARIOS["race"].badge_for(True) == "fix ON: Lock on"
    assert VI.gettext("fix ON: Lock on") == "cách sửa: BẬT, Lock bật"
