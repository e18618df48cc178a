"""One work call, from its start to its end: the worker (:func:`~.worker.consume`), then
the outbox relay, each step traced on the shared timeline, paused in step mode, and
crashed where a crash is armed."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol

from ..engine.clock import VirtualClock
from ..engine.stepping import Pause, StepMode
from ..engine.timeline import Timeline, Trace
from .broker import Broker
from .dedup import ConsumerDb
from .entries import CRASH_STEPS, WorkEntry
from .mailbox import Mailbox
from .outbox import Relay
from .settings import Settings
from .worker import UnprocessableJob, Worker, consume

_POINT_AT = {step: point for point, step in CRASH_STEPS.items()}
_CONSUME = consume.__code__


class WorkerCrash(BaseException):
    """The worker process died at a step boundary (an armed crash). A ``BaseException``,
    like ``SystemExit``: no ``except Exception`` clean-up runs, as none would."""

    def __init__(self, step: str) -> None:
        super().__init__(step)
        self.step = step


@dataclass(frozen=True)
class World:
    """What a work call writes to, taken when it starts: a reset replaces these, so a
    call still running then finishes in the old world."""

    broker: Broker
    db: ConsumerDb
    mailbox: Mailbox
    relay: Relay


class Host(Protocol):
    """What a work call needs of its lab (:class:`~.lab.QueueLab`)."""

    clock: VirtualClock
    timeline: Timeline[WorkEntry]
    stepper: StepMode

    def claim_crash(self, point: str, world: World) -> bool: ...
    def touch(self) -> None: ...


def run_work(host: Host, world: World, worker: str, settings: Settings) -> WorkEntry:
    """Run one work call as ``worker`` under ``settings``; returns its finished entry.

    A crash or a failing handler is an outcome (``crashed``, or ``lost`` when the message
    was acked on receive), never an exception; the relay runs after the worker whatever
    happened to it.
    """
    entry = WorkEntry(
        id=host.timeline.next_id(),
        action="work",
        started=time.perf_counter(),
        at=host.clock(),
        worker=worker,
        settings=settings.as_dict(),
    )
    host.timeline.append(entry)
    host.touch()
    pause = host.stepper.pause_for(entry) if settings.step_mode else None
    trace = _tracer(host, entry, world, pause)
    lost_if_failed = settings.delivery == "at_most_once"
    try:
        done = consume(
            Worker(worker, settings, world.broker, world.db, world.mailbox, host.clock), trace
        )
        entry.outcome = done.outcome
        entry.dead_lettered = list(done.dead_lettered)
        entry.repeats = _repeats(host.timeline.entries(), entry)
        if done.outcome == "idle":  # what may still come back, for "what just happened"
            kept = world.broker.messages(now=host.clock(), max_attempts=settings.max_attempts)
            entry.in_flight = sum(1 for message in kept if message.state == "in_flight")
    except WorkerCrash as crash:
        entry.mark("crash", after=crash.step)
        entry.crashed_at = _POINT_AT[crash.step]
        # Acked on receive and died before the side effect: the job is gone for good.
        gone = lost_if_failed and entry.step("side effect") is None
        entry.outcome = "lost" if gone else "crashed"
    except UnprocessableJob as failed:
        entry.error = str(failed)
        entry.mark("handler error", error=entry.error)
        entry.outcome = "lost" if lost_if_failed else "crashed"
    try:
        world.relay.run(provider_dedup=settings.provider_dedup, trace=trace)
    except WorkerCrash as crash:
        entry.mark("crash", after=crash.step)
        entry.relay_crashed = True
    finally:
        if pause is not None:
            host.stepper.end(pause)
    entry.finished = time.perf_counter()
    host.touch()
    return entry


def _repeats(entries: list[WorkEntry], entry: WorkEntry) -> bool:
    """Whether ``entry`` redelivers a message whose side effect an earlier delivery ran:
    one that crashed right after receive sent nothing. Earlier deliveries no longer on
    the timeline count as having run it (the timeline keeps the latest calls only)."""
    if (entry.receive_count or 0) < 2:
        return False
    earlier = [
        e
        for e in entries
        if e.id < entry.id and e.action == "work" and e.message_id == entry.message_id
    ]
    return len(earlier) < (entry.receive_count or 0) - 1 or any(
        e.step("side effect") is not None for e in earlier
    )


def _tracer(host: Host, entry: WorkEntry, world: World, pause: Pause | None) -> Trace:
    def trace(step: str, /, **detail: Any) -> None:
        # The code view marks the lines of consume() that really ran, not every line of a
        # step's name: the trace call's own line, or the consume() line that called the
        # helper (skip_duplicate) that traced.
        caller: FrameType | None = sys._getframe(1)
        for _ in range(3):
            if caller is None or caller.f_code is _CONSUME:
                break
            caller = caller.f_back
        if caller is not None and caller.f_code is _CONSUME:
            entry.trace_lines.append(caller.f_lineno)
        if step == "receive":
            entry.message_id = detail.get("message_id")
            entry.job_id = detail.get("job_id")
            entry.key = detail.get("key")
            entry.receive_count = detail.get("receive_count")
        if step == "side effect" and "email" in detail:
            entry.emails.append(detail["email"])
        if step == "relay send" and not detail.get("dropped"):
            entry.emails.append(detail["email"])
        entry.mark(step, **detail)
        host.touch()
        point = _POINT_AT.get(step)
        if point is not None and host.claim_crash(point, world):
            raise WorkerCrash(step)
        if pause is not None:
            host.stepper.park(pause, step)

    return trace
