"""The compiled forward flow (analysis/flow.py) on a turn small enough to follow by hand."""

from fractions import Fraction

import numpy as np
import pytest

from analysis.flow import Flow, ring_size, turn_flow

# state 0: a quarter busts, a quarter comes back (its self-loop), a half shows a brain and goes to state 1;
# state 1: a half busts, a half shows two brains and goes to state 2, where the policy stops
PTR = np.array([0, 1, 2, 2])
TO = np.array([1, 2], dtype=np.int32)
DELTA = np.array([1, 2], dtype=np.int8)
P = np.array([0.5, 0.5])
BUST = np.array([0.25, 0.5, 0.0])
LOOP = np.array([0.25, 0.0, 0.0])
TOP = 5
RANK = np.arange(3)
OFFSETS = np.arange(TOP + 2) * 3  # every level holds every state
ROLLS = np.tile([100.0, 100.0, -1.0], TOP + 1)  # states 0 and 1 roll, state 2 stops


def flow(score: int, closed: bool, levels: int = 3) -> tuple[dict[int, Fraction], float]:
    ended = np.zeros(TOP + 3 + score)
    dropped = turn_flow(0, score, closed, PTR, TO, DELTA, P, BUST, LOOP, RANK, OFFSETS, ROLLS, TOP, False, levels,
                        ended)
    return {k: Fraction(float(ended[k])).limit_denominator(1000) for k in np.flatnonzero(ended)}, dropped


def test_a_roll_the_policy_takes_closes_its_self_loop():
    assert flow(0, closed=True) == ({0: Fraction(2, 3), 3: Fraction(1, 3)}, 0.0)


def test_a_roll_the_policy_would_not_take_comes_back_to_stop():
    # asked to roll where the policy stops: the loop's quarter ends the turn where it started
    assert flow(1, closed=False) == ({0: Fraction(1, 2), 1: Fraction(1, 4), 4: Fraction(1, 4)}, 0.0)


def test_a_ring_too_small_for_the_live_levels_is_refused():
    assert ring_size(blocks=1, min_delta=0, max_delta=2) == 3
    with pytest.raises(ValueError, match="ring"):
        flow(0, closed=True, levels=2)


def test_a_flow_gives_each_group_once_its_masses_summed_in_the_solver_s_reverse_order():
    block, layer = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    levels_first = Flow(block, layer, lowers=False)
    levels_first.push(np.array([3, 0, 3, 1, 2]), np.array([5, 5, 5, 4, 5]), np.array([0.1, 0.2, 0.3, 0.4, 1e-16]))
    taken = [(s, n.tolist(), m.tolist()) for s, n, m in levels_first if len(n)]
    # level 4 first; at level 5, block 1 (its layer 1, then layer 0, whose one mass is dropped) before block 0
    assert taken == [(4, [1], [0.4]), (5, [3], [pytest.approx(0.4)]), (5, [0], [0.2])]
    assert levels_first.dropped == 1e-16  # below PRUNE

    blocks_first = Flow(block, layer, lowers=True)
    blocks_first.push(np.array([0, 2]), np.array([1, 7]), np.array([0.5, 0.5]))
    assert [(s, n.tolist()) for s, n, _ in blocks_first] == [(7, [2]), (1, [0])]
