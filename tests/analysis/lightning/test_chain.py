"""analysis/lightning/chain.py: greedy policies over a ranking of the keeps, and the exact back-substitution that
values them: against a closed form, against its float twin, and refusing a policy that never leaves a keep."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest

from analysis.lightning.chain import (
    back_substitute,
    float_back_substitute,
    greedy_policy,
    rank_of,
    reachable,
    transitions,
)
from analysis.lightning.tables import EMPTY, KEEP_INDEX, KEEPS, STATES, tables

from .rolls import max_of_geometrics


def sixes_first() -> list[int]:
    """Keeps ranked best first: the most sixes and nothing else, then every other keep (a ranking that holds
    every six and rerolls the rest, the optimal policy for six sixes)."""
    only_sixes = sorted((k for k, keep in enumerate(KEEPS) if set(keep) <= {6}), key=lambda k: -len(KEEPS[k]))
    return only_sixes + [k for k in range(len(KEEPS)) if k not in only_sixes]


def test_a_rank_is_the_inverse_of_its_order_and_the_policy_keeps_the_best_ranked_legal_keep() -> None:
    order = list(range(len(KEEPS)))
    random.Random(4).shuffle(order)
    rank = rank_of(order)
    assert [order[r] for r in rank] == list(range(len(KEEPS)))
    policy = greedy_policy(rank)
    tab = tables()
    for t in range(0, len(STATES), 17):
        legal = tab.sub_lists[t]
        assert policy[t] in legal and rank[policy[t]] == min(rank[k] for k in legal)


def test_back_substitution_values_six_sixes_as_the_closed_form() -> None:
    """Holding every six, the throws to six sixes are the largest of six independent geometric counts (q = 5/6): the
    exact expectation and second moment by back-substitution equal the closed forms, and the float twin agrees."""
    order = sixes_first()
    policy = greedy_policy(rank_of(order))
    stop = np.array([state == (6,) * 6 for state in STATES])
    trans = transitions(policy, stop)
    solve_order = order  # best first: every next keep (more sixes) before the keep that moves to it
    denom = tables().denom  # (`base` counts in the outcomes of a throw: one throw is `denom` of them)
    mean = back_substitute(solve_order, trans, denom, only=reachable(trans))
    expected_mean, expected_second = max_of_geometrics(Fraction(5, 6))
    assert mean[EMPTY] == expected_mean
    assert len(reachable(trans)) == 6 and reachable(trans) == {KEEP_INDEX[(6,) * m] for m in range(6)}
    # from a keep, T = 1 + T' (T' from the keep the throw leads to, 0 once matched): E[T^2] = 1 + 2 E[T'] + E[T'^2]
    base = [0] * len(KEEPS)
    for k in reachable(trans):
        nexts, ways = trans[k]
        base[k] = denom[k] + 2 * sum(w * mean[n] for n, w in zip(nexts, ways))
    second = back_substitute(solve_order, trans, base, only=reachable(trans))
    assert second[EMPTY] == expected_second
    floats = float_back_substitute(solve_order, policy, stop, np.ones(len(KEEPS)))  # (per throw: probabilities)
    assert math.isclose(floats[EMPTY], float(expected_mean), rel_tol=1e-12)


def test_a_keep_the_policy_never_leaves_is_refused() -> None:
    """Ranking five 3s first: from them every throw keeps them again, and two 6s never show."""
    trap = KEEP_INDEX[(3, 3, 3, 3, 3)]
    order = [trap] + [k for k in range(len(KEEPS)) if k != trap]
    policy = greedy_policy(rank_of(order))
    stop = np.array([state.count(6) >= 2 for state in STATES])
    trans = transitions(policy, stop)
    assert trans[trap] == ((trap,), (6,))  # all six outcomes of the one rerolled die come back
    with pytest.raises(ArithmeticError, match="never leaves itself"):
        back_substitute([trap], trans, tables().denom)
    assert np.isnan(float_back_substitute([trap], policy, stop, np.ones(len(KEEPS)))[trap])
