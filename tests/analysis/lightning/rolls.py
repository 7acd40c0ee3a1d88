"""The rolls of six dice, written independently of the library, shared by the Lightning Dice test modules: the 462
rolls and their ordered counts, and closed forms of independent dice (tests/strategies.py draws dice and cards)."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from itertools import combinations_with_replacement

FACES = range(1, 7)
ROLLS = list(combinations_with_replacement(FACES, 6))


def multinomial(dice) -> int:
    """Number of ordered outcomes showing this multiset."""
    result = math.factorial(len(dice))
    for count in Counter(dice).values():
        result //= math.factorial(count)
    return result


def max_of_geometrics(q: Fraction, dice: int = 6) -> tuple[Fraction, Fraction]:
    """E[T] and E[T^2] for T = max of ``dice`` iid geometric(1 - q) throw counts.

    P(T > k) = 1 - (1 - q^k)^6 = sum_j C(6,j) (-1)^(j+1) q^(jk); sum_k q^(jk) = 1/(1-q^j) and
    sum_k (2k+1) x^k = (1+x)/(1-x)^2."""
    mean = second = Fraction(0)
    for j in range(1, dice + 1):
        sign = (-1) ** (j + 1) * math.comb(dice, j)
        x = q**j
        mean += sign / (1 - x)
        second += sign * (1 + x) / (1 - x) ** 2
    return mean, second
