"""Single-turn solvers: the value of rolling and of stopping from every position of a mode.

The state of a turn is a dice state ``i`` (table.py) and the turn's score ``T``. For an objective
with stop value ``S(T)``::

    roll(i, T) = sum_{j, d} P_d[i, j] * V(j, T + d)        (a bust is worth 0)
    V(i, T)    = max(S(T), roll(i, T))                    (the empty turn must roll)

The only cycle is the self-loop ``p`` of a hand of three footprint dice; with ``r`` the rest of the
sum, ``roll = r + p * max(S, roll)`` solves to ``r / (1 - p)`` when that is at least ``S`` and to
``r + p * S`` otherwise.

Objectives (objectives.py; each gives ``S`` and where it sets them, the levels to solve and the stops it forces):

* ``expected-brains``: ``S(T) = T``. No cap is needed: with ``q(i)`` the bust probability of the
  next roll and ``m(i)`` the expected brains it shows without busting, if every state stops at
  every score above ``T`` then ``roll(i, T) = (1 - q) T + m``, so every state stops at every score
  above ``T1 = max m/q`` (324 in the base game, for a hand of three green footprints; at exactly
  ``T1`` that state is an exact tie). The induction needs a base: under any policy the brains still
  to come before a bust are at most ``G(i)`` (their expectation when always rolling, finite), so
  ``roll(i, T) <= (1 - q) T + G`` and stopping wins once ``T > G / q``. The solved levels are
  therefore ``0..T1`` and every value above is exactly ``T``.

  Double Feature (rescues lower the score): a rescue always comes with a shotgun, so every
  score-lowering roll leads to an earlier block (more shotguns). The induction then runs block by
  block: if every state of the blocks a block's rolls lead to stops above ``C(b')``, a state ``i`` of
  block ``b`` stops above ``C(b) = max(max_i m/q, max over rolls i -> j of C(block(j)) - delta)``;
  the solved levels are ``0..floor(max C)`` (the base game's blocks give back exactly ``T1``).
  Where a state cannot bust on its next roll (``q = 0``: Santa's helmet and no shotgun yet) rolling
  beats stopping at every score and the induction has no base: there the solver *caps* the turn,
  stopping every state above ``top = floor(max C) + CAP_MARGIN`` (the first rollable levels above
  ``floor(max C)`` play on normally). The effect of the cap on every value at a score up to
  ``floor(max C)`` is below 1e-12 (tests/analysis/test_policy.py solves with a cap twice as far and
  compares); `Solution.capped` says whether a cap is in force.
* ``reach:K``: ``S(T) = [T >= K]``, the probability of ending the turn with at least ``K`` brains.
  At ``T >= K`` stopping is worth 1 and rolling less; below ``K`` rolling is worth more than 0.
* ``rule:N,S``: the fixed rule "stop at >= N brains or >= S shotguns", its expected score.

School Bus (`bus_solve`, over a `BusTable`): a decision is worth ``max(S(T), its actions)`` (the turn
start: its compulsory roll; a fixed rule: ``S`` where it stops, else its best action), a chance node
(an action's roll) ``sum p * V(next)``, a tyre node the best brain to give up. A chance node's
``loops`` (the rider who stays and comes back to a rider with the same piles, the hand of three
footprints rolling three footprints) close in one step: ``x = r + sum_h q_h max(c_h, x)``, where
``c_h`` is what ``h`` does instead of rolling ``x`` again, has the unique solution ``max_m x_m`` over
the pieces ``x_m = (r + sum_{j >= m} q_j c_j) / (1 - sum_{j < m} q_j)`` of the ``c`` sorted (each piece
is below the convex right-hand side, and the piece where the solution lies equals it). The same
bounds apply: every chance node's ``m/q`` and the blocks' induction give ``top``, and each block its
own bound, above which its levels are not computed (every decision there stops). The sweep is a
wavefront (level ``T`` of block ``b`` after level ``T + k`` of each earlier block that a roll losing
``k`` brains reaches: `BusTable.offsets`), so only a few levels are held at once; what the exact
values need is kept: at each level, which options of each decision are within 1e-9 of its best
(`BusSolution.candidates`). With rescues and YIELD a roll can lead to a lower level of its own block
(a cycle, not an order): those values are read from the
previous pass, starting from the stop values (a lower bound), and passes repeat (value iteration: each
pass is monotone, so they climb to the fixed point from below, each change about 1e-3 times the last; the
blocks before the first cyclic one never move, so later passes read them from the first, `Settled`). Once
what is left to climb looks below 1e-12, the last pass reads the values raised by 1e-12: coming out no
higher certifies that the fixed point lies between them and the raised values, so that pass's values are
within that of it (`BusSolution.cycle_error`); else the passes go on (4 or 5 passes in all).
The induction does not cover such a block, so it
gets ``2 |min_delta|`` levels above its bound, where the solution is checked to stop everywhere; that
suffices: ``V(n, T) - T`` never grows with ``T`` (for any policy, the value less the score is
``E[gain] - P(bust) T``), and above the checked levels every roll's results at lower levels of the
block are in them or above, where rolling then loses ``qT - m > 0``: the truncated solution satisfies
the Bellman equation at every level, so it is the solution.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse import _sparsetools  # csr_matvec(s): scipy's product on a CSR matrix's own arrays

from .kept import kept
from .objectives import Objective
from .position import BusState, DiceState
from .table import CHANCE, TYRE, BusTable, Table, bus_table_for, owners, spread, table_for

__all__ = ["Solution", "solve", "sweep", "sweep_levels", "CAP_MARGIN", "stop_bound", "BusSolution", "bus_solve",
           "bus_stop_bound", "close_loops", "CANDIDATE_MARGIN"]

CAP_MARGIN = 60  # brains above floor(max C) that a capped (q = 0) table still solves exactly
CANDIDATE_MARGIN = 1e-9  # options this close to the best are settled in exact arithmetic (exact.MARGIN)
MAX_PASSES = 60  # sweeps of a bus table with rescues and YIELD, each from the last one's values
# With rescues' cycles the values read across passes are certified within `CYCLE_GAP` of their fixed point (relative to
# the top score) by a last pass that reads them raised by it and comes out no higher, but for `ROUNDING`.
CYCLE_GAP = 1e-12
ROUNDING = 1e-14


@dataclass(frozen=True, eq=False)
class Solution:
    """Float values of a solved objective over every (dice state, score) of a mode.

    Held ragged, by level: `order` lists the states by their stop bound (`state_bounds`, highest first; every
    state when the objective has none), and level ``T <= top`` holds the first ``offsets[T + 1] - offsets[T]``
    of them, their roll and value at ``rolls[offsets[T]:offsets[T + 1]]`` and ``values[...]``. A state not
    held at level ``T`` (above its bound), like every state above ``top``, stops: its value is
    ``objective.stop_value(T)`` and its roll ``(1 - q) T + m`` (every result stops; reach: ``1 - q``). A mode's
    levels then cost what its states' bounds add up to, not ``(top + 1) x states``: Direct-to-Video Sequel
    holds 57 million of its 2,905 x 303,836 (most states stop above a few dozen brains; its 12,607 states
    that cannot bust are held up to the cap).

    ``roll[T, i]`` and ``value[T, i]`` read it as the dense arrays it stands for (``T <= top``, and
    ``T <= top + max_delta`` for ``value``); any other indexing, or numpy, materialises them (small modes).
    """

    table: Table
    objective: Objective
    top: int
    order: np.ndarray  # states, highest bound first
    offsets: np.ndarray  # level T is held at [offsets[T], offsets[T + 1])
    rolls: np.ndarray
    values: np.ndarray
    rank: np.ndarray  # per state, its place in `order` (held at level T iff below the level's length)
    capped: bool = False  # some state cannot bust (q = 0): every state is made to stop above `top`

    def slot(self, i: int, score: int) -> int:
        """Where (state `i`, `score`) is held in `rolls` / `values`, or -1 (it stops there)."""
        if not 0 <= score <= self.top:
            return -1
        k = int(self.rank[i])
        lo = int(self.offsets[score])
        return lo + k if k < int(self.offsets[score + 1]) - lo else -1

    def roll_at(self, i: int, score: int) -> float:
        """The float value of rolling at (state `i`, `score`): held, or ``(1 - q) T + m`` where it stops."""
        k = self.slot(i, score)
        return float(self.rolls[k]) if k >= 0 else float(self._roll_above(i, score))

    def value_at(self, i: int, score: int) -> float:
        """The float value of (state `i`, `score`): held, or the stop value where it stops (below 0: 0)."""
        k = self.slot(i, score)
        if k >= 0:
            return float(self.values[k])
        if i == self.table.start and self.table.compulsory and 0 <= score <= self.top:
            return float(self._roll_above(i, score))  # the first roll of a turn is compulsory
        return float(self.objective.stop_value(score)) if score >= 0 else 0.0

    def values_at(self, state: int, score: int) -> tuple[float, float]:
        """(roll, stop) float values at a dice state and score."""
        return self.roll_at(state, score), float(self.objective.stop_value(score))

    def _roll_above(self, i: int | np.ndarray, score: int) -> float | np.ndarray:
        return self.objective.roll_where_all_stop(self.table.bust_f[i], self.table.gain_f[i], score)

    @property
    def roll(self) -> _Levels:
        """``roll[T, i]`` for ``T <= top`` (see the class docstring)."""
        return _Levels(self, "roll")

    @property
    def value(self) -> _Levels:
        """``value[T, i]`` for ``T <= top + max_delta`` (see the class docstring)."""
        return _Levels(self, "value")


class _Levels:
    """A `Solution`'s roll or value as the dense ``(levels, states)`` array it stands for: ``[T, i]`` reads
    one entry from the ragged levels; anything else (slices, comparisons, ``np.asarray``) materialises it."""

    def __init__(self, solution: Solution, kind: str):
        self.solution, self.kind = solution, kind
        extra = solution.table.max_delta if kind == "value" else 0
        self.shape = (solution.top + 1 + extra, len(solution.table))

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: object) -> np.float64 | np.ndarray:
        if (isinstance(key, tuple) and len(key) == 2
                and all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in key)):
            score, i = (int(k) + n if k < 0 else int(k) for k, n in zip(key, self.shape))
            if not (0 <= score < self.shape[0] and 0 <= i < self.shape[1]):
                raise IndexError(f"index {key} is out of bounds for shape {self.shape}")
            s = self.solution
            return np.float64(s.roll_at(i, score) if self.kind == "roll" else s.value_at(i, score))
        return self.dense()[key]

    def dense(self) -> np.ndarray:
        """The dense array (``levels x states`` floats: a whole-turn DTV one would take ~7 GB)."""
        s, t = self.solution, self.solution.table
        held = s.rolls if self.kind == "roll" else s.values
        out = np.empty(self.shape)
        for score in range(self.shape[0]):
            if self.kind == "roll":
                out[score] = s._roll_above(np.arange(len(t)), score)
            else:
                out[score] = float(s.objective.stop_value(score))
            if score <= s.top:
                lo, hi = int(s.offsets[score]), int(s.offsets[score + 1])
                out[score, s.order[:hi - lo]] = held[lo:hi]
        if self.kind == "value" and t.compulsory:
            out[: s.top + 1, t.start] = [s.roll_at(t.start, score) for score in range(s.top + 1)]
        return out

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        out = self.dense()
        return out if dtype is None else out.astype(dtype)

    def __gt__(self, other: object) -> np.ndarray:
        return self.dense() > other

    def __ge__(self, other: object) -> np.ndarray:
        return self.dense() >= other

    def __lt__(self, other: object) -> np.ndarray:
        return self.dense() < other

    def __le__(self, other: object) -> np.ndarray:
        return self.dense() <= other


def stop_bound(table: Table) -> tuple[Fraction, bool]:
    """``max C`` of the block induction (see the module docstring) and whether some state has q = 0.

    States with q = 0 are left out of the maximum (they never stop by this argument)."""
    block_of = np.empty(len(table), dtype=np.int64)
    for b, block in enumerate(table.blocks):
        for layer in block:
            block_of[layer] = b
    src, dst, delta = table.edge_from, table.edge_to, table.edge_delta
    # m / q = (sum_d d * ways) / bust ways: the denominator cancels; floats find the few candidates for the
    # maximum, Fractions settle it
    gain = np.bincount(src, weights=delta * table.edge_ways, minlength=len(table)).astype(np.int64)
    q = table.bust_ways
    ratio = np.divide(gain, q, out=np.zeros(len(table)), where=q > 0)
    unbounded = bool((q == 0).any())
    across = block_of[src] != block_of[dst]
    bounds: list[Fraction] = []
    for b, block in enumerate(table.blocks):
        members = np.concatenate(block)
        members = members[q[members] > 0]
        c = Fraction(0)
        best = ratio[members].max(initial=0.0)
        if best > 0:
            for i in members[ratio[members] >= best * (1 - 1e-9)].tolist():
                c = max(c, Fraction(int(gain[i]), int(q[i])))
        out = across & (block_of[src] == b)
        pairs = np.unique(block_of[dst[out]] * (1 << 20) + (delta[out] + (1 << 19)))  # (block, delta) reached
        for bj, d in zip((pairs >> 20).tolist(), ((pairs & ((1 << 20) - 1)) - (1 << 19)).tolist()):
            c = max(c, bounds[bj] - d)
        bounds.append(c)
    return max(bounds), unbounded


def _top(table: Table, objective: Objective, margin: int = CAP_MARGIN) -> tuple[int, bool]:
    if objective.top is not None:
        return objective.top, False
    bound, unbounded = stop_bound(table)
    if unbounded:
        return int(bound) + margin, True
    return int(bound), False  # floor(T1): every state strictly stops above it


def state_bounds(table: Table) -> np.ndarray:
    """Per state, a level above which it stops (expected brains): the block induction of `stop_bound` state
    by state. If every roll ``i -> j`` showing ``d`` lands where ``j`` stops (``T + d > C(j)``), rolling is
    worth ``(1 - q) T + m`` and ``i`` stops at every ``T > m / q``; so ``C(i) = max(m / q, C(j) - d)``, the
    least solution (found by relaxing every roll at once until nothing moves: a cycle of rolls shows
    brains, so none feeds itself). ``inf`` where the induction has no base (``q = 0``) or reaches one."""
    n = len(table)
    src, dst, delta = table.edge_from, table.edge_to, table.edge_delta
    gain = np.bincount(src, weights=delta * table.edge_ways, minlength=n)
    q = table.bust_ways
    own = np.full(n, np.inf)
    np.divide(gain, q, out=own, where=q > 0)
    bound = own.copy()
    rows = np.flatnonzero(np.diff(table.edge_ptr))
    for _ in range(n + 1):
        best = bound.copy()
        if len(rows):
            best[rows] = np.maximum(bound[rows], np.maximum.reduceat(bound[dst] - delta, table.edge_ptr[rows]))
        if np.array_equal(best, bound):
            return bound
        bound = best
    raise ValueError("rolls that show no brains form a cycle")


def sweep(table: Table, stop: np.ndarray, top: int, forced: np.ndarray | None = None,
          bounds: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The backward induction every solver shares, over all states at once, as dense arrays.

    `stop[T]` is the value of stopping at score ``T`` for ``T`` in ``0..top + max_delta``, either a
    vector over levels or a ``(levels, k)`` array that solves ``k`` objectives at once. Above `top` every
    state stops. `forced[T, i]` (optional) makes the state stop whatever the values (fixed rules). Returns
    ``roll`` of shape ``(top + 1, n[, k])`` and ``value`` of shape ``(len(stop), n[, k])``; `bounds` as in
    `sweep_levels` (a state above its bound: roll ``(1 - q) T + m``, value ``T``).
    """
    n = len(table)
    stop = np.asarray(stop, dtype=float)
    order, rank, offsets, rolls, values = sweep_levels(table, stop, top, forced, bounds)
    roll = np.empty((top + 1, n, *stop.shape[1:]))
    value = np.empty((len(stop), n, *stop.shape[1:]))
    value[:] = stop[:, None]
    slope, gain = 1 - table.bust_f, table.gain_f
    for score in range(top + 1):
        lo, hi = int(offsets[score]), int(offsets[score + 1])
        if hi - lo < n:  # above their bound (expected brains): every result stops, and so do they
            roll[score] = slope * score + gain
        roll[score, order[:hi - lo]] = rolls[lo:hi]
        value[score, order[:hi - lo]] = values[lo:hi]
    if table.compulsory:
        value[: top + 1, table.start] = roll[:, table.start]
    return roll, value


