"""The whole answer to "should I roll?" for one position: the next roll, the decision, the turn.

This is the one function the HTTP API, the CLI and the benchmarks call; it only gathers what
roll.py (next roll), policy.py (float solution) and exact.py (exact values) compute.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from .exact import exact_turn, to_fraction
from .policy import Objective, parse_objective
from .position import FieldError, Position, PositionError
from .roll import NextRoll, next_roll
from .table import table_for

__all__ = ["Odds", "Decision", "odds", "TurnStartTooLarge", "NO_WHOLE_TURN"]

# Modes whose whole-turn table (every dice state from the turn start) is too large to build here:
# their positions are answered from the states the position reaches, which is small mid-turn.
NO_WHOLE_TURN = frozenset({"direct-to-video-sequel"})


class TurnStartTooLarge(NotImplementedError):
    """The turn start of a mode in `NO_WHOLE_TURN`: its next roll is available (`next_roll`), its
    turn policy is not (the table of the whole turn does not fit in memory)."""


@dataclass(frozen=True)
class Decision:
    """The best action under an objective and the exact value of each action.

    ``roll`` is the value of rolling now and then following the objective's policy; ``stop`` the
    value of stopping now (at the start of a turn stopping is not allowed: its value is reported
    for comparison and the action is always ``roll``). ``actions`` maps every action legal here to
    its exact value: ``{"roll", "stop"}`` mid-turn, ``{"roll"}`` at the start of a turn (the School
    Bus would add its decisions here, without changing the other fields).
    """

    action: str  # "roll", "stop" or "tie"
    objective: Objective
    roll: Fraction
    stop: Fraction
    actions: dict[str, Fraction] = field(default_factory=dict)  # every legal action -> its exact value


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
    if position.game_mode.plain:
        table = table_for(position.mode, position.recycle)
        exact = exact_turn(position.mode, position.recycle, objective)
    else:  # Double Feature: the states this position reaches (the whole turn only from its start)
        root = None if position.turn_start else position.state
        if root is None and position.mode in NO_WHOLE_TURN:
            raise TurnStartTooLarge(f"the whole-turn table of mode {position.mode} is too large to solve; "
                                    "ask about a position after the first roll")
        table = table_for(position.mode, position.recycle, root) if root else table_for(position.mode,
                                                                                       position.recycle)
        exact = exact_turn(position.mode, position.recycle, objective, root)
    if position.state not in table.index:
        raise PositionError([FieldError("footprints", f"no sequence of rolls leaves the dice like this in mode "
                                                      f"{position.mode}")])
    i = table.index[position.state]
    score = position.score
    roll, stop = to_fraction(exact.roll(i, score)), to_fraction(exact.stop(score))
    decision = Decision(
        action=exact.decision(i, score),
        objective=objective,
        roll=roll,
        stop=stop,
        actions={"roll": roll} if position.turn_start else {"roll": roll, "stop": stop},
    )
    return Odds(position, next_roll(position), decision, exact.score_distribution(i, score))
