"""Benchmarks of the queue lab, in one run: the delivery-semantics simulator's throughput
(messages/s), and the work rate of the lab on the Redis Streams broker against the
in-memory one (a job enqueued, then worked off: receive, dedup check, e-mail, record, ack,
the relay). Prints a markdown table.

    python bench/queue_lab.py             # Redis: $DEMO_REDIS_URL, else a redis-server it starts
    python bench/queue_lab.py --jobs 200  # fewer jobs per broker run

Measured in process (no HTTP: bench/run.py measures the server). One run on a shared
machine: quote the ratio of the two brokers, not their absolute rates.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from demo.engine.clock import VirtualClock  # noqa: E402
from demo.queue.lab import QueueLab  # noqa: E402
from demo.queue.memory import MemoryBroker  # noqa: E402
from demo.queue.redis_streams import connect, redis_brokers  # noqa: E402
from demo.queue.simulator import simulate  # noqa: E402


def simulator_rows(runs: int) -> list[tuple[str, str]]:
    """100,000 messages per mode, at two loss rates: the median of ``runs`` runs."""
    rows = []
    for loss in (0.2, 0.9):
        for mode in ("at_most_once", "at_least_once", "idempotent"):
            times = []
            for seed in range(runs):
                started = time.perf_counter()
                result = simulate(mode=mode, messages=100_000, loss=loss, ack_loss=loss, seed=seed)
                times.append(time.perf_counter() - started)
            took = statistics.median(times)
            rows.append((
                f"Simulator, {mode}, 100,000 messages, loss = ack_loss = {loss} "
                f"(median of {runs})",
                f"{took * 1e6:,.0f} µs, {100_000 / took:,.0f} messages/s "
                f"({result.sent:,} sends, {result.duplicate_effects:,} duplicate effects)",
            ))  # fmt: skip
    return rows


def work_rate(make_broker: Callable[[], Any], jobs: int) -> tuple[float, float]:
    """Enqueue ``jobs`` jobs and work them off, dedup and outbox on: (enqueues/s, jobs/s)."""
    lab = QueueLab(clock=VirtualClock(lambda: 0.0), make_broker=make_broker)
    lab.update_settings({"dedup": True, "outbox": True})
    try:
        started = time.perf_counter()
        for n in range(jobs):
            lab.enqueue(
                {"id": f"j{n}", "idempotency_key": f"k{n}", "payload": {"invoice_id": n + 1}}
            )
        enqueued = time.perf_counter()
        worked = 0
        while lab.work().outcome != "idle":
            worked += 1
        done = time.perf_counter()
        assert worked == jobs and len(lab.state()["emails"]) == jobs
        return jobs / (enqueued - started), jobs / (done - enqueued)
    finally:
        lab.reset()


@contextmanager
def a_redis() -> Iterator[str]:
    url = os.environ.get("DEMO_REDIS_URL")
    if url:
        yield url
        return
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("No Redis: set DEMO_REDIS_URL or install redis-server")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = connect(url)
        for _ in range(300):
            try:
                client.ping()
                break
            except Exception:
                time.sleep(0.05)
        yield url
    finally:
        server.terminate()
        server.wait()


def broker_rows(jobs: int, runs: int) -> list[tuple[str, str]]:
    with a_redis() as url:
        client = connect(url)
        redis_factory = redis_brokers(client, "bench", base="idem-bench:")
        memory, redis = [], []
        for _ in range(runs):  # alternate, so the machine's load falls on both alike
            memory.append(work_rate(MemoryBroker, jobs))
            redis.append(work_rate(redis_factory, jobs))
        server = client.info("server")["redis_version"]
    mem_in, mem_work = (statistics.median(r[i] for r in memory) for i in (0, 1))
    red_in, red_work = (statistics.median(r[i] for r in redis) for i in (0, 1))
    what = f"{jobs} jobs, dedup and outbox on, median of {runs} alternating runs"
    return [
        (f"Enqueue rate, in memory / Redis {server} Streams ({what})",
         f"{mem_in:,.0f} / {red_in:,.0f} jobs/s, ratio {mem_in / red_in:.1f}"),
        (f"Work rate (receive to ack, then the relay), in memory / Redis ({what})",
         f"{mem_work:,.0f} / {red_work:,.0f} jobs/s, ratio {mem_work / red_work:.1f}"),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=500, help="jobs per broker run (default 500)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each (default 5)")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = simulator_rows(args.runs) + broker_rows(args.jobs, args.runs)
    took = time.perf_counter() - started
    machine = f"{platform.machine()}, {os.cpu_count()} cores"
    print(f"Measured {time.strftime('%Y-%m-%d')} on {machine}, "
          f"Python {platform.python_version()}, in {took:.0f} s.\n")  # fmt: skip
    print("| Benchmark | Measured |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
