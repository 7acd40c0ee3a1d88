"""The whole answer to "should I roll?" for one position: the next roll, the decision, the turn.

This is the one function the HTTP API, the CLI and the benchmarks call; it only gathers what
roll.py (next roll), policy.py (float solution) and exact.py (exact values) compute.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .exact import exact_turn, to_fraction
from .policy import Objective, parse_objective
from .position import Position
from .roll import NextRoll, next_roll
from .table import table_for

__all__ = ["Odds", "Decision", "odds"]


@dataclass(frozen=True)
class Decision:
    """The best action under an objective and the exact value of each action.

    ``roll`` is the value of rolling now and then following the objective's policy; ``stop`` the
    value of stopping now (at the start of a turn stopping is not allowed: its value is reported
    for comparison and the action is always ``roll``).
    """

    action: str  # "roll", "stop" or "tie"
    objective: Objective
    roll: Fraction
    stop: Fraction


@dataclass(frozen=True)
class Odds:
    position: Position
    next_roll: NextRoll
    decision: Decision
    score_distribution: dict[int, Fraction]  # final turn score -> probability, if rolling now


def odds(position: Position, objective: Objective | str = "expected-brains") -> Odds:
    """Exact next roll, decision and final-score distribution for `position`."""
    if isinstance(objective, str):
        objective = parse_objective(objective)
    table = table_for(position.mode, position.recycle)
    i = table.index[position.state]
    exact = exact_turn(position.mode, position.recycle, objective)
    score = position.score
    decision = Decision(
        action=exact.decision(i, score),
        objective=objective,
        roll=to_fraction(exact.roll(i, score)),
        stop=to_fraction(exact.stop(score)),
    )
    return Odds(position, next_roll(position), decision, exact.score_distribution(i, score))
