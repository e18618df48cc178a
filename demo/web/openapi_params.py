"""Path parameters more than one lab's OpenAPI paths share."""

from __future__ import annotations

from typing import Any

from ..lessons import CHAPTERS


def chapter_lesson(lab: str, chapter: str) -> dict[str, Any]:
    """The ``{name}`` path parameter of lab ``lab``'s lesson routes: a lesson of its
    chapter (``chapter`` names it in the description); another lesson's name works too."""
    return {
        "name": "name",
        "in": "path",
        "required": True,
        "schema": {"enum": [lesson.name for lesson in CHAPTERS[lab]]},
        "description": f"A lesson of the {chapter} chapter (another lesson's name works too)",
    }
