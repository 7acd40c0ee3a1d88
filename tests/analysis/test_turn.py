"""analysis/turn.py: every kind of solved turn answers the same questions alike (exact engines and stored floats)."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from analysis import Position
from analysis.exact import exact_bus_turn, exact_turn
from analysis.objectives import ExpectedBrains, parse_objective
from analysis.odds import answer_from, exact_solution, float_solution, odds, within
from analysis.position import BusState, DiceState, PositionError
from analysis.simulate import random_position
from analysis.turn import ExactBus, ExactPlain, NearTie, TurnSolution
from workers import solutions

pytestmark = pytest.mark.xdist_group("bus-turn-start")  # (tests/conftest.py)

EXPECTED = ExpectedBrains()


def solved(school_bus: bool) -> tuple[TurnSolution, TurnSolution]:
    """The base game's whole turn, exact and stored (tests/conftest.py builds the stored one)."""
    stored = solutions.load("original", "before-draw", school_bus)
    exact = (exact_bus_turn if school_bus else exact_turn)("original", "before-draw", EXPECTED)
    return (ExactBus if school_bus else ExactPlain)(exact), stored


@pytest.mark.parametrize("school_bus", [False, True])
def test_exact_and_stored_solutions_answer_the_same_questions_alike(school_bus: bool) -> None:
    """Node, actions, every action's value within the stored bound, the decision the exact one or ``tie``, and each
    roll's score distribution within its bound (the exact one sums to 1 exactly, and has no bound)."""
    exact, stored = solved(school_bus)
    assert exact.within is None and stored.within > 0
    rng = random.Random(11)
    drawn = (random_position("original", rng, school_bus=school_bus) for _ in range(60))
    for position in [p for p in drawn if p.state.shotgun_count >= 1][:8]:  # (with the bus: its exact flows take
        # seconds from a turn start)
        i, j, score = exact.node(position), stored.node(position), position.score
        assert i is not None and j is not None
        assert exact.actions(i).keys() == stored.actions(j).keys()
        fractions, floats = exact.action_values(i, score), stored.action_values(j, score)
        assert fractions.keys() == floats.keys() and ("stop" in floats) != position.turn_start
        assert all(isinstance(v, Fraction) and abs(float(v) - floats[a]) <= stored.within for a, v in fractions.items())
        assert stored.decision(j, score, floats) in (exact.decision(i, score, fractions), "tie")
        for action, c in exact.actions(i).items():
            distribution, bound = exact.score_distribution(c, score)
            near, within = stored.score_distribution(stored.actions(j)[action], score)
            assert bound is None and sum(distribution.values()) == 1
            assert max(abs(near.get(k, 0.0) - float(q)) for k, q in distribution.items()) <= within


def test_tyre_tracks_choices_are_valued_alike() -> None:
    """A School Bus turn values the nodes tyre tracks' choices lead to: exactly (fractions) or within the bound."""
    exact, stored = solved(True)
    position = Position(school_bus=True, footprints=("green",), brains=("green", "yellow"), shotguns=("red",))
    nodes = np.array([exact.node(position)]), np.array([stored.node(position)])
    [fraction], [near] = exact.values(nodes[0], 2).tolist(), stored.values(nodes[1], 2).tolist()
    assert isinstance(fraction, Fraction) and abs(float(fraction) - near) <= stored.within
    assert fraction == max(exact.action_values(int(nodes[0][0]), 2).values())


@pytest.mark.parametrize("school_bus", [False, True])
def test_a_state_no_turn_reaches_has_no_node_and_its_answer_names_the_dice(school_bus: bool) -> None:
    exact, stored = solved(school_bus)
    bust = DiceState((0, 0, 0), (0, 0, 0), (0, 0, 3))
    state = BusState(bust) if school_bus else bust
    assert exact.index(state) is None and stored.index(state) is None

    class Unreached:  # (a turn that reaches no position: what answer_from says of it)
        within = None

        def node(self, position: Position) -> None:
            return None

    with pytest.raises(PositionError) as e:
        answer_from(Position(school_bus=school_bus), Unreached())
    assert e.value.errors[0].field == "footprints"


def test_an_exact_answer_gives_the_distribution_only_when_asked() -> None:
    position = Position(footprints=("green",), brains=("green", "yellow"), shotguns=("red",))
    whole, bare = odds(position), odds(position, distribution=False)
    assert sum(whole.score_distribution.values()) == 1 and whole.distribution_within is None
    assert bare.score_distribution is None and bare.decision == whole.decision


@pytest.mark.parametrize("school_bus", [False, True])
@pytest.mark.parametrize("objective", ["expected-brains", "reach:4", "rule:3,2"])
def test_float_solutions_answer_alike_within_their_margin(school_bus: bool, objective: str) -> None:
    """A float solution solved for the question (the whole plain turn; with the bus, the nodes the position reaches)
    gives every action's value within `within` of the exact one, the exact decision where its values separate it,
    and `NearTie` where they do not."""
    goal = parse_objective(objective)
    rng = random.Random(13)
    drawn = (random_position("original", rng, school_bus=school_bus) for _ in range(60))
    decided = 0
    for position in [p for p in drawn if p.state.shotgun_count >= 1][:6]:
        floats, fractions = float_solution(position, goal), exact_solution(position, goal)
        i, j, score = floats.node(position), fractions.node(position), position.score
        try:
            near = floats.action_values(i, score)
            decision = floats.decision(i, score, near)
        except NearTie:
            continue
        exact = fractions.action_values(j, score)
        assert near.keys() == exact.keys()
        assert all(abs(float(v) - float(exact[a])) <= within(float(exact[a])) for a, v in near.items())
        assert decision == fractions.decision(j, score, exact)
        decided += 1
    assert decided >= 3
