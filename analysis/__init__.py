"""zombie-odds' mathematics: pure rules and exact probabilities (no Flask, no Celery, no I/O).

Start with `Position` (a validated mid-turn position) and `odds` (the whole answer for it); `answer_from` answers it
from any solved turn (`TurnSolution`: stored, exact or in floats).
"""

import os

from numpy._core.multiarray import _set_madvise_hugepage

from .dice import BUS, DICE, EFFECTS, MODES, Die, Effect, Face, Mode
from .objectives import ExpectedBrains, FixedRule, Objective, Reach, Win, parse_objective
from .odds import Decision, GiveUp, Odds, answer_from, odds
from .policy import Solution, solve
from .position import BusState, FieldError, Position, PositionError
from .roll import ACTIONS, NextRoll, Transition, legal_actions, next_roll
from .table import Table, table_for
from .turn import TurnSolution

# numpy asks Linux for transparent huge pages behind every array of 4 MB or more (madvise), which the kernel grants
# where it is set to ("madvise", as on the machines this runs on). The analysis allocates and frees such arrays by the
# gigabyte, and their pages' faults cost it more time in the kernel than the pages save it (bench/README.md). Off,
# unless numpy's own setting, NUMPY_MADVISE_HUGEPAGE, says otherwise.
if "NUMPY_MADVISE_HUGEPAGE" not in os.environ:
    _set_madvise_hugepage(False)

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
    "ExpectedBrains",
    "Face",
    "FieldError",
    "FixedRule",
    "GiveUp",
    "Mode",
    "NextRoll",
    "Objective",
    "Odds",
    "Position",
    "PositionError",
    "Reach",
    "Solution",
    "Table",
    "Transition",
    "TurnSolution",
    "Win",
    "answer_from",
    "legal_actions",
    "next_roll",
    "odds",
    "parse_objective",
    "solve",
    "table_for",
]
