"""analysis/policy.py: turn policies: the optimal value, ties, the proof that no cap is needed (and the cap where a
state cannot bust); a `Solution` holds each state's levels only up to its stop bound, and answers what the dense sweep
over every state at every level computes; the School Bus solver's loops, cycles and passes."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from analysis import ExpectedBrains, Position, odds, policy, solve
from analysis.policy import bus_solve, bus_sweep, close_loops, state_bounds, stop_bound, sweep, sweep_levels
from analysis.table import table_for

from .roots import ROOTS

ORIGINAL, BSAM, SANTA = "original", "big-summer-action-movie", "santa-claus-meets-the-zombies"
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


# -- levels held up to each bound ------------------------------------------------------------------------------------
HELMET = Position(mode="santa-claus-meets-the-zombies", footprints=["red", "red"], brains=["yellow"],
                  effects=["helmet"])  # some states cannot bust: a capped turn, some bounds infinite


@pytest.mark.parametrize(("mode", "root"), [("original", None), (HELMET.mode, HELMET.state)])
def test_levels_held_up_to_each_bound_match_the_dense_sweep(mode, root):
    table = table_for(mode, "before-draw", root) if root else table_for(mode, "before-draw")
    sol = solve(mode, "before-draw", OPTIMAL, root)
    stop = np.arange(sol.top + 1 + table.max_delta, dtype=float)
    roll, value = sweep(table, stop, sol.top)  # no bounds: every state computed at every level
    assert sol.roll.shape == roll.shape and sol.value.shape == value.shape
    assert np.abs(np.asarray(sol.roll) - roll).max() < 1e-12 * sol.top
    assert np.abs(np.asarray(sol.value) - value).max() < 1e-12 * sol.top
    held = np.diff(sol.offsets)
    bounds = state_bounds(table)
    assert held.tolist() == [int((bounds >= t - 1e-6).sum()) for t in range(sol.top + 1)]
    assert held.sum() < roll.size  # fewer than dense: states stop above their bounds
    for i, score in [(table.start, 0), (len(table) - 1, sol.top), (int(np.argmin(bounds)), sol.top // 2)]:
        r = sol.roll[score, i]
        assert abs(r - roll[score, i]) < 1e-12 * sol.top
        assert abs(sol.value[score, i] - value[score, i]) < 1e-12 * sol.top
        assert sol.roll[score - len(roll), i - len(table)] == r  # numpy's negative indices
        assert sol.values_at(i, score) == (r, float(score))


def test_reading_past_the_levels_is_an_index_error():
    sol = solve("original", "before-draw", OPTIMAL)
    with pytest.raises(IndexError):
        sol.roll[sol.top + 1, 0]
    with pytest.raises(IndexError):
        sol.value[0, len(sol.table)]


def test_a_sweep_of_several_stop_columns_is_each_column_swept_alone():
    """`sweep_levels` with a column per objective (expected brains, reach:8) gives each column's own sweep."""
    table = table_for("original")
    top = solve("original", "before-draw", OPTIMAL).top
    brains = np.arange(top + 1 + table.max_delta, dtype=float)
    columns = [brains, (brains >= 8).astype(float)]
    together = sweep_levels(table, np.stack(columns, axis=1), top)
    for k, stop in enumerate(columns):
        alone = sweep_levels(table, stop, top)
        for both, one in zip(together[3:], alone[3:]):  # rolls, values
            assert np.abs(both[:, k] - one).max() < 1e-12 * top


# -- Double Feature: the block induction, the cap --------------------------------------------------------------------
def test_no_cap_needed_where_every_state_can_bust():
    """The block induction (policy.py) bounds the rolling levels without any cap in the rescue mode."""
    p = ROOTS[BSAM]
    table = table_for(p.mode, p.recycle, p.state)
    bound, unbounded = stop_bound(table)
    assert not unbounded and solve(p.mode, p.recycle, OPTIMAL, p.state).top == int(bound)
    assert not solve(p.mode, p.recycle, OPTIMAL, p.state).capped


