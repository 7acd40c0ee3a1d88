"""Per mode: dice states (and edges) of the whole single-turn table, time to build it, time to solve the optimal
(expected-brains) policy over it, against the base game.

    PYTHONPATH=. .venv/bin/python bench/bench_modes.py [mode ...] [--recycle draw-then-recycle] [--bus]

Each mode runs in a fresh process (no warm caches shared with another mode); the output is one line
per mode with the ratio of its CPU time (table and solve) to the base game's, and the peak resident memory of
its process. CPU seconds are the measure: on a shared machine the wall time measures the neighbours too.
With ``--bus`` each mode runs twice, without
and with the School Bus (its nodes: decisions, rolls, tyre-tracks choices; the passes of a table with
rescues and YIELD), and the ratio is the bus's time (table and solve) to the same mode's without it.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def measure_bus(mode: str, recycle: str) -> dict:
    import numpy as np

    from analysis.objectives import ExpectedBrains
    from analysis.policy import bus_solve
    from analysis.table import DECISION, bus_table_for

    t0, c0 = time.perf_counter(), time.process_time()
    table = bus_table_for(mode, recycle, None)
    t1, c1 = time.perf_counter(), time.process_time()
    solution = bus_solve(mode, recycle, ExpectedBrains(), None)
    t2, c2 = time.perf_counter(), time.process_time()
    return {"mode": mode, "states": int((table.kind == DECISION).sum()), "nodes": len(table),
            "edges": len(table.edge_to) + sum(len(r) for r in table.loops),
            "table_s": round(t1 - t0, 2), "solve_s": round(t2 - t1, 2), "table_cpu": round(c1 - c0, 2),
            "solve_cpu": round(c2 - c1, 2), "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            "top": solution.top, "capped": solution.capped, "passes": solution.passes,
            "start_value": float(solution.root_values[0]), "cyclic": int(np.sum(table.cyclic))}


def measure(mode: str, recycle: str) -> dict:
    from analysis.objectives import ExpectedBrains
    from analysis.policy import solve
    from analysis.table import table_for

    t0, c0 = time.perf_counter(), time.process_time()
    table = table_for(mode, recycle)
    t1, c1 = time.perf_counter(), time.process_time()
    solution = solve(mode, recycle, ExpectedBrains())
    t2, c2 = time.perf_counter(), time.process_time()
    # CPU seconds beside wall seconds: on a shared machine the wall time measures the neighbours too.
    return {"mode": mode, "states": len(table), "edges": len(table.edge_to),
            "table_s": round(t1 - t0, 2), "solve_s": round(t2 - t1, 2), "table_cpu": round(c1 - c0, 2),
            "solve_cpu": round(c2 - c1, 2), "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            "top": solution.top, "capped": solution.capped, "start_value": float(solution.roll[0, table.start])}


def main() -> None:
    from analysis.dice import MODES

    parser = argparse.ArgumentParser()
    # direct-to-video-sequel has 2,905 score levels (a helmet and a drink put m/q at 2,844; states that cannot
    # bust cap it 60 above); a Solution stores each state's levels only up to its own bound (2.3 GiB peak).
    parser.add_argument("modes", nargs="*", default=list(MODES))
    parser.add_argument("--recycle", default="before-draw")
    parser.add_argument("--bus", action="store_true", help="each mode without and with the School Bus")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps((measure_bus if args.bus else measure)(args.modes[0], args.recycle)))
        return
    if args.bus:
        for mode in args.modes:
            rows = [json.loads(subprocess.run([sys.executable, __file__, mode, "--recycle", args.recycle, "--one",
                                               *(["--bus"] if bus else [])],
                                              capture_output=True, text=True, check=True).stdout)
                    for bus in (False, True)]
            plain, bus = rows
            ratio = (bus["table_cpu"] + bus["solve_cpu"]) / (plain["table_cpu"] + plain["solve_cpu"])
            print(f"{mode:32} without: states {plain['states']:>7} table {plain['table_s']:>7.1f}s solve "
                  f"{plain['solve_s']:>6.1f}s cpu {plain['table_cpu']:.1f}+{plain['solve_cpu']:.1f}s peak "
                  f"{plain['peak_mib']} MiB E[turn] {plain['start_value']:.6f}\n"
                  f"{'':32} bus:     states {bus['states']:>7} nodes {bus['nodes']:>7} edges {bus['edges']:>8} "
                  f"table {bus['table_s']:>7.1f}s solve {bus['solve_s']:>6.1f}s cpu {bus['table_cpu']:.1f}+"
                  f"{bus['solve_cpu']:.1f}s (passes {bus['passes']}) peak {bus['peak_mib']} MiB top {bus['top']}"
                  f"{' capped' if bus['capped'] else ''} E[turn] {bus['start_value']:.6f}: x{ratio:.1f} the CPU "
                  "time without the bus", flush=True)
        return
    modes = ["original"] + [m for m in args.modes if m != "original"]
    base = None
    for mode in modes:
        out = subprocess.run([sys.executable, __file__, mode, "--recycle", args.recycle, "--one"],
                             capture_output=True, text=True, check=True).stdout
        row = json.loads(out)
        base = base or row
        ratio = row["solve_cpu"] / base["solve_cpu"]
        ratio_total = (row["table_cpu"] + row["solve_cpu"]) / (base["table_cpu"] + base["solve_cpu"])
        print(f"{row['mode']:32} states {row['states']:>7} edges {row['edges']:>9} cpu table {row['table_cpu']:>6.2f}s "
              f"solve {row['solve_cpu']:>6.2f}s (x{ratio:.1f}; with table x{ratio_total:.1f}) wall "
              f"{row['table_s']:.1f}+{row['solve_s']:.1f}s peak {row['peak_mib']} MiB top {row['top']}"
              f"{' capped' if row['capped'] else ''} E[turn] {row['start_value']:.6f}", flush=True)


if __name__ == "__main__":
    main()
