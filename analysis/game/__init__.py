"""Whole games of Zombie Dice: win probabilities and optimal decisions (RULES.md section 1).

* Two players, both maximising their probability of winning, solved exactly (up to a cap whose
  effect is below 1e-9): `solve_game` -> `GameSolution` (duel.py has the equations, kernel.py the
  vectorised sweep). `game_layers`, `solve_layer`, `merge` and `assemble` split the same computation
  into independent units for workers, with bit-for-bit the same result.
* Fixed simple rules against the optimal player, by exact policy evaluation: `rule_win_probability`
  (rules.py).
* Any number of players, each maximising its own probability of winning, solved exactly (the same cap):
  `solve_seats` -> `SeatsSolution` (seats.py; two players give duel.py's values), `SeatsPolicy` to play it.
* Every table's solve as plain-data units for workers, whatever its player count, and which tables are computed:
  `units` (units.py).
* Three to eight players: a reduced model ("duel the leader") checked against whole games played
  with physical dice: `ReducedPolicy`, `check_reduced_model` (many.py).
* Whole two-player games with physical dice, for Monte Carlo checks: `play_duel`, `policy_table`; games of more
  players, the players changing seats, counted by seat and by player against a table: `play_rotated` (many.py).
"""

from . import units
from .duel import CAP, GOAL
from .many import (
                   Calibration,
                   ModelCheck,
                   ReducedPolicy,
                   check_reduced_model,
                   estimate_reduced,
                   play_many,
                   play_rotated,
                   reduced_table,
                   reduced_win_probability,
)
from .play import PolicyTable, play_duel, policy_table
from .rules import Rule, parse_rule, rule_game, rule_win_probability
from .seats import SeatsPolicy, SeatsSolution, solve_seats
from .solution import GameDecision, GameSolution, WorkUnit, assemble, game_layers, merge, solve_game, solve_layer

__all__ = [
    "CAP",
    "Calibration",
    "GOAL",
    "GameDecision",
    "GameSolution",
    "ModelCheck",
    "PolicyTable",
    "ReducedPolicy",
    "Rule",
    "SeatsPolicy",
    "SeatsSolution",
    "WorkUnit",
    "assemble",
    "check_reduced_model",
    "estimate_reduced",
    "game_layers",
    "merge",
    "parse_rule",
    "play_duel",
    "play_many",
    "play_rotated",
    "policy_table",
    "reduced_table",
    "reduced_win_probability",
    "rule_game",
    "rule_win_probability",
    "solve_game",
    "solve_layer",
    "solve_seats",
    "units",
]
