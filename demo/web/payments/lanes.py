"""Step mode's lanes, computed from the lab's real state: the paused requests, what each
found at the step it stopped after (a miss, whose record, a lock held, the status it is
about to send), the lanes that ended this round, and the handler's lines with who stands
where (the code view)."""

from __future__ import annotations

from typing import Any

from ...engine.text import N_, Text
from ...payments.requests import RequestEntry
from ...workspace import Workspace
from .code import handler_lines, where
from .step_text import lock_waited


def step_context(lab: Workspace) -> dict[str, Any]:
    """Step mode: the paused requests, and the handler's lines with who stands where."""
    paused = lab.payments.stepper.paused()
    entries = {e.id: e for e in lab.payments.requests()}
    ended = lab.payments.stepper.finished()
    # A finished lane keeps its letter in the others' words ("hit: A's record"), as on screen.
    still = {p["request"]: p["label"] for p in paused}
    labels = {f["request"]: f["label"] for f in ended} | still
    at: dict[str, list[str]] = {}
    for p in paused:
        p["found"] = _found(p, entries, labels) or _matched(p, entries) or _waited(p, entries)
        # Stopped after "lock wait" with another lane holding the key's lock: it has not
        # blocked yet, its next step does (the stepper says blocked_by only once it does).
        p["lock_holder"] = next(
            (
                q["label"]
                for q in paused
                if q is not p
                and q["idempotency_key"] == p["idempotency_key"]
                and (e := entries.get(q["request"])) is not None
                and e.step("lock acquire") is not None
            ),
            None,
        )
        # Free, but another lane of the same key stands at it too: only one of them takes it.
        p["lock_rivals"] = ", ".join(
            q["label"]
            for q in paused
            if q is not p
            and q["idempotency_key"] == p["idempotency_key"]
            and q["step"] == "lock wait"
            and q.get("waiting")
        )
        # Stopped after its gateway call: a new charge, or the gateway's replay of the first.
        entry = entries.get(p["request"])
        p["replayed"] = entry is not None and entry.step("gateway replay") is not None
        # Stopped after respond: the status it is about to send, and what a 2xx carries.
        responded = entry.step("respond") if entry is not None else None
        p["status"] = status = responded.detail.get("status") if responded is not None else None
        charged = entry is not None and entry.step("gateway charge") is not None
        ok = isinstance(status, int) and status < 300
        p["answer"] = ("charge" if charged and not p["replayed"] else "replay") if ok else None
        point = "lock#blocked" if p["blocked_by"] else where(p["step"], p["occurrence"])
        at.setdefault(point, []).append(p["label"])
    # A lane whose request ended stays listed with its answer (A finished: CHARGED ch_0001)
    # until the next round, so the room sees how it ended, not a lane that vanished.
    finished = [
        {**f, "entry": entries[f["request"]]}
        for f in ended
        if f["request"] in entries and f["request"] not in still
    ]
    return {
        "paused": paused,
        "finished": finished,
        "code_lines": handler_lines(),
        "at": at,
        "fix_running": _fix_running(paused, entries),
    }


def _fix_running(paused: list[dict[str, Any]], entries: dict[int, RequestEntry]) -> bool:
    """Whether the ``paused`` requests are the fix's own run, set by hand (lesson 5): all
    sent with the Lock on, for an order no Lock-off request charged (run AB). Sent with
    the Lock off, the Lock ticked since, they must finish before New order (run Z)."""
    held = [entries[p["request"]] for p in paused if p["request"] in entries]
    lock_off = {e.charge.order_id for e in entries.values() if not e.lock and e.charge}
    return bool(held) and all(
        e.lock and not (e.charge and e.charge.order_id in lock_off) for e in held
    )


def _waited(pause: dict[str, Any], entries: dict[int, RequestEntry]) -> str | Text | None:
    """A lane stopped after ``lock acquire``: how long (ms) it waited for the lock, from
    the step's ``waited_ms``, else that it holds the lock now (a lane stopped there had no
    word of it); ``None`` anywhere else."""
    entry = entries.get(pause["request"])
    acquired = entry.step("lock acquire") if entry is not None else None
    if not pause["waiting"] or pause["step"] != "lock acquire" or acquired is None:
        return None
    # Short: a third line under the lane moved the Step buttons below it.
    return lock_waited(acquired.detail) or N_("it holds the key's lock")


def _matched(pause: dict[str, Any], entries: dict[int, RequestEntry]) -> str | None:
    """What a lane stopped after its fingerprint check found, and so what comes next: a
    replay (same body), or a refusal (another body: 422 in the IETF draft, 400 at Stripe,
    409 in this lab's own profile). It had said only "stopped after fingerprint check".
    ``None`` for a lane anywhere else."""
    entry = entries.get(pause["request"])
    if not pause["waiting"] or pause["step"] != "fingerprint check" or entry is None:
        return None
    check = entry.step("fingerprint check")
    if check is None:
        return None
    if check.detail.get("match"):
        return N_("same body: it replays next")
    return N_("another body: refused next, not charged")


_STATES = {
    "in_progress": N_("in progress"),
    "completed": N_("completed"),
    "in_doubt": N_("in doubt"),
}


def _found(
    pause: dict[str, Any], entries: dict[int, RequestEntry], labels: dict[int, str]
) -> Text | None:
    """What a lane stopped after a lookup found, from that lookup's own trace detail
    (``hit=``, ``state=``): ``miss: no record for this key yet``, or ``hit: A's record
    (in progress)``, naming whose record (the other request with the key that reserved or
    saved it: its lane, else ``#id``). ``None`` for a lane anywhere else."""
    entry = entries.get(pause["request"])
    if not pause["waiting"] or pause["step"] != "lookup" or entry is None:
        return None
    lookups = [s for s in entry.steps if s.name == "lookup"]
    if not lookups:
        return None
    detail = lookups[-1].detail  # it stopped right after its latest lookup
    if not detail.get("hit"):
        return Text("miss: no record for this key yet")
    state = Text(_STATES.get(str(detail.get("state")), N_("found")))
    owner = next(
        (
            e
            for e in reversed(entries.values())
            if e.id != entry.id
            and e.key == entry.key
            and any(s.name in ("reserve", "record save", "in doubt") for s in e.steps)
        ),
        None,
    )
    if owner is None:
        return Text("hit (%(state)s)", state=state)
    who = labels.get(owner.id, f"#{owner.id}")
    return Text("hit: %(owner)s's record (%(state)s)", owner=who, state=state)
