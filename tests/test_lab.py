"""A lab end to end without HTTP, and the registry that bounds the number of labs."""

from __future__ import annotations

import json
import threading

import pytest

from demo.lab import Lab, LabRegistry, Settings
from demo.problems import Problem

BODY = b'{"order_id": "42", "amount": 100000}'


def lab(**settings: object) -> Lab:
    return Lab("t", settings=Settings(gateway_latency_ms=0).patched(settings))


def test_validation_failure_stores_nothing_and_a_corrected_retry_goes_through() -> None:
    the_lab = lab()
    response, entry = the_lab.create_charge(["k"], b'{"order_id": "42", "amount": 100000.0}')
    assert response.status == 422
    assert entry.outcome == "invalid"
    assert the_lab.store.records() == []
    assert the_lab.gateway.ledger() == []
    response, _ = the_lab.create_charge(["k"], BODY)
    assert response.status == 201
    assert len(the_lab.gateway.ledger()) == 1


def test_keyless_requests_each_charge() -> None:
    the_lab = lab()
    for _ in range(3):
        response, entry = the_lab.create_charge([], BODY)
        assert response.status == 201
        assert entry.key is None
    assert len(the_lab.gateway.ledger()) == 3
    assert the_lab.store.records() == []  # no shared keyless record


def test_log_records_steps_and_outcome() -> None:
    the_lab = lab()
    the_lab.create_charge(["k"], BODY, action="Pay")
    _, entry = the_lab.create_charge(["k"], BODY, action="Retry")
    assert entry.outcome == "replayed"
    assert entry.action == "Retry"
    assert [s.name for s in entry.steps] == ["validate", "lookup", "fingerprint check", "respond"]
    assert entry.charge_id == "ch_0001"
    state = the_lab.state()
    assert [r["outcome"] for r in state["requests"]] == ["charged", "replayed"]
    json.dumps(state)  # JSON-ready


