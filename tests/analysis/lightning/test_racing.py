"""analysis/lightning/racing.py: the race of several players to one card: P(sole first), P(tie) and E[throws until
someone matches], against inclusion-exclusion by hand (all-even) and certified partial sums."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis.lightning.racing as race_module
from analysis.lightning import CERTIFIED_ERROR, analyze, parse_card, race

from ...strategies import card_texts


def _all_even_race(players: int) -> tuple[Fraction, Fraction]:
    """P(sole first) and E[min] for all-even by inclusion-exclusion: S(k) = sum_j b_j 2^(-jk),
    f(k) = sum_j a_j 2^(-jk) (k >= 1), and sum over k of a product of such terms is geometric."""
    b = {j: -math.comb(6, j) * (-1) ** j for j in range(1, 7)}
    a = {j: math.comb(6, j) * (-1) ** j * (1 - 2**j) for j in range(1, 7)}
    sole = Fraction(0)
    for js in product(range(1, 7), repeat=players):
        coef = a[js[0]] * math.prod(b[j] for j in js[1:])
        sole += Fraction(coef, 2 ** sum(js) - 1)  # sum_{k>=1} x^k = x/(1-x), x = 2^-s
    mean = Fraction(0)
    for js in product(range(1, 7), repeat=players):
        mean += math.prod(b[j] for j in js) / (1 - Fraction(1, 2 ** sum(js)))
    return sole, mean


@pytest.mark.parametrize("players", [2, 3])
def test_race_all_even_closed_form(players: int) -> None:
    result = race("all-even", players)
    sole, mean = _all_even_race(players)
    assert result.exact and result.error_bound == 0
    assert result.sole_winner == (sole,) * players
    assert result.tie == 1 - players * sole
    assert result.expected_throws == mean
    survival = [1 - w for w in analyze("all-even").within]
    assert result.someone_within == tuple(1 - s**players for s in survival)


@pytest.mark.parametrize(
    ("text", "players"),
    [("kind:6", 2), ("straight", 3), ("sum:30-36", 4), ("three-pairs", 6), ("3+2+1", 2), ("faces:1,1,2,3,5,6", 3)],
)
def test_race_exact_within_certified_bounds(monkeypatch, text: str, players: int) -> None:
    """The closed-form sums agree with rigorous partial sums plus tail bounds."""
    exact = race(text, players)
    assert exact.exact
    monkeypatch.setattr(race_module, "MAX_EXACT_DEGREE", 0)
    certified = race_module._race.__wrapped__(parse_card(text).text, players)
    assert not certified.exact and 0 < certified.error_bound <= CERTIFIED_ERROR
    for field in ("tie", "expected_throws"):
        assert abs(getattr(exact, field) - getattr(certified, field)) <= certified.error_bound
    assert abs(exact.sole_winner[0] - certified.sole_winner[0]) <= certified.error_bound
    assert exact.someone_within == certified.someone_within


@settings(max_examples=12, deadline=None)
@given(card_texts(), st.integers(2, 4))
def test_race_properties(text: str, players: int) -> None:
    result = race(text, players)
    single = analyze(text)
    assert result.players == players and len(result.sole_winner) == players
    assert players * result.sole_winner[0] + result.tie == 1
    assert 0 <= result.tie <= 1 and 0 < result.sole_winner[0] < Fraction(1, players) + result.error_bound
    assert 1 <= result.expected_throws <= single.expected_throws
    assert all(a >= b for a, b in zip(result.someone_within, single.within))
    assert all(a <= b for a, b in zip(result.someone_within, result.someone_within[1:]))


def test_race_more_players_end_sooner() -> None:
    values = [race("kind:4", n) for n in range(2, 7)]
    assert all(a.expected_throws > b.expected_throws for a, b in zip(values, values[1:]))
    assert all(a.tie < b.tie for a, b in zip(values, values[1:]))


def test_race_rejects_bad_player_counts() -> None:
    for bad in (1, 7, 2.0, True):
        with pytest.raises(ValueError):
            race("kind:4", bad)  # type: ignore[arg-type]
