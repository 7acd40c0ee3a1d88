"""A mode's transition table, built once: every dice state a turn can reach, and every roll from it.

The turn's score does not change how dice move, so the table is over dice states only; a solver
adds the score as a second index. A roll from state ``i`` that shows ``delta`` brains and does not
bust leads to ``(j, T + delta)``: recycling notes the brain pile but does not change the turn's
score ``T = banked + brains in the pile``.

For the solvers the table keeps, per ``delta``, a sparse matrix of float probabilities, and every roll
exactly, as integer ways over a denominator per state (the bust and the self-loop too; `Fraction`
tuples are derived on first use). States are grouped in
*blocks* and *layers*. A solver sweeps block after block; within a block, score levels from the
top down; within a level, layer after layer. That order is valid when every roll either leads to an
earlier block (here: a block is a number of shotguns, and shotguns never go back into the cup), or
stays in the block and shows brains (a higher level), or shows none and leads to an earlier layer
(it filled the hand). The only cycle is a hand of three footprint dice rolling three footprints
again, a self-loop kept apart in ``self_loop``.

Double Feature: a block is the number of *shotguns* in the pile (a double shotgun counts 2), which
still never falls. Rolls can now lower the score (a rescue takes brains back, ``delta < 0``), but a
rescue needs a shotgun on a special die, so every such roll leads to an earlier block; Santa's
helmet or drink set his die aside, which never comes back within the turn, so no-brain rolls stay
acyclic. `min_delta` is then negative and solvers guard their score indexes. Tables can be *rooted*
at a mid-turn dice state (`table_for(..., root=state)`): only the states reachable from it.

School Bus (`bus_table_for`, a `BusTable`): a position now has several actions, so the table is a graph
of *nodes*: a decision node per `BusState` (stop, or one of its legal actions), a chance node per roll
(an ordinary roll, or a bus roll; several decisions share one: every rider with the same piles who
stays on the bus rolls the same dice), a tyre node per tyre-tracks result (the player chooses which
brain to give up) and one node for the turn ended by STOP. Blocks: first every node with the bus out
(by shotguns, as above: once out, the bus never comes back), then the tyre nodes (by shotguns too), then the rest by
shotguns (pile plus tokens). The no-brain cycles are no longer self-loops only: a rider who stays and
rolls footprints (or YIELD) is back to a rider with the same piles, so a chance node keeps apart its
``loops``, the zero-brain results that are decisions which can roll it again; solvers close them in
one step. With rescues, YIELD lets a rescue lower the score *without* adding a shotgun (the rescuer's
die joins the hand), so such a block has rolls to lower levels of itself (``cyclic``); solvers iterate
it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, cached_property, lru_cache
from itertools import chain
from math import gcd
from operator import add as _add
from operator import mul

import numpy as np
import scipy.sparse as sp

from .dice import EFFECTS, MODES, Mode
from .position import BusState, DiceState
from .roll import (
    TyreTracks,
    _bus_roll_groups,
    _draw_plan,
    _rescuable,
    _roll,
    _summed,
    give_up,
    legal_actions,
)

__all__ = ["Table", "table_for", "ROOTED_KEPT", "BusTable", "bus_table_for", "DECISION", "CHANCE", "TYRE", "STOPPED"]

# Tables (and their solutions, exact values) built for one position are kept for the last few positions only:
# one three shotguns from a bust in direct-to-video-sequel (a shotgun set aside) holds ~0.7 GB with its solution
# and exact values (a server process measured 3.1 GB after six such positions while 4 were kept).
ROOTED_KEPT = 2


@dataclass(frozen=True, eq=False)
class Table:
    """Every dice state of a turn and every roll, as integer arrays (exact) and float matrices (solvers).

    Roll ``k`` of state ``i`` (``edge_ptr[i] <= k < edge_ptr[i + 1]``, sorted by delta, then target) shows
    ``edge_delta[k]`` brains and leads to ``edge_to[k]`` with probability ``edge_ways[k] / denominator[i]``;
    ``bust_ways`` and ``loop_ways`` are over the same denominator. `edges`, `bust` and `self_loop` give
    the same as exact `Fraction` tuples, built on first use (exact solvers read them; float solvers do not)."""

    mode: Mode
    recycle: str
    states: tuple[DiceState, ...]
    index: dict[DiceState, int]
    shotguns: np.ndarray  # shotguns set aside, per state
    edge_ptr: np.ndarray  # int64, n + 1
    edge_delta: np.ndarray  # int64 per roll
    edge_to: np.ndarray  # int64 per roll
    edge_ways: np.ndarray  # int64 per roll
    denominator: np.ndarray  # int64 per state: ways of the next roll
    bust_ways: np.ndarray  # int64 per state
    loop_ways: np.ndarray  # int64 per state: ways back to the same state (a hand of three footprints)
    matrices: dict[int, sp.csr_matrix]  # delta -> float transition matrix (self-loops excluded)
    self_loop_f: np.ndarray
    bust_f: np.ndarray
    gain_f: np.ndarray  # E[brains shown; no bust]
    blocks: tuple[tuple[np.ndarray, ...], ...]  # sweep order: blocks, each a tuple of layers of states
    min_delta: int
    max_delta: int
    root: DiceState | None = None  # None: the whole turn from its start; else the states a position reaches

    @property
    def start(self) -> int:
        return 0

    @property
    def compulsory(self) -> bool:
        """The table's first state is the turn start, whose roll is compulsory (False for a rooted table
        whose root is a mid-turn position)."""
        first = self.states[0]
        return not (any(first.hand) or any(first.brains) or any(first.shotguns) or any(first.aside))

    @cached_property
    def edges(self) -> tuple[tuple[tuple[int, int, Fraction], ...], ...]:
        """Per state: (delta, j, exact p) of every roll but the self-loop, sorted by (delta, j)."""
        ptr, den = self.edge_ptr.tolist(), self.denominator.tolist()
        rows = list(zip(self.edge_delta.tolist(), self.edge_to.tolist(), self.edge_ways.tolist()))
        return tuple(tuple((d, j, Fraction(w, den[i])) for d, j, w in rows[ptr[i]:ptr[i + 1]])
                     for i in range(len(self.states)))

    @cached_property
    def bust(self) -> tuple[Fraction, ...]:
        """Exact bust probability of the next roll, per state."""
        return tuple(Fraction(b, d) for b, d in zip(self.bust_ways.tolist(), self.denominator.tolist()))

    @cached_property
    def self_loop(self) -> tuple[Fraction, ...]:
        """Exact probability that a roll leads back to the same state, per state."""
        return tuple(Fraction(w, d) for w, d in zip(self.loop_ways.tolist(), self.denominator.tolist()))

    @cached_property
    def edge_from(self) -> np.ndarray:
        """The state each roll is from (the rows of `edge_ptr` spelt out)."""
        return np.repeat(np.arange(len(self.states)), np.diff(self.edge_ptr))

    @cached_property
    def ways(self) -> sp.csr_matrix:
        """Every roll's ways as one integer matrix (as `BusTable.ways`): row `i`, column ``(delta - min_delta) * n
        + j`` for a roll of `i` that shows ``delta`` brains and leads to `j` (the probability is ways over
        ``denominator[i]``; the self-loop excluded). The exact score distribution's residue flow reads it."""
        n, width = len(self.states), self.max_delta - self.min_delta + 1
        return sp.csr_matrix((self.edge_ways.astype(np.uint64), self.edge_to + (self.edge_delta - self.min_delta) * n,
                              self.edge_ptr), shape=(n, width * n))

    @property
    def layers(self) -> tuple[np.ndarray, ...]:
        """Every layer of every block, in sweep order."""
        return tuple(layer for block in self.blocks for layer in block)

    @cached_property
    def layer_matrices(self) -> tuple[tuple[tuple[tuple[int, sp.csr_matrix], ...], ...], ...]:
        """Per block, per layer: the rows of each delta's matrix, sliced once for every solver."""
        return tuple(
            tuple(tuple((d, m[layer]) for d, m in self.matrices.items() if m[layer].nnz) for layer in block)
            for block in self.blocks
        )

    def __len__(self) -> int:
        return len(self.states)


