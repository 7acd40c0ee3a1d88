"""Exact rationals by residues (analysis/residues.py): recovered exactly, or refused, never wrong."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from analysis.residues import Residues, reconstruct, recovered

from ..strategies import fractions


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


def _flow(steps: list, k: int) -> tuple[Fraction, Fraction | None]:
    """A small flow of probability, in fractions and in residues modulo `k` primes: each step divides the
    running masses by ``divisor``, weights them by ``ways`` and sums them (a layer's rolls, `combine`)."""
    field = Residues(k)
    masses, exact = [field.one()], [Fraction(1)]
    for ways, divisor in steps:
        rows = field.over(masses, [divisor] * len(masses))
        w = sp.csr_matrix(np.array([ways] * len(masses), dtype=np.int64).T)  # target t gets sum of ways[t] * row
        masses = field.combine(w, rows)
        exact = [sum(Fraction(wt, divisor) * x for x in exact) for wt in ways]
    total = masses[0]
    for m in masses[1:]:
        total = field.add(field.own(total), m)
    recovered = field.fractions({"total": total})
    return sum(exact), None if recovered is None else recovered["total"]


STEPS = st.lists(st.tuples(st.lists(st.integers(0, 10**6), min_size=1, max_size=4), st.integers(1, 10**6)),
                 min_size=1, max_size=6)


@given(STEPS)
def test_residues_agree_with_fractions(steps):
    exact, recovered = _flow(steps, 64)
    assert recovered in (exact, None)  # never wrong; None only when 64 primes are too few
    if max(x.bit_length() for x in (exact.numerator, exact.denominator)) < 64 * 15:
        assert recovered == exact


def test_too_few_primes_are_detected():
    """A value too large for the primes is refused (None), never a wrong fraction; enough primes recover it."""
    steps = [([1, 2, 3], 10**6 - k) for k in range(1, 200, 7)]
    exact, recovered = _flow(steps, 1)
    assert recovered is None
    assert _flow(steps, 64) == (exact, exact)


def test_unreduced_sums_never_overflow():
    """Adding residues leaves them unreduced until their bound would pass 2**64: 100,000 terms of the
    largest product of ways still come out exact."""
    field = Residues(4)
    big = 2**32 - 1
    row = field.over([field.one()], [7])[0]
    total = field.own(field.times(row, big))
    for _ in range(100_000 - 1):
        total = field.add(total, field.times(row, big))
    assert field.fractions({0: total}) == {0: Fraction(big * 100_000, 7)}


def test_combine_refuses_ways_that_could_overflow():
    field = Residues(4)
    with pytest.raises(ValueError, match="overflow"):
        field.combine(sp.csr_matrix(np.array([[2**31, 2**31]], dtype=np.int64)), field.over([field.one()] * 2, [1, 1]))


def test_ways_must_be_invertible():
    with pytest.raises(ValueError, match="not invertible"):
        Residues(4).inverse(2**31)


def _residues(field: Residues, q: Fraction) -> np.ndarray:
    return np.array([q.numerator % p * pow(q.denominator, -1, p) % p for p in field.primes], dtype=np.uint64)


def test_invert_lane_by_lane():
    field = Residues(8)
    x = np.array([(7 * k + 3) % p for k, p in enumerate(field.primes)], dtype=np.uint64)
    assert ((field.invert(x) * x) % field.p == 1).all()


@given(st.lists(st.lists(fractions(bits=3), min_size=4, max_size=4), min_size=4, max_size=4),
       st.lists(fractions(bits=3), min_size=4, max_size=4))
@example([[Fraction(int(i == (j ^ 1))) for j in range(4)] for i in range(4)], [Fraction(k) for k in range(4)])
@settings(deadline=None)  # (correctness, not speed: a loaded machine must not fail it)
def test_solve_is_gaussian_elimination_in_every_prime(rows, rhs):
    """`Residues.solve` gives the residues of the rational solution; a zero pivot (the first column of a
    matrix that starts with 0) is passed by a row below, and a singular matrix is refused."""
    field = Residues(8)
    a = np.stack([np.stack([_residues(field, q) for q in row]) for row in rows])
    b = np.stack([_residues(field, q) for q in rhs])
    matrix = sympy.Matrix(rows)
    if matrix.det() == 0:
        with pytest.raises(ZeroDivisionError):
            field.solve(a, b)
        return
    x = matrix.LUsolve(sympy.Matrix(rhs))
    for k in range(4):
        assert (field.solve(a, b)[k] == _residues(field, Fraction(int(x[k].p), int(x[k].q)))).all()


def test_a_system_singular_modulo_a_prime_runs_again_past_it():
    """1 - p / p is 0 modulo the first prime only: `recovered` runs the flow again modulo primes further on."""
    p = Residues(4).primes[0]
    primes_used = []

    def flow(field: Residues) -> dict:
        primes_used.append(field.primes[0])
        a = np.stack([np.stack([_residues(field, Fraction(p))])])
        x = field.solve(a, np.stack([field.one()[0]]))  # p x = 1
        return field.fractions({0: (x[0] * _residues(field, Fraction(p)) % field.p, 2**31)})

    assert recovered(flow, Fraction(1)) == {0: Fraction(1)}
    assert len(primes_used) == 2 and primes_used[0] == p < primes_used[1]


@given(st.lists(st.tuples(st.integers(0, 5), fractions(bits=20)), min_size=1, max_size=30),
       st.lists(st.integers(1, 10**6), min_size=6, max_size=6))
def test_array_sums_divisions_and_arrivals_are_the_fractions(masses, divisors):
    """`summed` adds the rows of each key (repeated keys or none), `divided` divides each row by its own divisor,
    `arrivals` sums the ways times rows into each column reached: as fractions would."""
    field = Residues(8)
    keys = np.array([k for k, _ in masses])
    rows = np.stack([_residues(field, q) for _, q in masses]).astype(np.uint32)
    distinct, sums = field.summed(keys, rows)
    expected = {k: sum(q for key, q in masses if key == k) for k in sorted(set(keys.tolist()))}
    assert distinct.tolist() == list(expected)
    assert all((row == _residues(field, q)).all() for row, q in zip(sums, expected.values()))
    each = np.array([divisors[k] for k in distinct.tolist()])
    over = field.divided(sums, each)
    assert all((row == _residues(field, q / d)).all() for row, q, d in zip(over, expected.values(), each.tolist()))
    ways = sp.csr_matrix(np.array([[d % 7, 0, d % 5] for d in each.tolist()], dtype=np.uint64))
    targets, arrived = field.arrivals(ways, over)
    dense = ways.toarray()
    reached = [c for c in range(3) if dense[:, c].any()]
    assert targets.tolist() == reached
    for c, row in zip(reached, arrived):
        total = sum(int(w) * q / d for w, q, d in zip(dense[:, c], expected.values(), each.tolist()))
        assert (row == _residues(field, total)).all()
