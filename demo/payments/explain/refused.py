"""The server refused the request and charged nothing: invalid input, a duplicate still in
flight, or the same key with another body."""

from __future__ import annotations

from collections.abc import Sequence

from ...engine.text import N_, Number, Text
from ..charges import BAD_KEY_TITLE
from ..requests import RequestEntry
from ..settings import Settings
from .explanation import Explanation


def invalid(focus: RequestEntry) -> Explanation:
    """Validation refused the request before any lookup: nothing stored, nothing charged."""
    return Explanation(
        "error",
        Text("%(status)s — refused before anything ran", status=focus.status),
        (
            # The detail was translated when the body was built; the log keeps the title
            # untranslated (its msgid), so it is translated here, in the reader's language.
            Text(
                "%(title)s: %(detail)s",
                title=Text(focus.problem) if focus.problem else Text("The request was invalid"),
                detail=focus.problem_detail or Text("see the response body."),
            ),
            # A refused key is itself what to correct: it cannot be "the same key" again.
            N_(
                "Validation runs first and stores nothing: send the request again with a key "
                "the header can carry (1-255 printable ASCII characters, no comma)."
            )
            if focus.problem == BAD_KEY_TITLE
            else N_(
                "Validation runs first and stores nothing, so the same key can be retried "
                "with a corrected request."
            ),
        ),
    )


def in_use(focus: RequestEntry, settings: Settings) -> Explanation:
    """A 409 because the key was in progress: rejected at once, or after waiting too long."""
    if settings.in_flight == "wait":
        return Explanation(
            "conflict",
            Text("%(status)s — gave up waiting for the lock", status=focus.status),
            (
                N_(
                    "Another request with this key held the per-key lock too long, so this one "
                    "stopped waiting and answered 409 with Retry-After, charging nothing. A retry "
                    "after the first finishes gets its replay."
                ),
            ),
        )
    return Explanation(
        "conflict",
        Text("%(status)s — the first request is still in flight", status=focus.status),
        (
            N_(
                "The key was in progress and in-flight duplicates are rejected (Stripe, IETF "
                "draft): 409 with Retry-After, nothing charged."
            ),
            N_(
                "Retry after the first one finishes and you get its replay. With in-flight "
                "set to wait, the duplicate would have waited for the lock instead."
            ),
        ),
    )


def other_body(focus: RequestEntry, entries: Sequence[RequestEntry]) -> Explanation:
    """The key's fingerprint differs: 409 (seed profile) or another refusal (IETF, Stripe)."""
    headline = (
        N_("%(status)s CONFLICT — same key, different request")
        if focus.status == 409
        else N_("%(status)s REFUSED — same key, different request")
    )
    return Explanation(
        "conflict",
        Text(headline, status=focus.status),
        (
            Text(
                "The key %(key)s was first used with another body%(bodies)s, so the "
                "fingerprints differ. The server refused before taking any lock and charged "
                "nothing: one key stands for one intent.",
                key=focus.key,
                bodies=_changed_fields(focus, entries),
            ),
            N_("To pay a different amount, start a New order: a new intent gets a new key."),
        ),
    )


def _changed_fields(focus: RequestEntry, entries: Sequence[RequestEntry]) -> Text | str:
    """`` (amount 1,000 → 2,000)``: the body fields that differ from the key's first use,
    amounts written as the ledger writes them (in the reader's language)."""
    first = next(
        (
            e
            for e in entries
            if e.key == focus.key
            and e.charge
            and e.fingerprint != focus.fingerprint
            and e.outcome in ("charged", "declined", "crashed")
        ),
        None,
    )
    if not (first and first.charge and focus.charge):
        return ""
    was, now = first.charge.as_dict(), focus.charge.as_dict()
    changed = [
        Text(
            "%(field)s %(was)s → %(now)s", field=name, was=_value(was[name]), now=_value(now[name])
        )
        for name in was
        if was[name] != now[name]
    ]
    if not changed:
        return ""
    fields = changed[0]
    for more in changed[1:]:
        fields = Text("%(fields)s, %(more)s", fields=fields, more=more)
    return Text(" (%(fields)s)", fields=fields)


def _value(value: object) -> Number | str:
    # An int amount reads as the ledger's 100,000; strings keep their quotes.
    return Number(value) if isinstance(value, int) else repr(value)
