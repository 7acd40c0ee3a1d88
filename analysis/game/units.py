"""Any full-game table's solve as layers of plain-data units, for workers that share nothing but messages.

Two players are solution.py's (`game_layers`: the tie-break and final turns, then one layer per score total), more
players seats.py's (`seats_layers`: tie-breaks by number of seats, the final round by mover, then the normal game by
total). Either way a unit needs the values of every earlier layer only (`Known`, their results added one by one),
gives the same values bit for bit in whatever unit it is solved, and `assemble` refuses a table with a value missing.
Units and results are JSON-ready (floats round-trip), so a job's messages and durable entries are plain data; `Known`
reads each result once, so a worker that keeps one across a job's layers reads only each new layer's results (a
three-player table's earlier values are megabytes of JSON by its last layers). More than two players are solved to
`GOAL` with `CAP` (module names, read when called).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dice import MODES
from .duel import CAP, GOAL
from .kernel import kernel_for
from .seats import (
    Game,
    SeatsSolution,
    SeatsUnit,
    Spot,
    decode,
    encode,
    every_spot,
    seats_layers,
    solve_unit,
    values_only,
)
from .solution import GameSolution, WorkUnit, game_layers, solve_layer
from .solution import assemble as assemble_two
from .solution import merge as merge_two

__all__ = ["MOST_PLAYERS", "MOST_PLAYERS_ELSE", "exact_players", "no_table_reason", "JOB_SECONDS", "job_seconds",
           "layers", "Known", "solve", "assemble", "solution_from"]

# The most players whose table is solved exactly, as a job: three in every mode, four in the base game and Big Summer
# (a mode named here: each was computed whole on this kind of machine); more players are the reduced model's
# (many.py), derived from the two-player table. What they cost (bench/README.md, `JOB_SECONDS`): three players of the
# base game about 55 s of CPU and 1.4 GB, of a Double Feature mode six to two hundred times that time (its turn is that
# much larger: the sequel's 2.4 hours of CPU and 7 GB a worker); four players of the base game 16 minutes, of Big
# Summer 2 hours of CPU and 1.5 GB a worker.
MOST_PLAYERS = {"original": 4, "big-summer-action-movie": 4}
MOST_PLAYERS_ELSE = 3


def exact_players(mode: str) -> range:
    """The player counts of `mode` whose table is solved exactly (none for a mode that does not exist)."""
    return range(2, MOST_PLAYERS.get(mode, MOST_PLAYERS_ELSE) + 1) if mode in MODES else range(0)


# About how long each table's job takes on one core of a 2-core machine, in seconds, by players and mode (its CPU time:
# bench/README.md): what a client waiting for it is told.
JOB_SECONDS = {
    2: {"original": 5, "big-summer-action-movie": 25, "santa-claus-meets-the-zombies": 50,
        "direct-to-video-sequel": 450},
    3: {"original": 55, "big-summer-action-movie": 300, "santa-claus-meets-the-zombies": 900,
        "direct-to-video-sequel": 8500},
    4: {"original": 1000, "big-summer-action-movie": 7100},
}


def job_seconds(mode: str, players: int) -> int:
    """About how long the job of `mode`'s table of `players` players takes on one core: `JOB_SECONDS`, or for a mode
    not measured the costliest measured."""
    costs = JOB_SECONDS[players]
    return costs.get(mode, max(costs.values()))


def no_table_reason(mode: str, players: int = 2) -> str | None:
    """Why no table of `players` players is computed for `mode` (None if one is): `exact_players`."""
    if mode not in MODES:
        return f"no such mode: {mode}"
    if players not in exact_players(mode):
        most = ", ".join(f"{n} of {m}" for m, n in MOST_PLAYERS.items())
        return (f"{players} players of {mode} have no exact table (computed exactly: 2 to {MOST_PLAYERS_ELSE} players "
                f"of every mode, {most}); GET /v1/tables/{mode}?players={players} serves the reduced model where it "
                f"was checked")
    return None


def layers(mode: str, recycle: str, players: int, split: int = 1) -> list[list[dict[str, Any]]]:
    """The solve of the `players`-player table as layers of units (each a dict naming its player count)."""
    if players == 2:
        return [[{**u.to_dict(), "players": 2} for u in layer] for layer in game_layers(mode, recycle, split)]
    return [[{**u.to_dict(), "players": players} for u in layer]
            for layer in seats_layers(players, mode, recycle, GOAL, CAP, split)]


class Known:
    """The values of the layers solved so far, from the units' results as `add`ed (each read once, in any order)."""

    def __init__(self, players: int):
        self.players = players
        self.values: dict[str, Any] | dict[Spot, np.ndarray] = {}  # two players': merged plain data; more: decoded

    def add(self, result: dict[str, Any]) -> None:
        if self.players == 2:
            self.values = merge_two(self.values, result)
        else:
            self.values.update(decode(result))


def solve(unit: dict[str, Any], known: Known) -> dict[str, Any]:
    """One unit's values, from every earlier layer's."""
    if unit["players"] == 2:
        return solve_layer(WorkUnit.from_dict(unit), known.values)
    return encode(solve_unit(SeatsUnit.from_dict(unit), known.values))


def assemble(mode: str, recycle: str, known: Known) -> GameSolution | SeatsSolution:
    """The table from every unit's values; ValueError if one is missing."""
    if known.players == 2:
        return assemble_two(mode, recycle, [known.values])
    solution = SeatsSolution(mode, recycle, Game(known.players, GOAL, CAP), values_only(known.values))
    game, levels = solution.game, solution.game.levels + kernel_for(mode, recycle).max_delta + 1
    missing = next((spot for spot in every_spot(game, levels) if spot not in solution.values), None)
    if missing is not None:
        raise ValueError(f"results are missing some units: no value for {missing}")
    return solution


def solution_from(data: dict[str, Any]) -> GameSolution | SeatsSolution:
    """A stored table's solution, by its format."""
    return (SeatsSolution if data.get("players", 2) > 2 else GameSolution).from_dict(data)
