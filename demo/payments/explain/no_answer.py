"""The client got no answer: the instance crashed mid-request, or the response was lost."""

from __future__ import annotations

from collections.abc import Collection

from ...engine.text import N_, Text
from ..requests import RequestEntry
from ..step_names import step_name
from .explanation import Explanation

LEASE = N_(
    "A free lock proves the holder dead only inside one process. Across instances a real "
    "system waits for the record's deadline (a lease, 30 s here) before reclaiming it, and "
    "keeps the reservation in the shared store."
)
"""How a real system tells a dead holder from a slow one (README: "A dead holder or a
slow one?")."""


EMAIL_IN_CHARGE = N_(
    "The receipt e-mail is sent inside the charge step: it went out before the crash."
)
"""Said when the crashed request sent its e-mail inline: on the timeline the e-mail comes
before a crash "after the gateway charge", which read as a contradiction."""


def crashed(focus: RequestEntry, doubled: Collection[str] = ()) -> Explanation:
    """The instance died at a step boundary; the crash step's ``after`` names which.
    ``doubled``: the orders charged more than once (a retry that took over a crashed key
    and charged again before crashing too is a double charge, said first)."""
    after = focus.step("crash")
    step = after.detail.get("after", "?") if after else "?"
    order = focus.charge.order_id if focus.charge else None
    if order in doubled and focus.step("reclaim") is not None:
        return Explanation(
            "double",
            Text("DOUBLE CHARGE — order %(order)s, and the instance crashed again", order=order),
            (
                Text(
                    "#%(id)s took over the key an earlier crash had left in progress and "
                    "charged again before its instance died too: order %(order)s is charged "
                    "twice.",
                    id=focus.id,
                    order=order,
                ),
                N_(
                    "The fix: pass the idempotency key on to the gateway (Crash recovery: "
                    "key to gateway)."
                ),
            ),
        )
    died = (
        N_(
            "The instance serving #%(id)s died after the gateway charged (at the step "
            "boundary after '%(step)s'). The client saw the connection drop: it cannot tell "
            "whether it paid."
        )
        if step in ("gateway charge", "record save")
        else N_(
            "The instance serving #%(id)s died (at the step boundary after '%(step)s'). The "
            "client saw the connection drop: it cannot tell whether it paid."
        )
    )
    # Sent inline, the e-mail is part of the charge step: on the timeline it comes before
    # a crash "after the gateway charge", which read as a contradiction.
    emailed = (EMAIL_IN_CHARGE,) if focus.step("email send") is not None else ()
    return Explanation(
        "error",
        N_("CRASHED — the instance died mid-request"),
        (
            Text(died, id=focus.id, step=step_name(step)),
            *emailed,
            N_(
                "Press Retry (it sends the same key) and watch what the store and the gateway "
                "make of it."
            ),
        ),
    )


def lost_response(focus: RequestEntry) -> Explanation:
    """The server charged and saved the record; the response never reached the client."""
    return Explanation(
        "error",
        N_("NO RESPONSE — did it charge?"),
        (
            Text(
                "The server charged (%(charge)s) and saved the record, but the response "
                "never reached the client.",
                charge=focus.charge_id,
            ),
            N_(
                "What a retry gets depends on its key: Retry with a new key is a new intent, "
                "and charges again; Retry, with the same key, gets the stored response "
                "replayed."
            ),
        ),
    )
