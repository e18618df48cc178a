"""The registry of workspaces: every attendee's workspace in the process, bounded, where
an attendee's workspace is never the victim of another client's flood."""

from __future__ import annotations

import math
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from .engine.clock import Clock
from .engine.problems import Problem
from .engine.text import N_, Text
from .workspace import Workspace

LAB_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A workspace id (the ``<id>`` of ``/lab/<id>``)."""


@dataclass
class _Slot:
    """A lab in the registry, with what eviction needs to know about it."""

    lab: Workspace
    source: str
    """Who created it: the client address (see :class:`LabRegistry`)."""
    created: float
    used: float
    proven: bool = False
    """Used again at least :data:`PROVEN_AFTER_S` after its creation: a person's page."""


PROVEN_AFTER_S = 1.0
"""A lab used again this long after its creation is a person's (an open page polls every
2 s); a flood writes once to each id, so its labs never are."""


class LabRegistry:
    """Every lab of the process, bounded, where an attendee's lab is never the victim.

    Only a write makes a lab (:meth:`get`); reading an id that has none (:meth:`find`,
    :meth:`view`) never takes a slot. A lab lives until it has been idle for ``idle_s``.
    When ``max_labs`` labs exist and a new one is needed, the victim is, in this order:

    1. a lab idle for ``idle_s`` (expired);
    2. the least recently used *blank* lab (:meth:`Workspace.is_blank`): nothing is lost;
    3. the least recently used *unproven* lab older than ``fresh_s``: one that no request
       used again :data:`PROVEN_AFTER_S` or more after it was made (a flood writes once
       per id; a person's page polls every 2 s, so their lab is proven within seconds);
    4. when the source (client address) holding the most labs holds more than its fair
       share (``max_labs`` / the number of sources, the newcomer included, rounded up)
       and is not the newcomer's own, that source's least recently used lab, unproven
       ones first;

    else the new lab is refused with 503 and ``Retry-After`` (when the next victim of
    rule 3 or 1 will exist). So a flood from one client only ever replaces its own labs
    once they are ``fresh_s`` old, never another source's lab with data used within
    ``idle_s``; a newcomer from another address gets a slot at once, and a new lab is
    never dropped in its first ``fresh_s`` by its own address's flood. Replays of
    exported histories have their own quota (``max_replays``, least recently used
    replay dropped) and never take a slot.

    :param max_labs: attendees' labs at once: a blank lab is about 7 KiB, one full to every
        cap (1,000 records, 200 requests, 500 charges) about 1.6 MiB, so 300 labs stay
        under 0.5 GiB even so.
    :param idle_s: a lab unused for this many seconds expires (2 h by default).
    :param fresh_s: how long a new lab is spared by rule 3 before its page proves it, s.
    :param max_replays: replay labs at once.
    :param make_lab: builds a new lab from its id.
    :param clock: seconds, ``time.monotonic`` by default (injected by tests).
    """

    def __init__(
        self,
        *,
        max_labs: int = 300,
        idle_s: float = 2 * 3600,
        fresh_s: float = 5.0,
        max_replays: int = 20,
        make_lab: Callable[[str], Workspace] = Workspace,
        clock: Clock = time.monotonic,
    ) -> None:
        self.max_labs = max_labs
        self.idle_s = idle_s
        self.fresh_s = fresh_s
        self.max_replays = max_replays
        self._make_lab = make_lab
        self._clock = clock
        # Least recently used first: a use moves a lab to the end.
        self._labs: OrderedDict[str, _Slot] = OrderedDict()
        self._replays: OrderedDict[str, _Slot] = OrderedDict()
        self._guard = threading.Lock()

    @staticmethod
    def new_id() -> str:
        """A fresh, unguessable lab id (16 random bytes, URL-safe)."""
        return secrets.token_urlsafe(16)

    @staticmethod
    def valid_id(lab_id: str) -> bool:
        """True for 1-64 characters of ``[A-Za-z0-9_-]``."""
        return LAB_ID.fullmatch(lab_id) is not None

    def get(self, lab_id: str, *, source: str = "") -> Workspace:
        """The lab with this id, created if needed (for a write); marks it used.

        :param source: who asks (the client address), for the fair share of rule 4.
        :raises Problem: 404 when the id is not 1-64 characters of ``[A-Za-z0-9_-]``;
            503 with ``Retry-After`` when a new lab is needed and no slot may be freed.
        """
        self._check(lab_id)
        now = self._clock()
        with self._guard:
            self._expire(now)
            found = self._use(lab_id, now)
            if found is not None:
                return found
            if len(self._labs) >= self.max_labs:
                victim = self._victim(now, source)
                if victim is None:
                    raise _too_many_labs(self._retry_after(now))
                del self._labs[victim]
            lab = self._make_lab(lab_id)
            self._labs[lab_id] = _Slot(lab, source, now, now)
            return lab

    def find(self, lab_id: str) -> Workspace | None:
        """The lab with this id if it exists (marked used), else ``None``: never creates.

        :raises Problem: 404 for a bad id.
        """
        self._check(lab_id)
        now = self._clock()
        with self._guard:
            self._expire(now)
            return self._use(lab_id, now)

    def view(self, lab_id: str) -> Workspace:
        """What a read shows: the lab if it exists (marked used), else a blank lab that is
        not kept, so a GET of any id shows an empty lab without taking a slot.

        :raises Problem: 404 for a bad id.
        """
        return self.find(lab_id) or self._make_lab(lab_id)

    def create_replay(self) -> Workspace:
        """A new lab under a fresh id in the replays' own quota: past ``max_replays`` the
        least recently used replay is dropped; attendees' labs are never touched."""
        now = self._clock()
        lab_id = self.new_id()
        with self._guard:
            self._expire(now)
            while len(self._replays) >= self.max_replays:
                self._replays.popitem(last=False)
            lab = self._make_lab(lab_id)
            self._replays[lab_id] = _Slot(lab, "", now, now)
            return lab

    def active(self, within_s: float, *, in_use: bool = False) -> list[Workspace]:
        """The labs used in the last ``within_s`` seconds (an open page polls, so it counts).

        :param in_use: only labs a person uses: proven (used again :data:`PROVEN_AFTER_S`
            after creation, as an open page does) and not blank, so the labs a flood writes
            once, or leaves empty, are not counted (the instructor's "active labs").
        """
        now = self._clock()
        with self._guard:
            slots = [*self._labs.values(), *self._replays.values()]
            recent = [s for s in slots if now - s.used < within_s]
            if in_use:
                recent = [s for s in recent if s.proven]
        labs = [s.lab for s in recent]
        # is_blank takes the lab's own lock: asked outside the registry's guard.
        return [lab for lab in labs if not lab.is_blank()] if in_use else labs

    def peek(self, lab_id: str) -> Workspace | None:
        """The lab with this id if it exists; never creates one or marks it used."""
        with self._guard:
            found = self._labs.get(lab_id) or self._replays.get(lab_id)
        return found.lab if found else None

    def __len__(self) -> int:
        with self._guard:
            self._expire(self._clock())
            return len(self._labs) + len(self._replays)

    def _check(self, lab_id: str) -> None:
        if not self.valid_id(lab_id):
            raise Problem(
                404,
                "bad-lab-id",
                N_("No such lab"),
                N_("A lab id is 1-64 characters of letters, digits, '-' and '_'."),
            )

    def _use(self, lab_id: str, now: float) -> Workspace | None:
        for pool in (self._labs, self._replays):
            slot = pool.get(lab_id)
            if slot is not None:
                slot.used = now
                slot.proven = slot.proven or now - slot.created >= PROVEN_AFTER_S
                pool.move_to_end(lab_id)
                return slot.lab
        return None

    def _victim(self, now: float, source: str) -> str | None:
        """The id of the lab to drop for a new one (rules 2-4 above), or ``None``."""
        slots = self._labs
        for lab_id, slot in slots.items():
            if slot.lab.is_blank():
                return lab_id
        for lab_id, slot in slots.items():
            if not slot.proven and now - slot.created >= self.fresh_s:
                return lab_id
        held: dict[str, int] = {source: 0}
        for slot in slots.values():
            held[slot.source] = held.get(slot.source, 0) + 1
        greedy = max(held, key=lambda s: held[s])
        if greedy == source or held[greedy] <= math.ceil(self.max_labs / len(held)):
            return None
        own = [(lab_id, slot) for lab_id, slot in slots.items() if slot.source == greedy]
        return next((i for i, s in own if not s.proven), own[0][0])

    def _retry_after(self, now: float) -> int:
        """Seconds until rule 3 or expiry will free a slot, at least 1."""
        young = [s.created for s in self._labs.values() if not s.proven]
        if young:
            wait = min(young) + self.fresh_s - now
        else:
            wait = min(s.used for s in self._labs.values()) + self.idle_s - now
        return max(1, math.ceil(wait))

    def _expire(self, now: float) -> None:
        # Least recently used first, so stop at the first lab still in use.
        for pool in (self._labs, self._replays):
            while pool:
                slot = next(iter(pool.values()))
                if now - slot.used < self.idle_s:
                    break
                pool.popitem(last=False)


def _too_many_labs(retry_after_s: int) -> Problem:
    return Problem(
        503,
        "too-many-labs",
        N_("Too many labs"),
        Text(
            "Every lab slot holds a lab in use. Try again in %(seconds)s s.",
            seconds=retry_after_s,
        ),
        retry_after_s=retry_after_s,
    )