def sweep_levels(table: Table, stop: np.ndarray, top: int, forced: np.ndarray | None = None,
                 bounds: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                            np.ndarray]:
    """`sweep`, its results held ragged by level (see `Solution`): ``(order, rank, offsets, rolls, values)``.

    `bounds` (only with ``stop[T] = T``, expected brains; see `state_bounds`): a state stops at every level
    above its bound, where its roll is ``(1 - q - p) T + m + p T`` (every result stops); its rows are
    neither multiplied nor held. A layer's rows are kept sorted by bound, so the rows still to compute are a
    prefix; so are the states held at a level in `order` (every state by bound, highest first).

    Only ``max_delta - min_delta + 1`` dense levels are kept while a block is swept (a ring, each level
    twice, so the levels ``T + min_delta .. T + max_delta`` are always one contiguous slice). The ring holds
    ``W(j, T) = V(j, T) - S(T)`` (``S(T) = 0`` below level 0), which is 0 wherever a state stops, so a level
    entering the ring only sets the states held there (the blocks already swept) and clears those its slot held
    before, and a roll is ``sum_d P_d W(., T + d) + sum_d (P_d 1) S(T + d)``: the per-delta row sums (``sums``)
    against the stop values.
    """
    n = len(table)
    stop = np.asarray(stop, dtype=float)
    cols = stop.shape[1:]
    unit = tuple(1 for _ in cols)
    # The sweep works on the states renumbered in sweep order (each layer a contiguous range; with bounds,
    # sorted by bound within it), so that every layer reads and writes slices.
    spans, seq = [], []
    for block in table.blocks:
        spans.append([])
        for layer in block:
            if bounds is not None:
                layer = layer[np.argsort(-bounds[layer], kind="stable")]
            spans[-1].append((len(seq), len(seq) + len(layer)))
            seq.extend(layer.tolist())
    perm = np.array(seq, dtype=np.int64)
    where = np.empty(n, dtype=np.int64)
    where[perm] = np.arange(n)
    levels_of = np.arange(top + 1) - 1e-6  # a state is computed (and held) at T iff its bound >= T - 1e-6
    if bounds is None:
        order = np.arange(n)
        counts = np.full(top + 1, n)
    else:
        order = np.argsort(-bounds, kind="stable")
        counts = np.searchsorted(-bounds[order], -levels_of, side="right")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    held = rank[perm]  # per renumbered row, its place in a level
    held_where = where[order]  # per place in a level, the renumbered row
    rolls = np.zeros((int(offsets[-1]), *cols))
    values = np.repeat(stop[: top + 1], counts, axis=0)
    # levels below 0 (a rescue from a low score) are worth 0; above top every state stops
    width, low = table.max_delta - table.min_delta + 1, table.min_delta
    src = table.edge_from
    # [P_dmin | ... | P_dmax] over the renumbered states: one product with the levels T + dmin .. T + dmax
    # laid end to end (a contiguous slice of the ring) is sum_d P_d W(., T + d)
    p_edge = table.edge_ways / table.denominator[src]
    stack = sp.csr_matrix((p_edge, (where[src], (table.edge_delta - low) * n + where[table.edge_to])),
                          shape=(n, width * n))
    sums = np.bincount(where[src] * width + table.edge_delta - low, weights=p_edge, minlength=n * width)
    sums = sums.reshape(n, width)
    padded = np.concatenate([np.zeros((-low, *cols)), stop])  # S(level) at level - low: 0 below level 0
    ring = np.zeros((2 * width, n, *cols))
    nothing = np.zeros(0, dtype=np.int64)
    filled = [nothing] * width  # per slot, the rows it holds that may not be 0

    def enter(level: int) -> None:
        k = level % width
        ring[k, filled[k]] = 0.0
        ring[k + width, filled[k]] = 0.0
        filled[k] = nothing
        if 0 <= level <= top:
            lo, hi = int(offsets[level]), int(offsets[level + 1])
            filled[k] = rows = held_where[:hi - lo]
            ring[k, rows] = ring[k + width, rows] = values[lo:hi] - stop[level]

    loop = table.self_loop_f[perm].reshape(-1, *unit)
    for block in spans:
        stacks = [stack[lo:hi] for lo, hi in block]
        counts_of = [np.full(top + 1, hi - lo) if bounds is None else
                     np.searchsorted(-bounds[perm[lo:hi]], -levels_of, side="right") for lo, hi in block]
        for level in range(top + low, top + low + width):
            enter(level)
        for score in range(top, -1, -1):
            if score < top:
                enter(score + low)
            s = stop[score]
            start = (score + low) % width
            window = ring[start:start + width].reshape(width * n, *cols)
            here, base = score % width, int(offsets[score])
            for (lo, hi), rows, count in zip(block, stacks, counts_of):
                c = int(count[score])
                if not c:
                    continue
                hi = lo + c
                rest = _head_times(rows, c, window) + sums[lo:hi] @ padded[score:score + width]
                p = loop[lo:hi]
                keep = rest / (1 - p)
                if forced is None:
                    r = np.where(keep >= s, keep, rest + p * s)
                    v = np.maximum(s, r)
                else:
                    f = forced[score, perm[lo:hi]].reshape(-1, *unit)
                    r = np.where(f, rest + p * s, keep)
                    v = np.where(f, s, keep)
                at = base + held[lo:hi]
                rolls[at] = r
                values[at] = v
                ring[here, lo:hi] = ring[here + width, lo:hi] = v - s
    if table.compulsory:
        first = int(rank[table.start])
        for score in range(top + 1):
            if first < counts[score]:
                values[offsets[score] + first] = rolls[offsets[score] + first]
    return order, rank, offsets, rolls, values


