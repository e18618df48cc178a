"""The retry lab's storm simulator at 1,000 clients: how long it takes to simulate, and
what it finds. Prints a markdown table.

    python bench/storm.py                 # both models, 1,000 clients, every strategy
    python bench/storm.py --clients 100 --seeds 5

Each row is one strategy of one model, simulated in this process (no server): the wall
time of ``simulate()`` (the median of ``--repeat`` runs), then the storm's own numbers
for seed 1, and, with ``--seeds N``, the calls and completion averaged over seeds 1..N. One run on a
shared machine: quote the ratios between rows, not the absolute times.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from demo.retries.policy import STRATEGIES  # noqa: E402
from demo.retries.storm import Storm, simulate  # noqa: E402
from demo.retries.storm_input import DEFAULTS  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per row (median)")
    parser.add_argument("--seeds", type=int, default=1, help="seeds to average the calls over")
    parser.add_argument("--models", default="contention,outage")
    args = parser.parse_args()
    print(
        f"Storm simulator, {args.clients} clients; Python {platform.python_version()} on "
        f"{platform.machine()}, {time.strftime('%Y-%m-%d')}\n"
    )
    print(
        "| Model | Strategy | Simulated in (median) | Calls | Completion | Peak load "
        "| Truncated | Calls, mean of seeds | Completion, mean of seeds |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    total = 0.0
    for model in args.models.split(","):
        storm = Storm(model=model, clients=args.clients, **DEFAULTS[model])
        for strategy in STRATEGIES:
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                result = simulate(storm, strategy)
                times.append(time.perf_counter() - started)
            total += sum(times)
            others = [
                simulate(Storm(**{**storm.__dict__, "seed": s}), strategy)
                for s in range(2, args.seeds + 1)
            ]
            mean = statistics.mean([result.calls, *(r.calls for r in others)])
            mean_s = statistics.mean([result.completion_s, *(r.completion_s for r in others)])
            print(
                f"| {model} | {strategy} | {statistics.median(times) * 1000:,.0f} ms "
                f"| {result.calls:,} | {result.completion_s:,.2f} s "
                f"| {result.peak_load:,.0f}/s | {'yes' if result.truncated else 'no'} "
                f"| {mean:,.0f} | {mean_s:,.2f} s |"
            )
    print(f"\nAll strategies of all models, {args.repeat} runs each: {total:.1f} s in all.")


if __name__ == "__main__":
    main()
