"""The reduced model of 3 to 8 players against simulation: the numbers analysis/game/many.py's `MEASURED` holds.

    PYTHONPATH=. .venv/bin/python bench/bench_many.py [--mode original] [--recycle before-draw]
        [--games 4000] [--players 3 4 5 6 7 8]

For each player count ``n``: `check_reduced_model` (seed ``n``) plays ``games`` games with physical
dice, every player following the reduced model, and prints the largest per-seat error of the start
estimate (with the largest standard error), the turn starts of the normal game seen, the mean
``bias`` of the table's estimate (estimate minus outcome), the largest calibration error over bins of
100 turns or more, the calibration bins themselves, the wall and CPU time (the machine is shared), and
the `MeasuredError` to paste into analysis/game/many.py's `MEASURED`.
"""

from __future__ import annotations

import argparse
import time

from analysis.game import check_reduced_model, solve_game
from analysis.game.many import MeasuredError


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="original")
    parser.add_argument("--recycle", default="before-draw")
    parser.add_argument("--games", type=int, default=4000)
    parser.add_argument("--players", type=int, nargs="+", default=[3, 4, 5, 6, 7, 8])
    args = parser.parse_args(argv)
    solution = solve_game(args.mode, args.recycle)
    print(f"mode {args.mode}, recycle {args.recycle}, {args.games} games per player count (seed = players)")
    for n in args.players:
        wall, cpu = time.perf_counter(), time.process_time()
        check = check_reduced_model(solution, n, args.games, seed=n)
        start = max(abs(e) for e in check.errors)
        bins = ", ".join(f"[{c.lo:.1f},{c.hi:.1f}): {c.turns} {c.estimate:.3f}/{c.frequency:.3f}"
                         for c in check.calibration)
        print(f"  {n} players: start error {start:.4f} (se {max(check.standard_error):.4f}), {check.turns} turns, "
              f"bias {check.bias:+.4f}, calibration error {check.table_error():.4f}; "
              f"{time.perf_counter() - wall:.0f} s wall, {time.process_time() - cpu:.0f} s CPU")
        print(f"    bins (turns mean-estimate/frequency): {bins}")
        print(f"    MEASURED[{(args.mode, args.recycle, n)!r}] = {MeasuredError.of(check, n)!r}", flush=True)


if __name__ == "__main__":
    main()