def _head_times(m: sp.csr_matrix, k: int, x: np.ndarray) -> np.ndarray:
    """``m[:k] @ x`` by scipy's own kernel on `m`'s arrays: a matrix of their prefixes would copy them (scipy
    copies a view of less than half an array), which cost the sequel's solve more than a tenth of its time."""
    out, x = np.zeros((k, *x.shape[1:])), np.ascontiguousarray(x)  # (the kernel reads and writes flat arrays)
    if x.ndim == 1:
        _sparsetools.csr_matvec(k, m.shape[1], m.indptr, m.indices, m.data, x, out)
    else:
        _sparsetools.csr_matvecs(k, m.shape[1], x.shape[1], m.indptr, m.indices, m.data, x.ravel(), out.ravel())
    return out


def solve(mode: str, recycle: str, objective: Objective, root: DiceState | None = None,
          margin: int = CAP_MARGIN) -> Solution:
    """Solve one objective over every state of a mode (see `sweep`), or every state `root` reaches (kept as
    `kept` keeps turns, however the arguments are passed)."""
    return (_solve_whole if root is None else _solve_rooted)(mode, recycle, objective, root, margin)


def _solve(mode: str, recycle: str, objective: Objective, root: DiceState | None, margin: int) -> Solution:
    table = table_for(mode, recycle, root)
    top, capped = _top(table, objective, margin)
    stop = np.array([float(objective.stop_value(s)) for s in range(top + 1 + table.max_delta)])
    forced = objective.forced(np.arange(top + 1)[:, None], table.shotguns[None, :]) if objective.forces else None
    bounds = state_bounds(table) if objective.top is None else None  # (the table bounds expected brains' levels)
    order, rank, offsets, rolls, values = sweep_levels(table, stop, top, forced, bounds)
    return Solution(table, objective, top, order, offsets, rolls, values, rank, capped)


