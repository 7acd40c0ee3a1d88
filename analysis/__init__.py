"""zombie-odds' mathematics: pure rules and exact probabilities (no Flask, no Celery, no I/O).

Start with `Position` (a validated mid-turn position) and `odds` (the whole answer for it).
"""

from .dice import BUS, DICE, EFFECTS, MODES, Die, Effect, Face, Mode
from .odds import Decision, GiveUp, Odds, odds
from .policy import Objective, Solution, parse_objective, solve
from .position import BusState, FieldError, Position, PositionError
from .roll import ACTIONS, NextRoll, Transition, legal_actions, next_roll
from .table import Table, table_for

__all__ = [
    "ACTIONS",
    "BUS",
    "BusState",
    "DICE",
    "EFFECTS",
    "MODES",
    "Decision",
    "Die",
    "Effect",
    "Face",
    "FieldError",
    "GiveUp",
    "Mode",
    "NextRoll",
    "Objective",
    "Odds",
    "Position",
    "PositionError",
    "Solution",
    "Table",
    "Transition",
    "legal_actions",
    "next_roll",
    "odds",
    "parse_objective",
    "solve",
    "table_for",
]
