"""Benchmark of a table job on real Celery workers over Redis: two workers against one, and one process.

    PYTHONPATH=. .venv/bin/python bench/bench_celery.py [--mode original] [--recycle before-draw] [--players 2]
        [--redis redis://127.0.0.1:6379/13] [--runs 2] [--units 1]

For 1 and then 2 worker processes (``celery -A workers.celery_app worker --pool solo``: one task at a time per process,
so two workers are two cores at most), each on its own temporary store: a first job (the mode's two-player
table) warms the workers up (each builds the mode's transition table once, as a long-running worker does),
then ``--runs`` more jobs of the same table (its stored table and job record removed first) are timed from
`start_table_job` to SUCCESS (`job_status` polled every 20 ms). The job graph is the one the API starts
(workers/tasks.py: the units of a layer are a chord's header, `split` units per layer, ``--units`` per worker).
Beside the wall time it reports the CPU time the workers spent (user + system, from /proc, before and after), and
the in-process solve (`solve_game`, `solve_seats` for more players) for comparison, wall and CPU. The machine is
shared: CPU time says how much work was done, wall time how long a user waited.

Where the wall time goes (`_timeline`, from the workers' logs: each task's end and run time), in worker-seconds
that add up to the workers times the wall time: per kind of layer (tie-break rounds, final round, normal game) those
spent in its units and those idle while its other units ran (a layer lasts from the join that launches it to the
next join); the joins (`advance`: checkpoint the layer, launch the next); the rest (the launch, the last poll).

Uses the Redis database given (flushed before and after): never the tests' database 15.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import redis

from analysis.game import solve_game, units
from analysis.game.kernel import kernel_for
from analysis.game.seats import solve_seats
from workers.celery_app import create, using
from workers.store import JobKey, Store, table_key
from workers.tables import job_status, start_table_job

TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    """User + system CPU seconds of one process (and its waited-for children), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / TICK


def _start_workers(n: int, url: str, store: Path) -> list[subprocess.Popen]:
    """`n` solo workers, each logging its tasks to ``worker{k}.log`` in `store`."""
    env = {**os.environ, "REDIS_URL": url, "ZOMBIE_ODDS_STORE": str(store), "PYTHONPATH": os.getcwd()}
    return [subprocess.Popen([sys.executable, "-m", "celery", "--quiet", "-A", "workers.celery_app", "worker",
                              "--pool", "solo", "--hostname", f"bench{k}@%h", "--loglevel", "INFO", "--logfile",
                              str(store / f"worker{k}.log"), "--without-gossip", "--without-mingle",
                              "--without-heartbeat"], env=env) for k in range(n)]


TASK_DONE = re.compile(r"\[(\S+ \S+): INFO/MainProcess\] Task workers\.tasks\.(\w+)\[\S+\] succeeded in ([\d.]+)s")


def _timeline(store: Path, workers: int, start: float, end: float, layers: list[list[dict]]) -> dict[str, float]:
    """Worker-seconds of one job (between `start` and `end`, epoch seconds) by what they went to (module docstring):
    ``busy <kind>`` and ``idle <kind>`` per kind of layer, ``joins`` and ``other`` (the launch, the end's poll); they
    add up to the workers times the wall time. Layer k lasts from the join that launches it (the job's start for the
    first) to the next join's start; its units start in it (a join launches the next layer's units as it goes)."""
    spans = []  # (start, end, task) of every task the workers started in the job
    for k in range(workers):
        for line in (store / f"worker{k}.log").read_text().splitlines():
            if (m := TASK_DONE.match(line)) is not None:
                done = datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f").timestamp()
                if start <= (begun := done - float(m[3])) <= end:
                    spans.append((begun, min(done, end), m[2]))  # (the last join ends the job as it goes)
    joins = sorted((a, b - a) for a, b, task in spans if task == "advance")
    out = {"joins": sum(took for _, took in joins)}
    bounds = ([start] + [a for a, _ in joins] + [end])[:len(layers) + 1]
    for k, layer in enumerate(layers):
        kind = layer[0].get("kind") or ("tie+final" if layer[0]["layer"] == 0 else "normal")  # (two players': layer 0)
        kind = kind if kind in ("tie+final", "final", "normal") else "tie"  # (a tie-break round's layers, together)
        busy = sum(b - a for a, b, task in spans if task == "solve_unit" and bounds[k] <= a < bounds[k + 1])
        join = joins[k - 1][1] if k else 0.0
        out[f"busy {kind}"] = out.get(f"busy {kind}", 0.0) + busy
        out[f"idle {kind}"] = out.get(f"idle {kind}", 0.0) + workers * (bounds[k + 1] - bounds[k]) - busy - join
    out["other"] = workers * (end - start) - sum(out.values())
    return out


