"""Stored solutions: each one's build (CPU, wall, peak memory, size on disk) and answers read from them.

    PYTHONPATH=. .venv/bin/python bench/bench_solutions.py build [STORE]     # every combination, fresh processes
    PYTHONPATH=. .venv/bin/python bench/bench_solutions.py all [STORE]       # all 16 in one command, side by side
    PYTHONPATH=. .venv/bin/python bench/bench_solutions.py answers [STORE] [N]
    PYTHONPATH=. .venv/bin/python bench/bench_solutions.py phases MODE [RECYCLE]  # one School Bus build, by phase

`all` runs ``zombie-odds solutions build`` once, as a user does (one build a core), and samples the machine every
0.5 s: its wall time, the CPU seconds of the whole machine (from /proc/stat: the builds run in processes of their own,
forked from one the command starts, so no wait of this one counts them), the memory in use at most and the largest
peak of any process (`VmHWM`). Run it alone on the machine.

`phases` builds one School Bus solution in this process (`analysis.bus_solutions.build`, storing nothing) and
prints, per phase (the search and the table, each pass of the sweep, the arrays, the turn start's distribution),
the CPU seconds when it starts and the peak memory (`VmRSS`, sampled every 0.1 s) over it.

`build` runs ``zombie-odds solutions build`` once per combination in a fresh process (into STORE, default a new
temporary folder) and prints a Markdown table row per combination. `answers` draws N (default 10,000) positions
by simulated play across every combination (analysis.simulate.random_position) and answers each in this process
twice: as `/v1/advice.txt` and `/v1/odds.txt` do (the next roll exact, the decision and the values) and as /v1/odds
does (the same and the score distribution): p50, p99 and max per mode, then over all.
"""

from __future__ import annotations

import contextlib
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


def everything(root: Path) -> None:
    def cpu() -> tuple[float, float]:
        fields = [int(f) for f in Path("/proc/stat").read_text().split("\n")[0].split()[1:4]]
        return sum(fields) / os.sysconf("SC_CLK_TCK"), fields[2] / os.sysconf("SC_CLK_TCK")

    def in_use() -> float:
        info = {line.split(":")[0]: int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()}
        return (info["MemTotal"] - info["MemAvailable"]) / 2**20

    def largest() -> int:
        most = 0
        for status in Path("/proc").glob("[0-9]*/status"):
            with contextlib.suppress(OSError):  # (a process that ended meanwhile)
                most = max([most] + [int(line.split()[1]) for line in status.read_text().splitlines()
                                     if line.startswith("VmHWM")])
        return most

    env = {**os.environ, "ZOMBIE_ODDS_SOLUTIONS": str(root)}
    (cpu0, kernel0), start, used, peak = cpu(), time.perf_counter(), 0.0, 0
    child = subprocess.Popen([sys.executable, "-m", "api.cli", "solutions", "build", "--quiet"], env=env)
    while child.poll() is None:
        used, peak = max(used, in_use()), max(peak, largest())
        time.sleep(0.5)
    if child.returncode:
        sys.exit("the builds failed")
    (cpu1, kernel1), wall = cpu(), time.perf_counter() - start
    print(f"all 16: {wall:.0f} s of wall time, {cpu1 - cpu0:.0f} s of CPU on the machine ({kernel1 - kernel0:.0f} s in "
          f"the kernel), {used:.2f} GiB in use at most, the largest process {peak / 2**20:.2f} GiB")


def phases(mode: str, recycle: str) -> None:
    import threading

    from analysis import bus_solutions, policy
    from analysis.table import bus_table_for

    def rss() -> int:
        return next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
                    if line.startswith("VmRSS")) // 1024

    peaks: dict[str, int] = {}
    now = ["the search and the table"]

    def sample() -> None:
        while True:
            peaks[now[0]] = max(peaks.get(now[0], 0), rss())
            time.sleep(0.1)

    def mark(phase: str) -> None:
        now[0] = phase
        print(f"{time.process_time():7.1f} s of CPU, {rss():5d} MiB: {phase}", flush=True)

    def marked(phase: str, after: str, step):
        def run(*args, **kwargs):
            mark(phase)
            result = step(*args, **kwargs)
            mark(after)
            return result
        return run

    passes = iter(range(1, 100))
    sweep = policy.bus_sweep
    policy.bus_sweep = lambda *a, **k: marked(f"pass {next(passes)}", "the arrays", sweep)(*a, **k)
    bus_solutions.StoredBusTurn.score_distribution = marked("the turn start's distribution", "done",
                                                            bus_solutions.StoredBusTurn.score_distribution)
    threading.Thread(target=sample, daemon=True).start()
    mark("the search and the table")
    bus_table_for(mode, recycle)
    meta, _ = bus_solutions.build(mode, recycle)
    time.sleep(0.2)
    print("| phase | peak MiB |\n|---|---|")
    for phase, peak in peaks.items():
        print(f"| {phase} | {peak:,} |")
    print(f"{time.process_time():.1f} s of CPU in all; {meta['passes']} passes; within {meta['within']:.1e}")


def answers(root: Path, count: int) -> None:
    os.environ["ZOMBIE_ODDS_SOLUTIONS"] = str(root)
    from analysis.odds import answer_from
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
        answer_from(position, turn, distribution=False)
        decided.append(time.perf_counter() - start)
        start = time.perf_counter()
        answer_from(position, turn)
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
    if what == "phases":
        sys.exit(phases(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "before-draw"))
    root = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.mkdtemp(prefix="solutions-"))
    if what == "build":
        build(root)
    elif what == "all":
        everything(root)
    else:
        answers(root, int(sys.argv[3]) if len(sys.argv) > 3 else 10_000)
