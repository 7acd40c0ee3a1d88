"""The questions every solved turn answers, whatever solved it: the one interface `odds.answer_from` reads.

A turn is a graph of decision nodes and rolls (a plain turn's node is its dice state, whose one action ``roll``
rolls the state itself; a School Bus turn has decision, chance and tyre-tracks nodes). Of a solved turn an answer
asks: the node of a position (`node`, `index`), the actions there but stop and the roll each makes (`actions`),
every legal action's value (`action_values`), the best action (`decision`), nodes' values (`values`, for tyre
tracks' choices) and the final score distribution after a roll (`score_distribution`), with `within`, the bound on
every float value (None: the values are exact, or request-time floats each within `MARGIN` of its exact one).

Three kinds of solution answer them:

* the stored solutions (`solutions.StoredTurn`, `bus_solutions.StoredBusTurn`): floats with a certified bound,
  read from mapped arrays; what expected brains is answered from;
* the exact engines (`exact.ExactTurn`, `exact.ExactBusTurn`), through `ExactPlain` and `ExactBus` here:
  fractions, no bound; what the other objectives and ``exact=true`` are answered from, and the oracle of the floats;
* the float solvers (`policy.Solution`, `policy.BusSolution`), through `FloatPlain` and `FloatBus` here, where
  exact values are out of reach for a request: each value within `MARGIN` (relative above 1) of the exact one, so a
  decision is given only where the values separate it (`best`: `NearTie` where they do not), and no score
  distribution.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

import numpy as np

from .exact import MARGIN, ExactBusTurn, ExactTurn, to_fraction
from .policy import BusSolution, Solution
from .position import BusState, DiceState, Position
from .table import BusTable, Table

__all__ = ["TurnSolution", "ExactPlain", "ExactBus", "FloatPlain", "FloatBus", "NearTie", "best"]

Value = Fraction | float


class TurnSolution(Protocol):
    """A solved turn, as an answer reads it (module docstring)."""

    within: float | None  # the bound on every float value (None: exact, or floats each within `MARGIN`, relative)

    def node(self, position: Position) -> int | None:
        """The decision node of `position`, or None if no turn of its mode reaches it."""

    def index(self, state: DiceState | BusState) -> int | None:
        """The decision node of a state (School Bus: of a bus state, such as a tyre-tracks choice leaves)."""

    def actions(self, i: int) -> dict[str, int]:
        """The legal actions of decision node `i` but stop -> the roll each makes (what `score_distribution` takes)."""

    def action_values(self, i: int, score: int) -> dict[str, Value]:
        """Every legal action of node `i` at `score` (``stop`` where it may) -> its value."""

    def decision(self, i: int, score: int, values: dict[str, Value]) -> str:
        """The best action of node `i` at `score` (its `values`), or ``tie`` where two cannot be told apart."""

    def values(self, nodes: np.ndarray, score: int) -> np.ndarray:
        """The value of each of `nodes` at `score` (School Bus turns)."""

    def score_distribution(self, roll: int, score: int) -> tuple[dict[int, Value], float | None]:
        """P(final turn score = k) if the player makes `roll` at `score` and then follows the policy, and the
        bound on each probability (None: exact)."""


class _PlainNodes:
    """A plain turn's nodes: a position's dice state, whose one action, ``roll``, rolls the state itself."""

    @property
    def table(self) -> Table:
        raise NotImplementedError

    def node(self, position: Position) -> int | None:
        return self.index(position.state)

    def index(self, state: DiceState) -> int | None:
        return self.table.index.get(state)

    def actions(self, i: int) -> dict[str, int]:
        return {"roll": i}

    def compulsory(self, i: int) -> bool:
        """Whether node `i` is the turn start, whose roll is compulsory."""
        return i == self.table.start and self.table.compulsory

    def values(self, nodes: np.ndarray, score: int) -> np.ndarray:
        raise TypeError("a plain turn has no tyre tracks")


class _BusNodes:
    """A School Bus turn's nodes: a position's bus state is a decision node, whose actions roll chance nodes."""

    @property
    def table(self) -> BusTable:
        raise NotImplementedError

    def node(self, position: Position) -> int | None:
        return self.index(position.bus_state)

    def index(self, state: BusState) -> int | None:
        return self.table.index.get(state)

    def actions(self, i: int) -> dict[str, int]:
        return dict(self.table.actions[i])


@dataclass(frozen=True, eq=False)
class ExactPlain(_PlainNodes):
    """A plain turn's exact values (`exact.ExactTurn`) as a `TurnSolution`."""

    exact: ExactTurn
    within: None = None

    @property
    def table(self) -> Table:
        return self.exact.solution.table

    def action_values(self, i: int, score: int) -> dict[str, Value]:
        """``roll`` and ``stop``; ``roll`` alone at the turn start, where it is compulsory."""
        roll = to_fraction(self.exact.roll(i, score))
        return {"roll": roll} if self.compulsory(i) else {"roll": roll, "stop": to_fraction(self.exact.stop(score))}

    def decision(self, i: int, score: int, values: dict[str, Value]) -> str:
        return self.exact.decision(i, score)

    def score_distribution(self, roll: int, score: int) -> tuple[dict[int, Value], None]:
        return self.exact.score_distribution(roll, score), None