def test_cap_with_the_helmet_is_below_1e_12():
    """With Santa's helmet and no shotgun yet a roll cannot bust (q = 0): the solver caps the turn
    CAP_MARGIN brains above the block bound. A cap twice as far changes no value up to the bound by
    1e-12 or more."""
    p = Position(mode=SANTA, footprints=["red", "red"], brains=["yellow"], effects=["helmet"])
    table = table_for(p.mode, p.recycle, p.state)
    bound, unbounded = stop_bound(table)
    assert unbounded
    near, far = solve(p.mode, p.recycle, OPTIMAL, p.state), solve(p.mode, p.recycle, OPTIMAL, p.state, 120)
    assert near.capped and far.top == near.top + 60
    levels = int(bound) + 1
    assert np.abs(near.value[:levels] - far.value[:levels]).max() < 1e-12
    assert np.abs(near.roll[:levels] - far.roll[:levels]).max() < 1e-12


# -- School Bus: loops, cycles, passes -------------------------------------------------------------------------------
@pytest.mark.parametrize("loops", [1, 2, 4, 7])
def test_close_loops_is_the_fixed_point(loops):
    """Whatever the order of the loops, ties among them, loops that cannot happen (q = 0) or that must roll again."""
    rng = np.random.default_rng(loops)
    r = rng.uniform(0, 5, 200)
    q = rng.uniform(0, 0.8 / loops, (200, loops))
    c = rng.uniform(0, 8, (200, loops))
    c[::3] = np.round(c[::3])  # ties
    c[::7, -1] = -np.inf  # must roll again
    q[::5, 0] = 0.0
    x = close_loops(r, q, c)
    assert np.allclose(x, r + (q * np.maximum(c, x[:, None])).sum(axis=1), atol=1e-12)


def test_passes_read_the_blocks_before_the_first_cycle_from_the_first(bus_rooted):
    """Only blocks from the first cyclic one on move between passes: a pass that reads the others from the first
    pass (`Settled`) gives the same values, candidates and passes as passes that sweep every block."""
    p, table, root = bus_rooted
    objective = ExpectedBrains()
    whole = bus_solve(p.mode, p.recycle, objective, root)
    stop = np.arange(whole.top + 1 + table.max_delta, dtype=float)
    back = np.repeat(stop[:, None], table.back_nodes.size, axis=1)
    settled = None
    for _ in range(whole.passes):
        full = bus_sweep(table, objective, whole.top, stop, back)
        fast = bus_sweep(table, objective, whole.top, stop, back, None, settled)
        assert np.array_equal(full[3], fast[3]) and np.array_equal(full[4], fast[4])
        assert all(np.array_equal(a, b) for a, b in zip(full[0] + full[1] + full[2], fast[0] + fast[1] + fast[2]))
        back, settled = fast[4], fast[5]
    assert (settled is None) == (not any(table.cyclic))


def test_a_raised_pass_that_comes_out_higher_certifies_nothing(bus_rooted, monkeypatch):
    """The solver reads the values raised by the gap once what is left to climb looks smaller (a guess): tried
    after every pass, the raised passes that come out higher are not taken, the passes go on, and the solution is
    the same within the certified errors."""
    p, table, root = bus_rooted
    if not any(table.cyclic):
        pytest.skip("no rescues: one pass is the solution")
    solve = policy._bus_solve  # (not the kept one: `bus_solve` keeps the last rooted turn)
    usual = solve(p.mode, p.recycle, OPTIMAL, root, policy.CAP_MARGIN)
    monkeypatch.setattr(policy, "_close_enough", lambda changes, gap: True)
    eager = solve(p.mode, p.recycle, OPTIMAL, root, policy.CAP_MARGIN)
    assert eager.passes > usual.passes > 2
    assert 0 < eager.cycle_error < 1e-9 and 0 < usual.cycle_error < 1e-9
    error = eager.cycle_error + usual.cycle_error
    assert np.allclose(eager.root_values, usual.root_values, rtol=0, atol=error)
    for a, b in zip(eager.candidate_values, usual.candidate_values):
        assert a.shape == b.shape and np.allclose(a, b, rtol=0, atol=error)


def test_the_bus_is_worth_something_from_the_turn_start():
    """Every bus decision is optional, so the bus cannot lower the optimal turn's expected score (2.2591 without
    it); it adds about a quarter of a brain."""
    value = bus_solve(ORIGINAL, "before-draw", OPTIMAL).root_values[0]
    assert 2.4 < value < 2.6
