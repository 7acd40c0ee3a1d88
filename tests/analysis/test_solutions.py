"""analysis/solutions.py: stored turn solutions against the exact engine, their test oracle, and where no exact value
exists (the sequel's whole turn) against physical dice."""

from __future__ import annotations

import random
from functools import cache

import pytest

from analysis import Position, simulate
from analysis.exact import exact_turn
from analysis.objectives import ExpectedBrains
from analysis.position import DiceState
from analysis.simulate import random_position
from analysis.solutions import StoredTurn, build, decide
from analysis.table import table_for
from workers import solutions

from ..montecarlo import within_4_sigma

EXPECTED = ExpectedBrains()
SEQUEL = "direct-to-video-sequel"


@cache
def stored(mode: str, recycle: str = "before-draw") -> StoredTurn:
    return StoredTurn(*build(mode, recycle))


def positions(mode: str, count: int, seed: int, recycle: str = "before-draw") -> list[Position]:
    """Positions reached by play (`random_position`), mid-turn, distinct."""
    rng = random.Random(seed)
    seen: dict[Position, None] = {}
    while len(seen) < count:
        seen.setdefault(random_position(mode, rng, recycle))
    return list(seen)


def test_base_game_values_and_distributions_are_within_their_bounds_of_the_exact_ones() -> None:
    """Positions anywhere in the turn, against the whole turn solved exactly (before-draw; draw-then-recycle's are
    held to the exact engine near the end of a turn, below)."""
    turn = stored("original")
    exact = exact_turn("original", "before-draw", EXPECTED)
    index = table_for("original", "before-draw").index
    for position in positions("original", 60, seed=1):
        i, j, score = turn.index(position.state), index[position.state], position.score
        assert abs(turn.roll(i, score) - float(exact.roll(j, score))) <= turn.within
        decision = decide(turn.action_values(i, score), turn.within)
        assert decision == exact.decision(j, score) or decision == "tie"
        assert position.turn_start == ("stop" not in turn.action_values(i, score))
        floats, bound = turn.score_distribution(i, score)
        fractions = exact.score_distribution(j, score)
        assert set(floats) <= set(fractions)
        assert max(abs(floats.get(k, 0.0) - float(q)) for k, q in fractions.items()) <= bound


@pytest.mark.parametrize(("mode", "recycle"), [("original", "draw-then-recycle"),
                                               ("big-summer-action-movie", "before-draw"),
                                               ("santa-claus-meets-the-zombies", "before-draw")])
def test_values_are_within_their_bound_of_the_exact_ones_near_the_end_of_a_turn(mode: str, recycle: str) -> None:
    """The exact engine solves a position over the states it reaches (rooted): cheap two shotguns in, so that is
    where floats and fractions are held side by side (the Double Feature modes' whole turns are long to solve
    exactly, and the base game's draw-then-recycle differs from its before-draw only where the cup runs out)."""
    turn = stored(mode, recycle)
    checked = 0
    for position in positions(mode, 400, seed=2, recycle=recycle):
        if position.state.shotgun_count < 2 or position.state.effects:
            continue
        exact = exact_turn(mode, recycle, EXPECTED, position.state)
        i, score = turn.index(position.state), position.score
        assert abs(turn.roll(i, score) - float(exact.roll(0, score))) <= turn.within
        assert decide(turn.action_values(i, score), turn.within) in (exact.decision(0, score), "tie")
        floats, bound = turn.score_distribution(i, score)
        fractions = exact.score_distribution(0, score)
        assert max(abs(floats.get(k, 0.0) - float(q)) for k, q in fractions.items()) <= bound
        checked += 1
        if checked == 12:
            break
    assert checked == 12


def test_the_bound_is_certified_not_fitted() -> None:
    """The base game's bound follows from its table alone (analysis/solutions.py): rounding of at most m terms per
    roll, along at most L rolls; it is far above the errors seen, and far below the gaps that decide."""
    meta, _ = build("original", "before-draw")
    assert 1e-12 < meta["within"] < 1e-7
    assert meta["distribution_within"] < 1e-9


def test_an_unreachable_state_has_no_index() -> None:
    turn = stored("original")
    assert turn.index(Position(brains=("green",) * 6).state) is not None
    assert turn.index(Position().state) == 0
    three_reds = DiceState((0, 0, 0), (0, 0, 0), (0, 0, 3))  # a bust: the turn is over, no table state
    assert turn.index(three_reds) is None


def test_the_turn_start_distribution_is_a_distribution() -> None:
    turn = stored("santa-claus-meets-the-zombies")
    distribution, bound = turn.score_distribution(0, 0)
    assert abs(sum(distribution.values()) - 1) <= bound
    mean = sum(k * p for k, p in distribution.items())
    assert abs(mean - turn.roll(0, 0)) < 1e-8


def test_the_sequel_turn_in_floats_against_physical_dice() -> None:
    """Turns from the sequel's turn start played on physical dice (analysis/simulate.py) with the stored solution's
    policy (roll where rolling is worth more than the score): their mean within 4 sigma of its value of rolling."""
    turn = solutions.load(SEQUEL, "before-draw")
    start = Position(mode=SEQUEL)

    def rolls(played: simulate.Turn) -> bool:
        p = played.position()
        return turn.roll(turn.node(p), p.score) > p.score

    rng = random.Random(2026)
    scores = [simulate.play_turn(start, rolls, rng) for _ in range(4_000)]
    assert within_4_sigma(scores, turn.roll(turn.node(start), 0))
