"""The workspace's labs as pages: the header's lab switcher, and where a link that opens
a lesson or a scenario of a lab lands (:func:`~demo.web.shell.open_link`).

A new lab adds one :class:`LabPage` to :data:`LAB_PAGES`, in the order an attendee
meets the labs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import Flask, url_for

from ..engine.text import N_
from ..lessons import CHAPTERS, LESSONS, chapter_of
from ..natural.scenarios import SCENARIOS as NATURAL_SCENARIOS
from ..payments.scenarios import SCENARIOS as PAYMENT_SCENARIOS
from ..queue.scenarios import SCENARIOS as QUEUE_SCENARIOS
from ..retries.scenarios import SCENARIOS as RETRY_SCENARIOS


@dataclass(frozen=True)
class LabPage:
    """One lab's page.

    :param lab: the lab's name (a key of the workspace's labs; ``Lesson.lab``).
    :param title: the switcher's label (a msgid).
    :param endpoint: the page's view, called with ``lab_id`` (``GET`` shows it).
    :param scenarios: the lab's scenarios by name; each has a ``title`` (a msgid).
    """

    lab: str
    title: str
    endpoint: str
    scenarios: Mapping[str, Any]

    def url(self, lab_id: str, **query: str) -> str:
        """The page's address in workspace ``lab_id`` (``query``: a link's arguments)."""
        values: dict[str, Any] = {"lab_id": lab_id, **query}
        return url_for(self.endpoint, **values)


LAB_PAGES: tuple[LabPage, ...] = (
    LabPage("payments", N_("Payments"), "shell.lab_page", PAYMENT_SCENARIOS),
    LabPage("natural", N_("Operations"), "natural.page", NATURAL_SCENARIOS),
    LabPage("retries", N_("Retries"), "retries_page.page", RETRY_SCENARIOS),
    LabPage("queue", N_("Queue"), "queue_page.page", QUEUE_SCENARIOS),
)
"""Every lab's page, in the order the switcher shows them."""

PAGES: dict[str, LabPage] = {page.lab: page for page in LAB_PAGES}
"""The pages by lab name."""


def page_of_scenario(name: str) -> LabPage | None:
    """The page of the lab that has scenario ``name`` (scenario names are unique)."""
    return next((page for page in LAB_PAGES if name in page.scenarios), None)


def lesson_number(name: str) -> int | None:
    """Lesson ``name``'s number in its lab's chapter (1 first), or ``None`` when no lesson
    has that name (a scenario of the failure lab only)."""
    if name not in LESSONS:
        return None
    return [lesson.name for lesson in chapter_of(name)].index(name) + 1


def next_chapter(lab: str) -> LabPage | None:
    """The page after lab ``lab``'s in the switcher's order: its chapter comes next in the
    workshop (a chapter's end points there); ``None`` after the last."""
    names = [page.lab for page in LAB_PAGES]
    at = names.index(lab) + 1
    return LAB_PAGES[at] if at < len(LAB_PAGES) else None


def next_chapter_link(lab: str, lab_id: str, achieved: set[str]) -> tuple[str, str] | None:
    """``(title, url)`` of :func:`next_chapter`'s page, opening its first lesson not in
    ``achieved`` (a link's ``?lesson=``; run Y landed in free play and had to press Start),
    or the page alone when all are; ``None`` after the last chapter."""
    after = next_chapter(lab)
    if after is None:
        return None
    first = next((each.name for each in CHAPTERS[after.lab] if each.name not in achieved), None)
    return after.title, after.url(lab_id, **({"lesson": first} if first else {}))


def register(app: Flask) -> None:
    """Give every template ``LAB_PAGES`` (the header's lab switcher reads it), ``PAGES``
    (one lab's page by name: ``PAGES.payments.url(lab.id)``), :func:`lesson_number`
    (a scenario's card offers its lesson) and :func:`next_chapter_link`."""
    app.jinja_env.globals["LAB_PAGES"] = LAB_PAGES
    app.jinja_env.globals["PAGES"] = PAGES
    app.jinja_env.globals["lesson_number"] = lesson_number
    app.jinja_env.globals["next_chapter_link"] = next_chapter_link
