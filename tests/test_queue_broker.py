"""The broker's semantics (SQS/BullMQ-like), the same tests on both brokers: in memory
and on Redis Streams."""

from __future__ import annotations

from typing import Any

import pytest

from demo.engine.problems import Problem
from demo.queue.jobs import Job, parse_job

JOB = parse_job({"id": "send-invoice-42", "idempotency_key": "invoice:42:email",
                 "payload": {"invoice_id": 42}})  # fmt: skip


def job(n: int) -> Job:
    return parse_job({"id": f"j{n}", "idempotency_key": f"k{n}", "payload": {"invoice_id": n}})


def receive(broker: Any, now: float, **kw: Any) -> Any:
    args = {"visibility_timeout_s": 30, "max_attempts": 3, "consumer": "worker-1", **kw}
    return broker.receive(now=now, **args)


def states(broker: Any, now: float, max_attempts: int = 3) -> list[tuple[str, int]]:
    return [(m.state, m.receive_count) for m in broker.messages(now=now, max_attempts=max_attempts)]


def test_publish_gives_a_new_message_per_send_even_for_the_same_job(make_broker: Any) -> None:
    broker = make_broker()
    first, second = broker.publish(JOB), broker.publish(JOB)
    assert first != second
    listed = broker.messages(now=0, max_attempts=3)
    assert [m.message_id for m in listed] == [first, second]
    assert {m.job for m in listed} == {JOB}
    assert states(broker, 0) == [("ready", 0), ("ready", 0)]


def test_receive_hides_the_message_until_the_visibility_timeout(make_broker: Any) -> None:
    broker = make_broker()
    sent = broker.publish(JOB)
    got = receive(broker, 100).delivery
    assert (got.message_id, got.job, got.receive_count) == (sent, JOB, 1)
    assert receive(broker, 129).delivery is None  # hidden for 30 s
    assert states(broker, 129) == [("in_flight", 1)]
    again = receive(broker, 130).delivery  # the timeout passed: redelivered, count + 1
    assert (again.message_id, again.receive_count) == (sent, 2)


def test_ack_deletes_the_message_for_good(make_broker: Any) -> None:
    broker = make_broker()
    sent = broker.publish(JOB)
    receive(broker, 0)
    assert broker.ack(sent) is True
    assert broker.ack(sent) is False  # not in flight any more
    assert receive(broker, 1000).delivery is None
    assert states(broker, 1000) == [("acked", 1)]


def test_oldest_visible_message_first(make_broker: Any) -> None:
    broker = make_broker()
    ids = [broker.publish(job(n)) for n in range(3)]
    assert receive(broker, 0).delivery.message_id == ids[0]
    assert receive(broker, 0).delivery.message_id == ids[1]
    assert receive(broker, 31).delivery.message_id == ids[0]  # visible again, and older


def test_dead_letter_after_max_attempts_receives(make_broker: Any) -> None:
    broker = make_broker()
    sent = broker.publish(JOB)
    counts = [receive(broker, 31 * n).delivery.receive_count for n in range(3)]
    assert counts == [1, 2, 3]
    assert states(broker, 92) == [("dead", 3)]  # shown as bound for the DLQ
    moved = receive(broker, 93)
    assert (moved.delivery, moved.dead_lettered) == (None, (sent,))
    assert states(broker, 10_000) == [("dead", 3)]
    assert broker.ack(sent) is False


def test_ack_on_receive_is_at_most_once(make_broker: Any) -> None:
    broker = make_broker()
    sent = broker.publish(JOB)
    got = receive(broker, 0, ack_on_receive=True).delivery
    assert got.message_id == sent
    assert states(broker, 0) == [("acked", 1)]
    assert receive(broker, 1000).delivery is None  # never comes back


def test_clear_empties_the_queue(make_broker: Any) -> None:
    broker = make_broker()
    broker.publish(JOB)
    receive(broker, 0)
    broker.clear()
    assert broker.messages(now=0, max_attempts=3) == []
    assert receive(broker, 1000).delivery is None


def test_a_full_queue_drops_the_oldest_finished_message_or_refuses() -> None:
    from demo.queue.memory import MemoryBroker

    broker = MemoryBroker(max_messages=2)
    first = broker.publish(job(1))
    broker.publish(job(2))
    with pytest.raises(Problem) as full:
        broker.publish(job(3))
    assert (full.value.status, full.value.slug) == (503, "queue-full")
    receive(broker, 0)
    broker.ack(first)
    broker.publish(job(3))  # the acked one made room
    assert [m.job.id for m in broker.messages(now=0, max_attempts=3)] == ["j2", "j3"]


def test_the_redis_queue_is_bounded_too(redis_url: str) -> None:
    import redis

    from demo.queue.redis_streams import RedisStreamsBroker

    client = redis.Redis.from_url(redis_url, decode_responses=True)
    broker = RedisStreamsBroker(client, "idem-test:bounded:", max_messages=2)
    try:
        first = broker.publish(job(1))
        broker.publish(job(2))
        with pytest.raises(Problem) as full:
            broker.publish(job(3))
        assert full.value.status == 503
        receive(broker, 0)
        broker.ack(first)
        broker.publish(job(3))
        assert [m.job.id for m in broker.messages(now=0, max_attempts=3)] == ["j2", "j3"]
        assert 0 < client.ttl(broker.stream) <= 24 * 3600  # an abandoned workspace's keys expire
    finally:
        broker.clear()
    assert not any(client.exists(k) for k in broker.redis_keys())


def test_a_redis_that_went_away_answers_503_not_500() -> None:
    from demo.queue.redis_streams import RedisStreamsBroker, connect

    client = connect("redis://127.0.0.1:1/0", timeout_s=0.5)  # nothing listens on port 1
    broker = RedisStreamsBroker(client, "idem-test:gone:")
    for call in (lambda: broker.publish(JOB), lambda: receive(broker, 0),
                 lambda: broker.messages(now=0, max_attempts=3), broker.clear):  # fmt: skip
        with pytest.raises(Problem) as gone:
            call()
        assert (gone.value.status, gone.value.slug) == (503, "broker-unavailable")
