"""Benchmarks: race visibility, the idempotency layer's overhead, a workshop's load, and
the page's weight. Prints a markdown table and writes it to docs/benchmarks.md.

    python bench/run.py            # about three minutes
    python bench/run.py --quick    # a smoke run with small numbers (not for the table)

Every number comes from real HTTP against ``python -m demo`` started in a subprocess on
loopback. Quote ratios from one run: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("DEMO_CHROMIUM", "/usr/bin/chromium")


# -- the server under test ------------------------------------------------------------


@contextmanager
def server(*args: str) -> Iterator[tuple[str, int, int]]:
    """``python -m demo`` on a free port: yields (host, port, pid)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "demo", "--port", "0", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        yield "127.0.0.1", port, proc.pid
    finally:
        proc.terminate()
        proc.wait(10)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Client:
    """One keep-alive HTTP connection per thread."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.local = threading.local()

    def request(
        self, method: str, path: str, body: object = None, key: str | None = None
    ) -> tuple[int, bytes, float]:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        headers = {"Content-Type": "application/json"}
        if key is not None:
            headers["Idempotency-Key"] = key
        data = None if body is None else json.dumps(body)
        started = time.perf_counter()
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException):
            conn.close()
            self.local.conn = None
            raise
        if response.getheader("Connection", "").lower() == "close":
            conn.close()
            self.local.conn = None
        return response.status, payload, (time.perf_counter() - started) * 1000


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


# -- 1. race visibility -----------------------------------------------------------------


def double_submit(client: Client, lab: str, body: dict[str, object], key: str) -> None:
    """Two requests with one key and body, released at the same moment."""
    start = threading.Barrier(2)

    def send() -> None:
        start.wait()
        client.request("POST", f"/lab/{lab}/api/charges", body, key=key)

    threads = [threading.Thread(target=send) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


LABS_ON = 25  # 10,000 pairs over 25 labs: 400 charges each, inside a lab's 500-charge ledger


def race_visibility(trials: int, pairs: int) -> list[tuple[str, str, str]]:
    rows = []
    with server() as (host, port, _):
        client = Client(host, port)
        # Lock off, default latency: two requests with one key at the same moment.
        client.request("PATCH", "/lab/race-off/api/settings", {"lock": False})
        doubled = 0
        for trial in range(trials):
            lab = f"race-off-{trial}"
            client.request("PATCH", f"/lab/{lab}/api/settings", {"lock": False})
            body = {"order_id": str(trial), "amount": 100}
            double_submit(client, lab, body, f"k{trial}")
            state = json.loads(client.request("GET", f"/lab/{lab}/api/state")[1])
            doubled += state["summary"]["charged"] > 1
        rows.append(
            (
                f"Race visibility: lock off, 300 ms latency, {trials} real HTTP double-submits",
                f"{100 * doubled / trials:.1f}% double-charged",
                "≥ 99%",
            )
        )
        # Lock on, latency 0: many concurrent duplicate pairs, spread over labs.
        for n in range(LABS_ON):
            client.request("PATCH", f"/lab/race-on-{n}/api/settings", {"gateway_latency_ms": 0})

        def pair(i: int) -> None:
            double_submit(
                client, f"race-on-{i % LABS_ON}", {"order_id": str(i), "amount": 100}, f"p{i}"
            )

        with ThreadPoolExecutor(16) as pool:
            list(pool.map(pair, range(pairs)))
        charged = intended = 0
        for n in range(LABS_ON):
            state = json.loads(client.request("GET", f"/lab/race-on-{n}/api/state")[1])
            charged += state["summary"]["charged"]
            intended += state["summary"]["intended"]
        rows.append(
            (
                f"Lock on, latency 0, {pairs:,} concurrent duplicate pairs",
                f"{charged - intended} double charges",
                "0",
            )
        )
    return rows


# -- 2. overhead of the idempotency layer ---------------------------------------------------


def overhead(requests: int, threads: int) -> list[tuple[str, str, str]]:
    with server() as (host, port, _):
        client = Client(host, port)
        for lab in ("layer", "bypass", "replay"):
            client.request("PATCH", f"/lab/{lab}/api/settings", {"gateway_latency_ms": 0})
        body = {"order_id": "1", "amount": 100}

        def run(job: Callable[[int], tuple[int, bytes, float]]) -> tuple[float, list[float]]:
            started = time.perf_counter()
            with ThreadPoolExecutor(threads) as pool:
                results = list(pool.map(job, range(requests)))
            elapsed = time.perf_counter() - started
            assert all(status == 201 for status, _, _ in results), {s for s, _, _ in results}
            return requests / elapsed, [ms for _, _, ms in results]

        path = "/lab/{}/api/charges"
        # Warm up, then measure both in the same server, alternating five times so both
        # share the machine's noise; the ratio is the median of the five pairs.
        run(lambda i: client.request("POST", path.format("bypass"), body))
        pairs = []
        for n in range(5):
            layer, _ = run(
                lambda i, n=n: client.request("POST", path.format("layer"), body, key=f"k{i}-{n}")
            )
            bypass, _ = run(lambda i: client.request("POST", path.format("bypass"), body))
            pairs.append((layer, bypass))
        client.request("POST", path.format("replay"), body, key="same")
        # The replay path on its own: one client, one request at a time.
        replay_ms = [
            client.request("POST", path.format("replay"), body, key="same")[2]
            for _ in range(requests // 3)
        ]
    ratios = sorted(layer / bypass for layer, bypass in pairs)
    layer_rps = statistics.median(layer for layer, _ in pairs)
    bypass_rps = statistics.median(bypass for _, bypass in pairs)
    return [
        (
            f"POST charges, latency 0, {threads} client threads: with the layer / "
            "bypassed (no key), medians of 5 alternating runs",
            f"{layer_rps:,.0f} / {bypass_rps:,.0f} req/s, ratio {statistics.median(ratios):.2f} "
            f"(range {ratios[0]:.2f}-{ratios[-1]:.2f})",
            "ratio ≥ 0.9",
        ),
        (
            "Replay path latency (same key and body, one request at a time), p50 / p99",
            f"{pct(replay_ms, 50):.1f} / {pct(replay_ms, 99):.1f} ms",
            "—",
        ),
    ]


# -- 3. a workshop's load -------------------------------------------------------------------


def workshop(labs: int, seconds: float, idle_s: float) -> list[tuple[str, str, str]]:
    """Two waves of attendees, each wave in new labs; RSS between and after."""
    with server("--lab-idle-s", str(idle_s)) as (host, port, pid):
        client = Client(host, port)
        rss = [rss_mib(pid)]
        latencies: list[float] = []
        errors = [0]
        guard = threading.Lock()

        def attendee(lab: str, stop: float) -> None:
            client.request("PATCH", f"/lab/{lab}/api/settings", {"gateway_latency_ms": 0})
            path = f"/lab/{lab}/api/charges"
            order = 0
            mine: list[float] = []
            bad = 0
            while time.perf_counter() < stop:
                order += 1
                body = {"order_id": str(order), "amount": 100}
                key = f"{lab}-{order}"
                for _ in range(2):  # pay, retry
                    status, _, ms = client.request("POST", path, body, key=key)
                    mine.append(ms)
                    bad += status != 201
                # double-submit: a second connection sends the same request at once
                other = Client(host, port)
                results: list[tuple[int, bytes, float]] = []
                t = threading.Thread(
                    target=lambda o=other, r=results, b=body, k=key: r.append(
                        o.request("POST", path, b, key=k + "d")
                    )
                )
                t.start()
                status, _, ms = client.request("POST", path, body, key=key + "d")
                t.join()
                mine += [ms, results[0][2]]
                bad += (status != 201) + (results[0][0] != 201)
                if order % 10 == 0:  # the page's poll
                    status, _, ms = client.request("GET", f"/lab/{lab}/panels")
                    mine.append(ms)
                    bad += status != 200
            with guard:
                latencies.extend(mine)
                errors[0] += bad

        def wave(name: str, duration: float) -> None:
            stop = time.perf_counter() + duration
            threads = [
                threading.Thread(target=attendee, args=(f"{name}-{n}", stop)) for n in range(labs)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            rss.append(rss_mib(pid))
            time.sleep(idle_s + 1)
            client.request("GET", "/lab/wake-up/api/state")  # any lab access expires idle labs
            time.sleep(1)
            rss.append(rss_mib(pid))

        wave("room", seconds)
        first = len(latencies)
        wave("again", seconds / 2)
    return [
        (
            f"Workshop: {labs} labs, pay/retry/double-submit for {seconds:.0f} s, latency 0",
            f"{first:,} requests, p50 {pct(latencies[:first], 50):.1f} ms, "
            f"p95 {pct(latencies[:first], 95):.1f} ms, p99 {pct(latencies[:first], 99):.1f} ms, "
            f"{errors[0]} errors (both waves)",
            "0 errors",
        ),
        (
            f"Server RSS: before / after {labs} labs / once they expired / after {labs} new "
            "labs / once those expired",
            " / ".join(f"{r:.0f}" for r in rss) + " MiB",
            "bounded",
        ),
    ]


# -- 4. page weight and interaction --------------------------------------------------------


def page(clicks: int) -> list[tuple[str, str, str]]:
    from playwright.sync_api import sync_playwright

    with server() as (host, port, _), sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        sizes: list[int] = []
        page.on(
            "requestfinished",
            lambda r: sizes.append(
                r.sizes()["responseBodySize"] + r.sizes()["responseHeadersSize"]
            ),
        )
        base = f"http://{host}:{port}/lab/weight"
        Client(host, port).request("PATCH", "/lab/weight/api/settings", {"gateway_latency_ms": 0})
        page.goto(base, wait_until="networkidle")
        first_load = sum(sizes)
        times: list[float] = []
        for n in range(clicks):
            page.locator("#order-id").fill(str(1000 + n))
            ms = page.evaluate(
                """() => new Promise(resolve => {
                    const slot = document.getElementById("panels-slot");
                    const button = document.querySelector("button[data-action='Pay']");
                    const observer = new MutationObserver(() => {
                        if (slot.querySelector(".badge-charged")) {
                            observer.disconnect();
                            resolve(performance.now() - started);
                        }
                    });
                    observer.observe(slot, {childList: true, subtree: true});
                    const started = performance.now();
                    button.click();
                })"""
            )
            times.append(ms)
            page.wait_for_timeout(50)
        browser.close()
    return [
        (
            "First load of the lab page, all bytes transferred",
            f"{first_load / 1024:.1f} KB",
            "— (htmx is 52 KB of it; cached after)",
        ),
        (
            f"Click Pay → panels updated in the DOM, latency 0, Chromium, median of {clicks}",
            f"{statistics.median(times):.1f} ms (p90 {pct(times, 90):.1f} ms)",
            "—",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small numbers, a smoke run")
    args = parser.parse_args()
    quick = args.quick
    rows: list[tuple[str, str, str]] = []
    started = time.time()
    rows += race_visibility(trials=20 if quick else 200, pairs=200 if quick else 10_000)
    rows += overhead(requests=300 if quick else 2000, threads=8)
    rows += workshop(
        labs=10 if quick else 100, seconds=5 if quick else 60, idle_s=3 if quick else 10
    )
    rows += page(clicks=5 if quick else 30)
    table = [
        "| Benchmark | Measured | Target |",
        "|---|---|---|",
        *(f"| {what} | {measured} | {target} |" for what, measured, target in rows),
    ]
    header = (
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, in {time.time() - started:.0f} s, one run"
        + (" (--quick: not for the record)" if quick else "")
        + "."
    )
    text = "\n".join(["# Benchmarks", "", header, "", *table, ""])
    print(text)
    if not quick:
        (ROOT / "docs" / "benchmarks.md").write_text(text)


if __name__ == "__main__":
    main()
