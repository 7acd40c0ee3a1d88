"""Monte Carlo (physical dice, analysis/simulate.py) against the exact engine, within 4 sigma.

Seeded, so the checks are repeatable; sample sizes give a standard error well below the effects
a wrong rule would cause (a wrong recycle variant, a missed self-loop, a wrong face table).
"""

import random

import pytest

from analysis import Position, odds
from analysis.simulate import play_turn

from .montecarlo import N, assert_next_roll_matches, assert_turn_matches, solved_policy, within_4_sigma

POSITIONS = [
    Position(),
    Position(footprints=["green", "red"], brains=["green"], shotguns=["red"]),
    Position(footprints=["red"], brains=["green"] * 6 + ["yellow"] * 4, shotguns=["red"]),
    Position(footprints=["red"], brains=["green"] * 6 + ["yellow"] * 4, shotguns=["red"], recycle="draw-then-recycle"),
    Position(brains=["green"] * 6 + ["yellow"] * 3 + ["red"] * 2, shotguns=["yellow", "red"], banked=11),
    Position(brains=["green"] * 6 + ["yellow"] * 3 + ["red"] * 2, shotguns=["yellow", "red"], banked=11,
             recycle="draw-then-recycle"),
    Position(footprints=["yellow"] * 3, shotguns=["green"]),
]


@pytest.mark.parametrize("position", POSITIONS, ids=range(len(POSITIONS)))
def test_next_roll(position):
    assert_next_roll_matches(position, seed=20101)


@pytest.mark.parametrize("objective", ["expected-brains", "reach:4", "rule:5,2"])
@pytest.mark.parametrize("position", [POSITIONS[1], POSITIONS[4], POSITIONS[5], POSITIONS[6]], ids=range(4))
def test_turn_score_distribution(position, objective):
    assert_turn_matches(position, objective, seed=1302, scores_to_check=(0, 1, 3, position.score + 2))


def test_optimal_turn_from_the_start():
    o = odds(Position())
    rng = random.Random(7)
    scores = [play_turn(Position(), solved_policy(Position(), "expected-brains"), rng) for _ in range(N // 2)]
    assert within_4_sigma(scores, float(o.decision.roll))
    assert within_4_sigma([float(s == 0) for s in scores], float(o.score_distribution[0]))
