"""zombie-odds' mathematics: pure rules and exact probabilities (no Flask, no Celery, no I/O).

Start with `Position` (a validated mid-turn position) and `odds` (the whole answer for it).
"""

from .dice import DICE, EFFECTS, MODES, Die, Effect, Face, Mode
from .odds import Decision, Odds, odds
from .policy import Objective, Solution, parse_objective, solve
from .position import FieldError, Position, PositionError
from .roll import NextRoll, Transition, next_roll
from .table import Table, table_for

__all__ = [
    "DICE",
    "EFFECTS",
    "MODES",
    "Decision",
    "Die",
    "Effect",
    "Face",
    "FieldError",
    "Mode",
    "NextRoll",
    "Objective",
    "Odds",
    "Position",
    "PositionError",
    "Solution",
    "Table",
    "Transition",
    "next_roll",
    "odds",
    "parse_objective",
    "solve",
    "table_for",
]
