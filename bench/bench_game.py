"""Benchmark of the two-player game solver: wall time, peak memory, and the split into work units.

    PYTHONPATH=. .venv/bin/python bench/bench_game.py [--mode original] [--recycle before-draw]
        [--workers 2] [--split 2] [--no-parallel] [--anchor-games N]

Prints, each measured in this process after a warm-up that builds the transition table (reported
separately): the table build, the solve (`solve_game`: every layer in order, one unit per layer),
the peak resident memory (getrusage) and the peak Python/numpy allocation of one more solve
(tracemalloc, a separate run because tracing slows it down); then the same solve split into units
run layer by layer on a process pool (workers warmed up first), and whether it is bit for bit the
same solution. The same split as a job on real Celery workers over Redis: bench/bench_celery.py.

``--anchor-games N`` also plays N two-player games with the optimal policy (draw-then-recycle) and a
third dice implementation written after the published ZDSimulator.java (minhvdq/ZD_ProfNeller), the
source of ANCHORS.md's 0.4667: once with the rules of RULES.md, once with that simulator's dice
handling, which rolls only newly drawn dice (footprint dice are put aside, never rerolled) and gives
seat 1 the game when seat 2 busts after a tie-break turn of 0. About 3 minutes per 10^5 games each.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
import tracemalloc
from concurrent.futures import ProcessPoolExecutor

from analysis.game import game_layers, merge, solve_game, solve_layer
from analysis.game import kernel as kernel_module
from analysis.game.kernel import kernel_for
from analysis.game.play import PolicyTable
from analysis.game.solution import assemble
from analysis.table import table_for


def _warm(mode: str, recycle: str) -> None:
    kernel_for(mode, recycle)


def _solve_fresh(mode: str, recycle: str, cap: int) -> float:
    solve_game.cache_clear()
    start = time.perf_counter()
    solve_game(mode, recycle, cap)
    return time.perf_counter() - start


def _parallel(mode: str, recycle: str, workers: int, split: int) -> tuple[float, dict, list[float]]:
    with ProcessPoolExecutor(workers, initializer=_warm, initargs=(mode, recycle)) as pool:
        list(pool.map(_warm, [mode] * workers, [recycle] * workers))  # every worker has its table
        start = time.perf_counter()
        known, results, per_layer = {}, [], []
        for layer in game_layers(mode, recycle, split):
            t = time.perf_counter()
            done = list(pool.map(solve_layer, layer, [known] * len(layer)))
            for result in done:
                known = merge(known, result)
            results += done
            per_layer.append(time.perf_counter() - t)
        elapsed = time.perf_counter() - start
    return elapsed, assemble(mode, recycle, results).to_dict(), per_layer


_FACES = {"green": "BBBSFF", "yellow": "BBSSFF", "red": "BSSSFF"}
_COUNT = {"green": 6, "yellow": 4, "red": 3}


def _java_turn(rng: random.Random, rolls, java: bool) -> int | None:
    """One turn with counts per colour, as ZDSimulator.drawAndRollDice; None on a bust."""
    names = tuple(_COUNT)
    shot, feet, cup, total = dict.fromkeys(names, 0), dict.fromkeys(names, 0), dict(_COUNT), 0
    while True:
        drawn, feet = feet, dict.fromkeys(names, 0)
        rolled = [] if java else [c for c in names for _ in range(drawn[c])]
        if 3 - sum(drawn.values()) > sum(cup.values()):  # out of dice: take the cup, return the brains
            for c in names:
                drawn[c] += cup[c]
                rolled += [] if java else [c] * cup[c]
            cup = {c: _COUNT[c] - shot[c] - drawn[c] for c in names}
        pool = [c for c in names for _ in range(cup[c])]
        rng.shuffle(pool)
        for c in pool[: 3 - sum(drawn.values())]:
            cup[c] -= 1
            rolled.append(c)
        for c in rolled:
            face = _FACES[c][int(rng.random() * 6)]
            total += face == "B"
            shot[c] += face == "S"
            feet[c] += face == "F"
        if sum(shot.values()) >= 3:
            return None
        state = (tuple(feet[c] for c in names), tuple(_COUNT[c] - shot[c] - feet[c] - cup[c] for c in names),
                 tuple(shot[c] for c in names))
        if not rolls(state, total):
            return total


def _anchor_games(games: int, java: bool, seed: int) -> float:
    """P(seat 1 wins) over `games` games of the optimal policy (draw-then-recycle)."""
    solution = solve_game("original", "draw-then-recycle")
    table = table_for("original", "draw-then-recycle")
    index = {(s.hand, s.brains, s.shotguns): i for i, s in enumerate(table.states)}
    policy = PolicyTable(solution)
    rng, wins = random.Random(seed), 0
    for _ in range(games):
        scores, seat, winner = [0, 0], 0, None
        while winner is None:
            me, them = scores[seat], scores[1 - seat]
            t = _java_turn(rng, lambda st, total, s=seat + 1, me=me, them=them: policy(s, me, them, index[st], total),
                           java)
            scores[seat] += t or 0
            if seat == 1:
                if java and t is None:  # ZDSimulator: after seat 2 busts, seat 1 wins with 13 or more
                    winner = 1 if scores[0] >= 13 else None
                elif max(scores) >= 13 and scores[0] != scores[1]:
                    winner = 1 if scores[0] > scores[1] else 2
            seat = 1 - seat
        wins += winner == 1
    return wins / games


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="original")
    parser.add_argument("--recycle", default="before-draw")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--split", type=int, default=2)
    parser.add_argument("--no-parallel", action="store_true")
    parser.add_argument("--anchor-games", type=int, default=0)
    args = parser.parse_args(argv)
    mode, recycle = args.mode, args.recycle

    start = time.perf_counter()
    table_for(mode, recycle)
    kernel_for(mode, recycle)
    build = time.perf_counter() - start

    times = [_solve_fresh(mode, recycle, 48) for _ in range(3)]
    solution = solve_game(mode, recycle)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

    tracemalloc.start()
    _solve_fresh(mode, recycle, 48)
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    print(f"mode {mode}, recycle {recycle}")
    print(f"  P(first player wins)       {solution.p_first_player_wins:.12f}")
    print(f"  table + kernel build       {build:8.2f} s   (excluded from the solve)")
    print(f"  solve, one process         {min(times):8.2f} s   best of 3 ({', '.join(f'{t:.2f}' for t in times)})")
    print(f"  peak resident memory       {rss:8.0f} MiB (whole process, table included)")
    print(f"  peak traced allocations    {traced / 2**20:8.0f} MiB (one solve, tracemalloc)")
    if args.anchor_games:
        n = args.anchor_games
        exact = solve_game("original", "draw-then-recycle").p_first_player_wins
        print(f"  anchor: exact P(first player wins), draw-then-recycle: {exact:.6f}")
        for java in (False, True):
            if java:  # the Java simulator reaches positions no real turn does: compute every position
                kernel_module.Layer.rows = lambda self, level: self.b - self.a
                kernel_for.cache_clear()
                solve_game.cache_clear()
            p = _anchor_games(n, java, seed=2013 + java)
            what = "ZDSimulator.java's dice handling" if java else "RULES.md, a third dice implementation"
            print(f"  {n} games, {what}: {p:.5f} +- {(p * (1 - p) / n) ** 0.5:.5f}")
    if args.no_parallel:
        return
    elapsed, data, per_layer = _parallel(mode, recycle, args.workers, args.split)
    same = data == solution.to_dict()
    print(f"  solve, {args.workers} workers, split {args.split}  {elapsed:8.2f} s   "
          f"(speed-up {min(times) / elapsed:.2f}x; bit for bit the same: {same})")
    slowest = sorted(range(len(per_layer)), key=per_layer.__getitem__)[-3:]
    print("  slowest layers             " + ", ".join(f"#{k}: {per_layer[k]:.2f} s" for k in reversed(slowest)))
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
