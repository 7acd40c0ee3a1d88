"""analysis/game/kernel.py: the compiled sweep of many columns at once: a column's numbers do not depend on its
batch, in the base game and with rescues, and agree with the turn solver's."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.game.kernel import kernel_for, sweep
from analysis.policy import sweep as turn_sweep

DF = "big-summer-action-movie"


def _batch_independence(mode: str) -> None:
    kernel = kernel_for(mode, "before-draw")
    rng = np.random.default_rng(7)
    stop = np.sort(rng.random((40, 6)), axis=0)
    slopes = rng.random((40, 6))
    tops = np.array([5, 12, 20, 30, 3, 12])
    batch = sweep(kernel, stop, tops, slopes)
    for col, top in enumerate(tops):
        alone = sweep(kernel, stop[:, [col]], tops[[col]], slopes[:, [col]])
        assert np.array_equal(alone.start[:, 0], batch.start[:top + 1, col])
        assert np.array_equal(alone.dstart[:, 0], batch.dstart[:top + 1, col])


def test_a_column_is_the_same_bit_for_bit_whatever_its_batch():
    """The sweep spends work only where a column may still roll (columns sorted by top, narrower levels
    above), so a column's numbers must not depend on the others: units of any split agree exactly."""
    _batch_independence("original")


def test_a_double_feature_column_is_the_same_whatever_its_batch(df_game):
    """The same with rescues: rolls that take brains away read lower levels, narrowed to the batch's width."""
    _batch_independence(DF)


@pytest.mark.parametrize("mode", ["original", DF])
def test_the_sweep_agrees_with_the_turn_solver_on_every_reachable_position(mode):
    """Two implementations of one backward induction: the compiled sweep (reachable positions, in sweep order, the
    bust shifted to 0) and analysis/policy.py's turn solver (every state, in numpy): the same value and value of
    rolling at every position the sweep reaches, for several columns of stop values at once, with rolls that take
    brains away in the Double Feature mode."""
    kernel = kernel_for(mode, "before-draw")
    rng = np.random.default_rng(11)
    top = 18
    stop = np.sort(rng.random((top + 1 + kernel.max_delta, 4)), axis=0)
    stop -= stop[0]  # the turn solver's bust is worth 0, the sweep's what stopping with 0 brains is
    ours = sweep(kernel, stop, np.full(4, top), full=True)
    roll, value = turn_sweep(kernel.table, stop, top)
    reached = ~np.isnan(ours.value)
    assert reached.sum() > kernel.n  # (most positions at most levels)
    assert np.abs(ours.value[reached] - value[:top + 1][:, kernel.order][reached]).max() < 1e-12
    assert np.abs(ours.roll[reached] - roll[:, kernel.order][reached]).max() < 1e-12
    assert np.array_equal(ours.rolls[reached], (roll[:, kernel.order] >= value[:top + 1][:, kernel.order])[reached])
