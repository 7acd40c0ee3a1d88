"""Per mode: dice states (and edges) of the whole single-turn table, time to build it, time to solve the optimal
(expected-brains) policy over it, against the base game.

    PYTHONPATH=. .venv/bin/python bench/bench_modes.py [mode ...] [--recycle draw-then-recycle]

Each mode runs in a fresh process (no warm caches shared with another mode); the output is one line
per mode plus the ratio of its solve time to the base game's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time


def measure(mode: str, recycle: str) -> dict:
    from analysis.policy import Objective, solve
    from analysis.table import table_for

    t0 = time.perf_counter()
    table = table_for(mode, recycle)
    t1 = time.perf_counter()
    solution = solve(mode, recycle, Objective())
    t2 = time.perf_counter()
    return {"mode": mode, "states": len(table), "edges": sum(len(r) for r in table.edges),
            "table_s": round(t1 - t0, 2), "solve_s": round(t2 - t1, 2), "top": solution.top,
            "capped": solution.capped, "start_value": float(solution.roll[0, table.start])}


def main() -> None:
    from analysis.dice import MODES

    parser = argparse.ArgumentParser()
    # direct-to-video-sequel's whole-turn table does not fit (it passed 5 GB before its search ended):
    # name it explicitly to try.
    parser.add_argument("modes", nargs="*", default=[m for m in MODES if m != "direct-to-video-sequel"])
    parser.add_argument("--recycle", default="before-draw")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.modes[0], args.recycle)))
        return
    modes = ["original"] + [m for m in args.modes if m != "original"]
    base = None
    for mode in modes:
        out = subprocess.run([sys.executable, __file__, mode, "--recycle", args.recycle, "--one"],
                             capture_output=True, text=True, check=True).stdout
        row = json.loads(out)
        base = base or row
        total = row["table_s"] + row["solve_s"]
        ratio = row["solve_s"] / base["solve_s"]
        ratio_total = total / (base["table_s"] + base["solve_s"])
        print(f"{row['mode']:32} states {row['states']:>7} edges {row['edges']:>9} table {row['table_s']:>7.1f}s "
              f"solve {row['solve_s']:>6.1f}s (x{ratio:.1f}; with table x{ratio_total:.1f}) top {row['top']}"
              f"{' capped' if row['capped'] else ''} E[turn] {row['start_value']:.6f}", flush=True)


if __name__ == "__main__":
    main()
