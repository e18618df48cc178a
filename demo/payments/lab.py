"""The payment lab: a charge endpoint behind 1-3 instances, their idempotency stores, a
fake payment gateway, a mailbox, and the switches that break or fix each of them.

No web framework here: the web layer hands the lab the raw header values and body bytes,
and sends back the :class:`~.store.Response` it gets, unless the lab says the response
never left (a lost response or a crashed instance).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..engine.clock import VirtualClock
from ..engine.problems import Problem
from ..engine.stepping import MAX_PAUSED_PER_LAB, StepMode
from ..engine.text import N_, Text
from ..engine.timeline import Timeline
from .charges import ChargeRequest
from .deployment import Deployment, Instance
from .endpoint import ChargeEndpoint, World
from .gateway import Charge, FakeGateway, summarise
from .mailbox import Mailbox
from .requests import Email, RequestEntry
from .scenarios import SCENARIOS, Scenario
from .settings import DEFAULT_CLIENT, Settings
from .steps import STEP_POINTS
from .store import IdempotencyStore, Record, Response


class PaymentsLab:
    """One attendee's payment lab.

    :param settings: the switches (:class:`~.settings.Settings`), defaults if ``None``.
    :param clock: the workspace's clock, s (a fresh one on ``time.time`` if ``None``).
    :param max_log: the request log is a ring buffer of this many requests.
    :param max_records: records per idempotency store.
    :param max_ledger: charges the gateway keeps, and e-mails the mailbox keeps.
    :param max_paused: requests in step mode at once; one more gets 429.
    :param paused_slots: the step-mode budget shared by every lab of the process.
    :param touch: called after every change (the workspace's version, so pages catch up).
    :param finished: called when a request has ended (the workspace's lesson checks).
    """

    name = "payments"

    def __init__(
        self,
        *,
        settings: Settings | None = None,
        clock: VirtualClock | None = None,
        max_log: int = 200,
        max_records: int = 1000,
        max_ledger: int = 500,
        max_paused: int = MAX_PAUSED_PER_LAB,
        paused_slots: threading.BoundedSemaphore | None = None,
        touch: Callable[[], None] = lambda: None,
        finished: Callable[[], None] = lambda: None,
    ) -> None:
        self.settings = self._base_settings = settings or Settings()
        self.clock = clock or VirtualClock(time.time)
        self._touch, self._finished = touch, finished
        self._max_records, self._max_ledger = max_records, max_ledger
        self.timeline: Timeline[RequestEntry] = Timeline(max_log)
        self.stepper = StepMode(
            STEP_POINTS, max_paused=max_paused, paused_slots=paused_slots, touch=self.touch
        )
        self.arrivals = threading.Lock()
        """Held while a request arrives: Double-submit pairing, its id and its log order."""
        self.settings_version = 0  # bumped on every settings change: open pages catch up
        self.crash_at: str | int | None = None
        """Where every request's instance crashes, for tests (the UI arms ``fault``): a step
        name, or a step boundary's index within the request (0 = the first)."""
        self.scenario: Scenario | None = None
        self.fixed, self.resets = False, 0  # resets: a page tells another tab's Reset by it
        self.client: dict[str, Any] = dict(DEFAULT_CLIENT)
        self._guard = threading.RLock()
        self._fresh()

    def _fresh(self) -> None:
        """New stores, gateway and mailbox; the order back to 42."""
        self.left: tuple[Scenario, int] | None = None  # scenario left, its last request id
        self.deployment = Deployment(
            count=self.settings.instances,
            scope=self.settings.store_scope,
            ttl_s=self.settings.ttl_s,
            max_records=self._max_records,
            clock=self.clock,
        )
        self.gateway = FakeGateway(
            latency_ms=self.settings.gateway_latency_ms,
            max_ledger=self._max_ledger,
            clock=self.clock,
        )
        self.mailbox = Mailbox(
            max_emails=self._max_ledger, max_keys=self._max_records, clock=self.clock
        )
        self._next_order = 42
        self.current_order = "42"
        """The order the page shows: the intent being paid, shared by every tab."""

    # -- the charge endpoint -----------------------------------------------------------

    def create_charge(
        self, key_header: list[str], body: bytes, *, action: str = "API", follow: bool = True
    ) -> tuple[Response, RequestEntry]:
        """``POST /api/charges``: see :meth:`.endpoint.ChargeEndpoint.create_charge`."""
        # A fresh endpoint per request: it holds the lab, the lab never holds it (no cycle).
        return ChargeEndpoint(self, follow).create_charge(key_header, body, action=action)

    def claim_fault(self, fault: str, world: World) -> bool:
        """Fire a one-shot fault: True once if it is armed, and disarm it. A request from
        before a reset (an older world) never fires the fresh lab's fault."""
        with self._guard:
            if self.settings.fault != fault or world.gateway is not self.gateway:
                return False
            self.settings = replace(self.settings, fault="none")
            self.settings_version += 1
        self.touch()
        return True

    def touch(self) -> None:
        """Something changed: open pages catch up."""
        self._touch()

    def finished(self) -> None:
        """A request has ended."""
        self._finished()

    # -- scenarios and settings -----------------------------------------------------------

    def apply_scenario(self, name: str, *, fixed: bool = False) -> Scenario:
        """Start scenario ``name`` afresh: its settings (with its fix if ``fixed``), an
        empty lab, and the client switches the page should use.

        :raises Problem: 404 for an unknown scenario name.
        """
        scenario = SCENARIOS.get(name)
        if scenario is None:
            raise Problem(
                404,
                "unknown-scenario",
                N_("No such scenario"),
                Text("Scenarios are: %(names)s.", names=", ".join(SCENARIOS)),
            )
        changes = {**scenario.settings, **(scenario.fix if fixed else {})}
        self.update_settings(self._base_settings.patched(changes).as_dict())
        self.reset()
        with self._guard:
            self.scenario, self.fixed = scenario, fixed
            self.client = {
                **DEFAULT_CLIENT,
                **scenario.client,
                **(scenario.fix_client if fixed else {}),
            }
        self.touch()
        return scenario

    def leave_scenario(self) -> None:
        """Back to the free lab: default settings and client, results kept. The page's
        order moves on to a new one when the scenario sent it: free play's first Pay is a
        new intent, not a replay of the lesson's record under settings it no longer has."""
        self.update_settings(self._base_settings.as_dict())
        with self._guard:
            entries = self.requests()
            if self.scenario is not None:  # (id 0: left before any request)
                self.left = (self.scenario, entries[-1].id if entries else 0)
            self.scenario, self.fixed = None, False
            self.client = dict(DEFAULT_CLIENT)
            sent = any(e.charge and e.charge.order_id == self.current_order for e in entries)
        if sent:
            self.new_order_id(self.current_order)
        self.touch()

    def update_settings(self, changes: object) -> Settings:
        """Apply a settings patch (see :meth:`Settings.patched`) and return the new settings.

        Changing ``instances`` or ``store_scope`` starts the instances afresh.

        :raises Problem: 422 for unknown settings or bad values; nothing changes then.
        """
        with self._guard:
            old = self.settings
            self.settings = new = old.patched(changes)
            if old.step_mode and not new.step_mode:
                self.stepper.release_all()
            self.gateway.latency_ms = new.gateway_latency_ms
            if (old.instances, old.store_scope) != (new.instances, new.store_scope):
                self.deployment.rebuild(new.instances, new.store_scope)
            self.deployment.set_ttl(new.ttl_s)
            self.settings_version += 1
        self.touch()
        return self.settings

    def reset(self) -> None:
        """Start afresh: new stores, ledger, mailbox and log; keep the settings (an armed
        fault stays armed). Requests still in flight finish in the old ones."""
        self.stepper.forget()  # they finish in the old lab
        with self._guard:
            self.timeline.clear()
            self._fresh()
            self.resets += 1
        self.touch()

    def new_order_id(self, after: str = "") -> str:
        """Move the page's order on to one unused in this lab (after ``after`` if it is a
        number): a new intent. Every tab of the lab then shows it."""
        with self._guard:
            used = {e.charge.order_id for e in self.requests() if e.charge} | {after}
            if re.fullmatch(r"[0-9]{1,15}", after):
                self._next_order = max(self._next_order, int(after) + 1)
            while str(self._next_order) in used:
                self._next_order += 1
            self.current_order = str(self._next_order)
        self.touch()
        return self.current_order

    def load_history(
        self,
        settings: Settings,
        entries: list[RequestEntry],
        charges: list[Charge],
        emails: list[Email],
        *,
        scenario: Scenario | None = None,
        fixed: bool = False,
    ) -> None:
        """Hold an exported history (see :mod:`demo.history`): its settings, requests,
        charges and e-mails."""
        self.reset()
        with self._guard:
            self.settings = settings
            self.scenario, self.fixed = scenario, fixed
            self.timeline.extend(entries)
            self.gateway.restore(charges)
            self.mailbox.restore(emails)
            # The order the lab was on: the last request's, as a live lab follows it.
            orders = [e.charge.order_id for e in self.requests() if e.charge is not None]
            orders = orders or [c.order_id for c in charges]
            self.current_order = orders[-1] if orders else self.current_order
            self.settings_version += 1
        self.touch()

    # -- reading ---------------------------------------------------------------------------

    @property
    def store(self) -> IdempotencyStore:
        """The shared idempotency store."""
        return self.deployment.store

    @property
    def instances(self) -> tuple[Instance, ...]:
        """The instances behind the balancer."""
        return self.deployment.instances

    def requests(self) -> list[RequestEntry]:
        """The logged requests, oldest first (a ring buffer of ``max_log``)."""
        return self.timeline.entries()

    def is_current(self, entry: RequestEntry) -> bool:
        """False for a request that began before the last reset (it finished in the old lab)."""
        return self.timeline.holds(entry)

    def latest_charge(self) -> ChargeRequest | None:
        """The body of the most recent valid charge request, or ``None``."""
        return next((e.charge for e in reversed(self.requests()) if e.charge), None)

    def emails(self) -> list[Email]:
        """The receipt e-mails sent, oldest first (a ring buffer)."""
        return self.mailbox.emails()

    def outbox(self) -> list[tuple[str, str]]:
        """The outbox messages committed with a record and not yet relayed, as
        ``(key, message)`` pairs; empty between requests unless an instance died first."""
        return self.deployment.outbox()

    def records(self) -> list[tuple[str, Record]]:
        """Every live record as ``(store name, record)``: ``"shared"`` or an instance's name."""
        return self.deployment.records()

    def is_blank(self) -> bool:
        """True while the lab holds nothing a fresh one would not: no request, charge,
        e-mail, scenario, changed setting, client switch or new order."""
        with self._guard:
            return (
                not len(self.timeline)
                and not self.gateway.ledger()
                and not len(self.mailbox)
                and self.scenario is None
                and self.settings == self._base_settings
                and self.current_order == "42"
                and self.client == DEFAULT_CLIENT
            )

    def state(self) -> dict[str, Any]:
        """What the lab holds, as JSON-ready values (part of ``GET /api/state``)."""
        now = self.clock()
        charges = self.gateway.ledger()
        summary = summarise(charges)
        return {
            "settings": self.settings.as_dict(),
            "charges": [
                {
                    **c.as_dict(),
                    "created": int(c.created_at),
                    "double_charge": c.order_id in summary.doubled,
                }
                for c in charges
            ],
            "summary": {
                "charged": summary.charged,
                "intended": summary.intended,
                "emails": len(self.mailbox),
            },
            "emails": [e.as_dict() for e in self.emails()],
            "records": [
                {
                    "store": where,
                    "idempotency_key": r.key,
                    "fingerprint": r.fingerprint,
                    "state": r.state.value,
                    "status": r.response.status if r.response else None,
                    "created": r.created_at,
                    "expires_in_s": round(r.expires_at - now, 1),
                }
                for where, r in self.records()
            ],
            "requests": [e.as_dict() for e in self.requests()],
            "paused": self.stepper.paused(),
        }
