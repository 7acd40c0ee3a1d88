"""analysis/bus_solutions.py: stored School Bus solutions against the exact engine, their test oracle."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pytest

from analysis import Position
from analysis.bus_solutions import StoredBusTurn
from analysis.exact import exact_bus_turn
from analysis.objectives import ExpectedBrains
from analysis.odds import answer_from, odds
from analysis.position import BusState, DiceState
from analysis.roll import legal_actions, next_roll
from analysis.simulate import random_position
from analysis.solutions import decide
from analysis.table import bus_table_for
from workers import solutions

pytestmark = pytest.mark.xdist_group("bus-turn-start")  # (tests/conftest.py)

EXPECTED = ExpectedBrains()


def stored(mode: str, recycle: str = "before-draw") -> StoredBusTurn:
    """The session's stored solution (tests/conftest.py builds it), mapped as a server maps it."""
    turn = solutions.load(mode, recycle, True)
    assert isinstance(turn, StoredBusTurn)
    return turn


def positions(mode: str, count: int, seed: int, recycle: str = "before-draw") -> list[Position]:
    """School Bus positions reached by play, distinct."""
    rng = random.Random(seed)
    seen: dict[Position, None] = {}
    while len(seen) < count:
        seen.setdefault(random_position(mode, rng, recycle, school_bus=True))
    return list(seen)


def cheap_to_solve_exactly(drawn: list[Position]) -> Iterator[Position]:
    """The positions two shotguns in (no effect in force, not a turn start): the exact engine solves them over the
    nodes they reach (rooted) in moments."""
    for position in drawn:
        if position.state.shotgun_count + position.bus_state.shotguns >= 2 and not position.state.effects \
                and not position.turn_start:
            yield position


def agree(turn: StoredBusTurn, exact, i: int, j: int, score: int) -> None:
    """Every action's float value within the bound of the exact one; the decision the exact one or ``tie``."""
    floats = turn.action_values(i, score)
    fractions = exact.action_values(j, score)
    assert set(floats) == set(fractions)
    for action, value in floats.items():
        assert abs(value - float(fractions[action])) <= turn.within, (action, score)
    decision = decide(floats, turn.within)
    assert decision == exact.decision(j, score) or decision == "tie"


def test_base_game_values_are_within_their_bound_of_the_exact_ones() -> None:
    """Positions anywhere in the turn, against the whole turn solved exactly (before-draw; draw-then-recycle's
    positions are held to the exact engine near the end of a turn, below, where the cup runs out most)."""
    turn = stored("original")
    exact = exact_bus_turn("original", "before-draw", EXPECTED)
    index = bus_table_for("original", "before-draw").index
    for position in positions("original", 25, seed=3):
        agree(turn, exact, turn.index(position.bus_state), index[position.bus_state], position.score)


@pytest.mark.parametrize(("mode", "recycle"), [("original", "before-draw"), ("original", "draw-then-recycle"),
                                               ("big-summer-action-movie", "before-draw"),
                                               ("santa-claus-meets-the-zombies", "before-draw")])
def test_values_and_distributions_near_the_end_of_a_turn_match_the_exact_ones(mode: str, recycle: str) -> None:
    """The exact engine solves a position over the nodes it reaches (rooted): cheap two shotguns in, so that is
    where floats and fractions are held side by side, score distributions included (Big Summer's rescues and
    YIELD make cycles through lower scores; Santa's helmet caps the turn)."""
    turn = stored(mode, recycle)
    checked = 0
    for position in cheap_to_solve_exactly(positions(mode, 600, seed=4, recycle=recycle)):
        state = position.bus_state
        exact = exact_bus_turn(mode, recycle, EXPECTED, state)
        i, score = turn.index(state), position.score
        agree(turn, exact, i, 0, score)
        for action, c in turn.actions(i).items():
            floats, bound = turn.score_distribution(c, score)
            fractions = exact.score_distribution(dict(exact.table.actions[0])[action], score)
            assert max(abs(floats.get(k, 0.0) - float(q)) for k, q in fractions.items()) <= bound
            assert set(floats) <= set(fractions)
        checked += 1
        if checked == 8:
            break
    assert checked == 8


