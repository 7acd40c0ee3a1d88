"""The plain turn through both engines: the plain engine (`table_for`, `solve`, `exact_turn`) and the School Bus
engine rooted where the bus is out (`bus_table_for`, `bus_solve`, `exact_bus_turn`), which solve the same graph
(tests/analysis/test_turn.py). What each costs is why the plain table stays a compact form of it.

    PYTHONPATH=. .venv/bin/python bench/bench_engines.py                    # every mode's whole turn, floats
    PYTHONPATH=. .venv/bin/python bench/bench_engines.py --exact            # the base game's turn start, exact
    PYTHONPATH=. .venv/bin/python bench/bench_engines.py --modes direct-to-video-sequel --runs 2
    PYTHONPATH=. .venv/bin/python bench/bench_engines.py --modes direct-to-video-sequel --objective reach:8

Each figure is one fresh process (`time.process_time`, peak resident memory), the two engines alternating. The
float solves keep different things: the plain one every state's roll value at every level up to its bound (what
a stored plain solution holds), the School Bus one the decisions that roll (what a stored School Bus solution
holds). The exact figures are the turn start's action values, then the score distribution of its roll.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

from analysis import MODES


def one(mode: str, engine: str, exact: bool, objective: str) -> dict:
    """One measure, in this process."""
    from analysis import Position
    from analysis.exact import exact_bus_turn, exact_turn
    from analysis.objectives import parse_objective
    from analysis.policy import bus_solve, solve
    from analysis.position import BusState
    from analysis.table import bus_table_for, table_for
    from analysis.turn import ExactBus, ExactPlain

    goal, recycle = parse_objective(objective), "before-draw"
    plain, root = engine == "plain", BusState(Position(mode=mode).state, "out")  # (the turn start, the bus out)
    t0 = time.process_time()
    table = table_for(mode, recycle) if plain else bus_table_for(mode, recycle, root)
    t1 = time.process_time()
    measured = {"nodes": len(table), "table": t1 - t0}
    if not exact:
        solution = solve(mode, recycle, goal) if plain else bus_solve(mode, recycle, goal, root)
        t2 = time.process_time()
        value = solution.value_at(0, 0) if plain else float(solution.root_values[0])
        measured |= {"solve": t2 - t1, "value": value}
    else:
        turn = ExactPlain(exact_turn(mode, recycle, goal)) if plain else \
            ExactBus(exact_bus_turn(mode, recycle, goal, root))
        t2 = time.process_time()
        roll = turn.action_values(0, 0)["roll"]
        t3 = time.process_time()
        distribution, _ = turn.score_distribution(turn.actions(0)["roll"], 0)
        measured |= {"solve": t2 - t1, "values": t3 - t2, "distribution": time.process_time() - t3,
                     "value": float(roll), "outcomes": len(distribution)}
    return measured | {"peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", nargs="*", default=None)
    parser.add_argument("--exact", action="store_true", help="the base game's turn start in exact values")
    parser.add_argument("--objective", default="expected-brains")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--one", nargs=2, metavar=("MODE", "ENGINE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(*args.one, args.exact, args.objective)))
        return
    modes = args.modes or (["original"] if args.exact else list(MODES))
    for mode in modes:
        for _ in range(args.runs):
            for engine in ("plain", "bus"):
                command = [sys.executable, __file__, "--one", mode, engine, "--objective", args.objective]
                command += ["--exact"] if args.exact else []
                r = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
                times = "  ".join(f"{k} {r[k]:6.2f} s" for k in ("table", "solve", "values", "distribution") if k in r)
                print(f"{mode:<32} {args.objective:<16} {engine:<5} {r['nodes']:>8} nodes  {times}  "
                      f"peak {r['peak']:6.0f} MiB  value {r['value']:.12f}", flush=True)


if __name__ == "__main__":
    main()
