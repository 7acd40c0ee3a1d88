"""analysis/game/rules.py: fixed simple rules against the optimal player: parsing, thresholds, exact policy evaluation
against the optimal policy and the best response (and against games of physical dice)."""

from __future__ import annotations

import random

import pytest

from analysis.game.play import play_duel, policy_table
from analysis.game.rules import Rule, parse_rule, rule_game, rule_win_probability
from analysis.table import table_for


def test_rules_parse():
    assert parse_rule("stop-at:4") == Rule("stop-at", 4, 3)
    assert parse_rule("ahead-by:3,2").name == "ahead-by:3,2"
    for bad in ("stop-at:0", "ahead-by:3,4", "hold:20"):
        with pytest.raises(ValueError):
            parse_rule(bad)


def test_rule_thresholds():
    ahead = Rule("ahead-by", 3, 2)
    assert ahead.threshold(1, 5, 9) == 7  # 5 + 7 >= 9 + 3
    assert ahead.threshold(2, 10, 12) == 3  # reaching 13 as seat 2 wins at once
    assert ahead.threshold(2, 10, 14) == 5  # final turn: 15 beats 14
    assert ahead.threshold(1, 12, 2) == 0  # already ahead: stop after the compulsory roll
    assert Rule("stop-at", 5).threshold(2, 0, 20) == 5


@pytest.mark.parametrize("rule", ["stop-at:4,2", "ahead-by:3,2"])
def test_rule_against_optimal_player(game, rule):
    """The best response exploits the rule at least as well as the two-player optimal policy does, and
    both beat it; a simulation of the rule against the optimal policy agrees within 4 sigma."""
    vs_optimal = rule_win_probability(rule, 1, game.mode, game.recycle, "optimal")
    vs_best = rule_win_probability(rule, 1, game.mode, game.recycle, "best-response")
    assert vs_best <= vs_optimal + 1e-12
    assert vs_optimal < game.p_first_player_wins
    r = parse_rule(rule)
    optimal = policy_table(game)
    shotguns = {}
    table = table_for(game.mode, game.recycle)

    def follow(seat, mover, other, state, total):
        if state not in shotguns:
            shotguns[state] = sum(table.states[state].shotguns)
        return total < r.threshold(seat, mover, other) and shotguns[state] < r.shotguns

    rng, n = random.Random(7), 6000
    wins = sum(play_duel(follow, optimal, rng) == 1 for _ in range(n))
    assert abs(wins / n - vs_optimal) <= 4 * (vs_optimal * (1 - vs_optimal) / n) ** 0.5


def test_rule_values_sum_with_the_other_seat(game):
    """Seat 2 of a rule game: the values are the mover's; P(rule wins) = 1 - P(optimal seat 1 wins)."""
    v = rule_game(Rule("stop-at", 4, 2), 2, game.mode, game.recycle, "best-response")
    assert rule_win_probability("stop-at:4,2", 2, game.mode, game.recycle, "best-response") == 1 - v.w1[0, 0]
    assert v.w1[0, 0] > game.p_first_player_wins  # the best response does better than against optimal play
