"""The sweep behind every game solver: one turn, many columns, values and slopes.

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

A level of a layer is one compiled step (`_layer`, numba): for each row, the rolls' sums over every column and
slope at once, the decision and the new values, with no array made in between. A row's sum reads the rows its
rolls lead to, each ``slopes x columns`` numbers in a row of memory, so the innermost loop is one vector
multiply-add; the solvers spend nearly all their time there. It takes the rolls two at a time: one pass over the
row's running sum adds both, each number the first roll's term and then the second's, so every sum is the one a
roll at a time makes, bit for bit, with half the running sum's loads and stores (bench/README.md measures it).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from ..kept import kept
from ..table import Table, table_for

__all__ = ["Kernel", "Sweep", "kernel_for", "sweep", "fixed_policy"]


@dataclass(frozen=True, eq=False)
class Layer:
    """Rows ``a:b`` (sweep order) and the rolls from them, in the order the sweep adds them up: one CSR part per
    brains shown, ``d = 1..max_delta`` (to level ``T + d``), then the rolls showing none (to earlier rows of level
    ``T``), then those taking brains away (``d < 0``, to earlier blocks). ``ptr[p, i]:ptr[p, i + 1]`` are row
    ``a + i``'s entries of part ``p`` in `to` (sweep positions) and `p`; a prefix of the rows is a prefix of each
    part."""

    a: int
    b: int
    reach: np.ndarray  # reach[T]: rows of the layer reachable at level T (for T < len(reach); all above)
    deltas: np.ndarray  # (parts,): the brains each part's rolls show
    ptr: np.ndarray  # (parts, rows + 1): where each row's entries of each part are, in `to` and `p`
    to: np.ndarray
    p: np.ndarray
    up_sum: np.ndarray  # (max_delta, rows): each row's probability of showing d brains

    def rows(self, level: int) -> int:
        return int(self.reach[level]) if level < len(self.reach) else self.b - self.a


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


def _parts(mats: list[sp.csr_matrix], deltas: list[int]) -> tuple[np.ndarray, ...]:
    """The rows of `mats` (one matrix a part, the same rows) as one CSR store: `Layer`'s deltas, ptr, to, p."""
    ptr = np.array([m.indptr for m in mats], dtype=np.int64).reshape(len(mats), -1)
    ptr += np.cumsum([0] + [m.nnz for m in mats[:-1]], dtype=np.int64)[:, None]
    to = np.concatenate([m.indices for m in mats]).astype(np.int64)
    p = np.concatenate([m.data for m in mats]).astype(float)
    return np.array(deltas, dtype=np.int64), ptr, to, p


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


@kept("game")
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
            rows = [mats[d][a:b].tocsr() if d in mats else sp.csr_matrix((b - a, n)) for d in range(1, deltas + 1)]
            up_sum = np.array([np.asarray(m.sum(axis=1)).ravel() for m in rows]).reshape(deltas, b - a)
            shown = [*range(1, deltas + 1), *([0] if 0 in mats else []), *sorted(d for d in mats if d < 0)]
            rows += [mats[d][a:b].tocsr() for d in shown[deltas:]]
            layers.append(Layer(a, b, reach, *_parts(rows, shown), up_sum))
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
    width = (tops.max(axis=0) >= np.arange(levels)[:, None]).sum(axis=1)
    n, start = kernel.n, kernel.start
    sizes = n * m * width
    at = np.cumsum(sizes) - sizes
    buffer = _scratch(int(sizes.sum()))  # u[T]: (states, value and slope, columns rolling at T)
    u = [buffer[e:e + size].reshape(n, m, w) for e, size, w in zip(at.tolist(), sizes.tolist(), width.tolist())]
    values = full is True  # value and roll arrays too, not only the decisions
    rolls = np.zeros((top + 1, n, k) if full else (0, 0, 0), dtype=bool)
    if values:
        roll = np.full((top + 1, n, k), np.nan)
        value = np.full((top + 1, n, k), np.nan)
    fixed = np.zeros((0, 0, 0), np.int8) if policy is None else np.moveaxis(np.asarray(policy, dtype=np.int8), -1, 0)
    ends = np.ascontiguousarray(ends)
    stay = kernel.stay.ravel()
    r = np.empty((max(layer.b - layer.a for block in kernel.blocks for layer in block.layers), m, k))
    for b, block in enumerate(kernel.blocks):
        lo, hi, block_top = block.lo, block.hi, int(tops[b].max())
        for level in range(block_top + 1, top + 1):  # levels no column of the block computes: all stop
            u[level][lo:hi] = ends[level, :, :width[level]]
        block_tops = np.ascontiguousarray(tops[b])
        for level in range(block_top, -1, -1):
            c = int(width[level])
            for layer in block.layers:
                a, rows = layer.a, layer.rows(level)
                if rows == 0:
                    continue
                _layer(buffer, at, width, level, c, a, rows, layer.deltas, layer.ptr, layer.to, layer.p, layer.up_sum,
                       ends, stay, block_tops, start - a, fixed, by_top, rolls, r)
                if values:
                    go, s = rolls[level, a:a + rows, :c], ends[level, 0, :c]
                    shift = base[by_top[:c]]
                    stay_value = r[:rows, 0, :c] + kernel.loop[a:a + rows, 0] * s  # rolling once, when stopping is best
                    keep = r[:rows, 0, :c] * kernel.stay[a:a + rows, 0]
                    roll[level, a:a + rows, :c] = np.where(go, keep, stay_value) + shift
                    roll[level, a:a + rows, :c][:, block_tops[:c] < level] = np.nan
                    value[level, a:a + rows, :c] = u[level][a:a + rows, 0] + shift
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


