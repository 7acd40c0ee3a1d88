"""The whole answer to "should I roll?" for one position: the next roll, the decision, the turn.

This is the one function the HTTP API, the CLI and the benchmarks call; it only gathers what
roll.py (next roll), policy.py (float solution) and exact.py (exact values) compute.

Where exact fractions are out of reach (Direct-to-Video Sequel with most of its turn ahead: its values
run over ~6 million (state, score) pairs to the cap of 2,904 brains; Santa's whole School Bus turn, 8.2
million (node, score) pairs), ``odds(..., exact=False)`` answers from the float solution of the turn (with
the bus, the solver keeps the values of the nodes the answer reads: `BusSolution.watched_value`): the same
equations over the same exact transition table, its values within `WITHIN` of the exact ones (``MARGIN``,
the margin beyond which exact.py already trusts every float decision), so the decision is as certain as
anywhere, and refused (`NearTie`) where the best two values are closer than that. The next roll stays
exact; there is no score distribution.

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

from .budgets import max_room, room
from .bus_solutions import StoredBusTurn
from .exact import MARGIN, exact_bus_turn, exact_turn, to_fraction
from .game.advice import WinAdvice, win_advice
from .objectives import ExpectedBrains, Objective, Win, parse_objective
from .policy import BusSolution, bus_solve, solve
from .position import BusState, FieldError, Position, PositionError
from .roll import BUS_ROLLS, NextRoll, Transition, legal_actions, next_roll
from .solutions import StoredTurn, decide
from .stored import DEFAULT_BUILD_MEMORY, build_memory
from .table import bus_table_for, table_for

__all__ = ["Odds", "Decision", "GiveUp", "odds", "win_odds", "stored_odds", "stored_solution", "EXACT_MODES",
           "TurnStartTooLarge", "NearTie", "NO_WHOLE_TURN", "WITHIN", "within"]

# Modes whose whole-turn table (every dice state from the turn start) is too large to build here:
# their positions are answered from the states the position reaches, which is small mid-turn.
NO_WHOLE_TURN = frozenset({"direct-to-video-sequel"})
TOO_LARGE = "its whole turn, 303,836 dice states and 12 million rolls, solves in floating point, but in exact " \
            "fractions it passed 6 GiB"


WITHIN = MARGIN  # a float value (`odds(..., exact=False)`) is this close to the exact one, relative to max(1, |v|)


def within(value: float) -> float:
    """The bound on ``|value - exact|`` of a float value from the solver (`WITHIN`, relative above 1)."""
    return WITHIN * max(1.0, abs(value))


class TurnStartTooLarge(NotImplementedError):
    """The turn start of a mode in `NO_WHOLE_TURN`: its next roll is available (`next_roll`), its
    turn policy is not in exact fractions (they do not fit in memory; in floats, `odds(..., exact=False)`)."""


class NearTie(ValueError):
    """A float answer (`odds(..., exact=False)`) cannot decide: the best options are worth so nearly the same
    that only exact values could tell them apart (or an option's value was not solved), and exact values are
    out of reach here."""


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
    # a float distribution (`stored_odds`): the bound on each of its probabilities; None: exact
    distribution_within: float | None = None
    win: WinAdvice | None = None  # the objective win: the game table's advice (`win_odds`)


def _bus_odds(position: Position, objective: Objective, distribution: bool) -> Odds:
    """`odds` for a School Bus position: every legal action valued over the bus table."""
    mode = position.game_mode
    state = position.bus_state
    root = None if mode.plain else state  # (a Double Feature turn start too: rooted tables are kept only briefly)
    if position.turn_start and position.mode in NO_WHOLE_TURN:
        raise TurnStartTooLarge(f"the start of a turn of mode {position.mode} is too large to answer exactly "
                                f"({TOO_LARGE}); ask about a position after the first roll")
    table = bus_table_for(position.mode, position.recycle, root)
    if state not in table.index:
        raise PositionError([FieldError("footprints", f"no sequence of rolls leaves the dice like this in mode "
                                                      f"{position.mode} with the School Bus")])
    exact = exact_bus_turn(position.mode, position.recycle, objective, root)
    i, score = table.index[state], position.score
    values = {a: to_fraction(v) for a, v in exact.action_values(i, score).items()}
    rolls = [a for a in legal_actions(mode, state) if a != "stop"]
    best = max(rolls, key=lambda a: values[a])  # the first of the best, in ACTIONS order
    decision = Decision(action=exact.decision(i, score), objective=objective, roll=values[best],
                        stop=to_fraction(exact.stop(score)), actions=values, roll_action=best)
    next_rolls = {a: next_roll(position, a) for a in rolls}
    give_up = []
    for t in next_rolls[best].transitions:
        if t.choices:
            worth = {g: to_fraction(exact.value(table.index[s], score + t.brains)) for g, s in t.choices}
            top = max(worth.values())
            footprints, pile = _before_giving_up(position, t.choices[0])
            give_up.append(GiveUp(t.probability, t.brains, t.shotguns, next(g for g, v in worth.items() if v == top),
                                  worth, footprints, pile))
    return Odds(position, next_rolls[best], decision,
                exact.score_distribution(i, score, best) if distribution else None, next_rolls, tuple(give_up))


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
    request: `PositionError` naming ``exact``."""
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
    """Exact next roll, decision and final-score distribution for `position` (with the School Bus, without the
    distribution if not `distribution`: where YIELD's rescues make cycles, it can cost more than the rest).
    Not `exact`: the exact next roll, the decision and float action values, no distribution (`_float_odds`,
    `_bus_float_odds`)."""
    if isinstance(objective, str):
        objective = parse_objective(objective)
    if isinstance(objective, Win):
        return win_odds(position, objective)
    if not exact:
        return (_bus_float_odds if position.school_bus else _float_odds)(position, objective)
    if position.school_bus:
        return _bus_odds(position, objective, distribution)
    if position.game_mode.plain:
        table = table_for(position.mode, position.recycle)
        exact = exact_turn(position.mode, position.recycle, objective)
    else:  # Double Feature: the states this position reaches (the whole turn only from its start)
        root = None if position.turn_start else position.state
        if root is None and position.mode in NO_WHOLE_TURN:
            raise TurnStartTooLarge(f"the start of a turn of mode {position.mode} is too large to answer exactly "
                                    f"({TOO_LARGE}); ask about a position after the first roll")
        table = table_for(position.mode, position.recycle, root)
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
    roll_now = next_roll(position)
    return Odds(position, roll_now, decision, exact.score_distribution(i, score), {"roll": roll_now})


def stored_odds(position: Position, turn: StoredTurn | StoredBusTurn, distribution: bool = True) -> Odds:
    """`odds` for expected brains from a mode's stored solution (analysis/solutions.py, bus_solutions.py: the same
    questions of either): the next roll exact; every legal action's value and the score distribution floats within
    their certified bounds; the best action, ``tie`` where the bound cannot separate two; with the School Bus, tyre
    tracks' choices on the best rolling action's next roll. Without the distribution if not `distribution`: the rest
    is a few lookups, and the distribution a flow over the rest of the turn (up to seconds early in a long one)."""
    i = turn.node(position)
    if i is None:
        bus = " with the School Bus" if position.school_bus else ""
        raise PositionError([FieldError("footprints", f"no sequence of rolls leaves the dice like this in mode "
                                                      f"{position.mode}{bus}")])
    score = position.score
    values = turn.action_values(i, score)
    rolls = turn.actions(i)
    roll_action = max(rolls, key=values.get)  # (the first of the best, in the table's order)
    stop = Fraction(score)
    actions: dict[str, Fraction | float] = {a: (stop if a == "stop" else v) for a, v in values.items()}
    decision = Decision(action=decide(values, turn.within), objective=ExpectedBrains(), roll=values[roll_action],
                        stop=stop, actions=actions, roll_action=roll_action, within=turn.within)
    next_rolls = {a: next_roll(position, a) for a in rolls}
    tyre = [t for t in next_rolls[roll_action].transitions if t.choices] if roll_action in BUS_ROLLS else []
    give_up = []
    for t, worth in zip(tyre, _choices_worth(turn, tyre, score)):
        footprints, pile = _before_giving_up(position, t.choices[0])
        give_up.append(GiveUp(t.probability, t.brains, t.shotguns, max(worth, key=worth.get), worth, footprints, pile))
    distribution, bound = turn.score_distribution(rolls[roll_action], score) if distribution else (None, None)
    return Odds(position, next_rolls[roll_action], decision, distribution, next_rolls, tuple(give_up),
                distribution_within=bound)


def _choices_worth(turn: StoredBusTurn, tyre: list[Transition], score: int) -> list[dict[str, float]]:
    """Each tyre-tracks result's choices -> their values, looked up together: one lookup per score they reach."""
    nodes = np.array([turn.index(s) for t in tyre for _, s in t.choices], dtype=np.int64)
    scores = np.array([score + t.brains for t in tyre for _ in t.choices], dtype=np.int64)
    worth = np.empty(len(nodes))
    for s in np.unique(scores).tolist():
        pick = scores == s
        worth[pick] = turn.values(nodes[pick], s)
    flat = iter(worth.tolist())
    return [{g: next(flat) for g, _ in t.choices} for t in tyre]


def _float_odds(position: Position, objective: Objective) -> Odds:
    """`odds` from the float solution of the mode's whole turn (every state a turn reaches, so any position):
    the roll's value within `within` of the exact one, the decision certain where the two values differ by
    more than ``MARGIN * max(1, |stop|)`` (as exact.py decides), `NearTie` where they do not."""
    table = table_for(position.mode, position.recycle)
    if position.state not in table.index:
        raise PositionError([FieldError("footprints", f"no sequence of rolls leaves the dice like this in mode "
                                                      f"{position.mode}")])
    solution = solve(position.mode, position.recycle, objective)
    i, score = table.index[position.state], position.score
    roll, stop = solution.values_at(i, score)
    margin = MARGIN * max(1.0, abs(stop))
    if position.turn_start:
        action = "roll"  # the first roll of a turn is compulsory
    elif objective.forces and objective.forced(score, position.state.shotgun_count):
        action = "stop"
    elif not objective.chooses:
        action = "roll"  # (a fixed rule rolls wherever it does not stop)
    else:
        action = _best({"roll": roll, "stop": stop}, margin)
    exact_stop = Fraction(objective.stop_value(score))
    decision = Decision(action=action, objective=objective, roll=roll, stop=exact_stop,
                        actions={"roll": roll} if position.turn_start else {"roll": roll, "stop": exact_stop})
    roll_now = next_roll(position)
    return Odds(position, roll_now, decision, None, {"roll": roll_now})


def _best(values: dict[str, Fraction | float], margin: float, tie: str | None = None) -> str:
    """The option worth the most, where it beats every other by more than `margin`, or where the options within
    `margin` of it are all exact: the first of the best of those (`tie` if given and two share it); else
    `NearTie` (a float this close to another could be either side of it)."""
    top = max(float(v) for v in values.values())
    near = [a for a, v in values.items() if top - float(v) <= margin]
    if len(near) > 1 and not all(isinstance(values[a], Fraction) for a in near):
        close = " and ".join(f"{a} ({float(values[a])!r})" for a in near)
        raise NearTie(f"{close} are worth the same within {margin:.0e}: only exact values could tell which is "
                      "better, and this position's are out of reach")
    best = max(values[a] for a in near)
    winners = [a for a in near if values[a] == best]
    return winners[0] if len(winners) == 1 or tie is None else tie


def _bus_float_odds(position: Position, objective: Objective) -> Odds:
    """`_bus_odds` from the float solution of the bus table the position reaches: every legal action's value
    (the chance node it rolls, kept by the solver at every level: `BusSolution.watched_value`), the decision
    among the solver's candidates (`BusSolution.candidates`, as `ExactBusTurn.options`: a fixed rule's own
    choice, else the options within the margin of the best) where it is one, tyre tracks' choices likewise (`NearTie`
    where they do not; a choice after which the policy certainly stops is worth its stop value exactly, so
    equal ones are a tie, as in exact answers); the next rolls exact."""
    mode, state = position.game_mode, position.bus_state
    table = bus_table_for(position.mode, position.recycle, state)
    rolls = [a for a in legal_actions(mode, state) if a != "stop"]
    next_rolls = {a: next_roll(position, a) for a in rolls}
    actions, index = dict(table.actions[0]), table.index
    choices = [index[s] for r in next_rolls.values() for t in r.transitions for _, s in t.choices]
    solution = bus_solve(position.mode, position.recycle, objective, state, watched=(*actions.values(), *choices))
    score = position.score
    stop = Fraction(objective.stop_value(score))
    values: dict[str, Fraction | float] = {"stop": stop} if table.can_stop[0] else {}
    for a in rolls:
        value = solution.watched_value(actions[a], score)
        if value == -np.inf:
            raise NearTie(f"{a} was not solved at the turn's score {score}: the policy stops here (it is above "
                          f"the most, {solution.top}, at which the solver rolls); only exact values would give its "
                          "value")
        values[a] = value
    mask = solution.candidates(0, score)  # the options within the margin of the best (a fixed rule: its own)
    if not table.can_stop[0] and mask == 1:  # the compulsory first roll, above the solved levels
        mask = (2 << len(table.actions[0])) - 2
    names = (["stop"] if mask & 1 else []) + [a for k, (a, _) in enumerate(table.actions[0]) if mask & (2 << k)]
    best = _best({a: values[a] for a in names}, MARGIN * max(1.0, abs(float(stop))), tie="tie")
    roll_action = best if best in rolls else max(rolls, key=lambda a: values[a])
    decision = Decision(action=best, objective=objective, roll=values[roll_action], stop=stop, actions=values,
                        roll_action=roll_action)
    give_up = []
    for t in next_rolls[roll_action].transitions:
        if t.choices:
            worth = {g: _after_giving_up(solution, index[s], score + t.brains) for g, s in t.choices}
            footprints, pile = _before_giving_up(position, t.choices[0])
            choice = _best(worth, MARGIN * max(1.0, *(abs(float(v)) for v in worth.values())))
            give_up.append(GiveUp(t.probability, t.brains, t.shotguns, choice, worth, footprints, pile))
    return Odds(position, next_rolls[roll_action], decision, None, next_rolls, tuple(give_up))


def _after_giving_up(solution: BusSolution, i: int, score: int) -> Fraction | float:
    """The value of decision node `i` at `score` (a watched node): its stop value, exactly, where the policy
    certainly stops there (stop alone is within the margin of its best); else the float."""
    if solution.table.can_stop[i] and solution.candidates(i, score) == 1:
        return Fraction(solution.objective.stop_value(score))
    return solution.watched_value(i, score)
