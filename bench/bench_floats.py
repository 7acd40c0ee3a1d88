"""What the first question about a position answered in floats costs (api.odds.approximate: exact fractions out of
reach), each in a fresh process: the float answer (`analysis.odds.odds(..., exact=False)`: the whole turn's table
and solve, or the bus table the position reaches and its solve), its CPU seconds and peak memory, then the same
answer again (its caches warm).

    PYTHONPATH=. .venv/bin/python bench/bench_floats.py [--objective reach:20] ['{"mode": ...}' ...]

Without positions: the sequel's turn start and a position of it before the first shotgun, and Santa with the School
Bus before his first shotgun and at his turn start.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

POSITIONS = [
    {"mode": "direct-to-video-sequel"},
    {"mode": "direct-to-video-sequel", "footprints": ["green"], "brains": ["green", "yellow"]},
    {"mode": "santa-claus-meets-the-zombies", "school_bus": True, "footprints": ["green"],
     "brains": ["green", "green"]},
    {"mode": "santa-claus-meets-the-zombies", "school_bus": True},
]


def measure(body: dict, objective: str) -> dict:
    from analysis import Position
    from analysis.odds import odds

    position = Position(**{k: tuple(v) if isinstance(v, list) else v for k, v in body.items()})
    start = time.process_time()
    first = odds(position, objective, exact=False)
    cold = time.process_time() - start
    odds(position, objective, exact=False)
    return {"cold_cpu": round(cold, 1), "warm_cpu": round(time.process_time() - start - cold, 3),
            "action": first.decision.action, "value": float(first.decision.actions[first.decision.roll_action]),
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("positions", nargs="*", help="positions as JSON bodies of POST /v1/odds")
    parser.add_argument("--objective", default="expected-brains")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(json.loads(args.positions[0]), args.objective)))
        return
    for body in [json.loads(p) for p in args.positions] or POSITIONS:
        command = [sys.executable, __file__, json.dumps(body), "--objective", args.objective, "--one"]
        row = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        print(f"{json.dumps(body)}\n  cpu {row['cold_cpu']} s cold, {row['warm_cpu']} s warm; peak {row['peak_mib']} "
              f"MiB; {row['action']}, its roll worth {row['value']:.9f} ({args.objective})", flush=True)


if __name__ == "__main__":
    main()