_solve_whole, _solve_rooted = kept("whole")(_solve), kept("rooted")(_solve)


# -- School Bus ----------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class BusSolution:
    """A solved objective over a `BusTable`: per level ``T <= top``, the decision nodes whose best option
    is not certainly ``stop`` and the bitmask of their options within `CANDIDATE_MARGIN` of the best (bit
    0: stop, bit ``k``: the ``k``-th of ``table.actions[i]``); every other decision stops. Above ``top``
    every decision stops."""

    table: BusTable
    objective: Objective
    top: int
    candidate_nodes: tuple[np.ndarray, ...]  # per level: sorted decision nodes (int32)
    candidate_masks: tuple[np.ndarray, ...]  # per level: their masks
    candidate_values: tuple[np.ndarray, ...]  # per level: their float values (every other decision: its stop value)
    watched_values: np.ndarray  # per level 0..top, the float value of each of `watched` (-inf: not solved there)
    capped: bool = False
    passes: int = 1
    watched: tuple[int, ...] = (0,)  # nodes whose values the sweep keeps at every level: the root first
    tops: tuple[int, ...] | None = None  # per block, the most levels solved (expected brains; None: up to `top`)
    cycle_error: float = 0.0  # with rescues' cycles: how far the values read across passes may be from the fixed point

    @property
    def root_values(self) -> np.ndarray:
        """The float value of node 0 (the root) per level 0..top."""
        return self.watched_values[:, 0]

    def watched_value(self, i: int, score: int) -> float:
        """The float value of watched node `i` at `score`: -inf for a roll above its block's bound (not solved:
        worth less than stopping), the stop value for a decision above `top`."""
        if score > self.top:
            return -np.inf if self.table.kind[i] == CHANCE else float(self.objective.stop_value(score))
        return float(self.watched_values[score, self.watched.index(i)])

    def candidates(self, i: int, score: int) -> int:
        """The bitmask of the options of decision node `i` at `score` worth within 1e-9 of its best."""
        if score > self.top or score < 0:
            return 1
        nodes = self.candidate_nodes[score]
        k = int(np.searchsorted(nodes, i))
        return int(self.candidate_masks[score][k]) if k < len(nodes) and nodes[k] == i else 1