@pytest.mark.parametrize("mode", ["original", "santa-claus-meets-the-zombies"])
def test_tyre_tracks_choices_are_the_exact_engines(mode: str) -> None:
    """Where the best roll is the bus's, every tyre-tracks result of it (its chance, brains and shotguns) and each
    choice's value as the exact engine gives them, within the bound; the choice the exact one where the bound
    separates it from the others."""
    turn = stored(mode)
    checked = 0
    for position in cheap_to_solve_exactly(positions(mode, 800, seed=6)):
        floats = answer_from(position, turn, distribution=False)
        if not floats.give_up:
            continue
        fractions = odds(position, distribution=False)
        assert floats.decision.roll_action == fractions.decision.roll_action
        assert [(g.probability, g.brains, g.shotguns) for g in floats.give_up] == \
            [(g.probability, g.brains, g.shotguns) for g in fractions.give_up]
        for f, e in zip(floats.give_up, fractions.give_up):
            assert f.choices.keys() == e.choices.keys()
            assert all(abs(f.choices[k] - float(v)) <= turn.within for k, v in e.choices.items())
            best = max(f.choices.values())
            assert f.choice == e.choice or sum(best - v <= 2 * turn.within for v in f.choices.values()) > 1
        checked += 1
        if checked == 6:
            break
    assert checked == 6


def test_the_turn_start_distribution_is_the_turn_start_value() -> None:
    """The stored turn start's distribution sums to one and its mean is the turn start's value, within bounds."""
    turn = stored("original")
    start = turn.actions(0)["roll"]
    distribution, bound = turn.score_distribution(start, 0)
    assert abs(sum(distribution.values()) - 1) <= len(distribution) * bound
    mean = sum(k * p for k, p in distribution.items())
    assert abs(mean - turn.chance_value(start, 0)) <= turn.within + 30 * len(distribution) * bound
    exact = exact_bus_turn("original", "before-draw", EXPECTED)
    assert abs(turn.chance_value(start, 0) - float(exact.action_values(0, 0)["roll"])) <= turn.within


def test_the_bound_is_certified_not_fitted() -> None:
    """The bound follows from the table and the solve (module docstring); with rescues' cycles the solver's
    certificate is part of it."""
    turn = stored("original")
    assert 1e-12 < turn.within < 1e-5
    assert turn.meta["distribution_within"] < 1e-8


@pytest.mark.parametrize("mode", ["original", "big-summer-action-movie", "santa-claus-meets-the-zombies"])
def test_positions_after_a_recycle_and_before_one_are_answered(mode: str) -> None:
    """The cup ran out (the brains noted: `banked`), or is about to on the next roll: every action valued, the
    distribution a distribution."""
    turn = stored(mode)
    rng = random.Random(5)
    found = {"after": 0, "before": 0}
    for _ in range(4000):
        position = random_position(mode, rng, school_bus=True, go_on=0.97)
        rolls = [a for a in legal_actions(position.game_mode, position.bus_state) if a != "stop"]
        before = any(next_roll(position, a).recycles for a in rolls)
        kind = "after" if position.banked else "before" if before else None
        if kind is None or found[kind] == 3:
            continue
        odds = answer_from(position, turn)
        assert abs(sum(odds.score_distribution.values()) - 1) < 1e-9
        assert odds.decision.action in (*odds.decision.actions, "tie")
        found[kind] += 1
        if min(found.values()) == 3:
            break
    assert found == {"after": 3, "before": 3}


def test_an_unreachable_position_has_no_index() -> None:
    turn = stored("original")
    empty = (0, 0, 0)
    assert turn.index(BusState(DiceState(empty, empty, (0, 0, 3)))) is None  # a bust: no node
    assert turn.index(BusState(DiceState(empty, empty, empty))) == 0
    assert turn.index(Position(school_bus=True, brains=("green",) * 6, riding=True).bus_state) is not None


def test_decisions_that_stop_are_worth_their_score_and_tyre_nodes_their_best_choice() -> None:
    turn = stored("original")
    a = turn.arrays
    tyre = np.flatnonzero(a["kind"] == 2)[:50]
    for i in tyre.tolist():
        options = a["opt_to"][a["opt_ptr"][i]:a["opt_ptr"][i + 1]]
        assert turn.values(np.array([i]), 3)[0] == turn.values(options, 3).max()
    assert turn.values(np.array([0]), 400)[0] > 400 - 1e-9 or not turn.can_stop(0)
