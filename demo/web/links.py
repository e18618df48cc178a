"""Shareable links: ``?lesson=race``, ``?scenario=<name>`` (``fixed=1``), ``?present=1``.

A GET of such a link changes nothing (RFC 9110 §9.2.1); its page offers the change with
one button (an :class:`Offer`) that POSTs the same address to
:func:`~demo.web.shell.open_link`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import request, url_for
from werkzeug.datastructures import MultiDict

from ..engine.problems import Problem
from ..engine.text import N_, Text
from ..lessons import LESSONS, chapter_of
from ..workspace import Workspace
from .nav import PAGES, page_of_scenario

LINK_ARGS = ("scenario", "fixed", "run", "lesson", "present", "lab")
"""The query arguments of a shareable link (``?lesson=race``, ``?present=1``, …)."""


@dataclass(frozen=True)
class Offer:
    """What a link would change, offered on its page with one button."""

    text: str | Text
    button: str | Text
    action: str
    also: str | Text = ""
    """A second change the same link makes (presenter mode beside a lesson or scenario)."""


def check_names(lesson: str | None, scenario: str | None, lab: str = "payments") -> None:
    """:raises Problem: 404 for an unknown lesson, lab, or scenario of lab ``lab`` (the
    labs' own problems)."""
    if lesson is not None and lesson not in LESSONS:
        raise Problem(
            404,
            "unknown-lesson",
            N_("No such lesson"),
            Text("Lessons are: %(names)s.", names=", ".join(LESSONS)),
        )
    page = PAGES.get(lab)
    if page is None:
        raise Problem(
            404,
            "unknown-lab",
            N_("No such lab"),
            Text("Labs are: %(names)s.", names=", ".join(PAGES)),
        )
    if scenario is not None and scenario != "none" and scenario not in page.scenarios:
        raise Problem(
            404,
            "unknown-scenario",
            N_("No such scenario"),
            Text("Scenarios are: %(names)s.", names=", ".join(page.scenarios)),
        )


def present_arg(params: MultiDict[str, str]) -> str | None:
    """``present`` of a link's ``params``: ``"1"`` (presenter mode on), ``"0"`` (off) or
    ``None`` (not given).

    :raises Problem: 422 for any other value, or for two different ones
        (``?present=1&present=0``): the link would not say which it means.
    """
    values = set(params.getlist("present"))
    if not values:
        return None
    value = values.pop()
    if values or value not in ("0", "1"):
        raise Problem(
            422, "invalid-link", N_("Invalid link"),
            Text("present must be 1 (presenter mode on) or 0 (off), not %(value)s.",
                 value=", ".join(sorted(params.getlist("present")))[:20]),
        )  # fmt: skip
    return value


def check_link_args(params: MultiDict[str, str]) -> None:
    """Each of a link's :data:`LINK_ARGS` once: the same value repeated is one; ``fixed``
    and ``run`` are ``0`` or ``1`` (``present``: :func:`present_arg`).

    :raises Problem: 422 ``invalid-link`` for two different values of one argument
        (``?lesson=race&lesson=ttl-expiry``: the link would not say which it means; the
        first was taken without a word), or another ``fixed`` or ``run``.
    """
    for name in LINK_ARGS:
        if name == "present":
            continue  # present_arg says what it may be
        values = params.getlist(name)
        shown = ", ".join(sorted(set(values)))[:60]
        if len(set(values)) > 1:
            raise Problem(
                422, "invalid-link", N_("Invalid link"),
                Text("The argument %(name)s is given more than once, with different values "
                     "(%(values)s): keep the one you mean.", name=name, values=shown),
            )  # fmt: skip
        if name in ("fixed", "run") and values and values[0] not in ("0", "1"):
            raise Problem(
                422, "invalid-link", N_("Invalid link"),
                Text("The argument %(name)s must be 1 or 0, not %(value)s.", name=name,
                     value=shown),
            )  # fmt: skip


def check_link(params: MultiDict[str, str], lab: str | None = None) -> str | None:
    """Every check of a link's ``params``, before anything is made or changed for it:
    :func:`check_link_args`, :func:`present_arg` (returned), :func:`check_names` of lab
    ``lab`` (else its ``lab`` argument, else the payment lab).

    :raises Problem: 404 for an unknown lab, scenario or lesson; 422 ``invalid-link``.
    """
    check_link_args(params)
    present = present_arg(params)
    check_names(params.get("lesson"), params.get("scenario"), lab or params.get("lab", "payments"))
    return present


def offer(lab: Workspace) -> Offer | None:
    """The change this request's query asks for, or ``None``.

    :raises Problem: 404 for an unknown scenario or lesson, 422 for a ``present`` other
        than 0 or 1, or a link argument given twice differently (as the POST would).
    """
    args = request.args
    check_link_args(args)
    present = present_arg(args)
    lesson, scenario = args.get("lesson"), args.get("scenario")
    if present is None and lesson is None and scenario is None:
        return None
    check_names(lesson, scenario, args.get("lab", "payments"))
    query: dict[str, Any] = {name: args[name] for name in LINK_ARGS if name in args}
    action = url_for("shell.open_link", lab_id=lab.id, **query)
    # A link may carry presenter mode too: the offer names both changes.
    also = (
        N_("It also switches this lab to presenter mode.")
        if present == "1"
        else N_("It also switches presenter mode off.")
        if present == "0"
        else ""
    )
    if lesson is not None:
        return _lesson_offer(lesson, action, also)
    if scenario is not None and scenario != "none":
        return _scenario_offer(scenario, args.get("fixed") == "1", action, also)
    if scenario == "none":
        return Offer(N_("This link leaves the scenario."), N_("Leave the scenario"), action, also)
    if present == "1":
        return Offer(
            N_("This link switches this lab to presenter mode."),
            N_("Start presenter mode"),
            action,
        )
    return Offer(N_("This link switches presenter mode off."), N_("Leave presenter mode"), action)


def _lesson_offer(lesson: str, action: str, also: str | Text) -> Offer:
    """The offer of ``?lesson=<name>``: the lesson by its number on the path."""
    n = [item.name for item in chapter_of(lesson)].index(lesson) + 1
    title = PAGES[LESSONS[lesson].lab].scenarios[lesson].title
    return Offer(
        Text("This link opens lesson %(n)s, %(title)s, afresh in this lab.", n=n,
             title=Text(title)),
        Text("Open lesson %(n)s", n=n),
        action,
        also,
    )  # fmt: skip


def _scenario_offer(scenario: str, fixed: bool, action: str, also: str | Text) -> Offer:
    """The offer of ``?scenario=<name>`` (``fixed``: with its fix)."""
    page = page_of_scenario(scenario)
    assert page is not None  # checked by check_names
    name = Text(page.scenarios[scenario].title)
    return Offer(
        Text("This link starts the scenario %(title)s afresh in this lab, with its fix.",
             title=name) if fixed
        else Text("This link starts the scenario %(title)s afresh in this lab.", title=name),
        N_("Start the scenario"),
        action,
        also,
    )  # fmt: skip
