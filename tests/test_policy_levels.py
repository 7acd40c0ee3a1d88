"""A `Solution` holds each state's levels only up to its stop bound (policy.py): what it answers is what the
dense sweep over every state at every level computes, where the bound proves the rest by formula."""

import numpy as np
import pytest

from analysis import Position
from analysis.objectives import ExpectedBrains
from analysis.policy import solve, state_bounds, sweep, sweep_levels
from analysis.table import table_for

OPTIMAL = ExpectedBrains()
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
