"""In-process latency of the full odds answer (next roll, decision, score distribution) over random positions.

Usage: python bench/bench_odds.py [--positions 2000] [--objective expected-brains] [--seed 1]

"Warm" means the mode's table, its float solution and the exact values from the turn start are built
(what `zombie-odds serve` does before accepting requests). Each random position is a uniformly drawn
reachable dice state of the base game with no brains noted; the first pass meets some positions whose
exact region nobody has asked for yet (cold exact values), the second pass asks them again (cached).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from analysis import Position, odds
from analysis.table import table_for


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--positions", type=int, default=2000)
    parser.add_argument("--objective", default="expected-brains")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    t0 = time.perf_counter()
    table = table_for("original")
    odds(Position(), args.objective)
    print(f"warm-up (table, float solution, exact values from the turn start): {time.perf_counter() - t0:.1f} s")

    rng = random.Random(args.seed)
    positions = [Position.from_state(table.mode, table.states[rng.randrange(1, len(table))])
                 for _ in range(args.positions)]
    for label in ("first pass (some exact regions cold)", "second pass (all cached)"):
        times = []
        for p in positions:
            t = time.perf_counter()
            odds(p, args.objective)
            times.append(time.perf_counter() - t)
        ms = [1000 * x for x in times]
        print(f"{label}: n={len(ms)} p50={percentile(ms, 0.5):.3f} ms p90={percentile(ms, 0.9):.3f} ms "
              f"p99={percentile(ms, 0.99):.3f} ms max={max(ms):.1f} ms mean={statistics.mean(ms):.3f} ms")


if __name__ == "__main__":
    main()
