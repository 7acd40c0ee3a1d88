"""analysis/lightning/chase.py: one player chasing a card: the optimal keep/reroll policy, the expected number of
throws, its variance and P(matched within k throws), checked against independent computations written here from
scratch: closed forms (all-even, six sixes), small Markov chains on "matching dice" (six of a kind, straight), a full
exact Bellman check (the claimed values admit no improving keep anywhere); and the exact fallbacks (exact policy
iteration repairs any float trouble).
"""

from __future__ import annotations

import importlib
from collections import Counter
from fractions import Fraction
from functools import cache
from itertools import combinations_with_replacement, product

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.lightning import WITHIN_HORIZON, Card, advice, analyze, parse_card, point_rate

from ...strategies import card_texts, six_dice
from .rolls import FACES, ROLLS, max_of_geometrics, multinomial


def test_all_even_is_six_independent_geometrics() -> None:
    result = analyze("all-even")
    half = Fraction(1, 2)
    assert result.within == tuple((1 - half**k) ** 6 for k in range(1, WITHIN_HORIZON + 1))
    mean, second = max_of_geometrics(half)
    assert result.expected_throws == mean
    assert result.variance == second - mean**2
    tip = advice("all-even", [5, 2, 3, 6, 1, 4])
    assert tip.keep == (2, 4, 6) and tip.reroll == (1, 3, 5)


@pytest.mark.parametrize("text", ["faces:6,6,6,6,6,6", "sum:36", "has:6,6,6,6,6,6", "kind:6 & has:6"])
def test_six_sixes_closed_form(text: str) -> None:
    result = analyze(text)
    q = Fraction(5, 6)
    mean, second = max_of_geometrics(q)
    assert result.expected_throws == mean
    assert result.variance == second - mean**2
    assert result.within == tuple((1 - q**k) ** 6 for k in range(1, WITHIN_HORIZON + 1))


def _chain_expectation(next_counts) -> Fraction:
    """E[throws] for a chain on j = 0..6 "useful dice" (6 = done) that never decreases:
    ``next_counts(j)`` gives {j': ways} out of 6**(6-j); j = 0 is the empty start."""
    value = {6: Fraction(0)}
    for j in range(5, -1, -1):
        counts = next_counts(j)
        total = 6 ** (6 - j)
        stay = counts.get(j, 0)
        value[j] = (total + sum(w * value[k] for k, w in counts.items() if k != j)) / (total - stay)
    return value[0]


def test_six_of_a_kind_matches_count_chain() -> None:
    """Keep the most common face: j = dice showing it. From j kept dice of face 1 (j >= 1) roll
    6 - j dice; the new count is max(j + rolled ones, the largest other count rolled)."""

    @cache
    def step(j: int) -> dict[int, int]:
        counts: Counter[int] = Counter()
        for rolled in product(FACES, repeat=6 - j):
            c = Counter(rolled)
            best = max([c[1] + j] + [c[f] for f in range(2, 7)]) if j else max(c.values())
            counts[best] += 1
        return dict(counts)

    expected = _chain_expectation(step)
    assert analyze("kind:6").expected_throws == expected
    tip = advice("kind:6", [3, 5, 3, 5, 1, 2])
    assert tip.keep in {(3, 3), (5, 5)} and set(tip.equally_good) | {tip.keep} == {(3, 3), (5, 5)}


def test_straight_matches_distinct_face_chain() -> None:
    """Keep one die of every face showing: j = distinct faces; rolling 6 - j dice adds the number
    of distinct missing faces among them."""

    @cache
    def step(j: int) -> dict[int, int]:
        missing = set(range(j + 1, 7))  # by symmetry, faces 1..j are held
        counts: Counter[int] = Counter()
        for rolled in product(FACES, repeat=6 - j):
            counts[j + len(missing & set(rolled))] += 1
        return dict(counts)

    assert analyze("straight").expected_throws == _chain_expectation(step)
    assert advice("straight", [1, 1, 2, 2, 6, 6]).keep == (1, 2, 6)


def test_faces_card_first_throw_and_policy() -> None:
    result = analyze("faces:1,1,2,3,5,6")
    assert result.within[0] == Fraction(multinomial((1, 1, 2, 3, 5, 6)), 6**6)
    assert advice("faces:1,1,2,3,5,6", [1, 2, 3, 4, 5, 6]).keep == (1, 2, 3, 5, 6)
    done = advice("faces:1,1,2,3,5,6", [6, 5, 3, 2, 1, 1])
    assert done.matched and done.expected_throws_left == 0 and done.keep == (1, 1, 2, 3, 5, 6)
    # Keeping 2 3 5 6 and chasing two 1s costs 96/11 > E[from nothing]: reroll everything.
    assert advice("faces:1,1,2,3,5,6", [2, 2, 3, 3, 5, 6]).keep == ()
    assert result.expected_throws < Fraction(96, 11)


def _bellman_q(card: Card, value_of_state: dict) -> dict:
    """Q(K) = 1 + E[value after one throw from keep K], for every keep of 0..5 dice."""
    q = {}
    for size in range(6):
        for keep in combinations_with_replacement(FACES, size):
            total = 6 ** (6 - size)
            acc = Fraction(0)
            for rolled in combinations_with_replacement(FACES, 6 - size):
                acc += multinomial(rolled) * value_of_state[tuple(sorted(keep + rolled))]
            q[keep] = 1 + acc / total
    return q


