"""analysis/exact.py: exact values and score distributions: Bellman's equations hold in exact fractions (the base game,
rooted Double Feature turns, School Bus nodes), the floats agree, and distributions flowed in residues are the ones
flowed in rationals, fraction for fraction (cycles through lower scores included)."""

from fractions import Fraction

import pytest
from hypothesis import given, settings

from analysis import ExpectedBrains, Position, odds, parse_objective, solve
from analysis.exact import RESIDUES_FROM, ExactTurn, exact_bus_turn, exact_turn, solve_exact, to_fraction
from analysis.residues import Residues
from analysis.table import CHANCE, DECISION, bus_table_for, table_for

from ..strategies import positions
from .roots import bus

ORIGINAL, BSAM = "original", "big-summer-action-movie"
OPTIMAL = ExpectedBrains()


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


# -- Double Feature: rooted turns ------------------------------------------------------------------------------------
def test_double_feature_exact_values_satisfy_bellman(rooted):
    p, table = rooted
    exact = exact_turn(p.mode, p.recycle, OPTIMAL, p.state)
    for i in range(0, len(table), max(1, len(table) // 25)):
        score = table.states[i].pile_brains + 3
        roll = to_fraction(exact.roll(i, score))
        expected = Fraction(0)
        for d, j, q in table.edges[i]:
            expected += q * max(to_fraction(exact.roll(j, score + d)), Fraction(score + d))
        here = roll if exact.decision(i, score) == "roll" else max(roll, Fraction(score))
        expected += table.self_loop[i] * here
        assert roll == expected
        sol = exact.solution
        assert abs(sol.values_at(i, score)[0] - float(roll)) <= 1e-12 * max(1, score)


# -- School Bus: loops and cycles solved exactly ---------------------------------------------------------------------
def test_solve_exact():
    from gmpy2 import mpq

    x = solve_exact({"a": {"b": mpq(1, 2)}, "b": {"a": mpq(1, 3)}}, {"a": mpq(1), "b": mpq(2)})
    assert x == {"a": mpq(12, 5), "b": mpq(14, 5)}


def test_bus_exact_values_satisfy_bellman(bus_rooted):
    """Every chance node's exact value is the sum of its results' values (loops included), every decision's
    the best of its options (stop and every legal action, each computed exactly)."""
    p, table, root = bus_rooted
    exact = exact_bus_turn(p.mode, p.recycle, OPTIMAL, root)
    start, score = table.index[p.bus_state], p.score
    exact.action_values(start, score)
    pairs = [(i, s) for (i, s) in list(exact._values) if table.kind[i] == CHANCE][:: 7][:40]
    assert pairs
    for c, s in pairs:
        total = Fraction(0)
        den = table.denominator[c]
        for d, j, w in table.edges[c]:
            total += Fraction(w, den) * to_fraction(exact.value(j, s + d))
        for h, w in table.loops[c]:
            total += Fraction(w, den) * to_fraction(exact.value(h, s))
        assert to_fraction(exact.value(c, s)) == total
    decisions = [(j, s + d) for c, s in pairs[:8] for d, j, _ in table.edges[c] if table.kind[j] == DECISION]
    for j, s in decisions[:12]:
        assert exact.value(j, s) == max(exact.action_values(j, s).values())


@pytest.mark.parametrize("objective", ["expected-brains", "reach:8"])
def test_residues_give_the_rationals_distribution(objective):
    """The score distribution flowed as residues and recovered (acyclic tables) is the one flowed in exact
    rationals, fraction for fraction, from a riding position and from one before boarding."""
    exact = exact_bus_turn(ORIGINAL, "before-draw", parse_objective(objective))
    table = exact.table
    for p in (bus(footprints=["green"], brains=["green", "yellow"], shotguns=["red"]),
              bus(footprints=["red"], brains=["green", "yellow"], shotguns=["yellow"], riding=True, bus_brains=1)):
        i = table.index[p.bus_state]
        for action, c in table.actions[i]:
            flowed = exact._forward(c, p.score)
            assert flowed == exact._flow_rationals(c, p.score), action
            assert sum(flowed.values()) == 1


def test_a_cyclic_distribution_in_residues_is_the_rationals_one(monkeypatch):
    """Big Summer with the bus: YIELD's rescues make cycles through lower scores. The flow in residues, each
    strongly connected set of (node, score) pairs solved as a system modulo every prime, gives the distribution
    of the flow in exact rationals fraction for fraction."""
    p = bus(mode=BSAM, footprints=["hunk", "hottie"], brains=["green", "yellow"], shotguns=["red"])
    table = bus_table_for(BSAM, "before-draw", p.bus_state)
    exact = exact_bus_turn(BSAM, "before-draw", OPTIMAL, p.bus_state)
    sizes, solve = [], Residues.solve
    monkeypatch.setattr(Residues, "solve", lambda field, a, b: sizes.append(len(b)) or solve(field, a, b))
    c = dict(table.actions[table.index[p.bus_state]])["board"]
    flowed = exact._forward(c, p.score)
    assert max(sizes) > 1  # cycles of several pairs were solved in residues
    assert flowed == exact._flow_rationals(c, p.score)
    assert sum(flowed.values()) == 1
