"""``POST /api/charges`` in the payment lab: one request, from its arrival to its answer.

The request is validated, then the idempotent execution (:func:`~.idempotency.execute`)
runs the charge at most once per key. Every step boundary goes through one ``trace``
hook, which writes the request's timeline, pauses it in step mode, and fires the
failure lab's injected crash.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from ..engine.clock import VirtualClock
from ..engine.problems import Problem, canonical_json
from ..engine.stepping import PAUSE_TIMEOUT_S, Pause, StepMode
from ..engine.text import N_, shown
from ..engine.timeline import Timeline, Trace
from .charges import ChargeRequest, parse_charge, parse_idempotency_key
from .deployment import Deployment, Instance
from .faults import (
    InstanceCrash,
    card_declined,
    gateway_failed,
    gateway_timed_out,
    internal_error,
    missing_key,
    no_response,
    store_full,
)
from .gateway import CardDeclined, FakeGateway, GatewayError
from .idempotency import PROFILES, KeyBusy, OutcomeUnknown, execute, fingerprint, in_use_problem
from .mailbox import Mailbox
from .requests import Outcome, RequestEntry
from .settings import Settings
from .store import Response, StoreFull

CHARGES_PATH = "/api/charges"
"""The path the fingerprint covers: the same in every lab, since labs never share a store."""

PAIR_WINDOW_S = 1.0
"""Two Double-submit requests arriving this close (s) are one pair: the first is A."""


@dataclass(frozen=True)
class World:
    """What a request writes to, taken when it arrives: a reset replaces these, so a
    request still in flight then finishes in the old world, not in the fresh lab."""

    gateway: FakeGateway
    mailbox: Mailbox


class Lab(Protocol):
    """What the endpoint reads and writes of its lab (:class:`~.lab.PaymentsLab`)."""

    settings: Settings
    clock: VirtualClock
    deployment: Deployment
    gateway: FakeGateway
    mailbox: Mailbox
    timeline: Timeline[RequestEntry]
    stepper: StepMode
    crash_at: str | int | None
    current_order: str
    arrivals: threading.Lock

    def claim_fault(self, fault: str, world: World) -> bool: ...
    def touch(self) -> None: ...
    def finished(self) -> None: ...


class ChargeEndpoint:
    """The charge endpoint of ``lab``: :meth:`create_charge` serves one request;
    ``follow`` ``False`` (another lab's client) leaves the page's current order alone."""

    def __init__(self, lab: Lab, follow: bool = True) -> None:
        self.lab, self.follow = lab, follow

    def create_charge(
        self, key_header: list[str], body: bytes, *, action: str = "API"
    ) -> tuple[Response, RequestEntry]:
        """Handle ``POST /api/charges``: validate, then charge at most once per key.

        :param key_header: every ``Idempotency-Key`` header value sent (usually 0 or 1).
        :param body: the raw JSON body.
        :param action: the button that sent it, for the timeline only (``"Pay"``, ``"Retry"``…).
        :returns: the response and the request's log entry. Status 201 (charged), the
            stored status (replayed), 400/422 (invalid, nothing stored), 409 (key reused
            with another body, or in use; 422 or 400 under other profiles), 402 (declined,
            stored), 502 (gateway failed, key released), 503 ``store-full`` with
            ``Retry-After`` (every record of the store is in progress within its
            deadline). When ``entry.delivered`` is ``False`` the client must get no
            response at all.
        :raises Problem: 429 in step mode past the caps on paused requests
            (:meth:`~demo.engine.stepping.StepMode.take_slot`); nothing is logged or run then.
        """
        settings = self.lab.settings  # one consistent snapshot for the whole request
        if settings.step_mode:
            self.lab.stepper.take_slot()  # 429 past the caps: before anything is logged or run
        try:
            return self._serve(settings, key_header, body, action)
        finally:
            if settings.step_mode:
                self.lab.stepper.give_slot()

    def _serve(
        self, settings: Settings, key_header: list[str], body: bytes, action: str
    ) -> tuple[Response, RequestEntry]:
        lab = self.lab
        instance = lab.deployment.next_instance()
        world = World(lab.gateway, lab.mailbox)
        entry = self._begin(action, settings, instance)
        pause = lab.stepper.pause_for(entry) if settings.step_mode else None
        trace = self._tracer(entry, world, pause)
        try:
            response, outcome = self._handle(
                entry, instance, world, settings, trace, key_header, body
            )
        except InstanceCrash as crash:
            # The process died: nothing more runs, and its memory (a per-instance store) is gone.
            entry.mark("crash", after=crash.step)
            if settings.store_scope == "per_instance":
                instance.store.clear()
            entry.delivered = False
            response, outcome = no_response(), "crashed"
        except Exception:
            # A bug of ours: the web layer answers 500, and the request still ends here, so
            # the page never shows it in flight for ever.
            self._finish(entry, Response.of_problem(internal_error()), "invalid")
            raise
        finally:
            if pause is not None:
                lab.stepper.end(pause)
        self._finish(entry, response, outcome)
        return response, entry

    def _tracer(self, entry: RequestEntry, world: World, pause: Pause | None) -> Trace:
        """The request's ``trace`` hook: log the step, fire an injected crash, pause."""
        lab = self.lab
        replays: list[Any] = []  # charge ids the gateway gave back
        # What happens inside the charge call, told once the call (traced as it ends) is
        # told: the gateway's answer, and an e-mail sent right after it; and the outbox
        # message, which is written with the record, so told after "record save".
        after_charge: list[dict[str, Any]] = []
        with_record: list[Any] = []  # charge ids of the receipts in the outbox

        def trace(step: str, /, **detail: Any) -> None:
            if step == "gateway replay":
                # The gateway's answer arrives when its call returns, and that call is traced
                # as "gateway charge" once it ends: tell the replay after it, as it happened.
                replays.append(detail.get("charge_id"))
                return
            if step == "email send" and detail.get("via") == "inline":
                after_charge.append(detail)
                return
            if step == "outbox enqueue":
                with_record.append(detail.get("charge_id"))
                return
            entry.mark(step, **detail)
            index = len(entry.steps) - 1
            if step == "gateway charge":
                _tell_inside_the_call(entry, replays, after_charge)
            if step == "record save":
                for charge_id in with_record:
                    entry.mark("outbox enqueue", charge_id=charge_id)
                with_record.clear()
            lab.touch()
            if lab.crash_at in (step, index) or (
                step == "gateway charge" and lab.claim_fault("crash_after_charge", world)
            ):
                raise InstanceCrash(step)
            if pause is not None:
                lab.stepper.park(pause, step)

        return trace

    def _handle(
        self,
        entry: RequestEntry,
        instance: Instance,
        world: World,
        settings: Settings,
        trace: Trace,
        key_header: list[str],
        body: bytes,
    ) -> tuple[Response, Outcome]:
        outcome: Outcome
        entry.raw_key = shown(key_header[0][:64]) if key_header else None  # shown when invalid
        try:
            response, outcome = self._validated(
                entry, instance, world, settings, trace, key_header, body
            )
        except Problem as problem:
            response, outcome = Response.of_problem(problem), "invalid"
            trace("validate", ok=False)
        except GatewayError as exc:
            response, outcome = gateway_failed(exc), "error"
        except OutcomeUnknown:
            response, outcome = gateway_timed_out(entry), "error"
        except KeyBusy:
            busy = in_use_problem(PROFILES[settings.profile], 1)
            response, outcome = Response.of_problem(busy, ("Retry-After", "1")), "in_use"
        except StoreFull as full:
            # Refused before anything ran, like an invalid request: nothing stored or charged.
            retry = ("Retry-After", str(full.retry_after_s))
            response, outcome = Response.of_problem(store_full(), retry), "invalid"
        self.lab.mailbox.relay(self.lab.deployment.stores(), trace)
        if outcome == "charged" and self.lab.claim_fault("lose_response", world):
            entry.delivered = False
            trace("response lost")
        else:
            trace("respond", status=response.status)
        return response, outcome

    def _validated(
        self,
        entry: RequestEntry,
        instance: Instance,
        world: World,
        settings: Settings,
        trace: Trace,
        key_header: list[str],
        body: bytes,
    ) -> tuple[Response, Outcome]:
        """Validate first: an invalid request is answered and stores nothing. Then charge,
        once per key.

        :raises Problem: 400/422 for an invalid request.
        """
        outcome: Outcome
        key = entry.key = parse_idempotency_key(key_header)
        if key is None and settings.require_key:
            raise missing_key()
        charge = entry.charge = parse_charge(body)
        if self.follow:  # every tab's page follows the intent
            self.lab.current_order = charge.order_id
        trace("validate", ok=True)
        if key is None:
            # No key, no protection: every call charges.
            trace("no key")
            trace("charging")
            started = time.perf_counter()
            response = self._charge(None, charge, settings, world, trace)
            trace("gateway charge", ms=round((time.perf_counter() - started) * 1000, 1))
            outcome = "charged"
        else:
            entry.fingerprint = fingerprint("POST", CHARGES_PATH, charge.as_dict())
            done = execute(
                instance.store,
                key,
                entry.fingerprint,
                lambda: self._charge(key, charge, settings, world, trace),
                lock=settings.lock,
                in_flight=settings.in_flight,  # type: ignore[arg-type]
                profile=PROFILES[settings.profile],
                trace=trace,
                # In step mode the holder may sit paused at every step: wait it out.
                lock_timeout_s=PAUSE_TIMEOUT_S * 10 if settings.step_mode else 30.0,
                rerun_safe=settings.recovery == "downstream_key",
            )
            response, outcome = done.response, done.outcome
        if outcome == "charged" and response.status == 402:
            outcome = "declined"
        elif outcome == "charged" and entry.step("gateway replay"):
            outcome = "recovered"  # the gateway returned an earlier charge: no new money
        return response, outcome

    def _charge(
        self,
        key: str | None,
        charge: ChargeRequest,
        settings: Settings,
        world: World,
        trace: Trace,
    ) -> Response:
        """The side effect: charge through the gateway, and build the business response.

        With ``recovery="downstream_key"`` the idempotency key goes on to the gateway, so a
        re-run after a crash gets the first charge back instead of a second one.

        :raises GatewayError: the armed ``gateway_error`` fault, before charging.
        :raises OutcomeUnknown: the armed ``gateway_timeout`` fault, after charging.
        """
        started = time.perf_counter()
        if self.lab.claim_fault("gateway_error", world):
            raise GatewayError(N_("connection reset before the charge reached the gateway"))
        try:
            done = world.gateway.charge(
                order_id=charge.order_id,
                amount=charge.amount,
                currency=charge.currency,
                idempotency_key=key,
                downstream_key=key if settings.recovery == "downstream_key" else None,
                decline=settings.gateway_decline,
            )
        except CardDeclined:
            return card_declined()
        if done.replayed:
            trace("gateway replay", charge_id=done.id)
        if self.lab.claim_fault("gateway_timeout", world):
            # The money moved; the answer is lost on the way back. The server cannot tell.
            trace("gateway timeout", ms=round((time.perf_counter() - started) * 1000, 1))
            raise OutcomeUnknown(done.id)
        body = {
            "id": done.id,
            "object": "charge",
            "order_id": done.order_id,
            "amount": done.amount,
            "currency": done.currency,
            "status": "succeeded",
            "created": int(done.created_at),
        }
        outbox: tuple[str, ...] = ()
        if settings.email == "inline" or (settings.email == "outbox" and key is None):
            # A second side effect, run on every execution.
            sent = world.mailbox.send_receipt(key, done)
            trace("email send", email=sent.id, via="inline", key=key)
        elif settings.email == "outbox":
            outbox = (canonical_json({"receipt": done.id, "order_id": done.order_id}).decode(),)
            # Written with the record, in the same save: sent once it is committed.
            trace("outbox enqueue", charge_id=done.id)
        return Response(
            201, canonical_json(body), (("Content-Type", "application/json"),), outbox=outbox
        )

    def _begin(self, action: str, settings: Settings, instance: Instance) -> RequestEntry:
        with self.lab.arrivals:
            entry = self._arrive(action, settings, instance)
        self.lab.touch()
        return entry

    def _arrive(self, action: str, settings: Settings, instance: Instance) -> RequestEntry:
        timeline = self.lab.timeline
        if action in ("Double-submit A", "Double-submit B"):
            # A Double-submit's first request to arrive is A (the lower id): lanes read #n A,
            # #n+1 B. An A left alone (the client guard dropped its B) pairs with nothing.
            last = timeline.last()
            paired = (
                last is not None
                and last.action == "Double-submit A"
                and time.perf_counter() - last.started < PAIR_WINDOW_S
            )
            action = "Double-submit B" if paired else "Double-submit A"
        entry = RequestEntry(
            id=timeline.next_id(),
            action=shown(action, 40),
            started=time.perf_counter(),
            at=self.lab.clock(),
            clock_s=self.lab.clock.offset_s,
            instance=instance.name,
            lock=settings.lock,
            settings=settings,
        )
        timeline.append(entry)
        return entry

    def _finish(self, entry: RequestEntry, response: Response, outcome: Outcome) -> None:
        entry.outcome = outcome
        if entry.delivered:
            entry.status = response.status
        body = json.loads(response.body) if response.body else {}
        if response.status < 300:
            entry.charge_id = body.get("id")
        elif outcome != "crashed":
            title, detail = body.get("title"), body.get("detail")
            title = response.title or title  # untranslated: the page translates it
            entry.problem = shown(title) if isinstance(title, str) else None
            entry.problem_detail = shown(detail) if isinstance(detail, str) else None
        entry.finished = time.perf_counter()
        self.lab.finished()
        self.lab.touch()


def _tell_inside_the_call(
    entry: RequestEntry, replays: list[Any], after_charge: list[dict[str, Any]]
) -> None:
    """After ``gateway charge``: what happened inside the call, in the order it did."""
    for charge_id in replays:
        entry.mark("gateway replay", charge_id=charge_id)
    replays.clear()
    for told in after_charge:
        entry.mark("email send", email=told["email"], via=told["via"], key=told["key"])
    after_charge.clear()
