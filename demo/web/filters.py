"""The templates' filters and globals: money, durations, outcome badges, step names and
button names, each in the page's language. :func:`register` installs them on the app."""

from __future__ import annotations

from flask import Flask
from flask_babel import format_decimal

from ..engine.text import N_, Text, translate
from ..payments.preset import PAGE_BUTTONS
from ..payments.requests import RequestEntry
from ..payments.step_names import step_at
from .fix_badges import fix_words


def register(app: Flask) -> None:
    """Install the filters (``money``, ``duration``, ``step_name``, ``action``,
    ``lane_action``) and the globals ``badge``, ``fix_words`` and ``PAGE_BUTTONS`` (the
    order form's labels, which the lesson cards name too) on ``app``'s templates."""
    app.add_template_filter(money, "money")
    app.add_template_filter(duration, "duration")
    app.add_template_filter(step_name_filter, "step_name")
    app.add_template_filter(action, "action")
    app.add_template_filter(lane_action, "lane_action")
    app.add_template_global(badge, "badge")
    app.add_template_global(fix_words, "fix_words")
    app.jinja_env.globals["PAGE_BUTTONS"] = PAGE_BUTTONS


def money(amount: int, currency: str) -> str:
    """``100000, "VND"`` → ``"100,000 VND"`` (amounts are in minor units), with the digit
    grouping of the page's language (``"100.000 VND"`` in Vietnamese)."""
    return f"{format_decimal(amount)} {currency}"


def duration(seconds: float) -> str:
    """``86400`` → ``"24h 00m"``; ``90`` → ``"1m 30s"``; ``31`` → ``"31s"`` (not "0m 31s");
    a negative time is ``"0s"``. A clock under a second ahead (the retry lab's backoffs
    move it) is no offset to speak of: callers show none rather than "+0s"."""
    seconds = max(int(seconds), 0)
    hours, rest = divmod(seconds, 3600)
    if hours:
        return f"{hours}h {rest // 60:02d}m"
    if rest < 60:
        return f"{rest}s"
    return f"{rest // 60}m {rest % 60:02d}s"


def badge(entry: RequestEntry) -> str:
    """The outcome badge's words: CHARGED, REPLAYED, 409 CONFLICT, ERROR, IN FLIGHT, …"""
    if entry.outcome == "conflict":
        word = N_("%(status)s CONFLICT") if entry.status == 409 else N_("%(status)s REFUSED")
        return translate(Text(word, status=entry.status))
    if entry.outcome == "crashed":
        return translate(N_("CRASHED"))
    if not entry.delivered:
        return translate(N_("CHARGED · NO RESPONSE"))
    words: dict[str, str | Text] = {
        "charged": N_("CHARGED"),
        "recovered": N_("RECOVERED"),
        "replayed": N_("REPLAYED"),
        "in_flight": N_("IN FLIGHT"),
        "in_use": Text("%(status)s IN USE", status=entry.status),
        "in_doubt": Text("%(status)s IN DOUBT", status=entry.status),
        "declined": N_("402 DECLINED"),
    }
    return translate(words.get(entry.outcome, N_("ERROR")))


def step_name_filter(name: str, occurrence: int = 1) -> str:
    """A step's code name as a sentence shows it: ``lookup``, or ``lookup (tra cứu)``;
    the second ``lookup`` of a request (``occurrence`` 2) is ``lookup again``, as on the
    timeline."""
    named = step_at(name, occurrence)
    return translate(named) if isinstance(named, Text) else named


ACTIONS = {
    "Pay": N_("Pay"),
    "Retry": N_("Retry"),
    "Double-submit A": N_("Double-submit A"),
    "Double-submit B": N_("Double-submit B"),
    "Change amount": N_("Change amount"),
    "Retry with a new key": N_("Retry with a new key"),
    "Pay (second tab)": N_("Pay (second tab)"),
    "Retry client": N_("Retry client"),
}
"""The page's buttons by their ``data-action`` names (sent as ``X-Lab-Action``)."""


def action(name: str) -> str:
    """A request's action in the page's language; an unknown one (``API``) as sent."""
    return translate(ACTIONS[name]) if name in ACTIONS else name


def lane_action(name: str, label: str) -> str:
    """A request's action beside its step-mode lane ``label``: a Double-submit's A or B
    only where it is that lane's letter (two tabs' Double-submits fill lanes A to D, and
    lane C's request is some tab's "Double-submit A")."""
    if name in ("Double-submit A", "Double-submit B") and not name.endswith(" " + label):
        return translate(N_("Double-submit"))
    return action(name)