def row_max(a: np.ndarray) -> np.ndarray:
    """The largest item along the last axis, which is short (two actions, a few choices): column by column, which numpy
    does several times faster than a reduction along rows of a few items."""
    out = a[..., 0].copy()
    for k in range(1, a.shape[-1]):
        np.maximum(out, a[..., k], out=out)
    return out


def close_loops(r: np.ndarray, q: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Per row, the solution of ``x = r + sum_k q_k max(c_k, x)`` (``c`` may be -inf: ``x`` always).

    The largest of the affine pieces' fixed points, the ``c`` sorted (module docstring)."""
    out = np.empty(len(r))
    _close_loops(np.ascontiguousarray(r, dtype=float), np.ascontiguousarray(q, dtype=float),
                 np.ascontiguousarray(c, dtype=float), out)
    return out


@numba.njit(cache=True, nogil=True)
def _close_loops(r, q, c, out):  # pragma: no cover (compiled)
    """`close_loops` row by row: a row's few loops sorted by ``c`` (stably: a -inf ``c`` as -1e300, one with
    ``q = 0`` as 0, which then adds nothing), ``below`` summed from the first loop, ``above`` from the last."""
    rows, k = q.shape
    cs, qs, below = np.empty(k), np.empty(k), np.zeros(k + 1)
    for i in range(rows):
        for j in range(k):
            v = -1e300 if c[i, j] == -np.inf else (c[i, j] if q[i, j] > 0 else 0.0)
            m = j
            while m > 0 and cs[m - 1] > v:
                cs[m], qs[m] = cs[m - 1], qs[m - 1]
                m -= 1
            cs[m], qs[m] = v, q[i, j]
        for j in range(k):
            below[j + 1] = below[j] + qs[j]
        best, above = r[i] / (1 - below[k]), 0.0
        for m in range(k - 1, -1, -1):
            above += qs[m] * cs[m]
            best = max(best, (r[i] + above) / (1 - below[m]))
        out[i] = best


def bus_stop_bound(table: BusTable) -> tuple[float, bool]:
    """`stop_bound` over a bus table's blocks: ``max m/q`` over its chance nodes and the bounds of the
    blocks its nodes lead to (less the brains on the way); whether some chance node cannot bust.

    In floats: the solvers take ``floor(bound + 1e-6)``, so a bound a rounding error below an integer
    only adds a level where every decision stops anyway."""
    bounds = bus_block_bounds(table)
    finite = bounds[np.isfinite(bounds)]
    return float(finite.max(initial=0.0)), bool(np.isinf(bounds).any())


def bus_block_bounds(table: BusTable) -> np.ndarray:
    """Per block, a score above which every decision of the block stops (`bus_stop_bound`): inf for a
    block with a roll that cannot bust (or that leads to one). A block with rolls to its own lower
    levels (``table.cyclic``) escapes the induction: `bus_solve` checks its result instead."""
    block_of, small = table.block_of, table.block_of.astype(np.int16)
    src, dst, delta = [], [], []
    for ptr, to, shown in ((table.edge_ptr, table.edge_to, table.edge_delta), (table.act_ptr, table.act_to, None),
                           (table.opt_ptr, table.opt_to, None)):
        b_from, b_to = np.repeat(small, np.diff(ptr)), small[to]
        at = np.flatnonzero((b_to >= 0) & (b_to != b_from))  # (links across blocks: a few)
        src.append(owners(ptr, at))
        dst.append(to[at].astype(np.int64))
        delta.append(shown[at].astype(np.int64) if shown is not None else np.zeros(len(at), dtype=np.int64))
    src, dst, delta = np.concatenate(src), np.concatenate(dst), np.concatenate(delta)
    chance = table.kind == CHANCE
    safe = np.where(table.bust_f > 0, table.bust_f, 1)
    ratio = np.where(chance, np.where(table.bust_f > 0, table.gain_f / safe, np.inf), 0.0)
    bounds = np.zeros(len(table.blocks))
    for b in range(len(table.blocks)):
        here = block_of == b
        out = here[src]
        c = max(0.0, float(ratio[here].max(initial=0.0)))
        if out.any():
            c = max(c, float((bounds[block_of[dst[out]]] - delta[out]).max()))
        bounds[b] = c
    return bounds


def bus_sweep(table: BusTable, objective: Objective, top: int, stop: np.ndarray, back: np.ndarray,
              tops: np.ndarray | None = None, settled: Settled | None = None, watched: tuple[int, ...] = (0,),
              ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], np.ndarray, np.ndarray, Settled | None]:
    """The backward induction over a bus table (module docstring), as a wavefront over (block, level).

    A roll to a lower level of its own block (``table.back_nodes``, rescues with YIELD) reads that
    level's value from `back` (per level, per back node: the previous pass, or a lower bound); the
    values the pass computes there are returned for the next. Above ``tops[b]`` (block ``b``'s bound)
    every decision of block ``b`` stops and its rolls are worth less: they are not computed (a roll is
    then worth -inf to the decisions that read it). Returns, per level, the decision nodes with
    candidates other than stop alone, their masks and their values, the values of the `watched` nodes per
    level (the root first), `back`, and the blocks
    before the first cyclic one as `Settled` (no pass changes them: a pass given them reads their values there
    instead of computing them again)."""
    n = len(table)
    blocks = len(table.blocks)
    offset = table.offsets.tolist()
    behind = max(offset, default=0)  # (the last block's offset)
    levels: dict[int, np.ndarray] = {}
    targets = table.back_nodes
    after = back.copy()
    first_cyclic = table.cyclic.index(True) if any(table.cyclic) else blocks
    skip = settled.blocks if settled is not None else 0
    read = _read_later(table, first_cyclic) if settled is None and first_cyclic < blocks \
        else np.zeros(0, dtype=np.int64)

    def solved(nodes: np.ndarray) -> np.ndarray:  # the highest level each node's block is solved at
        return np.minimum(top, tops[table.block_of[nodes]]).astype(np.int64) if tops is not None \
            else np.full(len(nodes), top)

    # the first pass: the rolls `Settled` keeps (it restores the rest), those solved at the most levels first
    rolls_read = read[table.kind[read] == CHANCE]
    rolls_read = rolls_read[np.argsort(-solved(rolls_read), kind="stable")]
    rolls_solved = solved(rolls_read)
    kept: dict[int, np.ndarray] = {}

    def done(t: int, v: np.ndarray) -> None:
        after[t] = v[targets]
        if settled is None and t <= top:
            kept[t] = v[rolls_read[:_solved_at(rolls_solved, t)]]

    def level(t: int) -> np.ndarray:
        if t not in levels:
            v = np.full(n + 1, stop[t])
            v[n] = -np.inf  # the sentinel padding every gather
            v[targets] = back[t]
            if settled is not None:
                settled.restore(t, v)
            levels[t] = v
        return levels[t]

    nodes_at: list[list[np.ndarray]] = [[] for _ in range(top + 1)]
    masks_at: list[list[np.ndarray]] = [[] for _ in range(top + 1)]
    values_at: list[list[np.ndarray]] = [[] for _ in range(top + 1)]
    watch = np.array(watched, dtype=np.int64)
    seen = np.zeros((top + 1, len(watch)))
    watched_in = [np.flatnonzero(table.block_of[watch] == b) for b in range(blocks)]
    arrays = table.layer_arrays
    rolls = [np.flatnonzero((table.block_of == b) & (table.kind == CHANCE)) for b in range(blocks)]
    for key in range(top, -behind - 1, -1):
        for b in range(skip, blocks):
            t = key + offset[b]
            if not 0 <= t <= top:
                continue
            here = level(t)
            if tops is not None and t > tops[b]:
                here[rolls[b]] = -np.inf
                seen[t, watched_in[b]] = here[watch[watched_in[b]]]
                continue
            s = stop[t]
            for entry in arrays[b]:
                chance = entry["chance"]
                if len(chance):
                    rest = np.zeros(len(chance))
                    for d, m in entry["mats"]:
                        if 0 <= t + d < len(stop):
                            rest += m @ level(t + d)
                    for looped, succ, q, other in entry["loops"]:  # (grouped by how many loops)
                        c = row_max(here[other])
                        stops = table.can_stop[np.minimum(succ, n - 1)] & (succ < n)
                        r = rest[looped]
                        if objective.forces:  # a forced stop is worth S, outside the loop
                            forced = objective.forced(t, table.shotguns[np.minimum(succ, n - 1)]) & stops
                            r = r + (q * forced).sum(axis=1) * s
                            q = np.where(forced, 0.0, q)
                        if not objective.chooses:  # (a player who does not choose stops only where forced)
                            stops = np.zeros_like(stops)
                        c = np.where(stops, np.maximum(c, s), c)
                        rest[looped] = close_loops(r, q, c)
                    here[chance] = rest
                decision = entry["decision"]
                if len(decision):
                    acts = here[entry["actions"]]
                    best = row_max(acts)
                    can = table.can_stop[decision]
                    value = np.where(can, np.maximum(best, s), best) if objective.chooses else best
                    take = np.zeros(len(decision), dtype=int)
                    if objective.forces:
                        forced = objective.forced(t, table.shotguns[decision]) & can
                        value, take = np.where(forced, s, value), forced.astype(int)
                    tol = CANDIDATE_MARGIN * max(1.0, abs(s))
                    free = take == 0
                    mask = np.where(free & can & (s >= value - tol), 1, take) if objective.chooses else take
                    for k in range(acts.shape[1]):
                        mask |= np.where(free & (acts[:, k] >= value - tol), 2 << k, 0)
                    here[decision] = value
                    keep = mask != 1
                    if keep.any():
                        nodes_at[t].append(decision[keep].astype(np.int32))
                        masks_at[t].append(mask[keep].astype(np.int8))
                        values_at[t].append(value[keep])
                tyre = entry["tyre"]
                if len(tyre):
                    here[tyre] = row_max(here[entry["options"]])
            seen[t, watched_in[b]] = here[watch[watched_in[b]]]
        for t in [t for t in levels if t > key + table.max_delta + behind]:  # (no later key reads them)
            done(t, levels.pop(t))
    for t, v in levels.items():
        done(t, v)
    found = [(np.concatenate(a), np.concatenate(m), np.concatenate(v)) if a else _NO_CANDIDATES
             for a, m, v in zip(nodes_at, masks_at, values_at)]
    nodes, masks, values = _merged(found, [_NO_CANDIDATES] * len(found))
    if settled is not None:  # the settled blocks' candidates and watched values, from the pass that computed them
        nodes, masks, values = _merged(settled.candidates, zip(nodes, masks, values))
        early = table.block_of[watch] < skip
        seen[:, early] = settled.watched[:, early]
        return nodes, masks, values, seen, after, settled
    if first_cyclic == blocks:
        return nodes, masks, values, seen, after, None
    block_of = table.block_of
    early = [(a[block_of[a] < first_cyclic], m[block_of[a] < first_cyclic], v[block_of[a] < first_cyclic])
             for a, m, v in zip(nodes, masks, values)]
    tyre = read[table.kind[read] == TYRE]
    return nodes, masks, values, seen, after, Settled(first_cyclic, rolls_read, rolls_solved, kept, tuple(early),
                                                       seen, tyre, table.padded_options(tyre), solved(tyre))


