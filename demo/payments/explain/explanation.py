"""The answer every explanation gives: a tone, a headline and a few sentences."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...engine.text import Text

Tone = Literal["idle", "charged", "replayed", "conflict", "error", "double"]


@dataclass(frozen=True)
class Explanation:
    """A headline and one to three sentences; ``tone`` picks the badge and colour.

    Texts are marked for translation (a literal marked with ``N_``, or a
    :class:`~demo.engine.text.Text` with parameters): the page translates them; ``str()`` of
    each gives the English.
    """

    tone: Tone
    headline: str | Text
    sentences: tuple[str | Text, ...]


def ttl_words(ttl_s: int) -> str:
    """A TTL as its settings give it: ``86400`` → ``"24 h"``, ``90`` → ``"90 s"``."""
    return f"{ttl_s // 3600} h" if ttl_s % 3600 == 0 else f"{ttl_s} s"
