"""The lesson itself: store, per-key lock, fingerprint and idempotent execution."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest

from demo.payments.idempotency import (
    REPLAYED_HEADER,
    IdempotencyStore,
    Response,
    State,
    execute,
    fingerprint,
)


class FakeClock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class CountingCharge:
    """A side effect that counts its runs and answers with a new charge id each time."""

    def __init__(self, response: Callable[[int], Response] | None = None) -> None:
        self.runs = 0
        self._lock = threading.Lock()
        self._response = response or (
            lambda n: Response(
                201, json.dumps({"id": f"ch_{n}"}).encode(), (("Content-Type", "application/json"),)
            )
        )

    def __call__(self) -> Response:
        with self._lock:
            self.runs += 1
            n = self.runs
        return self._response(n)


FP = fingerprint("POST", "/api/charges", {"order_id": "42", "amount": 100000, "currency": "VND"})
OTHER_FP = fingerprint(
    "POST", "/api/charges", {"order_id": "42", "amount": 100001, "currency": "VND"}
)


def test_first_call_charges_and_stores() -> None:
    store, charge = IdempotencyStore(), CountingCharge()
    done = execute(store, "k", FP, charge)
    assert done.outcome == "charged"
    assert done.response.status == 201
    record = store.get("k")
    assert record is not None and record.state is State.COMPLETED
    assert record.fingerprint == FP


def test_retry_replays_byte_identical_with_marker() -> None:
    store, charge = IdempotencyStore(), CountingCharge()
    first = execute(store, "k", FP, charge)
    again = execute(store, "k", FP, charge)
    assert charge.runs == 1
    assert again.outcome == "replayed"
    assert again.response.status == first.response.status
    assert again.response.body == first.response.body
    assert again.response.header("Idempotent-Replayed") == "true"
    assert first.response.header("Idempotent-Replayed") is None


@pytest.mark.parametrize("body", [b"", b"{}", b"[]", b"0", b"null"])
@pytest.mark.parametrize("status", [200, 204])
def test_falsy_or_empty_results_replay_and_do_not_rerun(body: bytes, status: int) -> None:
    store = IdempotencyStore()
    charge = CountingCharge(lambda n: Response(status, body))
    execute(store, "k", FP, charge)
    again = execute(store, "k", FP, charge)
    assert charge.runs == 1
    assert again.outcome == "replayed"
    assert (again.response.status, again.response.body) == (status, body)


def test_same_key_other_body_is_409_and_charges_nothing() -> None:
    store, charge = IdempotencyStore(), CountingCharge()
    execute(store, "k", FP, charge)
    done = execute(store, "k", OTHER_FP, charge)
    assert charge.runs == 1
    assert done.outcome == "conflict"
    assert done.response.status == 409
    assert done.response.header("Content-Type") == "application/problem+json"
    problem = json.loads(done.response.body)
    assert problem["type"] == "/problems/key-mismatch"
    assert problem["status"] == 409


def test_mismatch_is_409_before_the_lock_while_the_first_is_in_flight() -> None:
    store = IdempotencyStore()
    inside, release = threading.Event(), threading.Event()

    def slow_charge() -> Response:
        inside.set()
        assert release.wait(5)
        return Response(201, b'{"id":"ch_1"}')

    first = threading.Thread(target=execute, args=(store, "k", FP, slow_charge))
    first.start()
    try:
        assert inside.wait(5)
        # The first request holds the per-key lock right now; the mismatch must not wait for it.
        done = execute(store, "k", OTHER_FP, CountingCharge())
        assert done.outcome == "conflict"
        assert done.response.status == 409
        assert not release.is_set()
        assert store.get("k") is not None and store.get("k").state is State.IN_PROGRESS  # type: ignore[union-attr]
    finally:
        release.set()
        first.join(5)


def test_ttl_expiry_makes_the_key_a_new_intent() -> None:
    clock = FakeClock()
    store, charge = IdempotencyStore(ttl_s=3600, clock=clock), CountingCharge()
    execute(store, "k", FP, charge)
    clock.now += 3599
    assert execute(store, "k", FP, charge).outcome == "replayed"
    clock.now += 1
    assert store.get("k") is None
    assert execute(store, "k", FP, charge).outcome == "charged"
    assert charge.runs == 2


def test_ttl_change_applies_to_new_records() -> None:
    clock = FakeClock()
    store = IdempotencyStore(ttl_s=10, clock=clock)
    record = store.complete("k", FP, Response(201, b"{}"))
    assert record.expires_at - record.created_at == 10


class GatewayDown(Exception):
    pass


@pytest.mark.parametrize("lock", [True, False])
def test_gateway_error_releases_the_key_and_a_retry_runs_again(lock: bool) -> None:
    store = IdempotencyStore()

    def failing() -> Response:
        raise GatewayDown("timeout")

    with pytest.raises(GatewayDown):
        execute(store, "k", FP, failing, lock=lock)
    assert store.get("k") is None
    assert store.lock_count() == 0
    charge = CountingCharge()
    assert execute(store, "k", FP, charge, lock=lock).outcome == "charged"
    assert charge.runs == 1


def test_release_leaves_a_completed_record_alone() -> None:
    store = IdempotencyStore()
    store.complete("k", FP, Response(201, b"{}"))
    assert store.release("k") is False
    assert store.get("k") is not None


def test_only_replayable_headers_are_stored() -> None:
    store = IdempotencyStore()

    def charge() -> Response:
        return Response(
            201,
            b"{}",
            (
                ("Content-Type", "application/json"),
                ("Set-Cookie", "session=first-caller"),
                ("Authorization", "x"),
            ),
        )

    execute(store, "k", FP, charge)
    again = execute(store, "k", FP, charge)
    names = {name.lower() for name, _ in again.response.headers}
    assert "set-cookie" not in names and "authorization" not in names
    assert again.response.header("Content-Type") == "application/json"
    assert REPLAYED_HEADER in again.response.headers


def test_lock_on_twenty_threads_one_charge_nineteen_identical_replays() -> None:
    store = IdempotencyStore()
    start = threading.Barrier(20)
    gate = threading.Event()

    def charge_slowly() -> Response:
        gate.wait(0.05)  # hold the lock a while, so the others really pile up behind it
        return counting()

    counting = CountingCharge()
    results: list[Any] = []

    def attempt() -> None:
        start.wait(5)
        results.append(execute(store, "k", FP, charge_slowly, lock=True))

    threads = [threading.Thread(target=attempt) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert counting.runs == 1
    outcomes = sorted(r.outcome for r in results)
    assert outcomes == ["charged"] + ["replayed"] * 19
    bodies = {(r.response.status, r.response.body) for r in results}
    assert len(bodies) == 1
    assert store.lock_count() == 0  # no lock object left behind for a finished key


def test_lock_off_two_interleaved_threads_both_charge() -> None:
    """Both look the key up before either saves: the TOCTOU race, on the real code path."""
    store, charge = IdempotencyStore(), CountingCharge()
    both_looked = threading.Barrier(2)

    def trace(step: str, /, **detail: Any) -> None:
        if step == "lookup":
            both_looked.wait(5)  # force the interleaving: A-lookup, B-lookup, then the charges

    results: list[Any] = []

    def attempt() -> None:
        results.append(execute(store, "k", FP, charge, lock=False, trace=trace))

    threads = [threading.Thread(target=attempt) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert charge.runs == 2
    assert [r.outcome for r in results] == ["charged", "charged"]


def test_lock_on_same_forced_interleaving_charges_once() -> None:
    """The same schedule as above with the lock: B waits, looks again, and replays."""
    store, charge = IdempotencyStore(), CountingCharge()
    both_looked = threading.Barrier(2)
    first_lookups: set[str] = set()
    guard = threading.Lock()

    def trace(step: str, /, **detail: Any) -> None:
        name = threading.current_thread().name
        if step == "lookup" and not detail.get("again"):
            with guard:
                if name in first_lookups:
                    return
                first_lookups.add(name)
            both_looked.wait(5)

    results: list[Any] = []

    def attempt() -> None:
        results.append(execute(store, "k", FP, charge, lock=True, trace=trace))

    threads = [threading.Thread(target=attempt, name=f"t{i}") for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert charge.runs == 1
    assert sorted(r.outcome for r in results) == ["charged", "replayed"]


def test_the_lock_is_per_key_not_global() -> None:
    store = IdempotencyStore()
    inside, release = threading.Event(), threading.Event()

    def slow() -> Response:
        inside.set()
        release.wait(5)
        return Response(201, b"{}")

    holder = threading.Thread(target=execute, args=(store, "a", FP, slow))
    holder.start()
    try:
        assert inside.wait(5)
        # Key "a" is held; key "b" must not wait for it.
        assert execute(store, "b", FP, CountingCharge()).outcome == "charged"
        assert not release.is_set()
    finally:
        release.set()
        holder.join(5)


def test_trace_names_every_step_boundary_in_order() -> None:
    steps: list[str] = []
    store = IdempotencyStore()
    execute(store, "k", FP, CountingCharge(), trace=lambda step, **d: steps.append(step))
    assert steps == [
        "lookup", "lock wait", "lock acquire", "lookup", "reserve", "charging", "gateway charge",
        "record save",
    ]  # fmt: skip
    steps.clear()
    execute(store, "k", FP, CountingCharge(), trace=lambda step, **d: steps.append(step))
    assert steps == ["lookup", "fingerprint check"]


def test_store_cap_evicts_oldest_completed_records() -> None:
    store = IdempotencyStore(max_records=3)
    for i in range(5):
        store.complete(f"k{i}", FP, Response(201, b"{}"))
    assert [r.key for r in store.records()] == ["k2", "k3", "k4"]


def test_store_cap_keeps_in_progress_records() -> None:
    store = IdempotencyStore(max_records=2)
    store.reserve("busy", FP)
    for i in range(4):
        store.complete(f"k{i}", FP, Response(201, b"{}"))
    keys = [r.key for r in store.records()]
    assert "busy" in keys
    assert len(keys) == 2


class TestFingerprint:
    def test_key_order_does_not_matter(self) -> None:
        a = fingerprint("POST", "/api/charges", {"order_id": "42", "amount": 1, "currency": "VND"})
        b = fingerprint("POST", "/api/charges", {"currency": "VND", "amount": 1, "order_id": "42"})
        assert a == b

    def test_method_path_and_values_matter(self) -> None:
        body = {"order_id": "42", "amount": 1}
        base = fingerprint("POST", "/api/charges", body)
        assert fingerprint("PUT", "/api/charges", body) != base
        assert fingerprint("POST", "/api/refunds", body) != base
        assert fingerprint("POST", "/api/charges", {**body, "amount": 2}) != base

    def test_is_sha256_hex(self) -> None:
        value = fingerprint("POST", "/x", {})
        assert len(value) == 64 and int(value, 16) >= 0


def test_same_key_on_another_endpoint_is_a_mismatch_not_a_replay() -> None:
    store, charge = IdempotencyStore(), CountingCharge()
    execute(store, "k", FP, charge)
    refund = fingerprint("POST", "/api/refunds", {"charge": "ch_1", "amount": 100000})
    done = execute(store, "k", refund, charge)
    assert done.outcome == "conflict" and charge.runs == 1


@pytest.mark.parametrize("in_progress_s", [0, -5])
def test_an_in_progress_record_past_its_deadline_is_reclaimed(in_progress_s: float) -> None:
    """A deadline of 0 (or in the past) means "presumed dead", never "no deadline"."""
    clock = FakeClock()
    store = IdempotencyStore(in_progress_s=in_progress_s, clock=clock)
    store.reserve("k", FP)  # a request that reserved and then died
    charge = CountingCharge()
    done = execute(store, "k", FP, charge, in_flight="reject")
    assert done.outcome == "charged" and charge.runs == 1


def test_reject_answers_in_use_within_the_deadline() -> None:
    clock = FakeClock()
    store = IdempotencyStore(in_progress_s=30, clock=clock)
    store.reserve("k", FP)
    done = execute(store, "k", FP, CountingCharge(), in_flight="reject")
    assert done.outcome == "in_use" and done.response.status == 409
    assert done.response.header("Retry-After") == "30"
    clock.now += 30
    assert execute(store, "k", FP, CountingCharge(), in_flight="reject").outcome == "charged"


def test_a_duplicate_gives_up_on_the_lock_after_the_timeout() -> None:
    from demo.payments.idempotency import KeyBusy

    store = IdempotencyStore()
    held, done = threading.Event(), threading.Event()

    def holder() -> None:
        with store.lock("k"):
            held.set()
            done.wait(5)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(5)
    try:
        with pytest.raises(KeyBusy):
            execute(store, "k", FP, CountingCharge(), lock_timeout_s=0.05)
    finally:
        done.set()
        thread.join(5)
    assert store.lock_count() == 0