class _Codes:
    """Dice states as integers, one mixed-radix digit per (field, kind) and a bitmask of effects.

    Codes add: a roll's result is the state's code plus a constant of its draw and faces (the hand and
    the effects are replaced, the piles grow), so a table's search works on arrays of codes."""

    def __init__(self, mode: Mode):
        self.mode = mode
        self.fields = 3 if mode.plain else 6
        radix = [c + 1 for c in mode.counts] * self.fields
        self.weights = np.cumprod([1, *radix[:-1]]).astype(np.int64)
        self._weights = self.weights.tolist()  # (Python ints: `fields_code` runs per roll kernel)
        self._radix = radix
        self.radix = np.array(radix, dtype=np.int64)
        self.effect_names = tuple(sorted(EFFECTS))
        self.effect_weight = int(np.prod(radix, dtype=object))
        if self.effect_weight << len(self.effect_names) >= 2**62:
            raise ValueError(f"mode {mode.name}: dice states do not fit 64-bit codes")

    def fields_code(self, *fields: tuple[int, ...]) -> int:
        """The code of per-kind counts, field after field (missing fields: 0); negative counts allowed."""
        return sum(map(mul, self._weights, chain.from_iterable(fields)))

    def effects_code(self, effects: tuple[str, ...]) -> int:
        return sum(self.effect_weight << self.effect_names.index(e) for e in effects)

    def code(self, s: DiceState) -> int:
        if self.mode.plain:
            return self.fields_code(s.hand, s.brains, s.shotguns)
        return self.fields_code(s.hand, s.brains, s.shotguns, s.double_brains, s.double_shotguns,
                                s.aside) + self.effects_code(s.effects)

    def state(self, code: int) -> DiceState:
        """`states` of one code, without arrays."""
        digits = []
        rest = code
        for r in self._radix:
            rest, digit = divmod(rest, r)
            digits.append(digit)
        k = len(self.mode.counts)
        fields = [tuple(digits[f * k:(f + 1) * k]) for f in range(self.fields)]
        if self.mode.plain:
            return DiceState(*fields)
        return DiceState(*fields, tuple(e for b, e in enumerate(self.effect_names) if rest >> b & 1))

    def states(self, codes: np.ndarray) -> list[DiceState]:
        digits = (codes[:, None] // self.weights[None, :]) % self.radix[None, :]
        k = len(self.mode.counts)
        out = []
        if self.mode.plain:
            for row in digits.tolist():
                out.append(DiceState(tuple(row[:k]), tuple(row[k:2 * k]), tuple(row[2 * k:])))
            return out
        masks = (codes // self.effect_weight).tolist()
        names = [tuple(e for b, e in enumerate(self.effect_names) if m >> b & 1)
                 for m in range(1 << len(self.effect_names))]
        for row, m in zip(digits.tolist(), masks):
            out.append(DiceState(tuple(row[:k]), tuple(row[k:2 * k]), tuple(row[2 * k:3 * k]), tuple(row[3 * k:4 * k]),
                                 tuple(row[4 * k:5 * k]), tuple(row[5 * k:]), names[m]))
        return out

    def kernel_keys(self, codes: np.ndarray) -> np.ndarray:
        """What the next roll from each state depends on besides its code and shotguns, as one integer: the
        hand, the cup, the effects and the brains (and double brains) a rescue may take back; when the cup
        runs out, the whole brain pile and the dice set aside instead (the recycling), and a flag. States
        with the same key roll alike: their results differ by their codes only (`_kernel`)."""
        mode, k = self.mode, len(self.mode.counts)
        digits = (codes[:, None] // self.weights[None, :]) % self.radix[None, :]
        hand, brains, shotguns = digits[:, :k], digits[:, k:2 * k], digits[:, 2 * k:3 * k]
        if mode.plain:
            doubles = aside = np.zeros_like(hand)
            effects = np.zeros(len(codes), dtype=np.int64)
        else:
            doubles, aside = digits[:, 3 * k:4 * k], digits[:, 5 * k:]
            effects = codes // self.effect_weight
        cup = np.array(mode.counts)[None, :] - hand - brains - shotguns - aside
        recycles = cup.sum(axis=1) < mode.dice_per_roll - hand.sum(axis=1)
        mask = np.array(_rescuable(mode) if not mode.plain else (False,) * k)[None, :]
        keep = recycles[:, None] | mask
        packed = np.concatenate([hand, cup, brains * keep, doubles * keep, aside * recycles[:, None]], axis=1)
        radix = np.array([c + 1 for c in mode.counts] * 5, dtype=np.int64)
        weights = np.cumprod([1, *radix[:-1]]).astype(np.int64)
        top = int(np.prod(radix, dtype=object))
        if top << (len(self.effect_names) + 1) >= 2**62:
            raise ValueError(f"mode {mode.name}: roll keys do not fit 64 bits")
        return packed @ weights + (effects * 2 + recycles) * top

    def shotgun_counts(self, codes: np.ndarray) -> np.ndarray:
        k = len(self.mode.counts)
        digits = (codes[:, None] // self.weights[None, :]) % self.radix[None, :]
        return digits[:, 2 * k:3 * k].sum(axis=1) + (0 if self.mode.plain else digits[:, 4 * k:5 * k].sum(axis=1))


@cache
def _faces_arrays(mode: Mode, rolled: tuple[int, ...], effects: tuple[str, ...], brains: tuple[int, ...],
                  double_brains: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """Every result of rolling `rolled` (roll.py's `_roll` or `_summed`, in their order) as arrays: the
    code it adds to the state's (hand and effects excluded), shotguns shown less the rise of the bust
    threshold (the roll busts when that reaches the state's room), brains gained, ways."""
    codes = _codes(mode)
    digits, extra, shown, gain, ways = [], [], [], [], []  # digits: the per-kind counts, field after field
    if mode.plain:
        for b, s, brains_k, shots_k, hand_k, w in _roll(mode, rolled):
            digits.append(hand_k + brains_k + shots_k)
            extra.append(0)
            shown.append(s)
            gain.append(b)
            ways.append(w)
    else:
        for (hand, b, d, s, ds, aside, now, rb, rd, _), w, s_shown, g, bonus in _summed(mode, rolled, effects, brains,
                                                                                          double_brains):
            digits.append(hand + tuple(map(_add, b, rb)) + s + tuple(map(_add, d, rd)) + ds + aside)
            extra.append(codes.effects_code(now))
            shown.append(s_shown - bonus)
            gain.append(g)
            ways.append(w)
    add = np.array(digits, dtype=np.int64) @ codes.weights + np.array(extra, dtype=np.int64)
    return add, np.array(shown, dtype=np.int64), np.array(gain, dtype=np.int64), np.array(ways, dtype=np.int64)


@cache
def _codes(mode: Mode) -> _Codes:
    return _Codes(mode)


def _kernel(mode: Mode, state: DiceState, recycle: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int,
                                                                  int]:
    """Every result of the next roll from `state`, before merging, in `roll.transitions`' order: the code
    added to the state's, shotguns shown less the threshold's rise, brains gained, ways; the denominator,
    and the bust threshold before the roll. Every state with the same key (`_Codes.kernel_keys`) shares them."""
    codes = _codes(mode)
    pile, _, drawn, ways = _draw_plan(mode, state, mode.dice_per_roll - sum(state.hand), recycle)
    shift = codes.code(pile) - codes.code(state) - codes.fields_code(state.hand) - codes.effects_code(pile.effects)
    if mode.plain:
        brains = doubles = ()
    else:
        mask = _rescuable(mode)
        brains = tuple(b if m else 0 for b, m in zip(pile.brains, mask))
        doubles = tuple(d if m else 0 for d, m in zip(pile.double_brains, mask))
    parts = [(_faces_arrays(mode, tuple(map(_add, state.hand, take)), pile.effects, brains, doubles), w)
             for take, w in drawn]
    add = np.concatenate([a[0] for a, _ in parts]) + shift
    shown = np.concatenate([a[1] for a, _ in parts])
    gain = np.concatenate([a[2] for a, _ in parts])
    ways_out = np.concatenate([a[3] * w for a, w in parts])
    return add, shown, gain, ways_out, ways * len(mode.dice[0].faces) ** mode.dice_per_roll, pile.bust_at(mode)


_DELTAS = 64  # room for every delta a roll shows, -32..31 brains
_CHUNK = 3_000_000  # results of rolls worked out at once (memory), at least one state's


def _search(mode: Mode, start: DiceState, recycle: str) -> tuple:
    """Breadth-first search from `start` on codes (see `table_for`), a chunk of the queue at a time.

    States are numbered as a breadth-first search that takes each state's results in `roll.transitions`'
    order numbers them: new states by their first appearance among the results of the states before them
    in the queue, each state's results in order. Returns the states, their codes, and per state (sorted by
    delta, then target) the rolls' deltas, targets and ways, the denominator, bust and self-loop ways."""
    codes = _codes(mode)
    states = [start]
    code_parts = [np.array([codes.code(start)], dtype=np.int64)]
    all_codes = code_parts[0]
    known, known_idx = all_codes.copy(), np.zeros(1, dtype=np.int64)  # sorted codes, their indices
    kernels: dict[int, tuple] = {}
    ptr_parts, delta_parts, to_parts, ways_parts, den_parts, bust_parts, loop_parts = [], [], [], [], [], [], []
    lo = 0
    while lo < len(states):
        if len(all_codes) < len(states):
            all_codes = np.concatenate(code_parts)
            code_parts = [all_codes]
        hi = min(len(states), lo + 16384)
        chunk = all_codes[lo:hi]
        keys = codes.kernel_keys(chunk)
        ukeys, first_of, inverse = np.unique(keys, return_index=True, return_inverse=True)
        for k, p in zip(ukeys.tolist(), first_of.tolist()):
            if k not in kernels:
                kernels[k] = _kernel(mode, states[lo + p], recycle)
        table = [kernels[k] for k in ukeys.tolist()]
        length = np.array([len(k[0]) for k in table], dtype=np.int64)[inverse]
        cut = max(1, int(np.searchsorted(np.cumsum(length), _CHUNK, side="right")))
        hi, chunk, inverse, length = lo + cut, chunk[:cut], inverse[:cut], length[:cut]
        add, shown, gain, ways = (np.concatenate([k[i] for k in table]) for i in range(4))
        offset = np.concatenate([[0], np.cumsum([len(k[0]) for k in table])])[:-1]
        den = np.array([k[4] for k in table], dtype=np.int64)[inverse]
        room = np.array([k[5] for k in table], dtype=np.int64)[inverse] - codes.shotgun_counts(chunk)
        # every result of every state, state after state, each state's in order
        parent = np.repeat(np.arange(cut), length)
        first = np.concatenate([[0], np.cumsum(length)])[:-1]
        pos = np.arange(len(parent)) - first[parent] + offset[inverse][parent]
        busted = shown[pos] >= room[parent]
        bust = np.bincount(parent[busted], weights=ways[pos[busted]], minlength=cut).astype(np.int64)
        ok = ~busted
        parent, pos = parent[ok], pos[ok]
        targets = chunk[parent] + add[pos]
        uniq, first_at = np.unique(targets, return_index=True)
        at = np.minimum(np.searchsorted(known, uniq), len(known) - 1)
        new = known[at] != uniq
        fresh = uniq[new][np.argsort(first_at[new], kind="stable")]
        n_before = len(states)
        states.extend(codes.states(fresh))
        code_parts.append(fresh)
        sort = np.argsort(fresh)
        at = np.searchsorted(known, fresh[sort])
        known = np.insert(known, at, fresh[sort])
        known_idx = np.insert(known_idx, at, np.arange(n_before, n_before + len(fresh), dtype=np.int64)[sort])
        target_idx = known_idx[np.searchsorted(known, targets)]
        n = len(states)
        gains = gain[pos]
        if gains.size and (gains.min() < -_DELTAS // 2 or gains.max() >= _DELTAS // 2):
            raise ValueError("a roll shows more brains than the table's keys allow")
        key = (parent * _DELTAS + (gains + _DELTAS // 2)) * n + target_idx
        ukey, inv = np.unique(key, return_inverse=True)
        summed = np.bincount(inv, weights=ways[pos]).astype(np.int64)  # exact: every sum is below 2**53
        u_target = ukey % n
        u_delta = (ukey // n) % _DELTAS - _DELTAS // 2
        u_parent = ukey // n // _DELTAS
        loop = (u_delta == 0) & (u_target == u_parent + lo)
        loop_ways = np.zeros(cut, dtype=np.int64)
        loop_ways[u_parent[loop]] = summed[loop]
        keep = ~loop
        ptr_parts.append(np.bincount(u_parent[keep], minlength=cut))
        delta_parts.append(u_delta[keep])
        to_parts.append(u_target[keep])
        ways_parts.append(summed[keep])
        den_parts.append(den)
        bust_parts.append(bust)
        loop_parts.append(loop_ways)
        lo = hi
    edge_ptr = np.concatenate([[0], np.cumsum(np.concatenate(ptr_parts))]).astype(np.int64)
    return (states, np.concatenate(code_parts), edge_ptr, *(np.concatenate(x) for x in (
        delta_parts, to_parts, ways_parts, den_parts, bust_parts, loop_parts)))


def _layered(members: np.ndarray, depth: np.ndarray) -> tuple[np.ndarray, ...]:
    """A block's `members` in layers by their `_depths`, shallowest first."""
    layer = depth[members]
    return tuple(members[layer == d] for d in range(layer.max() + 1))


def _depths(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Layers within a block: the longest path from each of `n` states over the no-brain rolls
    `src -> dst` within a block (one more than a state's deepest successor, 0 with none), found by relaxing
    every edge at once until nothing moves (a cycle never settles, and raises)."""
    depth = np.zeros(n, dtype=np.int64)
    for _ in range(n + 1):
        new = depth.copy()
        np.maximum.at(new, src, depth[dst] + 1)
        if (new == depth).all():
            return depth
        depth = new
    raise ValueError("no-brain rolls form a cycle: the table cannot be layered")


def table_for(mode_name: str, recycle: str = "before-draw", root: DiceState | None = None) -> Table:
    """Breadth-first search from the empty turn over every roll; cached per mode and variant (a rooted
    table: the last `ROOTED_KEPT`).

    With `root`, the search starts from that dice state instead: the table then holds only the states
    a turn can reach from there (state 0 is the root), which is all a question about one mid-turn
    position needs; Double Feature modes answer positions this way (see odds.py).

    The search is `roll.transitions` on arrays (`_search`): states that share the next roll's dice, effects
    and rescuable brains (`_Codes.kernel_keys`) share its results up to a shift of their codes, so each such
    roll is worked out once and every state's results are a vector sum; probabilities stay integer ways
    over a denominator per state.
    """
    return _whole_table(mode_name, recycle) if root is None else _rooted_table(mode_name, recycle, root)


@cache
def _whole_table(mode_name: str, recycle: str) -> Table:
    return _table(mode_name, recycle, None)


@lru_cache(maxsize=ROOTED_KEPT)
def _rooted_table(mode_name: str, recycle: str, root: DiceState) -> Table:
    return _table(mode_name, recycle, root)


def _table(mode_name: str, recycle: str, root: DiceState | None) -> Table:
    mode = MODES[mode_name]
    empty = tuple(0 for _ in mode.counts)
    start = DiceState(empty, empty, empty) if mode.plain else DiceState(empty, empty, empty, empty, empty, empty)
    start = root if root is not None else start
    states, codes, ptr, delta, to, ways, den, bust, loop = _search(mode, start, recycle)
    n = len(states)
    src = np.repeat(np.arange(n), np.diff(ptr))
    max_delta = int(delta.max(initial=0))
    min_delta = min(0, int(delta.min(initial=0)))
    vals = ways / den[src]
    matrices = {}
    for d in range(min_delta, max_delta + 1):
        pick = delta == d
        matrices[d] = sp.csr_matrix((vals[pick], (src[pick], to[pick])), shape=(n, n))
    # sum_d d * ways over the denominator: integers below 2**53, so the float is the exact mean rounded once
    gain = np.bincount(src, weights=delta * ways, minlength=n) / den
    shotguns = _codes(mode).shotgun_counts(codes)
    zero = delta == 0
    same = zero & (shotguns[src] == shotguns[to])
    depth = _depths(n, src[same], to[same])
    blocks = [_layered(np.flatnonzero(shotguns == s), depth) for s in sorted(set(shotguns.tolist()), reverse=True)]
    return Table(
        mode=mode,
        recycle=recycle,
        states=tuple(states),
        index={s: i for i, s in enumerate(states)},
        shotguns=shotguns,
        edge_ptr=ptr, edge_delta=delta, edge_to=to, edge_ways=ways, denominator=den, bust_ways=bust, loop_ways=loop,
        matrices=matrices,
        self_loop_f=loop / den,
        bust_f=bust / den,
        gain_f=gain,
        blocks=tuple(blocks),
        min_delta=min_delta,
        max_delta=max_delta,
        root=root,
    )


# -- School Bus: a graph of decision, chance and tyre nodes ------------------------------------------------
DECISION, CHANCE, TYRE, STOPPED = 0, 1, 2, 3


@dataclass(frozen=True, eq=False)
class BusTable:
    """Every node a School Bus turn can reach (from its start, or from `root`), and every roll.

    Node keys: a `BusState` (decision), ``("roll", dice, phase after, shotgun tokens)`` or
    ``("bus", dice rolled, brain-token flag, shotgun tokens)`` (chance), a `TyreTracks` (only where
    there is a choice to make) and ``("stopped",)``. Per chance node: ``edges`` (delta, node, ways)
    without its ``loops`` (node, ways), and ``bust``, all over its ``denominator`` (exact integers);
    per decision node: ``actions`` (name, chance node); per tyre node: ``options`` (brain given up,
    decision node), all at the same score.
    """

    mode: Mode
    recycle: str
    keys: tuple
    index: dict
    kind: np.ndarray
    shotguns: np.ndarray
    can_stop: np.ndarray
    actions: tuple[tuple[tuple[str, int], ...], ...]
    edges: tuple[tuple[tuple[int, int, int], ...], ...]  # (delta, node, ways): p = ways / denominator
    loops: tuple[tuple[tuple[int, int], ...], ...]  # (node, ways)
    bust: tuple[int, ...]  # ways
    denominator: tuple[int, ...]  # per chance node: every probability of its roll is ways / denominator
    options: tuple[tuple[tuple[str, int], ...], ...]
    matrices: dict[int, sp.csr_matrix]
    bust_f: np.ndarray
    gain_f: np.ndarray  # per chance node: E[brains; no bust], loops included (they show none)
    blocks: tuple[tuple[np.ndarray, ...], ...]
    cyclic: tuple[bool, ...]
    min_delta: int
    max_delta: int
    root: BusState | None = None

    start = 0

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def compulsory(self) -> bool:
        return not self.can_stop[self.start]

    def roll_of(self, i: int) -> tuple[BusState, str]:
        """A decision state and action whose roll is chance node `i` (every such pair rolls alike)."""
        kind, dice, a, shotguns = self.keys[i]
        if kind == "roll":
            return BusState(dice, a, 0, shotguns), "roll"
        if any(dice.hand):
            return BusState(dice, "ready", 0, 0), "board"
        return BusState(dice, "riding", a, shotguns), "stay"

    @cached_property
    def block_of(self) -> np.ndarray:
        out = np.full(len(self), -1)
        for b, block in enumerate(self.blocks):
            for layer in block:
                out[layer] = b
        return out

    @cached_property
    def back_nodes(self) -> np.ndarray:
        """The nodes a roll reaches at a lower level of its own block (rescues with YIELD), sorted."""
        out = set()
        for d, m in self.matrices.items():
            if d < 0:
                coo = m.tocoo()
                same = self.block_of[coo.col] == self.block_of[coo.row]
                out.update(coo.col[same].tolist())
        return np.array(sorted(out), dtype=int)

    @cached_property
    def ways(self) -> sp.csr_matrix:
        """Every roll's results as exact ways in one integer matrix: row a chance node, column
        ``(delta - min_delta) * (n + 1) + node`` (the probability is ways / denominator; loops excluded)."""
        n, den = len(self), np.array(self.denominator, dtype=np.float64)
        rows, cols, ways = [], [], []
        for d, m in self.matrices.items():
            coo = m.tocoo()
            rows.append(coo.row)
            cols.append((d - self.min_delta) * (n + 1) + coo.col)
            ways.append(np.rint(coo.data * den[coo.row]))  # w / den * den rounds back to w: den < 2**30
        return sp.csr_matrix((np.concatenate(ways).astype(np.uint64), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(n, (self.max_delta - self.min_delta + 1) * (n + 1)))

    @cached_property
    def layer_arrays(self) -> tuple[tuple[dict, ...], ...]:
        """Per block, per layer, what the sweep needs, sliced once (see `policy.bus_sweep`)."""
        n = len(self)
        out = []
        for block in self.blocks:
            layers = []
            for layer in block:
                kinds = self.kind[layer]
                chance = layer[kinds == CHANCE]
                decision = layer[kinds == DECISION]
                tyre = layer[kinds == TYRE]
                entry: dict = {"chance": chance, "decision": decision, "tyre": tyre}
                entry["mats"] = tuple((d, m[chance]) for d, m in self.matrices.items() if m[chance].nnz)
                k = max((len(self.loops[c]) for c in chance), default=0)
                if k:
                    succ = np.full((len(chance), k), n)
                    prob = np.zeros((len(chance), k))
                    other = np.full((len(chance), k, 2), n)
                    for r, c in enumerate(chance.tolist()):
                        for m, (h, p) in enumerate(self.loops[c]):
                            succ[r, m], prob[r, m] = h, p / self.denominator[c]
                            rest = [a for _, a in self.actions[h] if a != c]
                            other[r, m, :len(rest)] = rest
                    entry["loops"] = (succ, prob, other)
                width = max((len(self.actions[i]) for i in decision), default=0)
                acts = np.full((len(decision), max(width, 1)), n)
                for r, i in enumerate(decision.tolist()):
                    acts[r, :len(self.actions[i])] = [a for _, a in self.actions[i]]
                entry["actions"] = acts
                width = max((len(self.options[i]) for i in tyre), default=0)
                opts = np.full((len(tyre), max(width, 1)), n)
                for r, i in enumerate(tyre.tolist()):
                    opts[r, :len(self.options[i])] = [o for _, o in self.options[i]]
                entry["options"] = opts
                layers.append(entry)
            out.append(tuple(layers))
        return tuple(out)


def _bus_block(key) -> tuple[int, int]:
    """Blocks in sweep order: the bus out (0), tyre tracks (1), the bus not out yet (2); most shotguns first
    in each."""
    if isinstance(key, BusState):
        return (0 if key.phase == "out" else 2, -key.shotgun_count)
    if isinstance(key, TyreTracks):
        return (1, -(key.dice.shotgun_count + key.shotguns))
    if key[0] == "roll":
        return (0 if key[2] == "out" else 2, -(key[1].shotgun_count + key[3]))
    if key[0] == "bus":
        return (2, -(key[1].shotgun_count + key[3]))
    return (1, 0)


class _Search:
    """The breadth-first search behind `bus_table_for`, on compact keys (dice interned as numbers).

    It reads each dice state's ordinary roll (`_kernel`, shared by every state that rolls alike, as `_search`
    does) and bus roll (roll.py's `_bus_roll_groups`) once and maps them to every bus status (phase, token flag,
    shotgun tokens) that rolls those dice, the way `roll.bus_results` does one at a time (tests compare the
    two). Dice reached by ordinary rolls are interned by their codes; their `DiceState` is made on first use."""

    def __init__(self, mode: Mode, recycle: str):
        self.mode, self.recycle = mode, recycle
        self.codes = _codes(mode)
        self.dice: list[DiceState | None] = []
        self.dice_id: dict[DiceState, int] = {}
        self.code_id: dict[int, int] = {}
        self.dice_code: list[int] = []
        self._keys: list[int] = []
        self.keys: list[tuple] = []
        self.index: dict[tuple, int] = {}
        self.queue: deque[int] = deque()
        self._kernels: dict[int, tuple] = {}
        self._ordinary: dict[int, tuple] = {}
        self._bus: dict[int, tuple] = {}
        self._bus_kernels: dict[int, tuple] = {}
        self._empty_hand: dict[int, int] = {}
        self._give_up: dict[tuple[int, int, int], tuple] = {}

    def did(self, dice: DiceState) -> int:
        if dice not in self.dice_id:
            x = self.cid(self.codes.code(dice))
            self.dice[x] = dice
            self.dice_id[dice] = x
        return self.dice_id[dice]

    def cid(self, code: int) -> int:
        if code not in self.code_id:
            self.code_id[code] = len(self.dice)
            self.dice.append(None)
            self.dice_code.append(code)
        return self.code_id[code]

    def kernel_key(self, x: int) -> int:
        """`_Codes.kernel_keys` of dice `x`, worked out for every dice interned since the last call at once."""
        if x >= len(self._keys):
            self._keys += self.codes.kernel_keys(np.array(self.dice_code[len(self._keys):], dtype=np.int64)).tolist()
        return self._keys[x]

    def state(self, x: int) -> DiceState:
        dice = self.dice[x]
        if dice is None:
            dice = self.dice[x] = self.codes.state(self.dice_code[x])
            self.dice_id[dice] = x
        return dice

    def node(self, key: tuple) -> int:
        if key not in self.index:
            self.index[key] = len(self.keys)
            self.keys.append(key)
            self.queue.append(self.index[key])
        return self.index[key]

    def public(self, key: tuple):
        """The table's key for a compact one (see `BusTable`)."""
        kind, x, *rest = key
        if kind == "d":
            return BusState(self.state(x), *rest)
        if kind == "t":
            return TyreTracks(self.state(x), *rest)
        if kind == "s":
            return ("stopped",)
        return (kind, self.state(x), *rest)

    def actions(self, key: tuple) -> tuple[tuple[str, int], ...]:
        _, x, phase, tokens, shotguns = key
        out = []
        for action in legal_actions(self.mode, BusState(self.state(x), phase, tokens, shotguns)):
            if action in ("roll", "get-off"):
                out.append((action, self.node(("roll", x, "ready" if phase == "ready" else "out", shotguns))))
            elif action == "board":
                out.append((action, self.node(("bus", x, 0, 0))))
            elif action == "stay":
                if x not in self._empty_hand:
                    dice = self.state(x)
                    self._empty_hand[x] = self.did(dice._replace(hand=tuple(0 for _ in dice.hand)))
                out.append((action, self.node(("bus", self._empty_hand[x], tokens, shotguns))))
        return tuple(out)

    def options(self, x: int, tokens: int, shotguns: int) -> tuple[tuple[str, tuple], ...]:
        """Tyre tracks' choices as compact decision keys (`roll.give_up`)."""
        key = (x, tokens, shotguns)
        if key not in self._give_up:
            self._give_up[key] = tuple((g, ("d", self.did(d), "out", 0, shotguns))
                                       for g, d in give_up(self.mode, self.state(x), tokens))
        return self._give_up[key]

    def ordinary(self, x: int) -> tuple[int, tuple[tuple[int, int, int, int], ...]]:
        """The ordinary roll from dice `x`: its denominator and every result (brains, dice after, the least
        shotgun tokens that make it a bust, ways), in `roll.transitions`' order, unmerged."""
        if x not in self._ordinary:
            dice, code, key = self.state(x), self.dice_code[x], self.kernel_key(x)
            if key not in self._kernels:
                add, shown, gain, ways, den, bust_at = _kernel(self.mode, dice, self.recycle)
                common = gcd(den, *ways.tolist())
                self._kernels[key] = add.tolist(), shown.tolist(), gain.tolist(), (ways // common).tolist(), \
                    den // common, bust_at
            add, shown, gain, ways, den, bust_at = self._kernels[key]
            room = bust_at - dice.shotgun_count  # a result busts when it shows `room` shotguns (less the tokens)
            self._ordinary[x] = den, tuple((g, self.cid(code + a) if room > s else -1, room - s, w)
                                           for a, s, g, w in zip(add, shown, gain, ways))
        return self._ordinary[x]

    def bus(self, x: int) -> tuple[int, tuple[tuple, ...]]:
        """The bus roll from dice `x` (`roll._bus_roll_groups`): its denominator and every result (its bus faces,
        dice after, change of the pile's brains, shotguns in the pile, bust threshold, whether the pile then holds
        a brain, ways). Dice that roll their ordinary dice alike (`_Codes.kernel_keys`: the bus draws one die
        fewer, so the key may tell apart dice whose bus rolls agree) share it up to a shift of their codes."""
        if x not in self._bus:
            dice, code, key = self.state(x), self.dice_code[x], self.kernel_key(x)
            if key not in self._bus_kernels:
                rows, den, _ = _bus_roll_groups(self.mode, dice, self.recycle)
                self._bus_kernels[key] = den, dice.shotgun_count, dice.pile_brains, tuple(
                    (_face_parts(faces), self.codes.code(a) - code, d, c, top, left, w)
                    for faces, (a, d, _, _, c, top, left), w in rows)
            den, shotguns, brains, rows = self._bus_kernels[key]
            more, brains = dice.shotgun_count - shotguns, dice.pile_brains - brains
            self._bus[x] = den, tuple((faces, self.cid(code + a), d, c + more, top, left + brains > 0, w)
                                      for faces, a, d, c, top, left, w in rows)
        return self._bus[x]

    def roll(self, key: tuple) -> tuple[dict[tuple[int, int], int], int, int]:
        """A chance node's results: ways per (delta, node), bust ways, denominator."""
        out: dict[tuple[int, int], int] = {}
        bust = 0
        if key[0] == "roll":
            _, x, phase, shotguns = key
            den, rows = self.ordinary(x)
            for brains, a, margin, ways in rows:
                if shotguns >= margin:
                    bust += ways
                    continue
                j = self.node(("d", a, phase, 0, shotguns))
                out[(brains, j)] = out.get((brains, j), 0) + ways
            return out, bust, den
        _, x, tokens, shotguns = key
        den, rows = self.bus(x)
        for faces, a, delta, count, bust_at, brains_left, w in rows:
            for fb, fs, effect, sides in faces:
                ways = w * sides
                s = shotguns + fs
                if count + s >= bust_at:
                    bust += ways
                    continue
                d = delta
                if effect == "stop":
                    target = ("s", 0)
                elif effect == "tyre-tracks":  # one brain lost if the turn has one (see roll.bus_results)
                    d -= tokens > 0 or brains_left
                    choices = self.options(a, tokens, s)
                    target = choices[0][1] if len(choices) == 1 else ("t", a, tokens, s)
                else:
                    target = ("d", a, "riding", int(tokens or fb > 0), s)
                j = self.node(target)
                out[(d + fb, j)] = out.get((d + fb, j), 0) + ways
        return out, bust, den


@cache
def _face_parts(faces: tuple) -> tuple[tuple[int, int, str, int], ...]:
    """A group of bus faces (`roll._bus_roll_groups`) as (brains, shotguns, effect, sides) each."""
    return tuple((f.brains, f.shotguns, f.effect, sides) for f, sides in faces)


def bus_table_for(mode_name: str, recycle: str = "before-draw", root: BusState | None = None) -> BusTable:
    """Breadth-first search over every School Bus node from the turn start (or from `root`); cached (the
    last 32 tables, however the arguments are passed)."""
    return _bus_table(mode_name, recycle, root)


@lru_cache(maxsize=32)
def _bus_table(mode_name: str, recycle: str, root: BusState | None) -> BusTable:
    mode = MODES[mode_name]
    empty = tuple(0 for _ in mode.counts)
    dice = DiceState(empty, empty, empty) if mode.plain else DiceState(empty, empty, empty, empty, empty, empty)
    start = root if root is not None else BusState(dice)
    search = _Search(mode, recycle)
    search.node(("d", search.did(start.dice), start.phase, start.tokens, start.shotguns))
    actions: dict[int, tuple] = {}
    edges: dict[int, dict] = {}
    bust: dict[int, int] = {}
    denominators: dict[int, int] = {}
    options: dict[int, tuple] = {}
    while search.queue:
        i = search.queue.popleft()
        key = search.keys[i]
        if key[0] == "d":
            actions[i] = search.actions(key)
        elif key[0] == "t":
            options[i] = tuple((g, search.node(k)) for g, k in search.options(*key[1:]))
        elif key[0] != "s":
            edges[i], bust[i], denominators[i] = search.roll(key)
    keys = [search.public(k) for k in search.keys]
    index = {k: i for i, k in enumerate(keys)}
    n = len(keys)
    kinds = [DECISION if isinstance(k, BusState) else TYRE if isinstance(k, TyreTracks) else STOPPED
             if k[0] == "stopped" else CHANCE for k in keys]
    # every result of every chance node as arrays (node, delta, target, ways), in the search's order
    flat = [(d, j, w) for out in edges.values() for (d, j), w in out.items()]
    ri = np.repeat(np.array(list(edges), dtype=np.int64), [len(out) for out in edges.values()])
    rd, rj, rw = (np.array(x, dtype=np.int64).reshape(-1) for x in (zip(*flat) if flat else ((), (), ())))
    by_node = np.argsort(ri, kind="stable")  # (the search rolled chance nodes in the order it met them)
    ri, rd, rj, rw = ri[by_node], rd[by_node], rj[by_node], rw[by_node]
    ai = np.array([i for i, row in actions.items() for _ in row], dtype=np.int64)  # decision, chance it rolls
    ac = np.array([c for row in actions.values() for _, c in row], dtype=np.int64)
    # a result is a loop when it shows no brain and is a decision that can roll the same chance node again
    is_loop = (rd == 0) & np.isin(ri * n + rj, ac * n + ai)
    loops: list[tuple] = [()] * n
    li, lj, lw = ri[is_loop], rj[is_loop], rw[is_loop]
    at = np.searchsorted(li, np.arange(n + 1))
    pairs = list(zip(lj.tolist(), lw.tolist()))
    for i in np.unique(li).tolist():
        loops[i] = tuple(pairs[at[i]:at[i + 1]])
    keep = ~is_loop
    ri, rd, rj, rw = ri[keep], rd[keep], rj[keep], rw[keep]
    sort = np.lexsort((rj, rd, ri))
    ri, rd, rj, rw = ri[sort], rd[sort], rj[sort], rw[sort]
    at = np.searchsorted(ri, np.arange(n + 1))
    results = list(zip(rd.tolist(), rj.tolist(), rw.tolist()))
    edge_rows = [tuple(results[a:b]) for a, b in zip(at[:-1].tolist(), at[1:].tolist())]
    block_keys = [_bus_block(k) if kinds[i] != STOPPED else None for i, k in enumerate(keys)]
    order = {b: r for r, b in enumerate(sorted({b for b in block_keys if b is not None}))}
    block_of = np.array([-1 if b is None else order[b] for b in block_keys], dtype=np.int64)
    if (block_of[ac] > block_of[ai]).any():
        raise ValueError("an action leads to a later block")
    b_from, b_to = block_of[ri], block_of[rj]
    if (b_to > b_from).any():
        raise ValueError("a roll leads to a later block")
    same = b_to == b_from
    cyclic = [False] * len(order)
    for b in np.unique(b_from[same & (rd < 0)]).tolist():
        cyclic[b] = True  # a rescue with YIELD: a lower score in the same block
    oi = np.array([i for i, row in options.items() for _ in row], dtype=np.int64)
    oo = np.array([o for row in options.values() for _, o in row], dtype=np.int64)
    if (block_of[oo] >= block_of[oi]).any():
        raise ValueError("tyre tracks lead to a node not yet solved")
    # (i, j): i is computed after j at the same score: an action rolling a chance node of its own block, a roll
    # showing no brain within its block, and a loop's decision's other actions within the block
    back = [(i, a) for i, h in zip(li.tolist(), lj.tolist()) for _, a in actions[h] if a != i]
    bi, ba = np.array(back, dtype=np.int64).reshape(-1, 2).T
    inside = block_of[ac] == block_of[ai], same & (rd == 0), block_of[ba] == block_of[bi]
    src = np.concatenate([ai[inside[0]], ri[inside[1]], bi[inside[2]]])
    dst = np.concatenate([ac[inside[0]], rj[inside[1]], ba[inside[2]]])
    depth = _depths(n, src, dst)
    blocks = tuple(_layered(np.flatnonzero(block_of == b), depth) for b in range(len(order)))
    den = [denominators.get(i, 1) for i in range(n)]
    vals = rw / np.array(den, dtype=np.int64)[ri]
    max_delta, min_delta = int(rd.max(initial=0)), int(min(0, rd.min(initial=0)))
    matrices = {}
    for delta in range(min_delta, max_delta + 1):
        pick = rd == delta
        if pick.any():  # column n: a sentinel the sweep pads with
            matrices[delta] = sp.csr_matrix((vals[pick], (ri[pick], rj[pick])), shape=(n, n + 1))
    gain = np.zeros(n)
    np.add.at(gain, ri, rd * vals)
    root_is_start = root is None or (root.phase == "ready" and not (any(root.dice.hand) or any(root.dice.brains)
                                                                     or any(root.dice.shotguns)
                                                                     or any(root.dice.aside)))
    kind = np.array(kinds, dtype=np.int8)
    can_stop = kind == DECISION
    can_stop[0] = not root_is_start
    return BusTable(
        mode=mode, recycle=recycle, keys=tuple(keys), index=index, kind=kind,
        shotguns=np.array([k.shotgun_count if isinstance(k, BusState) else -_bus_block(k)[1] if kinds[i] != STOPPED
                           else 0 for i, k in enumerate(keys)]),
        can_stop=can_stop,
        actions=tuple(actions.get(i, ()) for i in range(n)), edges=tuple(edge_rows), loops=tuple(loops),
        bust=tuple(bust.get(i, 0) for i in range(n)), denominator=tuple(den),
        options=tuple(options.get(i, ()) for i in range(n)),
        matrices=matrices,
        bust_f=np.array([bust.get(i, 0) / d for i, d in enumerate(den)]),
        gain_f=gain,
        blocks=blocks, cyclic=tuple(cyclic), min_delta=min_delta, max_delta=max_delta, root=root,
    )