def _sub_multisets(roll):
    counts = Counter(roll)
    faces = sorted(counts)
    for choice in product(*(range(counts[f] + 1) for f in faces)):
        keep = tuple(f for f, c in zip(faces, choice) for _ in range(c))
        if len(keep) < 6:
            yield keep


@pytest.mark.parametrize("text", ["kind:4", "faces:1,1,2,3,5,6", "sum:20-25", "kind:4 | straight", "3+2+1"])
def test_claimed_values_satisfy_bellman_optimality_exactly(text: str) -> None:
    """The values advice() reports solve the optimality equations exactly: every keep's claimed
    value is its one-step lookahead, and no legal keep of any roll is strictly better. With a
    positive cost per throw the solution of these equations is unique, so they are optimal."""
    card = parse_card(text)
    claimed = {roll: advice(card, roll) for roll in ROLLS}
    value = {roll: tip.expected_throws_left for roll, tip in claimed.items()}
    q = _bellman_q(card, value)
    for roll, tip in claimed.items():
        assert tip.matched == card.matches(roll)
        if tip.matched:
            assert value[roll] == 0
            continue
        best = min(q[k] for k in _sub_multisets(roll))
        assert q[tip.keep] == value[roll] == best
        for other in tip.equally_good:
            assert q[other] == best
    assert analyze(card).expected_throws == q[()]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(card_texts(), six_dice(), st.randoms(use_true_random=False))
def test_advice_is_a_legal_keep(text: str, dice, rnd) -> None:
    tip = advice(text, dice)
    shuffled = list(dice)
    rnd.shuffle(shuffled)
    assert advice(text, shuffled) == tip
    assert tip.dice == tuple(sorted(dice))
    assert Counter(tip.keep) + Counter(tip.reroll) == Counter(dice)
    assert tip.matched == parse_card(text).matches(dice)
    if tip.matched:
        assert tip.expected_throws_left == 0 and tip.reroll == ()
    else:
        assert len(tip.keep) <= 5
        assert 1 <= tip.expected_throws_left <= analyze(text).expected_throws


@settings(max_examples=30, deadline=None)
@given(card_texts())
def test_throw_distribution_properties(text: str) -> None:
    result = analyze(text)
    card = result.card
    first = Fraction(sum(multinomial(r) for r in ROLLS if card.matches(r)), 6**6)
    assert result.within[0] == first
    assert len(result.within) == WITHIN_HORIZON
    assert all(0 < a <= b <= 1 for a, b in zip(result.within, result.within[1:]))
    # Keeping nothing each time needs 1/first throws on average; the optimum is no worse, and
    # E[T] = sum_k P(T > k) is at least its first 20 terms.
    assert 1 <= result.expected_throws <= 1 / first
    assert result.expected_throws >= 1 + sum(1 - w for w in result.within[:-1])
    assert result.variance >= 0
    assert result.verified_optimal
    assert result.policy_summary and result.keeps_used >= 1


# -- the exact fallbacks: exact policy iteration repairs any float trouble -------------------------------------------
def test_exact_policy_iteration_from_a_poor_start(monkeypatch) -> None:
    """Pretend the float solver only managed "keep nothing": exact policy iteration must still
    reach the optimal values, in more than one round."""
    chase_module = importlib.import_module("analysis.lightning.chase")
    text = "faces:1,1,2,3,5,6"
    good = chase_module.solve_chase(parse_card(text))

    def naive(matched):
        tab = importlib.import_module("analysis.lightning.tables").tables()
        p = tab.prob @ matched
        return 1.0 + (1.0 - p) / p[0]

    monkeypatch.setattr(chase_module, "_float_values", naive)
    repaired = chase_module._solve.__wrapped__(text)
    assert repaired.exact_rounds > 1
    assert repaired.values == good.values
    assert (repaired.policy == good.policy).all()


def test_exact_policy_iteration_recovers_from_an_improper_start(monkeypatch) -> None:
    """Rank "keep five 3s" best: a player holding them can never show two 6s (nor, with two
    players, score a Thunder), so the greedy policy is improper. The solvers must notice and
    restart from a proper policy."""
    chase_module = importlib.import_module("analysis.lightning.chase")
    bonus_module = importlib.import_module("analysis.lightning.bonus")
    tables_module = importlib.import_module("analysis.lightning.tables")
    text = "has:6,6"
    good = chase_module.solve_chase(parse_card(text))
    good_rate = point_rate(text, 2)
    trap = tables_module.KEEP_INDEX[(3, 3, 3, 3, 3)]
    seen = []
    original = chase_module.back_substitute

    def spy(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        except ArithmeticError:
            seen.append(True)
            raise

    monkeypatch.setattr(chase_module, "back_substitute", spy)
    values = np.arange(462.0)
    values[trap] = -1.0
    monkeypatch.setattr(chase_module, "_float_values", lambda matched: values)
    assert chase_module._solve.__wrapped__(text).values == good.values
    assert seen
    bias = -np.arange(462.0)
    bias[trap] = 1e9
    monkeypatch.setattr(bonus_module, "_float_gain_policy", lambda chase, points, renew: bias)
    monkeypatch.setattr(bonus_module, "back_substitute", spy)
    seen.clear()
    rate, _ = bonus_module._points.__wrapped__(text, 2)
    assert rate == good_rate
    assert seen
