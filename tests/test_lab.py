"""A lab end to end without HTTP, and the registry that bounds the number of labs."""

from __future__ import annotations

import contextlib
import json
import threading

import pytest

from demo.engine.problems import Problem
from demo.payments.settings import Settings
from demo.registry import LabRegistry
from demo.workspace import Workspace

BODY = b'{"order_id": "42", "amount": 100000}'


def lab(**settings: object) -> Workspace:
    return Workspace("t", settings=Settings(gateway_latency_ms=0).patched(settings))


def test_validation_failure_stores_nothing_and_a_corrected_retry_goes_through() -> None:
    the_lab = lab()
    response, entry = the_lab.payments.create_charge(
        ["k"], b'{"order_id": "42", "amount": 100000.0}'
    )
    assert response.status == 422
    assert entry.outcome == "invalid"
    assert the_lab.payments.store.records() == []
    assert the_lab.payments.gateway.ledger() == []
    response, _ = the_lab.payments.create_charge(["k"], BODY)
    assert response.status == 201
    assert len(the_lab.payments.gateway.ledger()) == 1


def test_keyless_requests_each_charge() -> None:
    the_lab = lab()
    for _ in range(3):
        response, entry = the_lab.payments.create_charge([], BODY)
        assert response.status == 201
        assert entry.key is None
    assert len(the_lab.payments.gateway.ledger()) == 3
    assert the_lab.payments.store.records() == []  # no shared keyless record


def test_log_records_steps_and_outcome() -> None:
    the_lab = lab()
    the_lab.payments.create_charge(["k"], BODY, action="Pay")
    _, entry = the_lab.payments.create_charge(["k"], BODY, action="Retry")
    assert entry.outcome == "replayed"
    assert entry.action == "Retry"
    assert [s.name for s in entry.steps] == ["validate", "lookup", "fingerprint check", "respond"]
    assert entry.charge_id == "ch_0001"
    state = the_lab.state()
    assert [r["outcome"] for r in state["requests"]] == ["charged", "replayed"]
    json.dumps(state)  # JSON-ready


