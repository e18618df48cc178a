"""The words each step of a request shows on the timeline: ``lookup: miss``,
``gateway charge, 12 ms``, ``✕ instance crashed after reserve``, …

A step point's words begin with its one name (:func:`~demo.payments.step_names.step_at`),
the name the step panel, the code view and the hints give it: ``lookup again: miss``."""

from __future__ import annotations

from typing import Any

from ...engine.text import N_, Number, Text
from ...payments.step_names import step_at, step_name

PLAIN = {
    "no key": N_("unprotected"),
    "lock wait": None,
    "reserve": N_("in progress"),
    "charging": N_("calling the gateway"),
    "record save": N_("completed, response stored"),
    "release": N_("key released"),
    "reclaim": N_("in progress, nobody holds the lock"),
    "gateway timeout": N_("it charged, but its answer timed out"),
    "in doubt": N_("key kept, it may have charged"),
}
"""What a step that needs none of its details says after its name (``None``: its name
alone). A step in neither this table nor :func:`_what` has no words and is not drawn."""


def step_text(name: str, detail: dict[str, Any] | Any, deduplicated: bool = False) -> str | Text:
    """The words step ``name`` (with its trace ``detail``) shows on the timeline; empty for
    steps not worth a label. ``deduplicated``: the gateway saw the request's charge before
    (so its charge moved no new money)."""
    whole = _sentence(name, detail, deduplicated)
    if whole is not None:
        return whole
    what = _what(name, detail)
    if what == "":
        return ""  # a step with no words: not drawn
    label = step_at(name)
    if what is None:
        return label
    what = what if isinstance(what, Text) else Text(what)  # translated inside the sentence
    return Text("%(step)s: %(what)s", step=label, what=what)


def _sentence(name: str, detail: dict[str, Any] | Any, deduplicated: bool) -> str | Text | None:
    """The steps whose words are a sentence of their own; ``None`` for the others."""
    if name == "validate":
        return "" if detail.get("ok") else N_("invalid")
    if name == "gateway charge":
        ms = Number(float(detail.get("ms", 0)))
        if deduplicated:
            return Text("gateway charge: no new money, %(ms)s ms", ms=ms)
        return Text("gateway charge, %(ms)s ms", ms=ms)
    if name == "gateway replay":
        return Text(
            "gateway returned %(charge)s again: no new money", charge=detail.get("charge_id")
        )
    if name == "crash":
        return Text("✕ instance crashed after %(step)s", step=step_name(detail.get("after", "?")))
    if name == "step timeout":
        return N_("left paused 120 s: ran on by itself")
    if name == "lookup":
        state = {
            "in_progress": N_("in progress"),
            "completed": N_("completed"),
            "in_doubt": N_("in doubt"),
        }.get(str(detail.get("state")), N_("found"))
        what = Text("hit (%(state)s)", state=Text(state)) if detail.get("hit") else Text("miss")
        return Text("%(step)s: %(what)s", step=step_at(name, 2 if detail.get("again") else 1),
                    what=what)  # fmt: skip
    return None


def lock_waited(detail: dict[str, Any] | Any) -> Text | None:
    """How long a ``lock acquire`` waited for the lock, from its ``waited_ms`` (ms): "got
    it after waiting 5366 ms"; ``None`` under 1 ms (no wait)."""
    waited = float(detail.get("waited_ms", 0))
    return Text("got it after waiting %(ms)s ms", ms=Number(waited)) if waited >= 1 else None


def _what(name: str, detail: dict[str, Any] | Any) -> str | Text | None:
    """What the other steps say after their name: from their details, else :data:`PLAIN`
    (``""`` for a step with no words)."""
    if name == "fingerprint check":
        return N_("same") if detail.get("match") else N_("DIFFERENT")
    if name == "lock acquire":
        return lock_waited(detail) or N_("no wait")
    if name == "email send":
        email = str(detail.get("email", "?"))
        if detail.get("via") == "outbox":
            return Text("receipt e-mail %(email)s sent from the outbox", email=email)
        return Text("receipt e-mail %(email)s sent", email=email)
    if name == "outbox enqueue":
        return Text(
            "receipt for %(charge)s written with the record", charge=detail.get("charge_id")
        )
    return PLAIN.get(name, "")
