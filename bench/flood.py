"""A flood of new lab ids against the real server: does a lab in use survive, and how long
does a new attendee wait for a lab? Prints a markdown table.

    python bench/flood.py              # 10,000 writes, well under two minutes here
    python bench/flood.py --writes 2000

``python -m demo`` runs in a subprocess on loopback with its default limits (300 labs).
The clients use different loopback addresses (Linux routes all of 127.0.0.0/8 to the
loopback interface), so the server sees them as different machines:

- 127.0.0.2 floods: one write (``PATCH .../api/settings``, which leaves data in the lab)
  to each of ``--writes`` random lab ids, from ``--threads`` threads, for at most
  ``--max-s`` seconds;
- 127.0.0.1 and 127.0.0.2 each hold an established lab: one charge, one poll of the
  page a little later (what an open page does), then silence through the whole flood,
  like a closed laptop lid;
- during the flood, a new attendee at 127.0.0.3 and one at the flooder's own 127.0.0.2
  each ask for a lab, following ``Retry-After`` (at most 1 s per wait), until they get
  one or the flood is over plus 30 s.

After the flood, each established lab is asked its charge again with the same key: it
survived if the answer is a replay of its one charge.
"""

from __future__ import annotations

import argparse
import http.client
import json
import platform
import secrets
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ATTENDEE, FLOODER, NEWCOMER = "127.0.0.1", "127.0.0.2", "127.0.0.3"
KEY = "t1:u7:pay:order-42:v1"
CHARGE = json.dumps({"order_id": "42", "amount": 100000}).encode()


