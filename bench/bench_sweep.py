"""One game sweep's CPU time a column as it carries more columns at once (analysis/game/kernel.py `sweep`).

A sweep's time is mostly per roll (reading where it leads and its probability); the numbers it then adds, the
columns times the value and slopes of each, are one vector operation. This prints the CPU seconds a column for
widths 1 to 16, with three numbers a column (a full step of three players' policy iteration: the mover's value,
one other seat's, the chance the turn ends with 0) and with one (a check), and the sweep's working memory. The
columns are shaped like a normal score tuple's: stopping is worth more the more brains, up to a sure win at 60.

    PYTHONPATH=. .venv/bin/python bench/bench_sweep.py [--mode direct-to-video-sequel] [--widths 1 2 4 8 16]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from analysis.game.kernel import kernel_for, sweep
from analysis.game.seats import Game, roll_tops, sweep_bytes


def _columns(levels: int, width: int) -> np.ndarray:
    t = np.arange(levels)[:, None]
    shift = np.arange(width)[None, :] % 16  # each column a brain nearer the goal than the last, sixteen in turn
    rising = 0.3 + 0.7 * (1 - np.exp(-(t + shift) / 15))
    return np.where(t + shift >= 60, 1.0, np.minimum(rising, 0.999))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="direct-to-video-sequel")
    parser.add_argument("--recycle", default="before-draw")
    parser.add_argument("--widths", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    args = parser.parse_args(argv)
    kernel = kernel_for(args.mode, args.recycle)
    levels = Game(3).levels + kernel.max_delta + 1
    rng = np.random.default_rng(1)
    sweep(kernel, _columns(levels, 1), roll_tops(kernel, _columns(levels, 1)))  # compiled, and its memory touched
    print(f"mode {args.mode}, {kernel.n:,} states")
    print("| numbers a column | columns | CPU s | CPU s a column | working memory GB |")
    print("|---|---|---|---|---|")
    for m in (3, 1):
        for width in args.widths:
            stop = _columns(levels, width)
            tops = roll_tops(kernel, stop)
            dstop = rng.random((levels, m - 1, width)) if m > 1 else None
            cpu = time.process_time()
            sweep(kernel, stop, tops, dstop)
            cpu = time.process_time() - cpu
            memory = sweep_bytes(kernel, tops, m).sum() / 1e9
            print(f"| {m} | {width} | {cpu:.2f} | {cpu / width:.2f} | {memory:.2f} |", flush=True)


if __name__ == "__main__":
    main()
