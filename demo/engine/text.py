"""Words the lab shows, marked for translation without importing a web framework.

The core and the teaching content mark their English text with :func:`N_` (gettext's
"no-op" marker: the extractor finds it, nothing is translated yet) or wrap it in
:class:`Text` when it has ``%(name)s`` parameters. The web layer translates at render
time, into the language of the request (:func:`translate`), so one stored response or
one lesson serves every language.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Translator = Callable[[str], str]
"""Looks up one msgid and returns its translation (or the msgid itself)."""


def N_(message: str) -> str:
    """Mark ``message`` for translation; return it unchanged (gettext_noop)."""
    return message


@dataclass(frozen=True)
class Text:
    """A message with parameters: ``Text("Fix %(what)s.", what="the key")``.

    ``str()`` gives the English text; :func:`translate` gives the request's language.
    Parameters that are themselves :class:`Text` are translated too.
    """

    msgid: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self, msgid: str, /, **params: Any) -> None:
        object.__setattr__(self, "msgid", msgid)
        object.__setattr__(self, "params", params)

    def __str__(self) -> str:
        return translate(self, lambda s: s)


@dataclass(frozen=True)
class Number:
    """A number inside a :class:`Text`, written in the reader's language: ``Number(14094)``
    reads "14,094" in English and "14.094" in Vietnamese; ``places`` decimals
    (``Number(4.93, 1)``: "4.9", "4,9")."""

    value: float
    places: int = 0

    def __str__(self) -> str:
        return _english(self.value, self.places)


def _english(value: float, places: int) -> str:
    return f"{value:,.{places}f}"


NumberFormat = Callable[[float, int], str]
"""Writes a number with ``places`` decimals in the current language."""


@dataclass(frozen=True)
class Reasons:
    """Field errors for a sentence: ``{"amount": N_("must be …")}`` reads, translated,
    as "amount must be …, currency must be …". The field names stay as the API spells them.
    """

    errors: Mapping[str, str | Text]

    def english(self) -> dict[str, str]:
        """The errors in English, for the machine-readable ``errors`` member."""
        return {name: str(why) for name, why in self.errors.items()}


_default: list[Translator] = [lambda s: s]
_numbers: list[NumberFormat] = [_english]


def set_translator(translator: Translator, numbers: NumberFormat | None = None) -> None:
    """Install the lookup :func:`translate` uses (the web layer's: the request's language),
    and how it writes a :class:`Number` (its digit grouping and decimal mark)."""
    _default[0] = translator
    _numbers[0] = numbers or _english


def translate(message: str | Text, translator: Translator | None = None) -> str:
    """``message`` in the current language: a marked literal or a :class:`Text`; with an
    explicit ``translator``, numbers are written as that translator's callers expect:
    in English."""
    lookup = translator or _default[0]
    numbers = _numbers[0] if translator is None else _english
    if isinstance(message, Text):
        params = {name: _param(value, lookup, numbers) for name, value in message.params.items()}
        return lookup(message.msgid) % params if params else lookup(message.msgid)
    return lookup(message)


def _param(value: Any, lookup: Translator, numbers: NumberFormat) -> Any:
    if isinstance(value, Number):
        return numbers(value.value, value.places)
    if isinstance(value, Text):
        # As the outer one: the current language's lookup and numbers, or the given lookup's.
        return translate(value, None if lookup is _default[0] else lookup)
    if isinstance(value, Reasons):
        return ", ".join(
            f"{name} {translate(why if isinstance(why, Text) else Text(why), lookup)}"
            for name, why in value.errors.items()
        )
    return value


def shown(text: str, limit: int = 300) -> str:
    """``text`` as the page shows it and a history keeps it: each character that is not
    printable (a control character, a tab, DEL, a lone surrogate) written as its escape
    (``\\x7f``), then cut to ``limit`` characters (the last one ``…``).

    Recorded this way, every text of the request log is printable, so the lab's own
    history re-imports and re-exports unchanged: ``shown(shown(t)) == shown(t)``.
    """
    if not text.isprintable():
        text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