def test_lock_off_double_submit_charges_twice_lock_on_once() -> None:
    for lock, expected in ((False, 2), (True, 1)):
        the_lab = Workspace("t", settings=Settings(lock=lock, gateway_latency_ms=200))
        start = threading.Barrier(2)

        def send(the_lab: Workspace = the_lab, start: threading.Barrier = start) -> None:
            start.wait(5)
            the_lab.payments.create_charge(["k"], BODY)

        threads = [threading.Thread(target=send) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        assert len(the_lab.payments.gateway.ledger()) == expected, f"lock={lock}"


def test_gateway_failure_is_502_and_releases_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from demo.payments.gateway import GatewayError

    the_lab = lab()

    def down(**_: object) -> None:
        raise GatewayError("connection reset")

    monkeypatch.setattr(the_lab.payments.gateway, "charge", down)
    response, entry = the_lab.payments.create_charge(["k"], BODY)
    assert response.status == 502
    assert json.loads(response.body)["type"] == "/problems/gateway-error"
    assert entry.outcome == "error"
    assert the_lab.payments.store.get("k") is None
    monkeypatch.undo()
    response, _ = the_lab.payments.create_charge(["k"], BODY)
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
        the_lab.payments.update_settings({"ttl_s": 60, "gateway_latency_ms": 5})
        assert the_lab.payments.store.ttl_s == 60
        assert the_lab.payments.gateway.latency_ms == 5


def test_reset_keeps_settings() -> None:
    the_lab = lab(lock=False)
    the_lab.payments.create_charge(["k"], BODY)
    the_lab.reset()
    assert (
        the_lab.payments.gateway.ledger() == []
        and the_lab.payments.store.records() == []
        and the_lab.payments.requests() == []
    )
    assert the_lab.payments.settings.lock is False


def test_new_order_id_skips_used_and_shown_ids() -> None:
    the_lab = lab()
    assert the_lab.payments.new_order_id() == "42"
    assert the_lab.payments.new_order_id(after="42") == "43"
    the_lab.payments.create_charge(["k"], b'{"order_id": "44", "amount": 1}')
    assert the_lab.payments.new_order_id(after="43") == "45"
    assert the_lab.payments.new_order_id(after="not-a-number") not in {"42", "43", "44"}


def test_request_log_is_a_ring_buffer() -> None:
    the_lab = Workspace("t", settings=Settings(gateway_latency_ms=0), max_log=5)
    for i in range(8):
        the_lab.payments.create_charge([f"k{i}"], BODY)
    assert [e.key for e in the_lab.payments.requests()] == ["k3", "k4", "k5", "k6", "k7"]


def fast(lab_id: str) -> Workspace:
    """A lab whose gateway answers at once."""
    return Workspace(lab_id, settings=Settings(gateway_latency_ms=0))


class TestRegistry:
    def test_same_id_same_lab_and_labs_are_isolated(self) -> None:
        registry = LabRegistry()
        a, b = registry.get("a"), registry.get("b")
        assert registry.get("a") is a
        a.payments.create_charge(["k"], BODY)
        assert b.payments.gateway.ledger() == []

    @pytest.mark.parametrize("bad", ["", "a" * 65, "a.b", "a/b", "é", "a b", "../x"])
    def test_bad_ids_are_404(self, bad: str) -> None:
        with pytest.raises(Problem) as caught:
            LabRegistry().get(bad)
        assert caught.value.status == 404

    def test_a_blank_lab_is_evicted_first_and_a_lab_with_data_is_kept(self) -> None:
        now = [0.0]
        registry = LabRegistry(make_lab=fast, max_labs=3, fresh_s=5, clock=lambda: now[0])
        kept = registry.get("kept", source="a")
        kept.payments.create_charge(["k"], BODY)
        blank = registry.get("blank", source="b")  # a write that left nothing, e.g. a reset
        registry.get("other", source="c").payments.create_charge(["k"], BODY)
        now[0] = 100
        registry.get("new", source="d")
        assert registry.peek("blank") is None and registry.peek("kept") is kept
        assert blank.is_blank() and not kept.is_blank()

    def test_active_in_use_leaves_out_unproven_and_blank_labs(self) -> None:
        now = [0.0]
        registry = LabRegistry(make_lab=fast, clock=lambda: now[0])
        registry.get("person", source="a").payments.create_charge(["k"], BODY)
        registry.get("flood", source="b").payments.create_charge(["k"], BODY)  # written once only
        registry.get("blank", source="c")
        now[0] = 5
        registry.get("person", source="a")  # an open page comes back: proven
        registry.get("blank", source="c")  # proven, but holds nothing
        assert len(registry.active(60)) == 3
        assert registry.active(60, in_use=True) == [registry.peek("person")]

    def test_a_full_registry_of_labs_in_use_answers_503_with_retry_after(self) -> None:
        now = [0.0]
        registry = LabRegistry(
            make_lab=fast, max_labs=2, idle_s=7200, fresh_s=5, clock=lambda: now[0]
        )
        for name in ("a", "b"):
            registry.get(name, source=name).payments.create_charge(["k"], BODY)
        now[0] = 2
        for name in ("a", "b"):
            registry.find(name)  # their pages poll: proven
        now[0] = 62  # a laptop lid closed for a minute: still within the idle time
        with pytest.raises(Problem) as caught:
            registry.get("c", source="c")
        assert caught.value.status == 503
        assert caught.value.retry_after_s == 7200 - 60  # when "a" will have been idle 2 h
        assert {registry.peek("a"), registry.peek("b")} != {None}

    def test_reading_an_unknown_lab_never_creates_it(self) -> None:
        registry = LabRegistry(make_lab=fast, max_labs=1)
        assert registry.find("nobody") is None
        shown = registry.view("nobody")
        assert shown.id == "nobody" and shown.is_blank()
        assert len(registry) == 0 and registry.peek("nobody") is None
        with pytest.raises(Problem) as caught:
            registry.view("bad id")
        assert caught.value.status == 404

    @pytest.mark.parametrize("flood_source", ["flood", "room"])
    def test_a_flood_of_new_ids_never_evicts_a_lab_in_use(self, flood_source: str) -> None:
        """10,000 writes to random ids from one client, 1 ms apart: every lab with data
        used within the idle time survives, even one behind the flooder's own address,
        and a newcomer from another address gets a lab at once, during the flood."""
        now = [0.0]
        registry = LabRegistry(
            make_lab=fast, max_labs=200, idle_s=7200, fresh_s=5, clock=lambda: now[0]
        )
        established = []
        for i in range(30):
            lab = registry.get(f"attendee-{i}", source="room")
            lab.payments.create_charge(["k"], BODY)
            established.append(lab)
        now[0] = 3
        for lab in established:
            registry.find(lab.id)  # the page polls
        now[0] = 600  # ten minutes of silence: laptop lids closed
        refused = 0
        newcomer_waited = None
        for n in range(10_000):
            now[0] += 0.001
            try:
                registry.get(f"flood-{n}", source=flood_source).set_view(present=True)
            except Problem as problem:
                assert problem.status == 503 and problem.retry_after_s is not None
                refused += 1
            if n == 5_000:
                start = now[0]
                registry.get("newcomer", source="elsewhere").payments.create_charge(["k"], BODY)
                newcomer_waited = now[0] - start
        assert all(registry.peek(lab.id) is lab for lab in established)
        assert registry.peek("newcomer") is not None and newcomer_waited == 0
        assert len(registry) <= 200
        # The flood replaces its own labs only once they are 5 s old: 200 per 5 s at most.
        assert 10_000 - refused <= 200 + 200 * 10 / 5 + 1

    def test_a_new_lab_is_never_dropped_by_its_own_addresss_flood_before_it_is_proven(
        self,
    ) -> None:
        now = [0.0]
        registry = LabRegistry(make_lab=fast, max_labs=50, fresh_s=5, clock=lambda: now[0])
        registry.get("elsewhere", source="other").payments.create_charge(["k"], BODY)
        now[0] = 1
        registry.find("elsewhere")  # its page polls: proven

        def flood(writes: range, step_s: float) -> None:
            for n in writes:
                now[0] += step_s
                with contextlib.suppress(Problem):
                    registry.get(f"flood-{n}", source="room").set_view(present=True)

        flood(range(100), 0.01)  # the registry is full of the flood's labs
        now[0] += 5  # and they are old enough to be replaced
        mine = registry.get("mine", source="room")
        mine.set_view(language="vi")
        flood(range(100, 2_100), 0.001)  # 2 s of flood from the same address, 1,000 a second
        assert registry.find("mine") is mine  # the page polls: proven
        flood(range(2_100, 7_100), 0.001)
        assert registry.peek("mine") is mine and registry.peek("elsewhere") is not None

    def test_a_classroom_behind_one_address_all_get_labs(self) -> None:
        now = [0.0]
        registry = LabRegistry(make_lab=fast, max_labs=200, fresh_s=5, clock=lambda: now[0])
        for i in range(60):
            now[0] += 0.5  # a room arriving within half a minute
            registry.get(f"seat-{i}", source="203.0.113.7").payments.create_charge(["k"], BODY)
        assert len(registry) == 60
        now[0] += 5
        for i in range(60):
            assert registry.find(f"seat-{i}") is not None

    def test_replays_have_their_own_quota(self) -> None:
        now = [0.0]
        registry = LabRegistry(make_lab=fast, max_labs=2, max_replays=3, clock=lambda: now[0])
        mine = registry.get("mine")
        mine.payments.create_charge(["k"], BODY)
        replays = []
        for _ in range(10):
            now[0] += 1
            replays.append(registry.create_replay())
        assert registry.peek("mine") is mine
        assert [registry.peek(r.id) is r for r in replays] == [False] * 7 + [True] * 3
        registry.find(replays[7].id)  # used again: the most recent replay
        registry.create_replay()
        assert registry.peek(replays[7].id) is not None and registry.peek(replays[8].id) is None
        registry.get("theirs")  # the second attendee slot is still free
        assert len(registry) == 2 + 3

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
    lab.payments.create_charge(["k"], BODY)
    ref = weakref.ref(lab)
    del lab
    gc.disable()
    try:
        now[0] = 61
        assert len(registry) == 0
        assert ref() is None
    finally:
        gc.enable()
