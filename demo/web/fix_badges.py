"""The fix badge of the operations, retry and queue labs' cards: what is off, then on, in
a few words, as the payment lab's presets say it ("fix OFF: Lock off", "fix ON: Lock on").
A bare "fix OFF" left the attendee to read the fix's sentence to know what it was."""

from __future__ import annotations

from ..engine.text import N_

FIX_BADGES: dict[str, tuple[str, str]] = {
    # Operations
    "set-vs-add": (N_("fix OFF: no dedup"), N_("fix ON: dedup")),
    "which-are-natural": (N_("fix OFF: no dedup"), N_("fix ON: dedup")),
    "lost-update": (N_("fix OFF: unconditional writes"), N_("fix ON: If-Match")),
    "tracking-pixel": (N_("fix OFF: every GET counts"), N_("fix ON: a dedup window")),
    # Retries
    "retry-policy": (N_("fix OFF: retries a 400"), N_("fix ON: a 400 not retried")),
    "lost-response-retry": (N_("fix OFF: a new key per attempt"), N_("fix ON: the same key")),
    "retry-after": (N_("fix OFF: Retry-After ignored"), N_("fix ON: Retry-After respected")),
    "jitter": (N_("fix OFF: no jitter"), N_("fix ON: full jitter")),
    "retry-budget": (N_("fix OFF: no retry budget"), N_("fix ON: a retry budget")),
    # Queue
    "redelivery": (N_("fix OFF: no dedup"), N_("fix ON: dedup")),
    "duplicate-job": (N_("fix OFF: no dedup"), N_("fix ON: dedup")),
    "at-most-once": (N_("fix OFF: at-most-once"), N_("fix ON: at-least-once + dedup")),
    "outbox": (N_("fix OFF: e-mail sent inline"), N_("fix ON: an outbox")),
    # The simulator's Mode is the fix, not the queue's Dedup switch (run AD ticked that).
    "delivery-semantics": (
        N_("fix OFF: the simulator's Mode, at-least-once"),
        N_("fix ON: an idempotent consumer"),
    ),
    "poison-message": (N_("fix OFF: 10 attempts"), N_("fix ON: 3 attempts")),
}


def fix_words(scenario: str) -> tuple[str, str]:
    """The badge's two texts for ``scenario`` (untranslated), fix off then on: what
    ``templates/_partials/fix_state.html`` shows as the lab's settings hold it."""
    return fix_badge(scenario, False), fix_badge(scenario, True)


def fix_badge(scenario: str, fixed: bool) -> str:
    """The badge's words (untranslated: ``|t`` them) for ``scenario`` with its fix applied
    or not; a bare "fix ON" / "fix OFF" for a scenario without its own."""
    badges = FIX_BADGES.get(scenario)
    if badges is None:
        return N_("fix ON") if fixed else N_("fix OFF")
    return badges[1 if fixed else 0]