def fixed_policy(kernel: Kernel, rolls: list[np.ndarray | None], levels: int) -> np.ndarray | None:
    """`sweep`'s `policy` for levels ``0..levels - 1``: a column whose player follows a fixed policy rolls where
    ``rolls[c][T, i]`` (sweep order; it stops at levels past its length), one that optimises has None (-1); None if
    every column optimises. It is a view of a ``(columns, levels, n)`` array: a column's decisions in a row of
    memory, as they are written here and read by the sweep."""
    if all(r is None for r in rolls):
        return None
    policy = np.full((len(rolls), levels, kernel.n), -1, dtype=np.int8)
    for c, r in enumerate(rolls):
        if r is not None:
            policy[c] = 0
            policy[c, :len(r)] = r[:levels]
    return np.moveaxis(policy, 0, -1)


@numba.njit(cache=True, nogil=True)
def _layer(u, at, width, level, c, a, rows, deltas, ptr, to, p, up_sum, ends, stay, tops, here, policy, column,
           rolls, r):  # pragma: no cover
    """Level `level` of a layer's first `rows` rows, for the `c` columns rolling there (`sweep`), into `u` (every
    level's ``(n, m, width)`` array, flat, the level's at ``at[level]``); each row's sum of rolls into `r`.

    Each part of the rolls is summed on its own from 0, entry by entry in stored order (two entries a pass: module
    docstring), then added to the row's sum, parts in order, a column at a time: so a column's numbers depend on it
    alone, and on no batch."""
    m = ends.shape[1]
    part = np.empty(m * c)
    go = np.empty(c, dtype=np.bool_)
    fixes, full = policy.shape[0] > 0, rolls.shape[0] > 0
    for i in range(rows):
        row = r[i]
        for j in range(m):
            line = row[j]
            for col in range(c):
                line[col] = 0.0
        for q in range(len(deltas)):
            d = deltas[q]
            source = max(level + d, 0)
            wide = width[source]
            w = min(wide, c)
            first, last = ptr[q, i], ptr[q, i + 1]
            if last > first and w > 0:
                x, base = p[first], at[source] + to[first] * m * wide
                for j in range(m):  # the first entry, as it adds to 0 (but for the sign of a zero)
                    src, dst = u[base + j * wide:base + j * wide + w], part[j * w:(j + 1) * w]
                    for col in range(w):
                        dst[col] = x * src[col]
                if w == wide:  # each source's row is m * w numbers in a row: two entries a pass over `part`
                    n, o = m * w, at[source]
                    for e in range(first + 1, last - 1, 2):
                        x, y = p[e], p[e + 1]
                        src, nxt = u[o + to[e] * n:o + to[e] * n + n], u[o + to[e + 1] * n:o + to[e + 1] * n + n]
                        for t in range(n):
                            part[t] = (part[t] + x * src[t]) + y * nxt[t]
                    if (last - first) % 2 == 0:  # (an odd number of entries after the first: the last alone)
                        x, src = p[last - 1], u[o + to[last - 1] * n:o + to[last - 1] * n + n]
                        for t in range(n):
                            part[t] += x * src[t]
                else:
                    for e in range(first + 1, last):  # (slices: the loops over one compile to vector instructions)
                        x, base = p[e], at[source] + to[e] * m * wide
                        for j in range(m):
                            src, dst = u[base + j * wide:base + j * wide + w], part[j * w:(j + 1) * w]
                            for col in range(w):
                                dst[col] += x * src[col]
                for j in range(m):
                    line, summed = row[j], part[j * w:(j + 1) * w]
                    for col in range(w):
                        line[col] += summed[col]
            if d > 0:  # a column stopped at level + d is its stop value there
                shown = up_sum[d - 1, i]
                for j in range(m):
                    line, end = row[j], ends[level + d, j]
                    for col in range(w, c):
                        line[col] += end[col] * shown
        keep = stay[a + i]  # 1 / (1 - self-loop): rolling on until something else shows
        value, stop = row[0], ends[level, 0]
        for col in range(c):
            go[col] = value[col] * keep >= stop[col]
            if fixes and policy[column[col], level, a + i] >= 0:  # (the policy's columns in the caller's order)
                go[col] = policy[column[col], level, a + i] > 0
            go[col] = (go[col] or i == here) and tops[col] >= level  # the first roll of a turn is compulsory;
            # above its top in this block a column is computed, then reset: it stops
        dest = at[level] + (a + i) * m * c
        for j in range(m):
            out, end, line = u[dest + j * c:dest + (j + 1) * c], ends[level, j], row[j]
            for col in range(c):
                out[col] = line[col] * keep if go[col] else end[col]
        if full:
            rolls[level, a + i, :c] = go


_thread = threading.local()


def _scratch(size: int) -> np.ndarray:
    """`size` floats of working memory, the same memory for every sweep of this thread: a solve runs
    hundreds of sweeps, and fresh memory each time costs a page fault per 4 KiB (a third of the time)."""
    buffer = getattr(_thread, "buffer", None)
    if buffer is None or len(buffer) < size:
        buffer = _thread.buffer = np.empty(size)
    return buffer[:size]
