"""Dice, rolls and cards shared by the Lightning Dice test modules: the 462 rolls of six dice and their ordered counts,
closed forms of independent dice, and hypothesis strategies of dice and cards (each card paired with a reference
predicate written independently of the library)."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from functools import cache
from itertools import combinations_with_replacement

from hypothesis import strategies as st

from analysis.lightning import DECK

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


def _kind(n):
    return lambda d: max(Counter(d).values()) >= n


def _shape(parts):
    return lambda d: sorted(Counter(d).values(), reverse=True) == list(parts)


ATOMS = [
    ("kind:2", _kind(2)),
    ("kind:3", _kind(3)),
    ("kind:4", _kind(4)),
    ("kind:5", _kind(5)),
    ("kind:6", _kind(6)),
    ("two-triples", _shape((3, 3))),
    ("4+2", _shape((4, 2))),
    ("3+2+1", _shape((3, 2, 1))),
    ("2+2+2", _shape((2, 2, 2))),
    ("three-pairs", lambda d: sum(c // 2 for c in Counter(d).values()) >= 3),
    ("straight", lambda d: sorted(d) == [1, 2, 3, 4, 5, 6]),
    ("all-even", lambda d: all(x % 2 == 0 for x in d)),
    ("all-odd", lambda d: all(x % 2 == 1 for x in d)),
]


dice_strategy = st.lists(st.integers(1, 6), min_size=6, max_size=6)


@st.composite
def atom_strategy(draw):
    kind = draw(st.sampled_from(["fixed", "sum", "faces", "has"]))
    if kind == "fixed":
        return draw(st.sampled_from(ATOMS))
    if kind == "sum":
        lo = draw(st.integers(6, 36))
        hi = draw(st.integers(lo, 36))
        return f"sum:{lo}-{hi}", lambda d: lo <= sum(d) <= hi
    if kind == "faces":
        faces = draw(st.lists(st.integers(1, 6), min_size=6, max_size=6))
        return "faces:" + ",".join(map(str, faces)), lambda d: sorted(d) == sorted(faces)
    faces = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))
    need = Counter(faces)
    return "has:" + ",".join(map(str, faces)), lambda d: all(Counter(d)[f] >= c for f, c in need.items())


def _combine(children):
    def build(pair):
        (a_text, a_pred), (b_text, b_pred), op = pair
        if op == "&":
            return f"({a_text}) & ({b_text})", lambda d: a_pred(d) and b_pred(d)
        if op == "|":
            return f"({a_text}) | ({b_text})", lambda d: a_pred(d) or b_pred(d)
        return f"!({a_text})", lambda d: not a_pred(d)

    return st.tuples(children, children, st.sampled_from(["&", "|", "!"])).map(build)


card_with_predicate = st.recursive(atom_strategy(), _combine, max_leaves=4)


@cache
def solvable_cards() -> list[str]:
    """A fixed pool of varied cards whose analyses the property tests can afford."""
    return [card.text for card in DECK.values()] + ["kind:3", "has:1,2", "sum:18-24 | all-odd", "2+2+1+1"]


card_text_strategy = st.sampled_from(solvable_cards())
