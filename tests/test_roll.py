"""The exact next roll: anchors, hand computations, and properties against independent maths."""

from fractions import Fraction

import sympy
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy.stats import multivariate_hypergeom

from analysis import Position, PositionError, next_roll
from analysis.roll import draws

from .strategies import positions


def test_three_shotguns_on_the_first_roll_is_94_over_3861():
    """ANCHORS.md: hand computation over the 286 draws."""
    assert next_roll(Position()).bust == Fraction(94, 3861)


def test_first_roll_stated_with_sympy():
    """The same number stated as the combinatorics it is: sum over draws of P(draw) * prod P(shotgun)."""
    g, y, r = 6, 4, 3
    shot = {"g": sympy.Rational(1, 6), "y": sympy.Rational(2, 6), "r": sympy.Rational(3, 6)}
    total = 0
    for a in range(4):
        for b in range(4 - a):
            c = 3 - a - b
            p_draw = sympy.binomial(g, a) * sympy.binomial(y, b) * sympy.binomial(r, c) / sympy.binomial(13, 3)
            total += p_draw * shot["g"] ** a * shot["y"] ** b * shot["r"] ** c
    assert Fraction(str(total)) == next_roll(Position()).bust
    brains = {"g": sympy.Rational(3, 6), "y": sympy.Rational(2, 6), "r": sympy.Rational(1, 6)}
    expected = sum(sympy.Rational(n, 13) * 3 * brains[k] for k, n in (("g", g), ("y", y), ("r", r)))
    assert Fraction(str(expected)) == next_roll(Position()).expected_brains


def test_recycle_variants_by_hand():
    """One red die left in the cup, two needed, ten brains (6 green, 4 yellow) set aside, one red shotgun.

    before-draw: the red and two dice from {6g, 4y, 1r} roll with the red in hand; with the hand red's
    shotgun chance 1/2 and the drawn pair's a, b, P(>= 2 shotguns) = (a + b) / 2, averaged over the 55
    pairs: 17/66. draw-then-recycle: both reds roll with one of the ten brain dice (shotgun 7/30):
    1/4 + 2 * (1/2 * 7/30 * 1/2) = 11/30.
    """
    fields = dict(footprints=["red"], brains=["green"] * 6 + ["yellow"] * 4, shotguns=["red"])
    before = next_roll(Position(**fields))
    after = next_roll(Position(**fields, recycle="draw-then-recycle"))
    assert before.recycles and after.recycles
    assert before.bust == Fraction(17, 66)
    assert after.bust == Fraction(11, 30)
    for t in before.transitions + after.transitions:
        assert t.banked == 10
        assert t.bust or sum(t.state.brains) == t.brains  # the pile now holds only this roll's brains


@settings(max_examples=200)
@given(positions())
def test_probabilities_sum_to_exactly_one(p):
    r = next_roll(p)
    assert sum(t.probability for t in r.transitions) == 1
    assert sum(q for _, _, q in r.outcomes) == 1
    assert r.expected_brains == sum(b * q for b, _, q in r.outcomes)
    assert 0 < r.bust < 1
    assert r.bust == sum(t.probability for t in r.transitions if t.bust)
    assert r.expected_brains == sum(t.probability * t.brains for t in r.transitions)


@settings(max_examples=200)
@given(positions())
def test_dice_are_conserved(p):
    mode = p.game_mode
    for t in next_roll(p).transitions:
        if t.bust:
            continue
        cup = t.state.cup(mode)
        assert all(c >= 0 for c in cup)
        assert sum(t.state.hand) + sum(t.state.brains) + sum(t.state.shotguns) + sum(cup) == mode.total_dice
        assert sum(t.state.hand) <= 3
        assert sum(t.state.shotguns) == len(p.shotguns) + t.shotguns
        assert t.brains + t.shotguns + sum(t.state.hand) == 3


@settings(max_examples=200, suppress_health_check=[HealthCheck.filter_too_much])  # many draws have 2 shotguns
@given(positions(), st.sampled_from(["green", "yellow", "red"]))
def test_bust_never_falls_when_a_shotgun_is_added(p, die):
    assume(p.cup[die] > 0 and len(p.shotguns) < 2)
    try:
        worse = Position(p.mode, p.footprints, p.brains, p.shotguns + (die,), p.banked, p.recycle)
    except PositionError:
        assume(False)
    assert next_roll(worse).bust >= next_roll(p).bust


@given(st.tuples(st.integers(0, 6), st.integers(0, 4), st.integers(0, 3)), st.integers(1, 3))
def test_draws_equal_scipy_multivariate_hypergeometric(cup, n):
    assume(sum(cup) >= n)
    for take, p in draws(cup, n):
        assert abs(float(p) - multivariate_hypergeom.pmf(x=list(take), m=list(cup), n=n)) < 1e-12
    assert sum(p for _, p in draws(cup, n)) == 1


def test_three_footprints_roll_the_same_dice():
    r = next_roll(Position(footprints=["green", "yellow", "red"]))
    assert not r.recycles
    # no draw: the outcome is the product of three independent dice
    assert r.bust == Fraction(1, 6) * Fraction(2, 6) * Fraction(3, 6)
