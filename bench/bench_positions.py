"""Per Double Feature position: what its first question costs (a table of the states its turn can reach, the
float solve, the exact values, the exact score distribution), each in a fresh process.

    PYTHONPATH=. .venv/bin/python bench/bench_positions.py [--objective reach:20] [--flow rationals|residues]
        ['{"mode": ...}' ...]

Without positions it runs the earliest positions the API answers in direct-to-video-sequel (three shotguns
from a bust: api.odds.MAX_ROOM) and a position one shotgun into a turn of the other two modes. A turn start
(``'{"mode": "santa-claus-meets-the-zombies"}'``) or a base-game position is solved over the whole turn, as
the API does. ``--flow`` forces how the exact score distribution flows (default: as the API, by the value's
size, `analysis.exact.RESIDUES_FROM`). CPU seconds are the measure (on a shared machine the wall time
measures the neighbours too), with the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

POSITIONS = [
    {"mode": "direct-to-video-sequel", "footprints": ["green", "green"], "shotguns": ["green"]},
    {"mode": "direct-to-video-sequel", "footprints": ["green"], "brains": ["green"], "shotguns": ["red"]},
    {"mode": "direct-to-video-sequel", "footprints": ["green"], "brains": ["green"], "shotguns": ["red"],
     "effects": ["helmet"]},
    {"mode": "direct-to-video-sequel", "footprints": ["red", "yellow"], "brains": ["hunk"],
     "effects": ["energy-drink"]},
    {"mode": "big-summer-action-movie", "footprints": ["green"], "brains": ["green"], "shotguns": ["red"]},
    {"mode": "santa-claus-meets-the-zombies", "footprints": ["green"], "brains": ["green"], "shotguns": ["red"]},
]


def measure(body: dict, objective: str, flow: str) -> dict:
    from analysis import Position, parse_objective
    from analysis.exact import exact_turn
    from analysis.policy import solve
    from analysis.table import table_for

    position = Position(**{k: tuple(v) if isinstance(v, list) else v for k, v in body.items()})
    goal, state = parse_objective(objective), position.state
    root = None if position.game_mode.plain or position.turn_start else state
    clock = [time.process_time()]

    def lap() -> float:
        clock.append(time.process_time())
        return round(clock[-1] - clock[-2], 1)

    table = table_for(position.mode, position.recycle, root)
    table_s = lap()
    solve(position.mode, position.recycle, goal, root)
    solve_s = lap()
    exact = exact_turn(position.mode, position.recycle, goal, root)
    i = table.index[state]
    value = exact.roll(i, position.score)
    values_s = lap()
    forward = {"auto": exact.score_distribution, "rationals": exact._flow_rationals,
               "residues": exact._flow_in_residues}[flow]
    distribution = forward(i, position.score)
    return {"states": len(table), "rolls": len(table.edge_to), "table_cpu": table_s, "solve_cpu": solve_s,
            "values_cpu": values_s, "distribution_cpu": lap(), "pairs": len(exact._values),
            "digits": len(str(value.denominator)), "scores": len(distribution), "value": float(value),
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("positions", nargs="*", help="positions as JSON bodies of POST /v1/odds")
    parser.add_argument("--objective", default="expected-brains")
    parser.add_argument("--flow", default="auto", choices=["auto", "rationals", "residues"])
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(json.loads(args.positions[0]), args.objective, args.flow)))
        return
    for body in [json.loads(p) for p in args.positions] or POSITIONS:
        command = [sys.executable, __file__, json.dumps(body), "--objective", args.objective, "--flow", args.flow,
                   "--one"]
        row = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        total = row["table_cpu"] + row["solve_cpu"] + row["values_cpu"] + row["distribution_cpu"]
        print(f"{json.dumps(body)}\n  {row['states']:,} states {row['rolls']:,} rolls; cpu table {row['table_cpu']} "
              f"+ solve {row['solve_cpu']} + exact values {row['values_cpu']} ({row['pairs']:,} (state, score) "
              f"pairs, {row['digits']} digits) + distribution {row['distribution_cpu']} = {total:.1f} s; "
              f"peak {row['peak_mib']} MiB; {args.objective} {row['value']:.6f}", flush=True)


if __name__ == "__main__":
    main()
