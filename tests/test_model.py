"""Model-based tests: random sequences against the real lab, compared with a tiny
reference model after every step, and a concurrency stress test."""

from __future__ import annotations

import json
import random
import threading
from dataclasses import dataclass
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from demo.payments.settings import Settings
from demo.workspace import Workspace

KEYS = ["k1", "k2", "k3", "k4"]
BODIES = [
    {"order_id": "1", "amount": 100},
    {"order_id": "1", "amount": 200},
    {"order_id": "2", "amount": 100},
]
TTL_S = 3600
CONFLICT = {"seed": 409, "ietf": 422, "stripe": 400}
# Where a crash of a fresh key's request leaves things: (record state, charged?).
CRASH_POINTS = {
    "validate": (None, False),
    "lookup": (None, False),
    "lock wait": (None, False),
    "lock acquire": (None, False),
    "reserve": ("in_progress", False),
    "gateway charge": ("in_progress", True),
    "record save": ("completed", True),
    "respond": ("completed", True),
}


@dataclass
class ModelRecord:
    body: int  # index into BODIES
    state: str  # "in_progress" or "completed"
    response: bytes | None
    expires_at: float


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class IdempotencyModel(RuleBasedStateMachine):
    """The reference model: a dict of records and a count of charges."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = Clock()
        self.lab = Workspace(
            "model", settings=Settings(gateway_latency_ms=0, ttl_s=TTL_S), clock=self.clock
        )
        self.records: dict[str, ModelRecord] = {}
        self.charges = 0
        self.profile = "seed"

    # -- the model's view of the store ---------------------------------------------

    def live(self, key: str) -> ModelRecord | None:
        record = self.records.get(key)
        if record is not None and self.lab.now() >= record.expires_at:
            del self.records[key]
            return None
        return record

    def send(self, key: str, body: int) -> tuple[Any, Any]:
        return self.lab.payments.create_charge([key], json.dumps(BODIES[body]).encode())

    # -- rules -----------------------------------------------------------------------

    @rule(key=st.sampled_from(KEYS), body=st.integers(0, len(BODIES) - 1))
    def pay(self, key: str, body: int) -> None:
        record = self.live(key)
        response, _ = self.send(key, body)
        if record is not None and record.body != body:
            assert response.status == CONFLICT[self.profile]
        elif record is not None and record.state == "completed":
            assert response.status == 201
            assert response.body == record.response  # byte-identical replay
            assert response.header("Idempotent-Replayed") == "true"
        else:
            # New, expired, or left in progress by a crash (reclaimed): it charges.
            assert response.status == 201, response.body
            assert response.header("Idempotent-Replayed") is None
            self.charges += 1
            self.records[key] = ModelRecord(
                body, "completed", response.body, self.lab.now() + TTL_S
            )

    @rule(key=st.sampled_from(KEYS), body=st.integers(0, len(BODIES) - 1))
    def retry(self, key: str, body: int) -> None:
        """Pay, then the same request again at once."""
        self.pay(key, body)
        self.pay(key, body)

    @rule(key=st.sampled_from(KEYS), body=st.integers(0, len(BODIES) - 1))
    def reuse_with_another_body(self, key: str, body: int) -> None:
        self.pay(key, body)
        self.pay(key, (body + 1) % len(BODIES))

    @rule(seconds=st.sampled_from([1, 600, TTL_S - 1, TTL_S, TTL_S + 1, 3 * TTL_S]))
    def advance_clock(self, seconds: int) -> None:
        self.lab.advance(seconds)

    @rule(key=st.sampled_from(KEYS), body=st.integers(0, len(BODIES) - 1))
    def gateway_error(self, key: str, body: int) -> None:
        record = self.live(key)
        self.lab.payments.update_settings({"fault": "gateway_error"})
        response, _ = self.send(key, body)
        if record is not None and (record.body != body or record.state == "completed"):
            # Answered from the record: the gateway was never called, the fault is still armed.
            assert self.lab.payments.settings.fault == "gateway_error"
            self.lab.payments.update_settings({"fault": "none"})
            self._expect_from_record(record, body, response)
            return
        assert response.status == 502
        assert self.lab.payments.settings.fault == "none"
        self.records.pop(key, None)  # the key was released (a crashed reservation too)

    @precondition(lambda self: any(self.live(k) is None for k in KEYS))
    @rule(
        data=st.data(),
        body=st.integers(0, len(BODIES) - 1),
        point=st.sampled_from(sorted(CRASH_POINTS)),
    )
    def crash(self, data: st.DataObject, body: int, point: str) -> None:
        key = data.draw(st.sampled_from([k for k in KEYS if self.live(k) is None]))
        self.lab.payments.crash_at = point
        try:
            response, entry = self.send(key, body)
        finally:
            self.lab.payments.crash_at = None
        assert entry.outcome == "crashed" and not entry.delivered
        state, charged = CRASH_POINTS[point]
        self.charges += int(charged)
        if state is not None:
            stored = self.lab.payments.store.get(key)
            assert stored is not None
            self.records[key] = ModelRecord(
                body,
                state,
                stored.response.body if stored.response else None,
                self.lab.now() + TTL_S,
            )

    @rule(profile=st.sampled_from(sorted(CONFLICT)))
    def switch_profile(self, profile: str) -> None:
        self.lab.payments.update_settings({"profile": profile})
        self.profile = profile

    @rule()
    def reset(self) -> None:
        self.lab.reset()
        self.records.clear()
        self.charges = 0

    def _expect_from_record(self, record: ModelRecord, body: int, response: Any) -> None:
        if record.body != body:
            assert response.status == CONFLICT[self.profile]
        else:
            assert response.body == record.response

    # -- invariants --------------------------------------------------------------------

    @invariant()
    def same_charges(self) -> None:
        assert len(self.lab.payments.gateway.ledger()) == self.charges

    @invariant()
    def same_records(self) -> None:
        real = {r.key: r.state.value for r in self.lab.payments.store.records()}
        model = {k: r.state for k in list(self.records) if (r := self.live(k)) is not None}
        assert real == model

    @invariant()
    def no_lock_left_behind(self) -> None:
        assert self.lab.payments.store.lock_count() == 0


TestIdempotencyModel = IdempotencyModel.TestCase
# At least 2,000 generated steps per run: 200 sequences of up to 25 rules (each rule
# sends one to two requests, and every invariant is checked after each).
TestIdempotencyModel.settings = settings(max_examples=200, stateful_step_count=25, deadline=None)


def test_concurrency_stress_one_charge_per_key_and_identical_responses() -> None:
    """Lock on: 50 threads over 200 keys, each key sent 2-5 times."""
    lab = Workspace("stress", settings=Settings(gateway_latency_ms=5))
    rng = random.Random(20261129)
    jobs = [
        (f"key-{i}", json.dumps({"order_id": str(i), "amount": 100 + i}).encode())
        for i in range(200)
        for _ in range(rng.randint(2, 5))
    ]
    rng.shuffle(jobs)
    results: dict[str, list[tuple[int, bytes]]] = {}
    guard = threading.Lock()
    work = iter(jobs)

    def worker() -> None:
        while True:
            with guard:
                job = next(work, None)
            if job is None:
                return
            response, _ = lab.payments.create_charge([job[0]], job[1])
            with guard:
                results.setdefault(job[0], []).append((response.status, response.body))

    threads = [threading.Thread(target=worker) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    ledger = lab.payments.gateway.ledger()
    assert len(ledger) == 200
    assert sorted(c.idempotency_key for c in ledger) == sorted(results)  # type: ignore[type-var]
    for key, answers in results.items():
        assert len(set(answers)) == 1, key
        assert answers[0][0] == 201
    assert sum(len(a) for a in results.values()) == len(jobs)
    assert lab.payments.store.lock_count() == 0
