"""One attendee's workspace (the ``<id>`` of ``/lab/<id>``): their labs, the clock the labs
share, the view (language, presenter mode), and their progress on the lessons path.

Arrows point down: the workspace composes labs and reads them for the lessons; a lab
never knows the workspace (it calls back through ``touch`` and ``finished``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from .engine.changes import Changes, weakly
from .engine.clock import Clock, VirtualClock
from .engine.lab import Lab
from .engine.problems import Problem
from .engine.stepping import MAX_PAUSED_PER_LAB
from .engine.text import N_, Text
from .lessons import EVIDENCE, LESSONS, Lesson, Progress, observe
from .natural.lab import NaturalLab
from .payments.gateway import Charge
from .payments.lab import PaymentsLab
from .payments.requests import Email, RequestEntry
from .payments.scenarios import Scenario
from .payments.settings import Settings
from .queue.broker import Broker
from .queue.lab import QueueLab
from .retries.lab import RetriesLab


class Workspace:
    """One attendee's labs, clock, view and lesson progress.

    :param workspace_id: 1-64 characters of ``[A-Za-z0-9_-]``.
    :param settings: the payment lab's settings (defaults if ``None``).
    :param clock: seconds, for record expiry and charge times (``time.time`` by default);
        :meth:`advance` moves the workspace's virtual clock on top of it.
    :param max_log: each lab's request log is a ring buffer of this many requests.
    :param max_records: records per idempotency store.
    :param max_ledger: charges and e-mails kept.
    :param max_paused: requests in step mode at once in a lab; one more gets 429.
    :param paused_slots: the budget of requests in step mode shared by every lab of the
        process (one slot per request, taken without waiting); ``None``: no shared budget.
    :param queue_broker: builds the queue lab's empty broker (at start and on each reset):
        Redis Streams under ``--redis``; ``None``: in memory.
    """

    def __init__(
        self,
        workspace_id: str,
        *,
        settings: Settings | None = None,
        clock: Clock = time.time,
        max_log: int = 200,
        max_records: int = 1000,
        max_ledger: int = 500,
        max_paused: int = MAX_PAUSED_PER_LAB,
        paused_slots: threading.BoundedSemaphore | None = None,
        queue_broker: Callable[[], Broker] | None = None,
    ) -> None:
        self.id = workspace_id
        self.clock = VirtualClock(clock)
        self.changes = Changes()
        self._guard = threading.RLock()
        # Each lab gets the shared clock, and calls back: touch (pages catch up) and
        # finished (the open lesson's checks run), weakly, so a dropped workspace is freed
        # at once (no cycle).
        shared: dict[str, Any] = {
            "clock": self.clock,
            "touch": self.changes.touch,
            "finished": weakly(self._observe),
        }
        stepping: dict[str, Any] = {"max_paused": max_paused, "paused_slots": paused_slots}
        self.payments = PaymentsLab(
            settings=settings,
            max_log=max_log,
            max_records=max_records,
            max_ledger=max_ledger,
            **stepping,
            **shared,
        )
        self.natural = NaturalLab(max_log=max_log, **shared)
        self.retries = RetriesLab(**shared)
        self.queue = QueueLab(make_broker=queue_broker, max_log=max_log, **stepping, **shared)
        self.labs: dict[str, Lab] = {
            lab.name: lab for lab in (self.payments, self.natural, self.retries, self.queue)
        }
        """Every lab of the workspace by name, in the order the lab switcher shows them."""
        self.lesson: Lesson | None = None
        """The lesson open on the path, if any; its checks run after every request."""
        self.progress: dict[str, Progress] = {}
        """Progress per lesson name: kept across resets, until that lesson is reset."""
        self.present = False
        """Presenter mode: large type, high contrast, secondary panels collapsed."""
        self.read_only = False
        """A replay of an exported history: it shows, it never runs requests."""
        self.language: str | None = None
        """The page's language (``"en"``, ``"vi"``), once chosen with the switch."""

    @property
    def version(self) -> int:
        """Bumped on every change, so every open page can catch up."""
        return self.changes.version

    def touch(self) -> None:
        """Something changed: open pages catch up."""
        self.changes.touch()

    # -- the clock and the view -------------------------------------------------------------

    def now(self) -> float:
        """The workspace's clock, in seconds: the real clock plus what :meth:`advance` added."""
        return self.clock()

    def advance(self, seconds: object) -> float:
        """Move the virtual clock forward (to show TTL expiry); returns the offset in s.

        :raises Problem: 422 unless 1 <= ``seconds`` <= 30 days.
        """
        offset = self.clock.advance(seconds)
        self.touch()
        return offset

    def clock_offset_s(self) -> float:
        """How far :meth:`advance` has moved the clock, in seconds."""
        return self.clock.offset_s

    def set_view(self, *, present: bool | None = None, language: str | None = None) -> None:
        """Switch presenter mode or the page's language; every open tab follows."""
        with self._guard:
            if present is not None:
                self.present = present
            if language is not None:
                self.language = language
        self.touch()

    # -- scenarios and resets ---------------------------------------------------------------

    def apply_scenario(self, name: str, *, fixed: bool = False, lab: str = "payments") -> Any:
        """Start lab ``lab``'s scenario ``name`` afresh (with its fix if ``fixed``), the
        clock back to now; a lesson on another scenario closes. A retry-lab scenario leaves
        the payment lab's scenario for free play, and turns its step mode off (its paused
        requests go on). Returns the scenario.

        :raises Problem: 404 for an unknown lab or scenario name.
        """
        scenario = self._lab_named(lab).apply_scenario(name, fixed=fixed)
        # The retry lab's client calls the payment lab: its charges land in that ledger,
        # where a payment scenario's card counted them as its own (run Q: "1 extra: the
        # failure you caused" on lesson 3); and left in step mode (lesson 5), every attempt
        # would wait there, and each Run would be refused.
        if lab == "retries" and self.payments.scenario is not None:
            self.payments.leave_scenario()
        if lab == "retries" and self.payments.settings.step_mode:
            self.payments.update_settings({"step_mode": False})
        with self._guard:
            self.clock.offset_s = 0.0
            if self.lesson is not None and self.lesson.name != name:
                self.lesson = None
        self.touch()
        return scenario

    def leave_scenario(self, lab: str = "payments") -> None:
        """Lab ``lab`` back to free play: default settings, results kept; no lesson open.

        :raises Problem: 404 for an unknown lab name.
        """
        self._lab_named(lab).leave_scenario()
        with self._guard:
            self.lesson = None
        self.touch()

    def reset(self) -> None:
        """Start the labs afresh and the clock back to now; the settings, the view and the
        lesson progress stay."""
        for each in self.labs.values():
            each.reset()
        self.clock.offset_s = 0.0
        self.touch()

    # -- the lessons path -------------------------------------------------------------------

    def open_lesson(self, name: str) -> Lesson:
        """Open lesson ``name`` of the path: its scenario afresh, fix off; progress kept.

        :raises Problem: 404 for an unknown lesson.
        """
        lesson = self._lesson_named(name)
        self.apply_scenario(name, lab=lesson.lab)
        with self._guard:
            self.lesson = lesson
            self.progress.setdefault(name, Progress())
        self.touch()
        return lesson

    def show_hint(self, name: str) -> int:
        """Reveal the next hint of lesson ``name``; returns how many are shown now.

        :raises Problem: 404 for an unknown lesson.
        """
        lesson = self._lesson_named(name)
        with self._guard:
            progress = self.progress.setdefault(name, Progress())
            progress.hints = min(progress.hints + 1, len(lesson.hints))
        self.touch()
        return progress.hints

    def reset_lesson(self, name: str) -> None:
        """Forget lesson ``name``'s progress (checks met, hints shown), not the others'.

        :raises Problem: 404 for an unknown lesson.
        """
        self._lesson_named(name)
        with self._guard:
            self.progress[name] = Progress()
        if self.lesson is not None and self.lesson.name == name:
            self.open_lesson(name)  # and its scenario afresh
        self.touch()

    def achieved(self) -> set[str]:
        """The names of the lessons this workspace has achieved."""
        with self._guard:
            return {
                name for name, progress in self.progress.items() if progress.achieved(LESSONS[name])
            }

    def _lesson_named(self, name: str) -> Lesson:
        lesson = LESSONS.get(name)
        if lesson is None:
            raise Problem(
                404,
                "unknown-lesson",
                N_("No such lesson"),
                Text("Lessons are: %(names)s.", names=", ".join(LESSONS)),
            )
        return lesson

    def _lab_named(self, name: str) -> Lab:
        lab = self.labs.get(name)
        if lab is None:
            raise Problem(
                404,
                "unknown-lab",
                N_("No such lab"),
                Text("Labs are: %(names)s.", names=", ".join(self.labs)),
            )
        return lab

    def _observe(self) -> None:
        """Run the open lesson's checks on its lab's real state (see :mod:`demo.lessons`)."""
        lesson = self.lesson
        if lesson is None:
            return
        with self._guard:
            ev = EVIDENCE[lesson.lab](self.labs[lesson.lab])
            progress = self.progress.setdefault(lesson.name, Progress())
            observe(lesson, progress, ev, time.perf_counter())

    # -- history, and reading -----------------------------------------------------------------

    def load_history(
        self,
        settings: Settings,
        entries: list[RequestEntry],
        charges: list[Charge],
        emails: list[Email],
        clock_offset_s: float,
        *,
        scenario: Scenario | None = None,
        fixed: bool = False,
    ) -> None:
        """Become a read-only replay of an exported history (see :mod:`demo.history`)."""
        self.payments.load_history(
            settings, entries, charges, emails, scenario=scenario, fixed=fixed
        )
        with self._guard:
            self.clock.offset_s = clock_offset_s
            self.read_only = True
        self.touch()

    def is_blank(self) -> bool:
        """True while the workspace holds nothing a fresh one would not: blank labs, no
        lesson progress, no view choice, the clock not moved. Dropping a blank workspace
        loses nothing, so the registry evicts blank ones first."""
        with self._guard:
            return (
                all(each.is_blank() for each in self.labs.values())
                and not self.progress
                and self.lesson is None
                and not self.present
                and self.language is None
                and not self.clock.offset_s
                and not self.read_only
            )

    def state(self) -> dict[str, Any]:
        """Everything the workspace holds, as JSON-ready values (``GET /api/state``)."""
        payments = self.payments.state()
        return {
            "lab": self.id,
            "settings": payments.pop("settings"),
            "clock": {"now": self.now(), "offset_s": self.clock.offset_s},
            **payments,
            "read_only": self.read_only,
            "lesson": self.lesson.name if self.lesson else None,
            "lessons": {
                name: {
                    "achieved": progress.achieved(LESSONS[name]),
                    "met": sorted(progress.met),
                    "hints_shown": progress.hints,
                }
                for name, progress in sorted(self.progress.items())
            },
        }