def _job(mode: str, recycle: str, players: int, store: Path, split: int) -> tuple[float, float]:
    """Run one job to SUCCESS; its start and end (epoch seconds). The table and old job records are removed first."""
    key = table_key(mode, recycle, players)
    s = Store(store)
    for path in [s.root / f"{key.name}.json", *(s.root / f"{JobKey(j.id).name}.json" for j in s.jobs())]:
        path.unlink(missing_ok=True)
    start = time.time()
    job = start_table_job(mode, recycle, players, split=split)
    while (state := job_status(job))[0] not in ("SUCCESS", "FAILURE"):
        time.sleep(0.02)
    if state[0] != "SUCCESS":
        raise RuntimeError(f"the job failed: {state[1]}")
    return start, time.time()


def _measure(workers: int, mode: str, recycle: str, players: int, url: str, runs: int, per_worker: int = 1,
             ) -> tuple[list[float], list[float], list[dict[str, float]]]:
    """(wall times, worker CPU times, `_timeline`s) of `runs` warm jobs on `workers` worker processes."""
    client = redis.Redis.from_url(url)
    client.flushdb()
    store = Path(tempfile.mkdtemp(prefix="bench-celery-"))
    os.environ["ZOMBIE_ODDS_STORE"] = str(store)
    procs = _start_workers(workers, url, store)
    try:
        with using(create(url)):
            time.sleep(3)
            _job(mode, recycle, 2, store, workers)  # warm-up: every worker builds the mode's turn (any player count's)
            walls, cpus, timelines = [], [], []
            layers = units.layers(mode, recycle, players, workers * per_worker)
            for _ in range(runs):
                before = sum(_cpu(p.pid) for p in procs)
                start, end = _job(mode, recycle, players, store, workers * per_worker)
                cpus.append(sum(_cpu(p.pid) for p in procs) - before)
                walls.append(end - start)
                time.sleep(1)  # (the last join, which stores the table and ends the job, logs its own end after)
                timelines.append(_timeline(store, workers, start, end, layers))
            return walls, cpus, timelines
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=60)
        client.flushdb()
        client.close()
        shutil.rmtree(store, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="original")
    parser.add_argument("--recycle", default="before-draw")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--units", type=int, default=1, help="units of a layer per worker")
    args = parser.parse_args(argv)
    if args.redis.rstrip("/").endswith("/15"):
        parser.error("database 15 belongs to the tests")

    kernel_for(args.mode, args.recycle)
    walls, cpus = [], []
    for _ in range(args.runs):
        solve_game.cache_clear()
        wall, cpu = time.perf_counter(), time.process_time()
        if args.players == 2:
            solve_game(args.mode, args.recycle)
        else:
            solve_seats(args.players, args.mode, args.recycle)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    print(f"mode {args.mode}, recycle {args.recycle}, {args.players} players (wall: best of {args.runs}; CPU: of that "
          "run)")
    best = min(range(args.runs), key=walls.__getitem__)
    print(f"  one process, in process       {walls[best]:7.2f} s wall {cpus[best]:7.2f} s CPU")
    results = {}
    for n in (1, 2):
        w, c, t = _measure(n, args.mode, args.recycle, args.players, args.redis, args.runs, args.units)
        k = min(range(len(w)), key=w.__getitem__)
        results[n] = w[k]
        print(f"  {n} Celery worker{'s' if n > 1 else ' '} (split {n * args.units})     {w[k]:7.2f} s wall "
              f"{c[k]:7.2f} s CPU (workers)   runs: {', '.join(f'{x:.2f}' for x in w)}")
        print("    worker-seconds: " + ", ".join(f"{name} {seconds:.2f}" for name, seconds in t[k].items()))
    print(f"  two workers against one: {results[1] / results[2]:.2f}x; against one process: "
          f"{walls[best] / results[2]:.2f}x")


if __name__ == "__main__":
    main()
