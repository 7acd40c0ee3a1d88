"""analysis/game/play.py: whole two-player games with physical dice, each seat asking the solved game's decisions
(`policy_table`) before every roll, win as often as the solution says."""

from __future__ import annotations

import random

from analysis.game.play import play_duel, policy_table


def test_monte_carlo_of_the_optimal_policy(game):
    """Physical dice (analysis.simulate), both seats asking the solution before every roll: P(first
    player wins) within 4 standard errors (seeded, ~20,000 games)."""
    policy = policy_table(game)
    rng = random.Random(2013)
    n = 20_000
    wins = sum(play_duel(policy, policy, rng) == 1 for _ in range(n))
    p = game.p_first_player_wins
    assert abs(wins / n - p) <= 4 * (p * (1 - p) / n) ** 0.5
