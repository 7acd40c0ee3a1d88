"""Exact rationals by residues (analysis/residues.py): recovered exactly, or refused, never wrong."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from analysis.exact import Rationals
from analysis.residues import Residues, reconstruct

from .strategies import fractions


@given(fractions(bits=200))
def test_reconstruct_recovers_a_small_fraction(x):
    m = 1
    for p in Residues(16).primes[:16]:  # about 480 bits: enough for 200-bit numerators and denominators
        m *= p
    r = x.numerator * pow(x.denominator, -1, m) % m
    assert reconstruct(r, m) == x


def test_reconstruct_gives_none_or_another_fraction_past_its_bound():
    """A fraction too large for the modulus cannot be recovered: `reconstruct` answers None or a smaller
    fraction (which `Residues.fractions`' check primes then refuse, below)."""
    m = Residues(2).primes[0] * Residues(2).primes[1]
    x = Fraction(2**70 + 1, 3**45)
    assert reconstruct(x.numerator * pow(x.denominator, -1, m) % m, m) != x


def _compute(field, steps):
    """The same small flow of probability in any field: a product of (ways/den) factors and sums."""
    total = None
    for ways, den, back in steps:
        x = field.scale(field.one(), den, den - back) if back else field.one()
        parts = field.scale(x, np.array(ways, dtype=np.int64), den)
        for part in parts:
            total = part if total is None else field.add(total, part)
    return field.fractions({"total": total})


STEPS = st.lists(st.tuples(st.lists(st.integers(0, 10**6), min_size=1, max_size=6), st.integers(2, 10**6),
                           st.integers(0, 1)).filter(lambda s: s[2] < s[1]), min_size=1, max_size=8)


@given(STEPS)
def test_residues_agree_with_rationals(steps):
    assert _compute(Residues(64), steps) == _compute(Rationals(), steps)


def test_too_few_primes_are_detected():
    """Sums of many unrelated fractions need more primes than one: `fractions` says so (None), never a wrong
    value, and enough primes give the rationals' answer."""
    steps = [([1, 2, 3], 10**6 - k, 1) for k in range(1, 200, 7)]
    exact = _compute(Rationals(), steps)
    assert _compute(Residues(1), steps) is None
    assert _compute(Residues(64), steps) == exact


def test_unreduced_sums_never_overflow():
    """Adding residues leaves them unreduced until their bound would pass 2**64: 100,000 terms of the
    largest product of ways still come out exact."""
    field, rationals = Residues(4), Rationals()
    big = 2**32 - 1
    total, exact = None, None
    for _ in range(100_000 // 50):
        parts = field.scale(field.one(), np.array([big] * 50, dtype=np.int64), 7)
        for part in parts:
            total = part if total is None else field.add(total, part)
    exact = rationals.scale(rationals.one(), big, 7) * 100_000
    assert field.fractions({0: total}) == {0: Fraction(int(exact.numerator), int(exact.denominator))}


def test_ways_must_be_invertible():
    with pytest.raises(ValueError, match="not invertible"):
        Residues(4).inverse(2**31)
