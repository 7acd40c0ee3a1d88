"""analysis/game/kernel.py: the vectorised sweep of many columns at once: a column's numbers do not depend on its
batch, in the base game and with rescues."""

from __future__ import annotations

import numpy as np

from analysis.game.kernel import kernel_for, sweep

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
