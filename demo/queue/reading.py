"""What the queue lab shows: its state as JSON-ready values (``GET .../queue/api/state``)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Protocol

from ..engine.clock import VirtualClock
from ..engine.stepping import StepMode
from .broker import Message
from .dedup import OutboxRow
from .entries import WorkEntry
from .mailbox import Email
from .runner import World
from .scenarios import Scenario
from .settings import Settings
from .simulator import Simulation


class Shown(Protocol):
    """What :func:`lab_state` reads of the lab (:class:`~.lab.QueueLab`)."""

    world: World
    settings: Settings
    clock: VirtualClock
    stepper: StepMode
    simulation: Simulation | None
    scenario: Scenario | None
    fixed: bool

    def busy_workers(self) -> list[str]: ...
    def entries(self) -> list[WorkEntry]: ...


def lab_state(lab: Shown) -> dict[str, Any]:
    """The lab's state.

    :returns: ``settings``; ``broker`` (``"memory"`` or ``"redis"``); ``now`` (the lab
        clock, s); ``messages`` (``[{"message_id", "job_id", "idempotency_key", "state",
        "receive_count", "visible_at"}]``, state ``ready`` | ``in_flight`` | ``acked`` |
        ``dead``); ``dedup`` (``[{"key", "state"}]``); ``outbox`` (``[{"row_id",
        "idempotency_key", "job_id", "message_id", "sent"}]``); ``emails``
        (``[{"email_id", "idempotency_key", "message_id", "job_id", "via", "outbox_row",
        "sent_at"}]``); ``deliveries`` (the timeline: every producer send and work call,
        see :meth:`~.entries.WorkEntry.as_dict`); ``simulation`` (the last one, or
        ``None``); ``workers`` (``[{"name", "busy"}]``); ``paused`` (step mode's lanes);
        ``scenario`` (``{"name", "fixed", "measure", "expected", "actual"}`` or ``None``);
        ``summary`` (``enqueued`` jobs, ``emails``, ``duplicate_emails`` beyond the first
        per key, ``emails_per_key`` (the most any key got), ``lost`` (acked messages whose
        job has no e-mail, sent or in the outbox), ``dead``, ``duplicate_effects`` of the
        last simulation).
    :raises Problem: 503 ``broker-unavailable`` (the Redis broker cannot be reached).
    """
    world, settings, now = lab.world, lab.settings, lab.clock()
    messages = world.broker.messages(now=now, max_attempts=settings.max_attempts)
    emails, outbox = world.mailbox.emails(), world.db.outbox()
    summary = _summary(messages, emails, outbox, lab.simulation)
    busy = set(lab.busy_workers())
    scenario = None
    if lab.scenario is not None:
        scenario = {
            "name": lab.scenario.name,
            "fixed": lab.fixed,
            "measure": lab.scenario.measure,
            "expected": lab.scenario.expected,
            "actual": summary[lab.scenario.measure],
        }
    return {
        "settings": settings.as_dict(),
        "broker": world.broker.kind,
        "now": now,
        "messages": [m.as_dict() for m in messages],
        "dedup": world.db.dedup_table(),
        "outbox": [r.as_dict() for r in outbox],
        "emails": [e.as_dict() for e in emails],
        "deliveries": [e.as_dict() for e in lab.entries()],
        "simulation": lab.simulation.as_dict() if lab.simulation else None,
        "workers": [
            {"name": f"worker-{n}", "busy": f"worker-{n}" in busy}
            for n in range(1, settings.workers + 1)
        ],
        "paused": lab.stepper.paused(),
        "scenario": scenario,
        "summary": summary,
    }


def _summary(
    messages: list[Message],
    emails: list[Email],
    outbox: list[OutboxRow],
    simulation: Simulation | None,
) -> dict[str, int]:
    per_key = Counter(e.idempotency_key for e in emails)
    done = set(per_key) | {r.idempotency_key for r in outbox}
    lost = {m.job.idempotency_key for m in messages if m.state == "acked"} - done
    return {
        "enqueued": len(messages),
        "emails": len(emails),
        "duplicate_emails": sum(n - 1 for n in per_key.values()),
        "emails_per_key": max(per_key.values(), default=0),
        "lost": len(lost),
        "dead": sum(1 for m in messages if m.state == "dead"),
        "duplicate_effects": simulation.duplicate_effects if simulation else 0,
    }
