"""In-process latency of the exact next roll (`analysis.roll.next_roll`) of every legal action, per mode.

Usage: python bench/bench_next_roll.py [--positions 150] [--seed 11]

For each mode, with and without the School Bus (the sequel, Santa's and Big Summer's bus, the base game's), draws
`--positions` positions by simulated play (analysis.simulate.random_position) and times the exact next roll of
every rolling action legal there (with the bus: roll, board, stay, get-off), as every answer computes it. The
first 20 positions are asked once before the clock starts (imports, the dice's own caches).
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from analysis.roll import legal_actions, next_roll
from analysis.simulate import random_position

COMBINATIONS = (("original", False), ("santa-claus-meets-the-zombies", False), ("direct-to-video-sequel", False),
                ("original", True), ("big-summer-action-movie", True), ("santa-claus-meets-the-zombies", True),
                ("direct-to-video-sequel", True))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--positions", type=int, default=150)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    cases = []
    for mode, bus in COMBINATIONS:
        for _ in range(args.positions):
            p = random_position(mode, rng, school_bus=bus)
            actions = [a for a in legal_actions(p.game_mode, p.bus_state) if a != "stop"] if bus else ["roll"]
            cases.append((f"{mode}{', bus' if bus else ''}", p, actions))
    for _, p, actions in cases[:20]:
        for a in actions:
            next_roll(p, a)
    times: dict[str, list[float]] = {}
    for name, p, actions in cases:
        start = time.perf_counter()
        for a in actions:
            next_roll(p, a)
        times.setdefault(name, []).append(time.perf_counter() - start)
    print("| mode | positions | p50 ms | p99 ms | mean ms |")
    print("|---|---|---|---|---|")
    every = [t for ts in times.values() for t in ts]
    for name, ts in [*times.items(), ("all", every)]:
        print(f"| {name} | {len(ts)} | {np.percentile(ts, 50) * 1e3:.2f} | {np.percentile(ts, 99) * 1e3:.2f} | "
              f"{np.mean(ts) * 1e3:.2f} |")


if __name__ == "__main__":
    main()
