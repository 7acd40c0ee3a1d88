"""Shared Monte Carlo checks: physical dice (analysis/simulate.py) against the exact engine."""

import math
import random

from analysis import Position, next_roll
from analysis.simulate import Turn, roll_once

N = 20_000


def within_4_sigma(samples: list[float], exact: float) -> bool:
    """The sample mean lies within 4 standard errors of the exact value (the larger of the sample's
    and, for a probability, the exact Bernoulli variance)."""
    n = len(samples)
    mean = sum(samples) / n
    var = sum((x - mean) ** 2 for x in samples) / (n - 1)
    sigma = math.sqrt(max(var, exact * (1 - exact) if 0 <= exact <= 1 else var) / n)
    return abs(mean - exact) <= 4 * sigma + 1e-12


def assert_next_roll_matches(position: Position, seed: int, n: int = N) -> None:
    """Bust, brains and shotguns of one roll, simulated n times, against the exact distribution."""
    rng = random.Random(seed)
    busts, brains, shotguns = [], [], []
    for _ in range(n):
        turn = Turn.at(position)
        b, s = roll_once(turn, rng)
        busts.append(float(turn.bust))
        brains.append(b)
        shotguns.append(s)
    exact = next_roll(position)
    assert within_4_sigma(busts, float(exact.bust))
    assert within_4_sigma(brains, float(exact.expected_brains))
    assert within_4_sigma(shotguns, float(sum(s * p for _, s, p in exact.outcomes)))
