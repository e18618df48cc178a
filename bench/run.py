"""Benchmarks: race visibility, the idempotency layer's overhead, a workshop's load on
the production server and on the old development server side by side, a slow-connection
attack, and the page's weight. Prints a markdown table and writes it to docs/benchmarks.md.

    python bench/run.py                      # about ten minutes
    python bench/run.py --quick              # a smoke run with small numbers (not for the table)
    python bench/run.py --only workshop,slow --workshop-s 20

Every number comes from real HTTP against ``python -m demo`` (waitress) started in a
subprocess on loopback; "werkzeug" is the development server the lab used before
(``--dev-server``, kept here only to compare). Both start with ``ulimit -n 1024``, as on
many laptops. Quote ratios from one run: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVED = [ROOT]
"""The tree whose ``python -m demo`` the benchmarks start (``--against`` swaps it)."""
CHROMIUM = os.environ.get("DEMO_CHROMIUM", "/usr/bin/chromium")


# -- the server under test ------------------------------------------------------------


SERVER_FDS = 1024
"""The servers' soft open-file limit (``ulimit -n``), as on many laptops."""


def _limit_fds() -> None:
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (SERVER_FDS, hard))


def raise_own_fd_limit(wanted: int = 8192) -> None:
    """The attack opens over a thousand sockets from this process: make room for them."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        top = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (top, hard))


def serve_dev(port: int, idle_s: float) -> None:
    """The development server the lab ran on before (werkzeug, a thread per connection,
    no timeouts): for comparison only."""
    sys.path.insert(0, os.getcwd())
    from werkzeug.serving import make_server

    from demo import create_app

    app = create_app({"LAB_IDLE_S": idle_s})
    httpd = make_server("127.0.0.1", port, app, threaded=True)
    print(f"Idempotency lab running on http://127.0.0.1:{httpd.port}/", flush=True)
    httpd.serve_forever()


@contextmanager
def server(*args: str, kind: str = "waitress") -> Iterator[tuple[str, int, int]]:
    """``python -m demo`` (or the old development server) on a free port: yields
    (host, port, pid)."""
    if kind == "waitress":
        command = [sys.executable, "-m", "demo", "--port", "0", *args]
    else:
        command = [sys.executable, str(Path(__file__).resolve()), "--dev-server", *args]
    proc = subprocess.Popen(
        command,
        cwd=SERVED[0],  # python -m demo imports the demo package of its working directory
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=_limit_fds,
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

    def __init__(self, host: str, port: int, timeout_s: float = 30) -> None:
        self.host, self.port, self.timeout_s = host, port, timeout_s
        self.local = threading.local()

    def request(
        self, method: str, path: str, body: object = None, key: str | None = None
    ) -> tuple[int, bytes, float]:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = http.client.HTTPConnection(
                self.host, self.port, timeout=self.timeout_s
            )
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


SERVERS = {"waitress": "waitress (`python -m demo`)", "werkzeug": "werkzeug (the old server)"}


def workshop(
    labs: int, seconds: float, idle_s: float, kind: str = "waitress"
) -> list[tuple[str, str, str]]:
    """Two waves of attendees, each wave in new labs; RSS between and after."""
    with server("--lab-idle-s", str(idle_s), kind=kind) as (host, port, pid):
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
            f"Workshop on {SERVERS[kind]}: {labs} labs, pay/retry/double-submit for "
            f"{seconds:.0f} s, latency 0",
            f"{first:,} requests, p50 {pct(latencies[:first], 50):.1f} ms, "
            f"p95 {pct(latencies[:first], 95):.1f} ms, p99 {pct(latencies[:first], 99):.1f} ms, "
            f"{errors[0]} errors (both waves)",
            "0 errors",
        ),
        (
            f"Server RSS on {SERVERS[kind]}: before / after {labs} labs / once they expired / "
            f"after {labs} new labs / once those expired",
            " / ".join(f"{r:.0f}" for r in rss) + " MiB",
            "bounded",
        ),
    ]


# -- 4. the slow-connection attack ----------------------------------------------------------


STALL = b"GET /lab/attack/api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # never finished


def slow_connections(conns: int, hold_s: float, kind: str) -> list[tuple[str, str, str]]:
    """``conns`` connections that never finish their headers (a header line every 5 s
    keeps them from going idle), held ``hold_s`` seconds, while a client pays in other
    labs twice a second, each request on a new connection with a 5 s timeout."""
    with server(kind=kind) as (host, port, _):
        for n in range(5):  # latency 0: the time measured is the server's, not the gateway's
            Client(host, port).request(
                "PATCH", f"/lab/victim-{n}/api/settings", {"gateway_latency_ms": 0}
            )

        def open_one(_: int) -> socket.socket | None:
            try:
                sock = socket.create_connection((host, port), timeout=3)
                sock.sendall(STALL)
                sock.settimeout(0.05)  # the trickle below never waits on a full buffer
                return sock
            except OSError:
                return None

        with ThreadPoolExecutor(32) as pool:
            opened = [s for s in pool.map(open_one, range(conns)) if s is not None]
        latencies: list[float] = []
        answered = sent = 0
        stop = time.monotonic() + hold_s
        trickle = time.monotonic() + 5
        while time.monotonic() < stop:
            sent += 1
            body = {"order_id": str(sent), "amount": 100}
            started = time.perf_counter()
            try:
                status, _, _ = Client(host, port, timeout_s=5).request(
                    "POST", f"/lab/victim-{sent % 5}/api/charges", body, key=f"v{sent}"
                )
                answered += status == 201
            except (OSError, http.client.HTTPException):
                pass
            latencies.append((time.perf_counter() - started) * 1000)
            if time.monotonic() > trickle:
                trickle = time.monotonic() + 5
                for sock in opened:
                    with suppress(OSError):
                        sock.send(b"X-Slow: 1\r\n")
            time.sleep(0.5)
        still_open = 0
        for sock in opened:
            try:
                sock.setblocking(False)
                still_open += sock.recv(1) != b""  # b"" is closed: the server gave up on it
            except BlockingIOError:
                still_open += 1
            except OSError:
                pass
            sock.close()
    return [
        (
            f"Slow connections on {SERVERS[kind]}: {conns:,} connections that never finish "
            f"their headers, held {hold_s:.0f} s; meanwhile Pay in other labs every 0.5 s",
            f"{len(opened):,} connected ({still_open:,} still open at the end); "
            f"{answered}/{sent} other-lab requests answered, p50 {pct(latencies, 50):.0f} ms, "
            f"max {max(latencies):.0f} ms",
            "all answered, < 1 s",
        )
    ]


# -- 5. page weight and interaction --------------------------------------------------------


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

        def count(r: Any) -> None:
            sizes.append(r.sizes()["responseBodySize"] + r.sizes()["responseHeadersSize"])

        page.on("requestfinished", count)
        base = f"http://{host}:{port}/lab/weight"
        Client(host, port).request("PATCH", "/lab/weight/api/settings", {"gateway_latency_ms": 0})
        page.goto(base, wait_until="networkidle")
        first_load = sum(sizes)
        page.remove_listener("requestfinished", count)  # the first load only
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
            "First load of the lab page, all bytes transferred (compressed; the static "
            "files are cached for a year after it)",
            f"{first_load / 1024:.1f} KB",
            "< 40 KB",
        ),
        (
            f"Click Pay → panels updated in the DOM, latency 0, Chromium, median of {clicks}",
            f"{statistics.median(times):.1f} ms (p90 {pct(times, 90):.1f} ms)",
            "—",
        ),
    ]


SECTIONS = ("race", "overhead", "workshop", "slow", "page")


def measure(only: set[str], quick: bool, workshop_s: float) -> list[tuple[str, str, str]]:
    """Run the benchmarks named in ``only`` against the served tree; the table's rows."""
    rows: list[tuple[str, str, str]] = []
    if "race" in only:
        rows += race_visibility(trials=20 if quick else 200, pairs=200 if quick else 10_000)
    if "overhead" in only:
        rows += overhead(requests=300 if quick else 2000, threads=8)
    if "workshop" in only:
        for kind in SERVERS:
            rows += workshop(
                labs=10 if quick else 100,
                seconds=5 if quick else workshop_s,
                idle_s=3 if quick else 10,
                kind=kind,
            )
    if "slow" in only:
        for kind in SERVERS:
            rows += slow_connections(conns=1100, hold_s=10 if quick else 40, kind=kind)
    if "page" in only:
        rows += page(clicks=5 if quick else 30)
    return rows


@contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """Commit ``rev`` of this repository, checked out in a temporary directory."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        git = ["git", "-C", str(ROOT), "worktree"]
        subprocess.run([*git, "add", "-q", "--detach", str(tree), rev], check=True)
        try:
            yield tree
        finally:
            subprocess.run([*git, "remove", "--force", str(tree)], check=False)


def compare(rev: str, before: list[tuple[str, str, str]], now: list[tuple[str, str, str]],
            took_s: float) -> str:  # fmt: skip
    """The two runs side by side, row by row (the same benchmarks in the same order)."""
    header = (
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, in {took_s:.0f} s: this tree, then {rev}, one run."
    )
    lines = [f"| Benchmark | {rev} | this tree | Target |", "|---|---|---|---|"]
    for (what, then, target), (_, measured, _) in zip(before, now, strict=True):
        lines.append(f"| {what} | {then} | {measured} | {target} |")
    return "\n".join(["# Benchmarks, compared", "", header, "", *lines, ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small numbers, a smoke run")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"comma-separated, of {', '.join(SECTIONS)}"
    )
    parser.add_argument(
        "--workshop-s", type=float, default=60, help="seconds of workshop load (default 60)"
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        help="also measure commit REV (checked out in a temporary directory) and print both",
    )
    parser.add_argument("--dev-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--lab-idle-s", type=float, default=7200, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dev_server:
        serve_dev(0, args.lab_idle_s)
        return
    raise_own_fd_limit()
    only = set(args.only.split(","))
    started = time.time()
    rows = measure(only, args.quick, args.workshop_s)
    if args.against:
        with checkout(args.against) as tree:
            SERVED[0] = tree
            before = measure(only, args.quick, args.workshop_s)
            SERVED[0] = ROOT
        print(compare(args.against, before, rows, time.time() - started))
        return
    table = [
        "| Benchmark | Measured | Target |",
        "|---|---|---|",
        *(f"| {what} | {measured} | {target} |" for what, measured, target in rows),
    ]
    partial = args.quick or only != set(SECTIONS) or args.workshop_s != 60
    header = (
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, in {time.time() - started:.0f} s, one run"
        + (" (partial or --quick: not for the record)" if partial else "")
        + "."
    )
    text = "\n".join(["# Benchmarks", "", header, "", *table, ""])
    print(text)
    if not partial:
        (ROOT / "docs" / "benchmarks.md").write_text(text)


if __name__ == "__main__":
    main()
