"""The vectorised sweep behind every game solver: one turn, many columns, values and slopes.

A *column* is one turn-ending problem: ``stop[T]`` is the value (a win probability) of ending the
turn with ``T`` brains. The rules make a bust worth exactly what stopping with 0 brains is worth
(the turn ends and the score does not change), so with ``S0 = stop[0]`` the sweep works on
``U = V - S0``, where a bust is worth 0 and policy.py's equations hold unchanged::

    keep(i, T) = sum_{j != i, d} P_d[i, j] U(j, T + d) / (1 - p_i)      (p_i: the self-loop)
    U(i, T)    = max(keep, stop[T] - S0)      (or what a fixed policy says; the empty turn rolls)

Along with ``U`` the sweep can carry ``dU/dtheta`` for one or more scalar parameters per column (``dstop``)
under the same decisions: the slope of a piecewise linear function, which the game solver uses for
Newton steps (that is, policy iteration).

States are renumbered so that the table's blocks and layers are contiguous ranges, and inside a
layer by the least turn total at which the state can occur (in the base game: the brains in its
pile), so at level ``T`` only a prefix of each layer is reachable, and only that prefix is computed
(the others are never read: a roll from a computed position leads to computed positions). Each
column has a top level per block above which the caller has shown that every state of the block
stops; a column that stops in every block at level ``T`` is not computed there at all (`sweep`): with
``Q_d[i] = sum_j P_d[i, j]``, its part of ``keep`` at ``T - d`` is ``Q_d[i] (stop[T] - S0)``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache

import numpy as np
import scipy.sparse as sp

from ..table import Table, table_for

__all__ = ["Kernel", "Sweep", "kernel_for", "sweep"]


@dataclass(frozen=True, eq=False)
class Layer:
    """Rows ``a:b`` (sweep order) and the rolls from them, each matrix as row prefixes by level."""

    a: int
    b: int
    reach: np.ndarray  # reach[T]: rows of the layer reachable at level T (for T < len(reach); all above)
    zero: tuple[sp.csr_matrix, ...] | None  # no-brain rolls, columns 0:a (earlier layers and blocks)
    up: tuple[tuple[sp.csr_matrix, ...] | None, ...]  # rolls showing d = 1..max_delta brains, by d
    up_sum: np.ndarray  # (max_delta, rows): each row's probability of showing d brains (row sums of `up`)
    down: tuple[tuple[int, tuple[sp.csr_matrix, ...]], ...]  # rolls taking brains away: (d < 0, matrix)

    def rows(self, level: int) -> int:
        return int(self.reach[level]) if level < len(self.reach) else self.b - self.a

    @staticmethod
    def prefix(mats: tuple[sp.csr_matrix, ...], level: int) -> sp.csr_matrix:
        return mats[min(level, len(mats) - 1)]


@dataclass(frozen=True, eq=False)
class Block:
    lo: int
    hi: int
    min_bust: float  # smallest bust probability of a state of the block (used to bound caps)
    layers: tuple[Layer, ...]


@dataclass(frozen=True, eq=False)
class Kernel:
    table: Table
    order: np.ndarray  # sweep position -> table index
    where: np.ndarray  # table index -> sweep position
    least: np.ndarray  # least turn total of each state, sweep order (see _least_totals)
    blocks: tuple[Block, ...]
    stay: np.ndarray  # 1 / (1 - self-loop), sweep order, shape (n, 1, 1)
    loop: np.ndarray  # self-loop probability, sweep order, shape (n, 1, 1)

    @property
    def n(self) -> int:
        return len(self.order)

    @property
    def start(self) -> int:
        return int(self.where[self.table.start])

    @property
    def max_delta(self) -> int:
        return max(self.table.max_delta, 0)


def _prefixes(mat: sp.csr_matrix, reach: np.ndarray) -> tuple[sp.csr_matrix, ...]:
    """Row prefixes of `mat` sharing its arrays: prefix ``t`` has ``reach[t]`` rows; the last is all."""
    out = []
    for rows in [*reach.tolist(), mat.shape[0]]:
        out.append(sp.csr_matrix((mat.data, mat.indices, mat.indptr[: rows + 1]), shape=(rows, mat.shape[1])))
    return tuple(out)


def _least_totals(table: Table) -> np.ndarray:
    """The least turn total at which each dice state can occur (shortest paths from the empty turn,
    a turn total never below 0). A position ``(i, T)`` with ``T`` below it is unreachable."""
    src, dst, delta = table.edge_from, table.edge_to, table.edge_delta  # the rolls as arrays (no Fractions)
    least = np.full(len(table), np.iinfo(np.int64).max // 2, dtype=np.int64)
    least[table.start] = 0
    while True:
        new = least.copy()
        np.minimum.at(new, dst, np.maximum(least[src] + delta, 0))
        if (new == least).all():
            return least
        least = new


@cache
def kernel_for(mode: str, recycle: str) -> Kernel:
    """Renumber `table_for(mode, recycle)` in sweep order and slice its matrices per layer.

    Checks the order the sweep relies on: a roll never leads to a later block, a roll that shows no
    brain leads to an earlier layer, and a roll that takes brains away leaves its block.
    """
    table = table_for(mode, recycle)
    least_of = _least_totals(table)
    layers_in_order = [layer[np.argsort(least_of[layer], kind="stable")] for block in table.blocks for layer in block]
    order = np.concatenate(layers_in_order)
    n = len(order)
    if sorted(order.tolist()) != list(range(n)):
        raise ValueError("the table's blocks do not partition its states")
    where = np.empty_like(order)
    where[order] = np.arange(n)
    least = least_of[order]
    mats = {d: m[order][:, order].tocsr() for d, m in table.matrices.items() if m.nnz}
    deltas = max(table.max_delta, 0)
    bust = table.bust_f[order]
    blocks, lo = [], 0
    for block in table.blocks:
        hi = lo + sum(len(layer) for layer in block)
        for d, m in mats.items():
            rows = m[lo:hi]
            if rows[:, hi:].nnz or (d < 0 and rows[:, lo:hi].nnz):
                raise ValueError(f"a roll showing {d} brains breaks the sweep order")
        layers, a = [], lo
        for layer in block:
            b = a + len(layer)
            if 0 in mats and mats[0][a:b, a:].nnz:
                raise ValueError("a roll showing no brain does not lead to an earlier layer")
            reach = np.searchsorted(least[a:b], np.arange(least[a:b].max()), side="right")
            zero = None
            if 0 in mats and mats[0][a:b].nnz:
                zero = _prefixes(mats[0][a:b, :a].tocsr(), reach)
            rows = [mats[d][a:b].tocsr() if d in mats else sp.csr_matrix((b - a, n)) for d in range(1, deltas + 1)]
            up = tuple(_prefixes(m, reach) if m.nnz else None for m in rows)
            up_sum = np.array([np.asarray(m.sum(axis=1)).ravel() for m in rows]).reshape(deltas, b - a)
            down = tuple((d, _prefixes(mats[d][a:b], reach)) for d in sorted(mats) if d < 0)
            layers.append(Layer(a, b, reach, zero, up, up_sum, down))
            a = b
        blocks.append(Block(lo, hi, float(bust[lo:hi].min()), tuple(layers)))
        lo = hi
    loop = table.self_loop_f[order]
    return Kernel(table, order, where, least, tuple(blocks), (1 / (1 - loop))[:, None, None], loop[:, None, None])


@dataclass(frozen=True, eq=False)
class Sweep:
    """What a sweep returns. ``start[T, col]`` is the value of the empty turn (forced first roll) at
    level ``T`` and ``dstart`` its slope. With ``full`` (``"decisions"``: only ``rolls``), in sweep
    order and for levels ``0..top``: ``value[T, i, col]``, ``roll[T, i, col]`` and the decisions
    ``rolls`` (NaN/False where a position is unreachable, or above the column's top)."""

    start: np.ndarray
    dstart: np.ndarray | None
    value: np.ndarray | None = None
    roll: np.ndarray | None = None
    rolls: np.ndarray | None = None


def sweep(kernel: Kernel, stop: np.ndarray, tops: np.ndarray, dstop: np.ndarray | None = None,
          policy: np.ndarray | None = None, full: bool | str = False) -> Sweep:
    """Backward induction of one turn for ``k`` columns at once.

    `stop` has shape ``(L, k)``: the value of ending the turn with ``T`` brains, ``T < L``; a bust is
    worth ``stop[0]``. `tops` has shape ``(k,)`` or ``(blocks, k)``: above ``tops[b, col]`` every state
    of block ``b`` stops (``L > max(tops) + max_delta`` is required). `dstop`, optional, is the
    derivative of `stop` with respect to one parameter per column, ``(L, k)``, or to several, ``(L, slopes, k)``
    (`Sweep.dstart` is then ``(levels, slopes, k)``). `policy`, optional, of shape
    ``(levels, n, k)`` in sweep order, fixes decisions: 1 roll, 0 stop, -1 optimise.

    Work is spent only where a column may roll: columns are sorted by their highest top, so at level
    ``T`` the columns still rolling in some block are a prefix (``width[T]`` of them), and level ``T``
    is one array of that width; a column that has stopped everywhere is its stop value, filled in when
    a higher level is read. Inside the prefix a column whose top in this block is below ``T`` is
    computed, then reset to its stop values. So each column's numbers depend on that column alone, bit
    for bit, whatever else is in the batch.
    """
    stop = np.asarray(stop, dtype=float)
    k = stop.shape[1]
    tops = np.broadcast_to(np.asarray(tops, dtype=int), (len(kernel.blocks), k))
    top = int(tops.max())
    levels = top + 1 + kernel.max_delta
    if len(stop) < levels:
        raise ValueError("stop values must reach max(tops) + max_delta")
    slopes = dstop is not None
    many = slopes and np.ndim(dstop) == 3  # (L, slopes, k): several parameters per column
    if slopes:
        dstop = np.asarray(dstop, dtype=float)[:levels]
        dstop = dstop if many else dstop[:, None]
    m = 1 + (dstop.shape[1] if slopes else 0)
    base = stop[0].copy()
    ends = np.empty((levels, m, k))  # per level: stop and its slope, in the shifted frame
    ends[:, 0] = stop[:levels] - base
    if slopes:
        ends[:, 1:] = dstop - dstop[0]
    by_top = np.argsort(-tops.max(axis=0), kind="stable")  # sorted position -> column
    tops, ends = tops[:, by_top], ends[:, :, by_top]
    if policy is not None:
        policy = policy[..., by_top]
    width = (tops.max(axis=0) >= np.arange(levels)[:, None]).sum(axis=1)
    n, start = kernel.n, kernel.start
    sizes = n * m * width
    ends_at = np.cumsum(sizes)
    buffer = _scratch(int(ends_at[-1]))  # u[T]: (states, value and slope, columns rolling at T)
    u = [buffer[e - size:e].reshape(n, m, w) for e, size, w in zip(ends_at.tolist(), sizes.tolist(), width.tolist())]
    values = full is True  # value and roll arrays too, not only the decisions
    if full:
        rolls = np.zeros((top + 1, n, k), dtype=bool)
    if values:
        roll = np.full((top + 1, n, k), np.nan)
        value = np.full((top + 1, n, k), np.nan)
    for b, block in enumerate(kernel.blocks):
        lo, hi, block_top = block.lo, block.hi, int(tops[b].max())
        for level in range(block_top + 1, top + 1):  # levels no column of the block computes: all stop
            u[level][lo:hi] = ends[level, :, :width[level]]
        for level in range(block_top, -1, -1):
            c = int(width[level])
            extra = np.flatnonzero(tops[b, :c] < level)  # computed, then reset: their positions stop
            s = ends[level, :, :c]  # (m, c)
            here_level = u[level]
            for layer in block.layers:
                a, rows = layer.a, layer.rows(level)
                if rows == 0:
                    continue
                r = np.zeros((rows, m, c))
                by_row = r.transpose(1, 2, 0)  # a view of r, rows innermost (fast for a few columns)
                for d, mats in enumerate(layer.up, start=1):  # a column stopped at level + d is its stop value
                    w = int(width[level + d])
                    if mats is not None and w:
                        r[:, :, :w] += (Layer.prefix(mats, level) @ u[level + d].reshape(n, m * w)).reshape(rows, m, w)
                    if w < c:
                        by_row[:, w:] += ends[level + d, :, w:c, None] * layer.up_sum[d - 1, :rows]
                flat = r.reshape(rows, m * c)
                if layer.zero is not None:
                    flat += Layer.prefix(layer.zero, level) @ here_level[:a].reshape(a, m * c)
                for d, mats in layer.down:
                    flat += Layer.prefix(mats, level) @ _narrow(u[max(level + d, 0)], c, lo)
                keep = r * kernel.stay[a:a + rows]
                dest = here_level[a:a + rows]
                here = start - a if a <= start < a + rows else None
                if policy is None and not (slopes or full):
                    go = None
                    np.maximum(keep[:, 0], s[0], out=dest[:, 0])
                else:
                    go = keep[:, 0] >= s[0]
                    if policy is not None:
                        fixed = policy[level, a:a + rows, :c]
                        go = np.where(fixed < 0, go, fixed > 0)
                    if here is not None:
                        go[here] = True  # the first roll of a turn is compulsory
                    if policy is None:
                        np.maximum(keep[:, 0], s[0], out=dest[:, 0])  # = where(go, keep, s), faster
                    else:
                        dest[:, 0] = np.where(go, keep[:, 0], s[0])
                    if slopes:
                        dest[:, 1:] = np.where(go[:, None], keep[:, 1:], s[1:])
                if here is not None:
                    dest[here] = keep[here]
                if len(extra):
                    dest[:, :, extra] = s[None, :, extra]
                if full:
                    rolls[level, a:a + rows, :c] = go
                    rolls[level, a:a + rows, extra] = False
                if values:
                    shift = base[by_top[:c]]
                    stay_value = r[:, 0] + kernel.loop[a:a + rows, 0] * s[0]  # rolling once, when stopping is best
                    roll[level, a:a + rows, :c] = np.where(go, keep[:, 0], stay_value) + shift
                    roll[level, a:a + rows, extra] = np.nan
                    value[level, a:a + rows, :c] = dest[:, 0] + shift
    start_u = np.empty((top + 1, m, k))
    for level in range(top + 1):
        w = int(width[level])
        start_u[level, :, :w] = u[level][start]
        start_u[level, :, w:] = ends[level, :, w:]
    column = np.argsort(by_top)  # column -> sorted position
    dstart = None
    if slopes:
        dstart = start_u[:, 1:, column] + dstop[0] if many else start_u[:, 1, column] + dstop[0, 0]
    return Sweep(
        start=start_u[:, 0, column] + base,
        dstart=dstart,
        value=value[:, :, column] if values else None,
        roll=roll[:, :, column] if values else None,
        rolls=rolls[:, :, column] if full else None,
    )


_thread = threading.local()


def _scratch(size: int) -> np.ndarray:
    """`size` floats of working memory, the same memory for every sweep of this thread: a solve runs
    hundreds of sweeps, and fresh memory each time costs a page fault per 4 KiB (a third of the time)."""
    buffer = getattr(_thread, "buffer", None)
    if buffer is None or len(buffer) < size:
        buffer = _thread.buffer = np.empty(size)
    return buffer[:size]


def _narrow(level: np.ndarray, c: int, rows: int) -> np.ndarray:
    """``level[:, :, :c]`` as the contiguous ``(n, m * c)`` operand of a product (only its first `rows`
    rows are read: a roll that takes brains away leads to an earlier block)."""
    n, m, w = level.shape
    if w == c:
        return level.reshape(n, m * c)
    out = np.empty((n, m, c))
    out[:rows] = level[:rows, :, :c]
    return out.reshape(n, m * c)
