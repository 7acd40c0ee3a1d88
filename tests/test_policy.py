"""Turn policies: exact values, ties, distributions, and the proof that no cap is needed."""

from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from hypothesis import given, settings

from analysis import ExpectedBrains, Position, odds, parse_objective, solve
from analysis.exact import RESIDUES_FROM, ExactTurn, exact_turn, to_fraction
from analysis.table import table_for

from .strategies import positions

OPTIMAL = ExpectedBrains()


def test_optimal_expected_score_from_the_empty_turn():
    o = odds(Position())
    assert o.decision.action == "roll"
    assert abs(float(o.decision.roll) - 2.2591498606035167) < 1e-12
    assert sum(o.score_distribution.values()) == 1
    assert sum(k * p for k, p in o.score_distribution.items()) == o.decision.roll


def test_highest_roll_level_is_an_exact_tie():
    """T1 = max m/q = 324 at a hand of three green footprints and nothing else: rolling once is
    worth 324 * (1 - 1/216) + 3/2 = 324 exactly, and every state stops strictly above T1."""
    sol = solve("original", "before-draw", OPTIMAL)
    assert sol.top == 324
    tie = Position(footprints=["green"] * 3, banked=324)
    assert odds(tie).decision.action == "tie"
    assert odds(tie).decision.roll == 324
    assert odds(Position(footprints=["green"] * 3, banked=325)).decision.action == "stop"
    assert odds(Position(footprints=["green"] * 3, banked=323)).decision.action == "roll"


def test_no_cap_is_needed():
    """The base of the induction in policy.py: under any policy the brains still to come before a bust
    are at most G(i), their expectation when always rolling, so stopping is optimal once T > G/q.
    G solves (I - P) G = m over the always-roll chain (recycling makes it cyclic)."""
    table = table_for("original")
    n = len(table)
    p = sum(table.matrices.values()) + sp.diags(table.self_loop_f)
    gain = table.gain_f + 0.0
    g = spla.spsolve(sp.identity(n, format="csc") - p.tocsc(), gain)
    assert np.all(np.isfinite(g)) and g.min() >= 0
    bound = (g / table.bust_f).max()
    assert 324 < bound < 1e6  # finite: every reported value is exact, with no truncation at all


@settings(max_examples=60, deadline=None)
@given(positions(recycle="before-draw"))
def test_exact_values_satisfy_bellman_and_match_floats(p):
    exact = exact_turn(p.mode, p.recycle, OPTIMAL)
    table = table_for(p.mode, p.recycle)
    i, score = table.index[p.state], p.score
    roll = exact.roll(i, score)
    expected = Fraction(0)
    for d, j, q in table.edges[i]:
        expected += q * max(to_fraction(exact.roll(j, score + d)), Fraction(score + d))
    here = roll if exact.decision(i, score) == "roll" else max(to_fraction(roll), Fraction(score))
    expected += table.self_loop[i] * to_fraction(here)
    assert to_fraction(roll) == expected
    sol = solve(p.mode, p.recycle, OPTIMAL)
    assert abs(sol.values_at(i, score)[0] - float(roll)) <= 1e-12 * max(1, score)


@settings(max_examples=12, deadline=None)
@given(positions())
def test_distribution_is_exact_and_consistent(p):
    for objective in ("expected-brains", "reach:5", "rule:4,2"):
        o = odds(p, objective)
        dist = o.score_distribution
        assert sum(dist.values()) == 1
        if objective == "reach:5":
            assert sum(v for k, v in dist.items() if k >= 5) == o.decision.roll
        else:
            assert sum(k * v for k, v in dist.items()) == o.decision.roll


@settings(max_examples=8, deadline=None)
@given(positions(recycle="before-draw"))
def test_distribution_in_residues_is_the_one_in_rationals(p):
    """The residue flow (used for long turns: values of more than `RESIDUES_FROM` bits) gives exactly the
    rational flow's distribution, for every objective; the turn start's (1,201 bits) takes the residue path."""
    table = table_for(p.mode, p.recycle)
    i = table.index[p.state]
    for objective in (OPTIMAL, parse_objective("reach:5"), parse_objective("rule:4,2")):
        exact = exact_turn(p.mode, p.recycle, objective)
        exact.roll(i, p.score)
        assert exact._flow_in_residues(i, p.score) == exact._flow_rationals(i, p.score)


@pytest.mark.parametrize(("mode", "shotguns"), [("big-summer-action-movie", ("red",)),
                                                ("santa-claus-meets-the-zombies", ("red",)),
                                                ("direct-to-video-sequel", ("red", "red"))])
def test_distribution_in_residues_with_the_double_feature(mode: str, shotguns: tuple[str, ...]):
    """Rescues lower the score (min_delta < 0, so the flows keep the sweep's block order), double brains, the
    helmet: both flows agree near the end of a turn, over the states that position reaches."""
    p = Position(mode=mode, footprints=("green",), brains=("green", "yellow"), shotguns=shotguns)
    exact = exact_turn(p.mode, p.recycle, OPTIMAL, p.state)
    i = table_for(p.mode, p.recycle, p.state).index[p.state]
    exact.roll(i, p.score)
    assert exact._flow_in_residues(i, p.score) == exact._flow_rationals(i, p.score)


def test_the_turn_start_distribution_flows_in_residues(monkeypatch: pytest.MonkeyPatch):
    exact = exact_turn("original", "before-draw", OPTIMAL)
    i = table_for("original", "before-draw").index[Position().state]
    value = exact.roll(i, 0)
    assert value.denominator.bit_length() > RESIDUES_FROM
    monkeypatch.setattr(ExactTurn, "_flow_rationals", lambda *args: pytest.fail("not in residues"))
    distribution = exact._forward(i, 0)
    assert sum(distribution.values()) == 1 and sum(k * q for k, q in distribution.items()) == to_fraction(value)


def test_reach_values_fall_with_the_target():
    values = [odds(Position(), f"reach:{k}").decision.roll for k in range(1, 9)]
    assert all(a > b > 0 for a, b in zip(values, values[1:]))
    assert values[0] == 1 - odds(Position(), "reach:1").score_distribution[0]


def test_rule_decisions_follow_the_rule():
    p = Position(brains=["green"] * 5, footprints=["red"], shotguns=["yellow"])
    assert odds(p, "rule:5,3").decision.action == "stop"
    assert odds(p, "rule:6,3").decision.action == "roll"
    assert odds(p, "rule:6,1").decision.action == "stop"


def test_far_targets_are_tiny_but_positive():
    """Reaching 40 from 28 brains and two shotguns needs 12 more brains without one more shotgun."""
    p = Position(brains=["green"] * 6 + ["yellow"] * 2, shotguns=["red", "red"], footprints=["yellow"], banked=20)
    o = odds(p, "reach:40")
    assert o.decision.action == "roll" and 0 < o.decision.roll < Fraction(1, 1000)
    assert o.score_distribution[0] == 1 - o.decision.roll
