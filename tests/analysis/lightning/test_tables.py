"""analysis/lightning/tables.py: the card-independent combinatorics of six dice: the 462 rolls and 462 keeps, the
ways each keep reaches each roll (against counting ordered outcomes by brute force), and the legal keeps of a roll."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import product

import numpy as np

from analysis.lightning.tables import EMPTY, KEEP_INDEX, KEEPS, STATE_INDEX, STATES, tables

from .rolls import ROLLS


def test_rolls_and_keeps_are_every_multiset_once() -> None:
    assert tuple(ROLLS) == STATES and len(STATES) == 462 and len(set(STATES)) == 462
    assert len(KEEPS) == len(set(KEEPS)) == 462 and KEEPS[EMPTY] == ()
    assert [sum(len(k) == m for k in KEEPS) for m in range(6)] == [1, 6, 21, 56, 126, 252]  # C(m + 5, 5)
    assert all(list(k) == sorted(k) for k in KEEPS) and [len(k) for k in KEEPS] == sorted(len(k) for k in KEEPS)
    assert all(STATES[STATE_INDEX[s]] == s for s in STATES) and all(KEEPS[KEEP_INDEX[k]] == k for k in KEEPS)


def test_each_keep_reaches_each_roll_as_the_ordered_outcomes_count() -> None:
    """From a keep, every ordered outcome of the rerolled dice (6 ** m of them, counted one by one) gives one roll:
    the ways, the denominators and the float probabilities are those counts."""
    tab = tables()
    assert len(tab.flat_states) == tab.offsets[-1] == 11_914
    assert np.allclose(tab.prob.sum(axis=1), 1.0)
    for keep in [(), (6,), (1, 1), (2, 3, 5), (4, 4, 4, 4), (1, 2, 3, 4, 6)]:
        k = KEEP_INDEX[keep]
        m = 6 - len(keep)
        counts = Counter(tuple(sorted(keep + outcome)) for outcome in product(range(1, 7), repeat=m))
        assert tab.denom[k] == 6**m == sum(counts.values())
        reached = {STATES[t]: int(w) for t, w in zip(tab.out_states[k], tab.out_ways[k])}
        assert reached == dict(counts)
        for t, w in reached.items():
            assert tab.prob[k, STATE_INDEX[t]] == float(Fraction(w, 6**m))
        assert sorted(np.flatnonzero(tab.prob[k]).tolist()) == sorted(STATE_INDEX[t] for t in counts)


def test_the_legal_keeps_of_a_roll_are_its_proper_sub_multisets() -> None:
    tab = tables()
    assert len(tab.sub_lists[STATE_INDEX[(1, 2, 3, 4, 5, 6)]]) == 2**6 - 1  # each face kept or not, not all six
    assert [KEEPS[k] for k in tab.sub_lists[STATE_INDEX[(3,) * 6]]] == [(3,) * m for m in range(6)]
    for roll in ROLLS[::23]:
        subs = {KEEPS[k] for k in tab.sub_lists[STATE_INDEX[roll]]}
        expected = {k for k in KEEPS if not Counter(k) - Counter(roll)}
        assert subs == expected
        padded = tab.subs[STATE_INDEX[roll]]
        assert padded[: len(subs)].tolist() == list(tab.sub_lists[STATE_INDEX[roll]])
        assert (padded[len(subs):] == len(KEEPS)).all()
    assert tab.keep_size.tolist() == [len(k) for k in KEEPS]
    assert tab.state_counts[STATE_INDEX[(1, 1, 2, 6, 6, 6)]] == (2, 1, 0, 0, 0, 3)