def _solved_at(solved: np.ndarray, t: int) -> int:
    """How many of nodes sorted by the highest level solved at (`solved`, descending) are solved at level `t`."""
    return int(np.searchsorted(-solved, -t, side="right"))


@dataclass(frozen=True)
class Settled:
    """The blocks before a bus table's first cyclic one, as one pass of `bus_sweep` left them, up to `top`: per level,
    the values of those of their rolls that later blocks read and that are solved there (``nodes``, sorted by the
    highest level each is solved at, ``solved``, descending: a prefix per level) and their candidates (nodes, masks,
    values); the watched nodes' values; the tyre nodes that later blocks read (``tyre``: their choices, padded with the
    sentinel, and the highest level each is solved at). A later pass restores from these every value it reads there."""

    blocks: int
    nodes: np.ndarray
    solved: np.ndarray
    values: dict[int, np.ndarray]
    candidates: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]
    watched: np.ndarray
    tyre: np.ndarray
    options: np.ndarray
    tyre_solved: np.ndarray

    def restore(self, t: int, v: np.ndarray) -> None:
        """Level `t`'s values, into `v` (holding the stop values, which are all above `top`): a decision's is its
        candidates' value, or its stop value where it has none (it stops: the sweep's value is then exactly that); a
        roll's as kept, or -inf above its block's solved levels (as the sweep leaves it); a tyre node's the best of
        its choices (decisions) where solved."""
        if t >= len(self.candidates):
            return
        nodes, _, values = self.candidates[t]
        v[nodes] = values
        live = _solved_at(self.solved, t)
        v[self.nodes[:live]] = self.values[t]
        v[self.nodes[live:]] = -np.inf
        live = t <= self.tyre_solved
        v[self.tyre[live]] = row_max(v[self.options[live]])


