"""The exact N-player solve's units timed one by one, and the time of its table on many worker cores projected.

    PYTHONPATH=. .venv/bin/python bench/bench_units.py [--players 3] [--goal 13] [--cap 48] [--split 1 4]
        [--project 3 4 5 6] [--cores 1 2 8 32 128]

Every layer of `seats_layers` is solved in order in this process, unit after unit (`solve_unit`), each unit's CPU
time measured, once per split. Printed: per split, the CPU time of each kind of layer (tie-breaks, final round,
normal game), the largest unit, the total; then the model the projection rests on, fitted from the first two splits:

* a unit costs ``a + b x items`` (``a`` the pass over the turn's rolls that every unit pays, ``b`` a score tuple's
  work in its layer), ``a`` from the extra CPU time of the finer split per extra unit;
* a layer on ``P`` cores (``P`` units of it, in a chord) takes ``a + b x ceil(items / P)`` plus the chord's join
  (``JOIN``), and the layers run one after the other: the sum is the critical path;
* a tie-break round (one for each number of seats, solved once for every set of as many seats: seats.py's
  `_renamed`) is its layers as measured: those of its spots (settling, passes) split like the normal game's, its
  restarts and its last unit one unit each; the final round's layers split like the normal game's.

For other player counts (``--project``) the normal game's layers are counted exactly (the score tuples of ``N``
seats below the goal, by total), and the rest is an assumption, stated with the table: a score tuple's work is the
measured one times ``(N / n) ** GROWTH`` (``N`` movers per tuple, each sweeping a turn whose values are
``N``-vectors, their cycle's fixed point taking more steps), the final round's work is the same share of the normal
game's as measured, split over ``N - 1`` layers, and the tie-break rounds run one after the other, the round of ``k``
seats on ``P`` cores taking the measured largest's time on ``P`` cores times ``(k / n) ** GROWTH``.
"""

from __future__ import annotations

import argparse
import math
import time
from collections import defaultdict

from analysis.game.duel import CAP, GOAL
from analysis.game.seats import SPOT_KINDS, SeatsUnit, seats_layers, solve_unit

JOIN = 0.04  # seconds a layer's chord waits to join on Redis (bench/README.md, two-player jobs)
# A score tuple's work grows with the number of players N as N ** GROWTH: to 5 brains (cap 8), a tuple of four players
# took 2.2 times a tuple of three, between (4/3) ** 2 = 1.78 and (4/3) ** 3 = 2.37; the larger is taken.
GROWTH = 3


def timed(players: int, goal: int, cap: int, split: int) -> list[list[tuple[SeatsUnit, float]]]:
    """Every layer's units with their CPU seconds, solved in order."""
    known: dict = {}
    out = []
    for layer in seats_layers(players, goal=goal, cap=cap, split=split):
        done = []
        for unit in layer:
            start = time.process_time()
            result = solve_unit(unit, known)
            done.append((unit, time.process_time() - start))
            known.update(result)
        out.append(done)
    return out


def fit(one: list, finer: list) -> tuple[float, dict[int, float]]:
    """(a, b per layer index) from the same solve in one unit per layer and in more."""
    extra_units = sum(len(f) - len(o) for o, f in zip(one, finer))
    extra_cpu = sum(sum(t for _, t in f) - sum(t for _, t in o) for o, f in zip(one, finer))
    a = max(0.0, extra_cpu / extra_units) if extra_units else 0.0
    b = {k: max(0.0, (sum(t for _, t in layer) - a) / max(1, len(layer[0][0].items)))
         for k, layer in enumerate(one) if layer[0][0].kind in ("final", "normal")}
    return a, b


def kind(unit: SeatsUnit) -> str:
    """The part of the game a unit solves: "tie" (a tie-break round's), "final" or "normal"."""
    return unit.kind if unit.kind in ("final", "normal") else "tie"


def rounds(one: list) -> dict[int, list]:
    """The tie-break rounds' layers by number of seats (their units with CPU seconds)."""
    out: dict[int, list] = defaultdict(list)
    for layer in one:
        unit = layer[0][0]
        if kind(unit) == "tie":
            out[len(unit.items[0].seats if unit.kind in SPOT_KINDS else unit.items[0])].append(layer)
    return out


