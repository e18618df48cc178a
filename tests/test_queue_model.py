"""A model-based test of the queue lab: random sequences of enqueue, duplicate enqueue,
work, an armed crash and clock moves, checking after every step that

- with dedup on, each idempotency key has at most one e-mail, beyond the ones the
  consumer's crash window explains (a crash between the side effect and its record with
  the outbox off: one more e-mail each, which is what the lab teaches);
- no acked job is lost under at-least-once: every acked message's job has its e-mail,
  sent or waiting in the outbox.

On the in-memory broker, and on Redis Streams with fewer examples."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from demo.engine.clock import VirtualClock
from demo.queue.lab import QueueLab
from demo.queue.memory import MemoryBroker

KEYS = 4


def job(n: int) -> dict[str, Any]:
    return {"id": f"send-invoice-{n}", "idempotency_key": f"invoice:{n}:email",
            "payload": {"invoice_id": n}}  # fmt: skip


class QueueMachine(RuleBasedStateMachine):
    make_broker: Callable[[], Any] = MemoryBroker

    def __init__(self) -> None:
        super().__init__()
        self.lab = QueueLab(clock=VirtualClock(lambda: 0.0), make_broker=type(self).make_broker)
        self.lab.update_settings({"dedup": True, "provider_dedup": True, "max_attempts": 10})
        self.window: Counter[str] = Counter()  # crashes in the consumer's window, per key

    def teardown(self) -> None:
        self.lab.reset()  # deletes a Redis broker's keys

    @rule(n=st.integers(1, KEYS))
    def enqueue(self, n: int) -> None:
        self.lab.enqueue(job(n))

    @rule()
    def duplicate_enqueue(self) -> None:
        self.lab.producer_retry()

    @rule()
    def work(self) -> None:
        entry = self.lab.work()
        assert entry.outcome in ("processed", "duplicate_skipped", "crashed", "idle")
        if entry.crashed_at == "after_effect" and not entry.settings["outbox"]:
            self.window[entry.key or ""] += 1

    @rule(point=st.sampled_from(["after_receive", "after_effect", "after_record",
                                 "relay_after_send"]))  # fmt: skip
    def crash(self, point: str) -> None:
        self.lab.update_settings({"crash_at": point})

    @rule(outbox=st.booleans())
    def switch_outbox(self, outbox: bool) -> None:
        self.lab.update_settings({"outbox": outbox})

    @rule(seconds=st.integers(1, 45))
    def clock(self, seconds: int) -> None:
        self.lab.clock.advance(seconds)

    @invariant()
    def at_most_one_email_per_key_beyond_the_crash_window(self) -> None:
        per_key = Counter(e["idempotency_key"] for e in self.lab.state()["emails"])
        for key, count in per_key.items():
            assert count <= 1 + self.window[key], (key, count, self.window)

    @invariant()
    def no_acked_job_is_lost(self) -> None:
        state = self.lab.state()
        done = {e["idempotency_key"] for e in state["emails"]}
        done |= {r["idempotency_key"] for r in state["outbox"] if not r["sent"]}
        acked = {m["idempotency_key"] for m in state["messages"] if m["state"] == "acked"}
        assert acked <= done, (acked - done, state["deliveries"][-3:])


def test_the_model_on_the_memory_broker() -> None:
    run_state_machine_as_test(
        QueueMachine,
        settings=settings(max_examples=150, stateful_step_count=40, deadline=None),
    )


def test_the_model_on_redis(redis_url: str) -> None:
    from demo.queue.redis_streams import connect, redis_brokers

    brokers = redis_brokers(connect(redis_url, timeout_s=10), "model", base="idem-test:model:")
    machine = type("RedisQueueMachine", (QueueMachine,), {"make_broker": staticmethod(brokers)})
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=15,
            stateful_step_count=30,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),  # fmt: skip
    )