def _read_later(table: BusTable, first: int) -> np.ndarray:
    """The nodes of blocks before `first` that a node of a later block reads: its roll's results, its actions (a
    loop's decision reads its other action), its tyre tracks' choices."""
    later = table.block_of >= first
    rolls, others = np.flatnonzero(later & (table.kind == CHANCE)), np.flatnonzero(later & (table.kind != CHANCE))
    read = np.unique(np.concatenate([table.edge_to[spread(table.edge_ptr, rolls)],
                                     table.act_to[spread(table.act_ptr, others)],
                                     table.opt_to[spread(table.opt_ptr, others)]]).astype(np.int64))
    return read[table.block_of[read] < first]


_NO_CANDIDATES = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int8), np.zeros(0))


def _merged(one, two) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Per level, the candidates (nodes sorted, masks, values) of two disjoint sets of blocks together."""
    nodes, masks, values = [], [], []
    for (a1, m1, v1), (a2, m2, v2) in zip(one, two):
        a = np.concatenate([a1, a2])
        order = np.argsort(a, kind="stable")
        nodes.append(a[order])
        masks.append(np.concatenate([m1, m2])[order])
        values.append(np.concatenate([v1, v2])[order])
    return nodes, masks, values


def bus_solve(mode: str, recycle: str, objective: Objective, root: BusState | None = None,
              margin: int = CAP_MARGIN, watched: tuple[int, ...] = ()) -> BusSolution:
    """Solve one objective over every School Bus node of a mode, or every node `root` reaches (kept as
    `bus_table_for` keeps its tables, per objective). The values of the root and of the `watched` nodes are kept at
    every level (`BusSolution.watched_value`): a float answer reads its actions' values there."""
    solve_ = _bus_solve_whole if root is None else _bus_solve_rooted
    return solve_(mode, recycle, objective, root, margin, (0, *dict.fromkeys(w for w in watched if w)))


