"""Stored solutions: each one's build (CPU, wall, peak memory, size on disk) and answers read from them.

    PYTHONPATH=. .venv/bin/python bench/bench_solutions.py build [STORE]     # every combination, fresh processes
    PYTHONPATH=. .venv/bin/python bench/bench_solutions.py answers [STORE] [N]

`build` runs ``zombie-odds solutions build`` once per combination in a fresh process (into STORE, default a new
temporary folder) and prints a Markdown table row per combination. `answers` draws N (default 10,000) positions
by simulated play across every combination (analysis.simulate.random_position) and answers each in this process
twice: as `/v1/advice.txt` and `/v1/odds.txt` do (the next roll exact, the decision and the values) and as /v1/odds
does (the same and the score distribution): p50, p99 and max per mode, then over all.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def build(root: Path) -> None:
    from workers.solutions import combinations

    env = {**os.environ, "ZOMBIE_ODDS_SOLUTIONS": str(root)}
    print("| mode | bus | recycle | CPU s | wall s | peak MiB | on disk MiB | states or nodes | top | within |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for mode, recycle, bus in combinations():
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "api.cli", "solutions", "build", "--quiet", "--mode", mode,
                                  "--variant", recycle, "--school-bus" if bus else "--no-school-bus"], env=env)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own CPU time and peak memory
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            sys.exit(f"the build of {mode} ({recycle}) failed")
        wall = time.perf_counter() - start
        cpu = usage.ru_utime + usage.ru_stime
        os.environ["ZOMBIE_ODDS_SOLUTIONS"] = str(root)
        from workers.solutions import solution_key, status

        folder = root / solution_key(mode, recycle, bus).name
        size = sum(f.stat().st_size for f in folder.iterdir()) / 2**20
        meta = status(mode, recycle, bus).meta
        peak = usage.ru_maxrss / 1024
        print(f"| {mode} | {'yes' if bus else 'no'} | {recycle} | {cpu:.1f} | {wall:.1f} | {peak:.0f} | {size:.0f} |"
              f" {meta.get('states', meta.get('nodes')):,} | {meta['top']} | {meta['within']:.1e} |",
              flush=True)


def answers(root: Path, count: int) -> None:
    os.environ["ZOMBIE_ODDS_SOLUTIONS"] = str(root)
    from analysis.odds import stored_odds
    from analysis.simulate import random_position
    from workers.solutions import combinations, load

    rng = random.Random(2026)
    turns = {c: load(*c) for c in combinations()}
    missing = [c for c, t in turns.items() if t is None]
    if missing:
        sys.exit(f"not built: {missing} (run `zombie-odds solutions build` with ZOMBIE_ODDS_SOLUTIONS={root})")
    asked = [(c, random_position(c[0], rng, recycle=c[1], school_bus=c[2]))
             for c in (rng.choice(combinations()) for _ in range(count))]
    times: dict[str, tuple[list[float], list[float]]] = {}
    for (mode, recycle, bus), position in asked:
        turn = turns[(mode, recycle, bus)]
        decided, whole = times.setdefault(f"{mode}{', bus' if bus else ''}", ([], []))
        start = time.perf_counter()
        stored_odds(position, turn, distribution=False)
        decided.append(time.perf_counter() - start)
        start = time.perf_counter()
        stored_odds(position, turn)
        whole.append(time.perf_counter() - start)
    print("| mode | positions | decision p50 ms | p99 ms | max ms | with the distribution p50 ms | p99 ms | max ms |")
    print("|---|---|---|---|---|---|---|---|")
    every: tuple[list[float], list[float]] = ([], [])
    for mode, (decided, whole) in [*times.items(), ("all", every)]:
        if mode != "all":
            every[0].extend(decided)
            every[1].extend(whole)
        cells = [f"{np.percentile(t, 50) * 1e3:.2f} | {np.percentile(t, 99) * 1e3:.2f} | {max(t) * 1e3:.1f}"
                 for t in (decided, whole)]
        print(f"| {mode} | {len(decided)} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "build"
    root = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.mkdtemp(prefix="solutions-"))
    if what == "build":
        build(root)
    else:
        answers(root, int(sys.argv[3]) if len(sys.argv) > 3 else 10_000)
