"""Languages: English and Vietnamese, through Flask-Babel and gettext catalogues.

The language of a request is the lab's own choice (the switch on the page, kept in the
lab), else the best match of ``Accept-Language``, else English. The catalogues live in
``demo/translations/<lang>/LC_MESSAGES/messages.po`` (compiled to ``.mo``); see the README
for the commands that extract and compile them.
"""

from __future__ import annotations

import gettext as stdlib_gettext
from pathlib import Path
from typing import Any

from flask import Flask, current_app, g, has_request_context, request
from flask_babel import Babel, Domain, format_decimal, get_locale
from flask_babel import gettext as babel_gettext

from ..engine.text import Text, set_translator, translate
from . import current_lab

LANGUAGES = {"en": "English", "vi": "Tiếng Việt"}
"""The languages the lab speaks: code → its own name."""

TRANSLATIONS = Path(__file__).resolve().parent.parent / "translations"

MISSING = "⟦missing⟧"
"""What a string without a translation shows when ``I18N_MARK_MISSING`` is on (tests)."""


class _MarkMissing(stdlib_gettext.NullTranslations):
    def gettext(self, message: str) -> str:
        return MISSING + message

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        return MISSING + (msgid1 if n == 1 else msgid2)


class _Domain(Domain):  # type: ignore[misc]
    """Flask-Babel's domain; in tests, a msgid without a translation shows :data:`MISSING`."""

    def get_translations(self) -> Any:
        if not has_request_context():
            return super().get_translations()
        # A panel render looks up some hundred strings: find the catalogue once a request.
        cached = g.get("_translations")
        if cached is None:
            cached = super().get_translations()
            if (
                current_app.config.get("I18N_MARK_MISSING")
                and str(get_locale()) != "en"
                and not getattr(cached, "_marked", False)
            ):
                cached.add_fallback(_MarkMissing())
                cached._marked = True
            g._translations = cached
        return cached


def language() -> str:
    """The request's language code: the lab's choice, ``Accept-Language``, or ``"en"``."""
    lab = current_lab()
    if lab is not None and lab.language in LANGUAGES:
        return str(lab.language)
    return request.accept_languages.best_match(list(LANGUAGES)) or "en"


def _lookup(message: str) -> str:
    return str(babel_gettext(message)) if has_request_context() else message


def number(value: float, places: int | None = None) -> str:
    """``value`` with the digit grouping and decimal mark of the request's language
    ("14,094" / "14.094", "4.9" / "4,9"): ``places`` decimals, or as many as it has.
    Outside a request, in English. The templates' ``num`` filter and the core's
    :class:`~demo.engine.text.Number` both write through it."""
    if not has_request_context():
        return f"{value:,.{places}f}" if places is not None else f"{value:,}"
    if places is None:
        return str(format_decimal(value))
    return str(
        format_decimal(
            round(value, places), format="#,##0" + "." + "0" * places if places else "#,##0"
        )
    )


def t(message: str | Text | None) -> str:
    """Jinja filter ``|t``: a marked literal or a :class:`~demo.engine.text.Text`, translated."""
    return "" if message is None else translate(message)


def init(app: Flask) -> None:
    """Install Flask-Babel on ``app``, the ``|t`` filter and the core's translator."""
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(TRANSLATIONS))
    babel = Babel()
    babel.domain_instance = _Domain(translation_directories=[str(TRANSLATIONS)])
    babel.init_app(app, locale_selector=language)
    app.jinja_env.filters["t"] = t
    app.jinja_env.filters["num"] = number
    app.jinja_env.globals["LANGUAGES"] = LANGUAGES
    app.jinja_env.globals["current_language"] = lambda: str(get_locale())
    set_translator(_lookup, number)
