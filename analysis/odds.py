"""The whole answer to "should I roll?" for one position: the next roll, the decision, the turn.

This is the one function the HTTP API, the CLI and the benchmarks call; it only gathers what
roll.py (next roll), policy.py (float solution) and exact.py (exact values) compute. Every solved turn, stored
(analysis/stored.py), exact (`exact_solution`) or in floats (`float_solution`), with or without the School Bus,
answers the same questions (`turn.TurnSolution`), so every answer takes one path: `answer_from`.

Where exact fractions are out of reach (Direct-to-Video Sequel with most of its turn ahead: its values
run over ~6 million (state, score) pairs to the cap of 2,904 brains; Santa's whole School Bus turn, 8.2
million (node, score) pairs), ``odds(..., exact=False)`` answers from the float solution of the turn
(`float_solution`; with the bus, the solver keeps the values of the nodes the answer reads:
`BusSolution.watched_value`): the same equations over the same exact transition table, its values within
`WITHIN` of the exact ones (``MARGIN``, the margin beyond which exact.py already trusts every float decision),
so the decision is as certain as anywhere, and refused (`NearTie`) where the best two values are closer than
that. The next roll stays exact; there is no score distribution.

With the School Bus a position has more actions than roll and stop (``board``, ``stay``, ``get-off``):
`Decision.actions` values every legal one, `Odds.next_rolls` gives each rolling action's exact next
roll, and ``roll`` / `Odds.next_roll` / `Odds.score_distribution` describe the best of the rolling
actions (`Decision.roll_action`). Tyre tracks on that roll: `Odds.give_up` says which brain the policy
gives up, and what each choice is worth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .budgets import above_certified, max_room, room
from .exact import MARGIN, exact_bus_turn, exact_turn
from .game.advice import WinAdvice, win_advice
from .objectives import ExpectedBrains, Objective, Win, parse_objective
from .policy import bus_solve, solve
from .position import BusState, FieldError, Position, PositionError
from .roll import BUS_ROLLS, NextRoll, Transition, legal_actions, next_roll
from .stored import DEFAULT_BUILD_MEMORY, build_memory
from .table import bus_table_for
from .turn import ExactBus, ExactPlain, FloatBus, FloatPlain, NearTie, TurnSolution, best, margin

__all__ = ["Odds", "Decision", "GiveUp", "odds", "win_odds", "answer_from", "exact_solution", "float_solution",
           "stored_solution", "EXACT_MODES", "TurnStartTooLarge", "NearTie", "NO_WHOLE_TURN", "WITHIN", "within"]

# Modes whose whole-turn table (every dice state from the turn start) is too large to build here:
# their positions are answered from the states the position reaches, which is small mid-turn.
NO_WHOLE_TURN = frozenset({"direct-to-video-sequel"})
TOO_LARGE = "its whole turn, 303,836 dice states and 12 million rolls, solves in floating point, but in exact " \
            "fractions it passed 6 GiB"


EXPECTED_BRAINS = ExpectedBrains()  # the stored solutions' objective
WITHIN = MARGIN  # a float value (`odds(..., exact=False)`) is this close to the exact one, relative to max(1, |v|)


def within(value: float) -> float:
    """The bound on ``|value - exact|`` of a float value from the solver (`WITHIN`, relative above 1)."""
    return WITHIN * max(1.0, abs(value))


class TurnStartTooLarge(NotImplementedError):
    """The turn start of a mode in `NO_WHOLE_TURN`: its next roll is available (`next_roll`), its
    turn policy is not in exact fractions (they do not fit in memory; in floats, `odds(..., exact=False)`)."""


@dataclass(frozen=True)
class Decision:
    """The best action under an objective and the exact value of each action.

    ``roll`` is the value of rolling now and then following the objective's policy (a float, within
    `WITHIN`, where the answer is not exact: `odds(..., exact=False)`); ``stop`` the value of stopping
    now (at the start of a turn stopping is not allowed: its value is reported
    for comparison and the action is always ``roll``). ``actions`` maps every action legal here to
    its exact value: ``{"roll", "stop"}`` mid-turn, ``{"roll"}`` at the start of a turn; with the
    School Bus the legal ones of ``stop``, ``roll``, ``board``, ``stay``, ``get-off``. ``action`` is
    the best of them (``tie`` when two share the best value exactly); ``roll`` is then the value of the
    best rolling action, named by ``roll_action``.
    """

    action: str  # "roll", "stop" or "tie" (School Bus: also "board", "stay", "get-off")
    objective: Objective
    roll: Fraction | float
    stop: Fraction | float  # (a float: the objective win's P(win) if the player stops)
    actions: dict[str, Fraction | float] = field(default_factory=dict)  # every legal action -> its value
    roll_action: str = "roll"  # the rolling action `roll` values (School Bus: the best one)
    within: float | None = None  # the bound on every float value here (None: `within` of each value)


@dataclass(frozen=True)
class GiveUp:
    """Tyre tracks on the next roll (School Bus): one result of the roll, the brain the policy gives up,
    and the exact value of every choice (`roll.give_up`: ``token``, a die's name, ``double:<die>``)."""

    probability: Fraction
    brains: int
    shotguns: int
    choice: str
    choices: dict[str, Fraction | float]  # (floats where the answer is: `odds(..., exact=False)`)
    footprints: tuple[str, ...] = ()  # the dice in hand after the roll (no choice changes them)
    pile: tuple[str, ...] = ()  # the brain pile after the roll, before a brain is given up


@dataclass(frozen=True)
class Odds:
    position: Position
    next_roll: NextRoll  # of `decision.roll_action`
    decision: Decision
    # final turn score -> probability, if rolling now (None: not asked for, `odds(..., distribution=False)`)
    score_distribution: dict[int, Fraction] | None
    next_rolls: dict[str, NextRoll] = field(default_factory=dict)  # every rolling action -> its next roll
    give_up: tuple[GiveUp, ...] = ()  # School Bus: tyre tracks on the next roll
    # a float distribution (`answer_from`): the bound on each of its probabilities; None: exact
    distribution_within: float | None = None
    win: WinAdvice | None = None  # the objective win: the game table's advice (`win_odds`)


def _before_giving_up(position: Position, choice: tuple[str, BusState]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The footprint dice and the brain pile (die names, the mode's order) after a roll that showed tyre tracks,
    from one of its choices: giving up ``token`` or ``nothing`` leaves the dice as they are, giving up a die (a
    single or a double brain) takes that die from the pile, so it is put back."""
    mode = position.game_mode
    given, state = choice
    brains = list(state.dice.brains)
    if given not in ("token", "nothing"):
        brains[mode.index(given.removeprefix("double:"))] += 1
    names = mode.die_names
    return (tuple(d for d, n in zip(names, state.dice.hand) for _ in range(n)),
            tuple(d for d, n in zip(names, brains) for _ in range(n)))


EXACT_MODES = frozenset({"original"})  # modes whose exact values fit a request (the base game's whole turn: ~1 s once)


def stored_solution(position: Position, objective: Objective, exact: bool = False,
                    built: bool = False) -> tuple[str, str, bool] | None:
    """Which stored solution (analysis/solutions.py) answers this question, as (mode, recycle, school_bus); None
    where it is solved for the request instead: objectives other than expected brains, exact values asked for, and,
    in a combination whose build takes more memory than most machines give it (`stored.build_memory`: the sequel
    with the School Bus) while its solution is not `built`, the positions near the end of the turn that a request
    solves in full (`budgets.max_room`), so that they never wait for a build that may only be made elsewhere (once
    it is built, they are read from it: milliseconds, not seconds). Exact values asked for where they do not fit a
    request: `PositionError` naming ``exact``; a score above those its solutions certify (`budgets.above_certified`):
    `PositionError` naming ``banked``."""
    if (fault := above_certified(position)) is not None:
        raise PositionError([fault])
    if exact:
        if position.school_bus or position.mode in EXACT_MODES:
            return None
        raise PositionError([FieldError("exact", f"exact values of mode {position.mode} run to fractions of "
                                                 "thousands of digits, beyond one request; its answers are floats "
                                                 "from the stored solution, each with its bound (drop exact)")])
    if objective != ExpectedBrains():
        return None
    limit = max_room(position)
    if not built and build_memory(position.mode, position.school_bus) > DEFAULT_BUILD_MEMORY and limit is not None \
            and room(position) <= limit:
        return None
    return position.mode, position.recycle, position.school_bus


def win_odds(position: Position, objective: Win) -> Odds:
    """The answer by probability of winning the game around the turn: the next roll exact, the decision and the
    values of rolling and stopping (P(win), floats) read from the game's table (`game.advice.win_advice`: 3 to 8
    players by its reduced model), and no score distribution (a turn played to win is not played for brains)."""
    advice = win_advice(objective.table, position, objective.scores)
    return Odds(position, next_roll(position), Decision(advice.action, objective, advice.roll, advice.stop), None,
                win=advice)


def odds(position: Position, objective: Objective | Win | str = "expected-brains", distribution: bool = True,
         exact: bool = True) -> Odds:
    """Exact next roll, decision and final-score distribution for `position` (`answer_from` its turn's exact
    values, `exact_solution`), without the distribution if not `distribution` (with the School Bus, where YIELD's
    rescues make cycles, it can cost more than the rest). Not `exact`: the exact next roll, the decision and float
    action values, no distribution (`float_solution`)."""
    if isinstance(objective, str):
        objective = parse_objective(objective)
    if isinstance(objective, Win):
        return win_odds(position, objective)
    if not exact:
        return answer_from(position, float_solution(position, objective), objective, distribution=False)
    return answer_from(position, exact_solution(position, objective), objective, distribution)


def exact_solution(position: Position, objective: Objective) -> TurnSolution:
    """The exact values of the turn `position` is in, under `objective`: the mode's whole turn in the base game
    (and at a Double Feature turn start without the bus), else the nodes the position reaches (a rooted turn)."""
    if position.turn_start and position.mode in NO_WHOLE_TURN:
        raise TurnStartTooLarge(f"the start of a turn of mode {position.mode} is too large to answer exactly "
                                f"({TOO_LARGE}); ask about a position after the first roll")
    plain = position.game_mode.plain
    if position.school_bus:  # (a Double Feature turn start too is rooted: rooted tables are kept only briefly)
        return ExactBus(exact_bus_turn(position.mode, position.recycle, objective,
                                       None if plain else position.bus_state))
    return ExactPlain(exact_turn(position.mode, position.recycle, objective,
                                 None if plain or position.turn_start else position.state))


def float_solution(position: Position, objective: Objective) -> TurnSolution:
    """The float solution of the turn `position` is in, under `objective`: without the bus the mode's whole turn
    (every state a turn reaches, so any position); with it the nodes the position reaches, the solver watching those
    its answer reads (its actions' rolls, and the choices tyre tracks on its next rolls leave)."""
    if not position.school_bus:
        return FloatPlain(solve(position.mode, position.recycle, objective))
    state = position.bus_state
    table = bus_table_for(position.mode, position.recycle, state)
    rolls = [a for a in legal_actions(position.game_mode, state) if a != "stop"]
    choices = [table.index[s] for a in rolls for t in next_roll(position, a).transitions for _, s in t.choices]
    return FloatBus(bus_solve(position.mode, position.recycle, objective, state,
                              watched=(*dict(table.actions[0]).values(), *choices)))


def answer_from(position: Position, turn: TurnSolution, objective: Objective = EXPECTED_BRAINS,
                distribution: bool = True) -> Odds:
    """The answer to `position` from `turn`, its turn solved under `objective` (analysis/turn.py: a mode's stored
    solution, floats within their certified bounds, or exact values): the next roll exact; every legal action's
    value; the best action, ``tie`` where two cannot be told apart; with the School Bus, tyre tracks' choices on
    the best rolling action's next roll; the score distribution of that action if `distribution` (from a stored
    solution the rest is a few lookups, and the distribution a flow over the rest of the turn: up to seconds early
    in a long one)."""
    i = turn.node(position)
    if i is None:
        bus = " with the School Bus" if position.school_bus else ""
        raise PositionError([FieldError("footprints", f"no sequence of rolls leaves the dice like this in mode "
                                                      f"{position.mode}{bus}")])
    score = position.score
    values = turn.action_values(i, score)
    rolls = turn.actions(i)
    roll_action = max(rolls, key=values.get)  # (the first of the best, in the table's order)
    stop = Fraction(objective.stop_value(score))
    actions: dict[str, Fraction | float] = {a: (stop if a == "stop" else v) for a, v in values.items()}
    decision = Decision(action=turn.decision(i, score, values), objective=objective, roll=values[roll_action],
                        stop=stop, actions=actions, roll_action=roll_action, within=turn.within)
    next_rolls = {a: next_roll(position, a) for a in rolls}
    tyre = [t for t in next_rolls[roll_action].transitions if t.choices] if roll_action in BUS_ROLLS else []
    give_up = []
    for t, worth in zip(tyre, _choices_worth(turn, tyre, score)):
        footprints, pile = _before_giving_up(position, t.choices[0])
        give_up.append(GiveUp(t.probability, t.brains, t.shotguns, _give_up(turn, worth), worth, footprints, pile))
    distribution, bound = turn.score_distribution(rolls[roll_action], score) if distribution else (None, None)
    return Odds(position, next_rolls[roll_action], decision, distribution, next_rolls, tuple(give_up),
                distribution_within=bound)


def _give_up(turn: TurnSolution, worth: dict[str, Fraction | float]) -> str:
    """The choice the policy makes on tyre tracks: the first of the best; where each float value is only within
    `MARGIN` of its exact one (``turn.within`` None), `NearTie` where two are that close (`turn.best`)."""
    if turn.within is not None:
        return max(worth, key=worth.get)
    return best(worth, margin(max(abs(float(v)) for v in worth.values())))


def _choices_worth(turn: TurnSolution, tyre: list[Transition], score: int) -> list[dict[str, Fraction | float]]:
    """Each tyre-tracks result's choices -> their values, looked up together: one lookup per score they reach."""
    nodes = np.array([turn.index(s) for t in tyre for _, s in t.choices], dtype=np.int64)
    scores = np.array([score + t.brains for t in tyre for _ in t.choices], dtype=np.int64)
    worth = np.empty(len(nodes), dtype=object)  # (floats, or fractions where the turn is exact)
    for s in np.unique(scores).tolist():
        pick = scores == s
        worth[pick] = turn.values(nodes[pick], s)
    flat = iter(worth.tolist())
    return [{g: next(flat) for g, _ in t.choices} for t in tyre]
