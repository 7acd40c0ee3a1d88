"""analysis/turn.py: every kind of solved turn answers the same questions alike (exact engines and stored floats)."""

from __future__ import annotations

import dataclasses
import random
from fractions import Fraction

import numpy as np
import pytest

from analysis import MODES, Position
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


def _with_the_bus_out(position: Position) -> Position:
    """The same dice in a School Bus turn whose bus is out (got off, or tyre tracks: no token, no bus shotgun)."""
    return dataclasses.replace(position, school_bus=True, bus_out=True)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("objective", ["expected-brains", "reach:6"])
def test_a_plain_turn_is_a_school_bus_turn_with_the_bus_out(mode: str, objective: str) -> None:
    """The two engines solve one graph: once the bus is out a School Bus turn has the plain turn's decisions and
    rolls, so the School Bus engine (its table, sweep and exact values, rooted at the position) answers every
    mid-turn position exactly as the plain engine does: the same next roll, action values, decision and score
    distribution, fraction for fraction. Each engine is the other's oracle."""
    goal = parse_objective(objective)
    rng = random.Random(17)
    drawn = (random_position(mode, rng) for _ in range(200))
    for position in [p for p in drawn if p.state.shotgun_count >= 1][:3]:
        plain, bus = odds(position, goal), odds(_with_the_bus_out(position), goal)
        assert dataclasses.replace(bus.next_roll, position=position) == plain.next_roll
        assert bus.next_rolls.keys() == plain.next_rolls.keys() == {"roll"}
        assert bus.decision == plain.decision and bus.score_distribution == plain.score_distribution
        assert bus.give_up == () and bus.distribution_within is None


@pytest.mark.parametrize("objective", ["expected-brains", "reach:6", "rule:3,2"])
def test_the_float_engines_agree_with_the_bus_out(objective: str) -> None:
    """The float solvers too: the plain sweep over the whole turn and the School Bus sweep rooted at the position
    (the bus out) give each action a value within both their margins of the other's, and the same decision (where
    the School Bus sweep leaves a roll unsolved, far below stopping, it says so: `NearTie`)."""
    goal = parse_objective(objective)
    rng = random.Random(19)
    drawn = (random_position("original", rng) for _ in range(100))
    compared = 0
    for position in [p for p in drawn if p.state.shotgun_count >= 1][:8]:
        out = _with_the_bus_out(position)
        plain, bus = float_solution(position, goal), float_solution(out, goal)
        i, j, score = plain.node(position), bus.node(out), position.score
        near = plain.action_values(i, score)
        try:
            far = bus.action_values(j, score)
        except NearTie:
            assert plain.decision(i, score, near) == "stop"
            continue
        assert near.keys() == far.keys() == {"roll", "stop"}
        assert all(abs(near[a] - far[a]) <= 2 * within(max(abs(near[a]), abs(far[a]))) for a in near)
        assert plain.decision(i, score, near) == bus.decision(j, score, far)
        compared += 1
    assert compared >= 3