def test_lock_off_double_submit_charges_twice_lock_on_once() -> None:
    for lock, expected in ((False, 2), (True, 1)):
        the_lab = Lab("t", settings=Settings(lock=lock, gateway_latency_ms=200))
        start = threading.Barrier(2)

        def send(the_lab: Lab = the_lab, start: threading.Barrier = start) -> None:
            start.wait(5)
            the_lab.create_charge(["k"], BODY)

        threads = [threading.Thread(target=send) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        assert len(the_lab.gateway.ledger()) == expected, f"lock={lock}"


def test_gateway_failure_is_502_and_releases_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from demo.gateway import GatewayError

    the_lab = lab()

    def down(**_: object) -> None:
        raise GatewayError("connection reset")

    monkeypatch.setattr(the_lab.gateway, "charge", down)
    response, entry = the_lab.create_charge(["k"], BODY)
    assert response.status == 502
    assert json.loads(response.body)["type"] == "/problems/gateway-error"
    assert entry.outcome == "error"
    assert the_lab.store.get("k") is None
    monkeypatch.undo()
    response, _ = the_lab.create_charge(["k"], BODY)
    assert response.status == 201


class TestSettings:
    def test_patch(self) -> None:
        assert Settings().patched({"lock": False, "gateway_latency_ms": 0}) == Settings(
            lock=False, gateway_latency_ms=0
        )

    @pytest.mark.parametrize(
        "changes",
        [
            {"lock": "no"},
            {"lock": 0},
            {"gateway_latency_ms": -1},
            {"gateway_latency_ms": 3001},
            {"gateway_latency_ms": 1.5},
            {"gateway_latency_ms": True},
            {"ttl_s": 0},
            {"colour": "red"},
            [],
            "lock",
        ],
    )
    def test_bad_values_are_422(self, changes: object) -> None:
        with pytest.raises(Problem) as caught:
            Settings().patched(changes)
        assert caught.value.status == 422

    def test_update_applies_to_store_and_gateway(self) -> None:
        the_lab = lab()
        the_lab.update_settings({"ttl_s": 60, "gateway_latency_ms": 5})
        assert the_lab.store.ttl_s == 60
        assert the_lab.gateway.latency_ms == 5


def test_reset_keeps_settings() -> None:
    the_lab = lab(lock=False)
    the_lab.create_charge(["k"], BODY)
    the_lab.reset()
    assert (
        the_lab.gateway.ledger() == []
        and the_lab.store.records() == []
        and the_lab.requests() == []
    )
    assert the_lab.settings.lock is False


def test_new_order_id_skips_used_and_shown_ids() -> None:
    the_lab = lab()
    assert the_lab.new_order_id() == "42"
    assert the_lab.new_order_id(after="42") == "43"
    the_lab.create_charge(["k"], b'{"order_id": "44", "amount": 1}')
    assert the_lab.new_order_id(after="43") == "45"
    assert the_lab.new_order_id(after="not-a-number") not in {"42", "43", "44"}


def test_request_log_is_a_ring_buffer() -> None:
    the_lab = Lab("t", settings=Settings(gateway_latency_ms=0), max_log=5)
    for i in range(8):
        the_lab.create_charge([f"k{i}"], BODY)
    assert [e.key for e in the_lab.requests()] == ["k3", "k4", "k5", "k6", "k7"]


class TestRegistry:
    def test_same_id_same_lab_and_labs_are_isolated(self) -> None:
        registry = LabRegistry()
        a, b = registry.get("a"), registry.get("b")
        assert registry.get("a") is a
        a.create_charge(["k"], BODY)
        assert b.gateway.ledger() == []

    @pytest.mark.parametrize("bad", ["", "a" * 65, "a.b", "a/b", "é", "a b", "../x"])
    def test_bad_ids_are_404(self, bad: str) -> None:
        with pytest.raises(Problem) as caught:
            LabRegistry().get(bad)
        assert caught.value.status == 404

    def test_cap_evicts_least_recently_used(self) -> None:
        now = [0.0]
        registry = LabRegistry(max_labs=3, protect_s=60, clock=lambda: now[0])
        first = registry.get("l0")
        for i in range(1, 3):
            registry.get(f"l{i}")
        now[0] = 100  # everything is past the protection window
        registry.get("l0")  # used again: now the most recent
        registry.get("l3")
        assert len(registry) == 3
        assert registry.get("l0") is first  # survived; l1 was evicted
        assert registry.get("l1") is not None  # a new, empty l1 (evicting l2)

    def test_a_burst_of_new_ids_cannot_evict_labs_in_use(self) -> None:
        now = [0.0]
        registry = LabRegistry(max_labs=3, protect_s=60, clock=lambda: now[0])
        victim = registry.get("victim")
        registry.get("a")
        registry.get("b")
        now[0] = 10
        with pytest.raises(Problem) as caught:
            registry.get("flood")
        assert caught.value.status == 503
        assert registry.get("victim") is victim

    def test_idle_labs_expire(self) -> None:
        now = [0.0]
        registry = LabRegistry(idle_s=60, clock=lambda: now[0])
        old = registry.get("a")
        now[0] = 59
        assert registry.get("a") is old
        now[0] = 59 + 60
        assert len(registry) == 0
        assert registry.get("a") is not old

    def test_new_ids_are_valid_and_unguessable(self) -> None:
        ids = {LabRegistry.new_id() for _ in range(100)}
        assert len(ids) == 100
        assert all(LabRegistry.valid_id(i) and len(i) >= 20 for i in ids)


def test_expired_labs_are_freed_at_once() -> None:
    """No reference cycle keeps an expired lab alive until the garbage collector runs."""
    import gc
    import weakref

    now = [0.0]
    registry = LabRegistry(idle_s=60, clock=lambda: now[0])
    lab = registry.get("gone")
    lab.create_charge(["k"], BODY)
    ref = weakref.ref(lab)
    del lab
    gc.disable()
    try:
        now[0] = 61
        assert len(registry) == 0
        assert ref() is None
    finally:
        gc.enable()
