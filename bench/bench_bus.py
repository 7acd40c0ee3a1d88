"""What the exact answer to a School Bus position costs: the bus table, its float solve, the (node, score)
pairs the exact values need under the solved policy (and its near-ties), and, with ``--exact``, the exact
action values and score distribution themselves.

    PYTHONPATH=. .venv/bin/python bench/bench_bus.py                       # the base game's turn start
    PYTHONPATH=. .venv/bin/python bench/bench_bus.py --exact --position '{"footprints": ["green"],
        "brains": ["green", "green", "green", "green", "yellow", "yellow"]}'
    PYTHONPATH=. .venv/bin/python bench/bench_bus.py --mode santa-claus-meets-the-zombies --exact \
        --objective reach:14 --position '{"footprints": ["green"], "brains": ["green"], "shotguns": ["red"]}'

CPU seconds (time.process_time) are printed beside wall seconds: on a shared machine the wall time measures
the neighbours too. Peak memory is the process's maximum resident set.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from collections import Counter


def clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def step(label: str, since: tuple[float, float], extra: str = "") -> tuple[float, float]:
    now = clock()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"{label:<22} wall {now[0] - since[0]:7.1f} s  cpu {now[1] - since[1]:7.1f} s  peak {peak} MiB  {extra}",
          flush=True)
    return clock()


def reached(exact, i0: int, score0: int) -> tuple[Counter, int, int]:
    """The pairs the exact value of (i0, score0) needs (`ExactBusTurn._deps`, stopping at known values): per node
    kind, the edges of their chance nodes, and the highest score among them."""
    seen, stack = set(), [(i0, score0)]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v != (i0, score0) and exact._known(*v) is not None:
            continue
        stack.extend(w for w in exact._deps(*v) if w not in seen)
    table = exact.table
    kinds = Counter(("decision", "chance", "tyre", "stopped")[int(table.kind[i])] for i, _ in seen)
    edges = sum(int(table.edge_ptr[i + 1] - table.edge_ptr[i]) + len(table.loops[i])
                for i, _ in seen if table.kind[i] == 1)
    return kinds, edges, max(s for _, s in seen)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="original")
    parser.add_argument("--recycle", default="before-draw")
    parser.add_argument("--position", default="{}", help="School Bus position fields as JSON (default: turn start)")
    parser.add_argument("--exact", action="store_true", help="also compute the exact values and distribution")
    parser.add_argument("--objective", default="expected-brains", help="expected-brains, reach:K or rule:N,S")
    args = parser.parse_args()

    from analysis import Position
    from analysis.exact import exact_bus_turn
    from analysis.objectives import parse_objective
    from analysis.policy import bus_solve
    from analysis.table import bus_table_for

    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(args.position).items()}
    position = Position(mode=args.mode, recycle=args.recycle, school_bus=True, **fields)
    root = None if position.game_mode.plain or position.turn_start else position.bus_state
    t = clock()
    table = bus_table_for(args.mode, args.recycle, root)
    t = step("bus table", t, f"{len(table)} nodes")
    objective = parse_objective(args.objective)
    bus_solve(args.mode, args.recycle, objective, root)
    t = step("float solve", t)
    exact = exact_bus_turn(args.mode, args.recycle, objective, root)
    i, score = table.index[position.bus_state], position.score
    kinds, edges, top = reached(exact, i, score)
    t = step("pairs needed", t, f"{dict(kinds)}, {edges} chance edges, scores up to {top}")
    if args.exact:
        values = exact.action_values(i, score)
        bits = {a: int(v.denominator.bit_length()) for a, v in values.items()}
        t = step("exact values", t, f"denominator bits {bits}")
        best = max((a for a in values if a != "stop"), key=lambda a: values[a])
        distribution = exact.score_distribution(dict(exact.table.actions[i])[best], score)
        step("exact distribution", t, f"{len(distribution)} scores")


if __name__ == "__main__":
    main()
