"""How a step's code name reads inside a sentence: ``lookup`` in English, ``lookup (tra
cứu)`` in Vietnamese, so a learner sees both the name in the handler's code and the words
the timeline uses for it (the glossary keeps code names in English and glosses them)."""

from __future__ import annotations

from ..engine.text import N_, Text

_NAMED: dict[str, str] = {
    "validate": N_("validate"),
    "lookup": N_("lookup"),
    "lookup again": N_("lookup again"),
    "fingerprint check": N_("fingerprint check"),
    "lock wait": N_("lock wait"),
    "lock acquire": N_("lock acquire"),
    "reclaim": N_("reclaim"),
    "reserve": N_("reserve"),
    "charging": N_("charging"),
    "gateway replay": N_("gateway replay"),
    "gateway charge": N_("gateway charge"),
    "release": N_("release"),
    "outbox enqueue": N_("outbox enqueue"),
    "email send": N_("email send"),
    "record save": N_("record save"),
    "respond": N_("respond"),
}
"""The steps a sentence can name (where step mode pauses, or where a crash strikes); each
msgid is the code name itself, its translation the code name with a gloss."""


def step_name(name: str) -> str | Text:
    """``"lookup"`` → a :class:`Text` that reads ``lookup`` in English and ``lookup (tra
    cứu)`` in Vietnamese; a step with no gloss (or an unknown one) stays as it is."""
    msgid = _NAMED.get(name)
    return Text(msgid) if msgid is not None else name


def step_at(name: str, occurrence: int = 1) -> str | Text:
    """The one name a step point goes by on the timeline, the step panel and in hints:
    the second ``lookup`` (under the lock) is ``lookup again`` everywhere."""
    return step_name("lookup again" if name == "lookup" and occurrence >= 2 else name)