@dataclass(frozen=True, eq=False)
class ExactBus(_BusNodes):
    """A School Bus turn's exact values (`exact.ExactBusTurn`) as a `TurnSolution`."""

    exact: ExactBusTurn
    within: None = None

    @property
    def table(self) -> BusTable:
        return self.exact.table

    def action_values(self, i: int, score: int) -> dict[str, Value]:
        return {a: to_fraction(v) for a, v in self.exact.action_values(i, score).items()}

    def decision(self, i: int, score: int, values: dict[str, Value]) -> str:
        return self.exact.decision(i, score)

    def values(self, nodes: np.ndarray, score: int) -> np.ndarray:
        return np.array([to_fraction(self.exact.value(int(i), score)) for i in nodes.tolist()], dtype=object)

    def score_distribution(self, roll: int, score: int) -> tuple[dict[int, Value], None]:
        return self.exact.score_distribution(roll, score), None


class NearTie(ValueError):
    """A float answer (`FloatPlain`, `FloatBus`) cannot decide: the best options are worth so nearly the same that
    only exact values could tell them apart (or an option's value was not solved), and exact values are out of
    reach here."""


def best(values: dict[str, Value], margin: float, tie: str | None = None) -> str:
    """The option worth the most, where it beats every other by more than `margin`, or where the options within
    `margin` of it are all exact: the first of the best of those (`tie` if given and two share it); else
    `NearTie` (a float this close to another could be either side of it)."""
    top = max(float(v) for v in values.values())
    near = [a for a, v in values.items() if top - float(v) <= margin]
    if len(near) > 1 and not all(isinstance(values[a], Fraction) for a in near):
        close = " and ".join(f"{a} ({float(values[a])!r})" for a in near)
        raise NearTie(f"{close} are worth the same within {margin:.0e}: only exact values could tell which is "
                      "better, and this position's are out of reach")
    most = max(values[a] for a in near)
    winners = [a for a in near if values[a] == most]
    return winners[0] if len(winners) == 1 or tie is None else tie


def margin(stop: Value) -> float:
    """How close two float values may be and still be told apart (`MARGIN`, relative above 1)."""
    return MARGIN * max(1.0, abs(float(stop)))


@dataclass(frozen=True, eq=False)
class FloatPlain(_PlainNodes):
    """A plain turn's float solution (`policy.Solution`, the mode's whole turn) as a `TurnSolution`."""

    solution: Solution
    within: None = None

    @property
    def table(self) -> Table:
        return self.solution.table

    def action_values(self, i: int, score: int) -> dict[str, Value]:
        """``roll`` (a float) and ``stop`` (exact); ``roll`` alone at the turn start, where it is compulsory."""
        roll, stop = self.solution.roll_at(i, score), Fraction(self.solution.objective.stop_value(score))
        return {"roll": roll} if self.compulsory(i) else {"roll": roll, "stop": stop}

    def decision(self, i: int, score: int, values: dict[str, Value]) -> str:
        """The compulsory first roll; a stop the objective forces; a fixed rule's roll; else the better of the two
        where the values separate them (`best`)."""
        objective = self.solution.objective
        if "stop" not in values:
            return "roll"
        if objective.forces and objective.forced(score, int(self.table.shotguns[i])):
            return "stop"
        if not objective.chooses:
            return "roll"  # (a fixed rule rolls wherever it does not stop)
        return best(values, margin(values["stop"]))

    def score_distribution(self, roll: int, score: int) -> tuple[dict[int, Value], float | None]:
        raise TypeError("a float solution solved for a request gives no score distribution")


@dataclass(frozen=True, eq=False)
class FloatBus(_BusNodes):
    """A School Bus turn's float solution (`policy.BusSolution`, rooted at the position: node 0) as a
    `TurnSolution`: the values of the nodes the solver was asked to watch (the position's actions, and the
    choices tyre tracks on its next rolls leave), kept at every level (`BusSolution.watched_value`)."""

    solution: BusSolution
    within: None = None

    @property
    def table(self) -> BusTable:
        return self.solution.table

    def action_values(self, i: int, score: int) -> dict[str, Value]:
        """Every legal option: ``stop`` exact, the rolls floats; `NearTie` for a roll the solver did not solve at
        this score (above the most at which it rolls)."""
        solution = self.solution
        values: dict[str, Value] = {"stop": Fraction(solution.objective.stop_value(score))} \
            if self.table.can_stop[i] else {}
        for a, c in self.table.actions[i]:
            value = solution.watched_value(c, score)
            if value == -np.inf:
                raise NearTie(f"{a} was not solved at the turn's score {score}: the policy stops here (it is above "
                              f"the most, {solution.top}, at which the solver rolls); only exact values would give "
                              "its value")
            values[a] = value
        return values

    def decision(self, i: int, score: int, values: dict[str, Value]) -> str:
        """The best of the solver's candidates (`BusSolution.candidates`, as `ExactBusTurn.options`: a fixed rule's
        own choice, else the options within the margin of the best) where the values separate it, ``tie`` where
        two exact ones share it (`best`)."""
        table = self.table
        mask = self.solution.candidates(i, score)
        if not table.can_stop[i] and mask == 1:  # the compulsory first roll, above the solved levels
            mask = (2 << len(table.actions[i])) - 2
        names = (["stop"] if mask & 1 else []) + [a for k, (a, _) in enumerate(table.actions[i]) if mask & (2 << k)]
        return best({a: values[a] for a in names}, margin(self.solution.objective.stop_value(score)), tie="tie")

    def values(self, nodes: np.ndarray, score: int) -> np.ndarray:
        """Decision nodes' values (watched): the stop value, exactly, where the policy certainly stops there (stop
        alone is within the margin of its best); else the float."""
        solution = self.solution
        stop = Fraction(solution.objective.stop_value(score))
        return np.array([stop if self.table.can_stop[i] and solution.candidates(i, score) == 1
                         else solution.watched_value(i, score) for i in nodes.tolist()], dtype=object)

    def score_distribution(self, roll: int, score: int) -> tuple[dict[int, Value], float | None]:
        raise TypeError("a float solution solved for a request gives no score distribution")