def _bus_solve(mode: str, recycle: str, objective: Objective, root: BusState | None, margin: int,
               watched: tuple[int, ...] = (0,)) -> BusSolution:
    table = bus_table_for(mode, recycle, root)
    tops, capped = None, False
    if objective.top is not None:
        top = objective.top
    else:  # each block's bound; a cyclic block gets 2 |min_delta| more levels, checked below
        bounds = np.floor(bus_block_bounds(table) + 1e-6)
        capped = bool(np.isinf(bounds).any())
        tops = bounds + np.where(table.cyclic, 2 * -table.min_delta, 0)
        top = int(tops[np.isfinite(tops)].max(initial=0)) + (margin if capped else 0)
        tops = np.minimum(tops, top)
    stop = np.array([float(objective.stop_value(s)) for s in range(top + 1 + table.max_delta)])
    back = np.repeat(stop[:, None], table.back_nodes.size, axis=1)
    scale = max(1.0, float(np.abs(stop).max()))
    gap = CYCLE_GAP * scale
    passes, changes, settled, final = 0, [], None, False
    while True:
        if passes == MAX_PASSES:
            raise ArithmeticError(f"no convergence in {MAX_PASSES} passes (last changes {changes[-2:]})")
        reads = back + gap if final else back
        nodes = masks = values = seen = None  # (the last pass's candidates go before this one makes its own)
        nodes, masks, values, seen, after, settled = bus_sweep(table, objective, top, stop, reads, tops, settled,
                                                               watched)
        passes += 1
        if not back.size:  # no roll reads a lower level of its own block: one pass is the solution
            cycle_error = 0.0
            break
        if final:
            rise = float(np.maximum(after - reads, 0.0).max(initial=0.0))
            if rise <= ROUNDING * scale:  # certified: the fixed point lies in [back, reads]
                cycle_error = gap + rise
                break
            final = False  # the reads were below the fixed point: on from `back`, a lower bound still
            continue
        changes.append(float(np.abs(after - back).max(initial=0.0)))
        back = after
        final = _close_enough(changes, gap)
    if tops is not None and any(table.cyclic):  # the induction does not cover a cyclic block: check it
        for b in np.flatnonzero(table.cyclic):
            levels = range(int(min(bounds[b], top)) + 1, int(tops[b]) + 1)
            if any((table.can_stop[nodes[t]] & (table.block_of[nodes[t]] == b)).any() for t in levels):
                raise ArithmeticError(f"decisions of block {b} roll above its bound {bounds[b]}: raise the margin")
    return BusSolution(table, objective, top, tuple(nodes), tuple(masks), tuple(values), seen, capped, passes,
                       watched, None if tops is None else tuple(int(t) for t in tops), cycle_error)


def _close_enough(changes: list[float], gap: float) -> bool:
    """Whether the values read across passes are likely within `gap` of their fixed point, so that the next pass
    reads them raised by `gap` and certifies them: the passes climb to it from below (the stop values are a lower
    bound, a pass is monotone), by changes that shrink geometrically (each about ``rho`` times the last), so what
    is left to climb is about ``change rho / (1 - rho)``. (Only a guess of when to try: the certificate is the
    raised pass coming out no higher.)"""
    if len(changes) < 2 or changes[-2] == 0.0:
        return len(changes) > 0 and changes[-1] == 0.0
    rho = changes[-1] / changes[-2]
    return rho < 0.5 and changes[-1] * rho / (1 - rho) <= gap / 2


_bus_solve_whole, _bus_solve_rooted = kept("bus whole")(_bus_solve), kept("bus rooted")(_bus_solve)
