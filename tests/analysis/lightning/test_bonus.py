"""analysis/lightning/bonus.py: Bonus, Thunder and points: P(passing through six of a number while chasing a card) by
closed form, and the points-per-throw optimal policy never worse than chasing the card."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.lightning import analyze, bonus_chase, point_advice, point_rate

from ...strategies import card_texts
from .rolls import ROLLS


def test_bonus_all_even_closed_form() -> None:
    """Six 1s can only come while nothing is kept, i.e. while every throw so far was all odd:
    p = q / (1 - r) with q = 6^-6 (six 1s) and r = 2^-6 - 6^-6 (all odd, not six 1s)."""
    q = Fraction(1, 6**6)
    r = Fraction(1, 2**6) - q
    result = bonus_chase("all-even", 1)
    assert result.p_pass == q / (1 - r)
    assert not result.also_matches
    assert result.expected_passes == result.p_pass / (1 - result.p_pass)


def test_bonus_when_six_of_the_number_is_the_card() -> None:
    result = bonus_chase("sum:36", 6)
    assert result.p_pass == 1 and result.also_matches and result.expected_passes == 1
    assert bonus_chase("kind:6", 1).also_matches
    with pytest.raises(ValueError):
        bonus_chase("kind:6", 7)


def test_points_for_six_of_a_kind() -> None:
    """With six players every match of kind:6 is also a Bonus or Thunder: 3 points per card."""
    rate = point_rate("kind:6", 6)
    assert rate.card_policy_gain == 3 / analyze("kind:6").expected_throws
    assert rate.best_gain == rate.card_policy_gain
    two = point_rate("kind:6", 2)
    assert two.best_gain > two.card_policy_gain  # chasing 1s and 2s pays
    assert two.best_gain == two.best_card_points + two.best_bonus_points


@settings(max_examples=12, deadline=None)
@given(card_texts(), st.integers(2, 6))
def test_points_policy_is_never_worse(text: str, players: int) -> None:
    rate = point_rate(text, players)
    assert rate.best_gain >= rate.card_policy_gain > 0
    assert rate.best_card_points > 0 and rate.best_bonus_points >= 0
    if rate.changed_states == 0:  # the card policy is greedy for the optimal bias: gain-optimal
        assert rate.best_gain == rate.card_policy_gain


def test_point_advice_is_legal() -> None:
    for roll in ROLLS[::11]:
        keep = point_advice("three-pairs", roll, 6)
        assert not Counter(keep) - Counter(roll) and len(keep) <= 5
