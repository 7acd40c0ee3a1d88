"""analysis/lightning/simulate.py: seeded Monte Carlo on physical dice (deterministic, so it cannot flake) against the
exact chase, race, bonus and points analyses, all within 4 sigma."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from analysis.lightning import (
    analyze,
    bonus_chase,
    point_rate,
    race,
    simulate_bonus,
    simulate_chase,
    simulate_points,
    simulate_race,
)


def _close(estimate: float, exact: Fraction | float, sigma: float) -> bool:
    return abs(estimate - float(exact)) <= 4 * sigma + 1e-12


@pytest.mark.parametrize(("text", "trials"), [("kind:4", 6000), ("faces:1,1,2,3,5,6", 2500), ("sum:20-25", 5000)])
def test_simulated_throws_match_exact(text: str, trials: int) -> None:
    result = analyze(text)
    samples = simulate_chase(text, trials, seed=20240611)
    mean = sum(samples) / trials
    assert _close(mean, result.expected_throws, math.sqrt(float(result.variance) / trials))
    for k in (1, 2, 3, 5, 8, 13):
        p = float(result.within[k - 1])
        share = sum(s <= k for s in samples) / trials
        assert _close(share, p, math.sqrt(max(p * (1 - p), 1e-9) / trials))


@pytest.mark.parametrize(("text", "players", "trials"), [("kind:4", 3, 4000), ("straight", 2, 2500)])
def test_simulated_race_matches_exact(text: str, players: int, trials: int) -> None:
    result = race(text, players)
    outcomes = simulate_race(text, players, trials, seed=7)
    for who in range(players):
        p = float(result.sole_winner[who])
        share = sum(w == (who,) for _, w in outcomes) / trials
        assert _close(share, p, math.sqrt(p * (1 - p) / trials))
    p_tie = float(result.tie)
    share = sum(len(w) > 1 for _, w in outcomes) / trials
    assert _close(share, p_tie, math.sqrt(p_tie * (1 - p_tie) / trials))
    throws = [t for t, _ in outcomes]
    mean = sum(throws) / trials
    var = sum((t - mean) ** 2 for t in throws) / (trials - 1)
    assert _close(mean, result.expected_throws, math.sqrt(var / trials))


@pytest.mark.parametrize(
    ("text", "number", "trials"), [("kind:6", 1, 1500), ("kind:4", 2, 4000), ("all-even", 2, 6000), ("5+1", 1, 5000)]
)
def test_simulated_bonus_matches_exact(text: str, number: int, trials: int) -> None:
    result = bonus_chase(text, number)
    assert result.also_matches == (text != "5+1")  # 5+1: six 1s are a pass but no match
    passes = simulate_bonus(text, number, trials, seed=99)
    p = float(result.p_pass)
    share = sum(n > 0 for n in passes) / trials
    assert _close(share, p, math.sqrt(max(p * (1 - p), 1e-6) / trials))
    mean = sum(passes) / trials
    var = sum((n - mean) ** 2 for n in passes) / (trials - 1)
    assert _close(mean, result.expected_passes, math.sqrt(max(var, 1e-6) / trials))


@pytest.mark.parametrize(
    ("text", "players", "best"), [("three-pairs", 6, True), ("kind:6", 2, True), ("kind:6", 2, False)]
)
def test_simulated_points_match_exact_gain(text: str, players: int, best: bool) -> None:
    """Renewal-reward ratio estimator; delta-method standard error from the iid cycles."""
    rate = point_rate(text, players)
    exact = rate.best_gain if best else rate.card_policy_gain
    cycles = simulate_points(text, players, 40000, seed=5, best=best)
    n = len(cycles)
    points = sum(p for p, _ in cycles)
    throws = sum(t for _, t in cycles)
    gain = points / throws
    mean_len = throws / n
    residual = sum((p - gain * t) ** 2 for p, t in cycles) / (n - 1)
    assert _close(gain, exact, math.sqrt(residual / n) / mean_len)


def test_simulation_is_seeded() -> None:
    assert simulate_chase("kind:4", 50, seed=1) == simulate_chase("kind:4", 50, seed=1)
    assert simulate_race("kind:4", 2, 20, seed=3) == simulate_race("kind:4", 2, 20, seed=3)
    rng = random.Random(0)
    assert isinstance(rng.random(), float)