def round_time(layers: list, a: float, cores: int) -> float:
    """A tie-break round on `cores` cores (its layers measured in one unit each): a layer of its spots split in
    `cores` units, ``a`` each and its work by the largest's share of the spots, and its restarts and last unit whole;
    each layer joined."""
    total = 0.0
    for layer in layers:
        (unit, cpu), = layer
        if unit.kind in SPOT_KINDS:
            items = len(unit.items)
            cpu = a + max(0.0, cpu - a) * math.ceil(items / cores) / items
        total += cpu + JOIN
    return total


def tuples_by_total(players: int, goal: int) -> list[int]:
    """How many score tuples of `players` seats, each below `goal`, have each total."""
    counts = [1]
    for _ in range(players):
        counts = [sum(counts[t - k] for k in range(goal) if 0 <= t - k < len(counts))
                  for t in range(len(counts) + goal - 1)]
    return counts


def project(players: int, goal: int, a: float, tuple_cost: float, final_share: float, ties: float, cores: int) -> float:
    """The critical path on `cores` cores: each layer split in `cores` units, one after the other, after the tie-break
    rounds' `ties` seconds on as many cores (module docstring)."""
    layers = tuples_by_total(players, goal)
    normal = sum(a + tuple_cost * math.ceil(c / cores) + JOIN for c in layers)
    final = (players - 1) * (a + JOIN) + final_share * sum(tuple_cost * c for c in layers) / min(cores, max(layers))
    return normal + final + ties


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--goal", type=int, default=GOAL)
    parser.add_argument("--cap", type=int, default=CAP)
    parser.add_argument("--split", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--project", type=int, nargs="*", default=[3, 4, 5, 6])
    parser.add_argument("--cores", type=int, nargs="+", default=[1, 2, 8, 32, 128])
    args = parser.parse_args()
    n = args.players
    runs = {}
    print(f"{n} players, goal {args.goal}, cap {args.cap}")
    print("| split | units | tie-break CPU s | final round CPU s | normal game CPU s | largest unit s | total CPU s |")
    print("|---|---|---|---|---|---|---|")
    for split in args.split:
        runs[split] = timed(n, args.goal, args.cap, split)
        by_kind: dict[str, float] = defaultdict(float)
        for layer in runs[split]:
            for unit, t in layer:
                by_kind[kind(unit)] += t
        units = [t for layer in runs[split] for _, t in layer]
        print(f"| {split} | {len(units)} | {by_kind['tie']:.1f} | {by_kind['final']:.1f} | {by_kind['normal']:.1f} | "
              f"{max(units):.1f} | {sum(units):.1f} |", flush=True)
    one, finer = runs[args.split[0]], runs[args.split[1]]
    a, b = fit(one, finer)
    normal = [k for k, layer in enumerate(one) if layer[0][0].kind == "normal"]
    items = {k: len(one[k][0][0].items) for k in normal}
    tuple_cost = sum(b[k] * items[k] for k in normal) / sum(items.values())
    final_cpu = sum(t for layer in one for u, t in layer if u.kind == "final")
    final_share = final_cpu / sum(t for k in normal for _, t in one[k])
    ties = rounds(one)
    cpu = ", ".join(f"{k} seats {sum(t for layer in ls for _, t in layer):.2f} s in {len(ls)} layers"
                    for k, ls in ties.items())
    print(f"\nfitted: a = {a:.3f} s a unit, a score tuple {tuple_cost * 1e3:.1f} ms, the final round "
          f"{final_share:.3f} of the normal game's work, tie-break rounds: {cpu}")
    print("\n| players | score tuples | layers | " + " | ".join(f"{c} cores s" for c in args.cores) + " |")
    print("|---|---|---|" + "---|" * len(args.cores))
    for players in args.project:
        scale = (players / n) ** GROWTH
        largest = max(ties)
        measured = {k: ties.get(k, ties[largest]) for k in range(2, players + 1)}  # (larger rounds: the largest's)
        grown = {k: scale * (k / min(k, largest)) ** GROWTH for k in measured}
        counts = tuples_by_total(players, args.goal)
        times = [project(players, args.goal, a, tuple_cost * scale, final_share,
                         sum(round_time(measured[k], a, c) * grown[k] for k in measured), c) for c in args.cores]
        layers = len(counts) + (players - 1) + sum(map(len, measured.values()))
        print(f"| {players} | {sum(counts):,} | {layers} | " + " | ".join(f"{t:,.0f}" for t in times) + " |",
              flush=True)


if __name__ == "__main__":
    main()
