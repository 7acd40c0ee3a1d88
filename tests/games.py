"""Two-player game solutions shared by the run's test processes: each is solved once (`analysis.game.solve_game`, under
its lock in a store of the run's own, as a table job would) and read from there by every other process.

tests/analysis/game/test_solution.py tests the solver itself; the other modules only need its answer, which is worth
solving once per run rather than once per test process (the base game's takes ~25 s, a Double Feature mode's ~40 s).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from analysis.game import GameSolution, solve_game
from workers.store import Store, table_key

ROOT: Path | None = None  # the run's folder, set by tests/conftest.py


@cache
def solved_game(mode: str = "original", recycle: str = "before-draw") -> GameSolution:
    """The two-player game of `mode`, solved by the first process that asks and stored for the others."""
    assert ROOT is not None, "tests/conftest.py names the folder"
    shelf, key = Store(ROOT), table_key(mode, recycle, 2)
    with shelf.lock(key):
        stored = shelf.get(key)
        if stored is not None:
            return GameSolution.from_dict(stored[0])
        game = solve_game(mode, recycle)
        shelf.put(key, game.to_dict())
        return game
