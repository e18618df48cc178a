"""The fake gateway (the side effect) and how the ledger counts double charges."""

from __future__ import annotations

import threading

from demo.payments.gateway import FakeGateway, summarise


def charge(gw: FakeGateway, order: str, key: str | None = "k") -> str:
    return gw.charge(order_id=order, amount=100, currency="VND", idempotency_key=key).id


def test_every_call_charges_and_ids_are_sequential() -> None:
    gw = FakeGateway(latency_ms=0)
    assert [charge(gw, "1"), charge(gw, "1")] == ["ch_0001", "ch_0002"]
    assert len(gw.ledger()) == 2


def test_latency_is_slept_outside_the_ledger_lock() -> None:
    slept: list[float] = []
    gw = FakeGateway(latency_ms=250, sleep=slept.append)
    charge(gw, "1")
    assert slept == [0.25]


def test_concurrent_charges_overlap() -> None:
    gw = FakeGateway(latency_ms=200)
    threads = [threading.Thread(target=charge, args=(gw, str(i))) for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert len({c.id for c in gw.ledger()}) == 5


def test_ledger_is_a_ring_buffer() -> None:
    gw = FakeGateway(latency_ms=0, max_ledger=3)
    for i in range(5):
        charge(gw, str(i))
    assert [c.order_id for c in gw.ledger()] == ["2", "3", "4"]


def test_summary_marks_orders_charged_more_than_once() -> None:
    gw = FakeGateway(latency_ms=0)
    charge(gw, "42", "a")
    charge(gw, "42", "b")  # another key, same order: still a double charge
    charge(gw, "43")
    summary = summarise(gw.ledger())
    assert (summary.charged, summary.intended, summary.extra) == (3, 2, 1)
    assert summary.doubled == {"42"}


def test_clear_restarts_ids() -> None:
    gw = FakeGateway(latency_ms=0)
    charge(gw, "1")
    gw.clear()
    assert gw.ledger() == []
    assert charge(gw, "1") == "ch_0001"