@contextmanager
def server() -> Iterator[int]:
    """``python -m demo`` on a free port (the way a workshop starts it): yields the port."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "demo", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        yield int(line.split("http://127.0.0.1:")[1].split("/")[0])
    finally:
        proc.terminate()
        proc.wait(10)


def call(
    port: int, source: str, method: str, path: str, body: bytes | None = None, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """One request from ``source`` (a loopback address): (status, headers, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    try:
        sent = {"Content-Type": "application/json", **headers} if body is not None else headers
        conn.request(method, path, body=body, headers=sent)
        answer = conn.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        conn.close()


def establish(port: int, source: str) -> str:
    """A lab in use: one charge, then the page's poll a little later."""
    lab = f"established-{secrets.token_hex(6)}"
    status, _, _ = call(port, source, "POST", f"/lab/{lab}/api/charges", CHARGE,
                        **{"Idempotency-Key": KEY})  # fmt: skip
    assert status == 201, status
    time.sleep(1.2)  # an open page polls every 2 s
    call(port, source, "GET", f"/lab/{lab}/panels")
    return lab


def survived(port: int, source: str, lab: str) -> bool:
    """The same charge again: a replay of the one charge if the lab is still there."""
    status, headers, _ = call(port, source, "POST", f"/lab/{lab}/api/charges", CHARGE,
                              **{"Idempotency-Key": KEY})  # fmt: skip
    _, _, body = call(port, source, "GET", f"/lab/{lab}/api/state")
    charges = json.loads(body)["charges"]
    return status == 201 and headers.get("Idempotent-Replayed") == "true" and len(charges) == 1


def kept_lab(port: int, source: str, lab: str) -> bool:
    """Whether a newcomer's lab still holds what they wrote (the lock switched off)."""
    _, _, body = call(port, source, "GET", f"/lab/{lab}/api/state")
    return json.loads(body)["settings"]["lock"] is False


class Flood:
    """``writes`` writes to random lab ids from ``source``, from ``threads`` threads."""

    def __init__(self, port: int, source: str, writes: int, threads: int, max_s: float) -> None:
        self.port, self.source, self.max_s = port, source, max_s
        self.left = writes
        self.sent = 0
        self.statuses: Counter[int] = Counter()
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.threads = [threading.Thread(target=self._run) for _ in range(threads)]
        self.started = self.ended = 0.0

    def start(self) -> None:
        self.started = time.perf_counter()
        for thread in self.threads:
            thread.start()

    def join(self) -> None:
        for thread in self.threads:
            thread.join()
        self.ended = time.perf_counter()
        self.done.set()

    def _run(self) -> None:
        body = json.dumps({"gateway_latency_ms": 0}).encode()
        while time.perf_counter() - self.started < self.max_s:
            with self.lock:
                if self.left == 0:
                    return
                self.left -= 1
            lab = secrets.token_urlsafe(12)
            try:
                status = call(self.port, self.source, "PATCH", f"/lab/{lab}/api/settings", body)[0]
            except OSError:
                status = 0  # refused or reset: counted, never hidden
            with self.lock:
                self.sent += 1
                self.statuses[status] += 1


def wait_for_a_lab(port: int, source: str, flood: Flood) -> tuple[float, int, str]:
    """A new attendee asks for a lab until they get one, then their page polls it:
    (seconds waited, 503s seen, the lab's id)."""
    lab = f"newcomer-{secrets.token_hex(6)}"
    body = json.dumps({"lock": False}).encode()
    start, refused = time.perf_counter(), 0
    while True:
        status, headers, _ = call(port, source, "PATCH", f"/lab/{lab}/api/settings", body)
        if status == 200:
            waited = time.perf_counter() - start
            for _ in range(3):
                time.sleep(1.2)  # the open page polls
                call(port, source, "GET", f"/lab/{lab}/panels")
            return waited, refused, lab
        assert status == 503, status
        refused += 1
        if flood.done.is_set() and time.perf_counter() - flood.ended > 30:
            return float("inf"), refused, lab
        time.sleep(min(float(headers.get("Retry-After", "1")), 1.0))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=10_000, help="flood writes (10,000)")
    parser.add_argument("--threads", type=int, default=8, help="flood threads (8)")
    parser.add_argument("--max-s", type=float, default=120, help="flood time limit, s (120)")
    args = parser.parse_args()

    begun = time.perf_counter()
    with server() as port:
        labs = {source: establish(port, source) for source in (ATTENDEE, FLOODER)}
        flood = Flood(port, FLOODER, args.writes, args.threads, args.max_s)
        flood.start()
        while flood.sent < min(1000, args.writes // 2) and flood.threads[0].is_alive():
            time.sleep(0.05)  # the server is full of the flood's labs by now
        waits: dict[str, tuple[float, int, str]] = {}
        newcomers = [
            threading.Thread(
                target=lambda s=source: waits.__setitem__(s, wait_for_a_lab(port, s, flood))
            )
            for source in (NEWCOMER, FLOODER)
        ]
        for thread in newcomers:
            thread.start()
        flood.join()
        for thread in newcomers:
            thread.join()
        kept = {source: survived(port, source, lab) for source, lab in labs.items()}
        newcomer_kept = {source: kept_lab(port, source, waits[source][2]) for source in waits}

    took = flood.ended - flood.started
    statuses = ", ".join(f"{n:,} × {s or 'no answer'}" for s, n in sorted(flood.statuses.items()))

    def wait(source: str) -> str:
        seconds, refused, _ = waits[source]
        took = f"{seconds:.2f} s ({refused} × 503 first)" if refused else f"{seconds:.3f} s"
        return f"{took}; kept the lab to the end: {'yes' if newcomer_kept[source] else 'NO'}"

    elapsed = time.perf_counter() - begun
    print(f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, "
          f"Python {platform.python_version()}, in {elapsed:.0f} s, one run.")  # fmt: skip
    print()
    print("| Flood of new lab ids from one client (127.0.0.2) | Measured | Target |")
    print("|---|---|---|")
    print(f"| Writes to random lab ids | {flood.sent:,} in {took:.1f} s "
          f"({flood.sent / took:.0f}/s): {statuses} | — |")  # fmt: skip
    print(f"| An established lab at another address, idle through the flood, survived | "
          f"{'yes' if kept[ATTENDEE] else 'NO'} | yes |")  # fmt: skip
    print(f"| An established lab at the flooder's own address survived | "
          f"{'yes' if kept[FLOODER] else 'NO'} | yes |")  # fmt: skip
    print(f"| A new attendee at another address (127.0.0.3) waited for a lab, during the flood "
          f"| {wait(NEWCOMER)} | a few seconds at most; kept |")  # fmt: skip
    print(f"| A new attendee at the flooder's own address waited, during the flood | "
          f"{wait(FLOODER)} | — (shares the flooder's address) |")  # fmt: skip
    return 0 if kept[ATTENDEE] and kept[FLOODER] and newcomer_kept[NEWCOMER] else 1


if __name__ == "__main__":
    sys.exit(main())
