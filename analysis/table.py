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

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, cached_property, partial
from itertools import chain, product
from math import comb
from operator import add as _add
from operator import mul

import numpy as np
import scipy.sparse as sp

from .dice import BUS, EFFECTS, MODES, Mode
from .kept import kept
from .position import BusState, DiceState
from .roll import (
    TyreTracks,
    _bus_groups,
    _draw_plan,
    _plain_settled,
    _rescuable,
    _roll,
    _summed,
    bus_step,
)

__all__ = ["Table", "table_for", "state_code", "bus_node_code", "BusTable", "bus_table_for", "DECISION", "CHANCE",
           "TYRE", "STOPPED"]


@dataclass(frozen=True, eq=False)
class Table:
    """Every dice state of a turn and every roll, as integer arrays (exact) and float matrices (solvers).

    Roll ``k`` of state ``i`` (``edge_ptr[i] <= k < edge_ptr[i + 1]``, sorted by delta, then target) shows
    ``edge_delta[k]`` brains and leads to ``edge_to[k]`` with probability ``edge_ways[k] / denominator[i]``;
    ``bust_ways`` and ``loop_ways`` are over the same denominator. `edges`, `bust` and `self_loop` give
    the same as exact `Fraction` tuples, built on first use (exact solvers read them; float solvers do not)."""

    mode: Mode
    recycle: str
    codes: np.ndarray  # int64 per state: its code (`_Codes`); `states` and `index` are read from them on first use
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

    @cached_property
    def states(self) -> tuple[DiceState, ...]:
        """Every state, by number (built on first use: the sequel's 300,000 take seconds, which a whole turn's
        solve does not need)."""
        return tuple(_codes(self.mode).states(self.codes))

    @cached_property
    def index(self) -> KeyIndex:
        """State -> number."""
        codes = _codes(self.mode)

        def encode(state: object) -> tuple[int, int] | None:
            return (codes.code(state), 0) if isinstance(state, DiceState) else None

        return KeyIndex(self.codes, np.zeros(len(self), dtype=np.int64), encode,
                        lambda i: codes.state(int(self.codes[i])))

    @property
    def compulsory(self) -> bool:
        """The table's first state is the turn start, whose roll is compulsory (False for a rooted table
        whose root is a mid-turn position)."""
        first = _codes(self.mode).state(int(self.codes[0]))
        return not (any(first.hand) or any(first.brains) or any(first.shotguns) or any(first.aside))

    @cached_property
    def edges(self) -> tuple[tuple[tuple[int, int, Fraction], ...], ...]:
        """Per state: (delta, j, exact p) of every roll but the self-loop, sorted by (delta, j)."""
        ptr, den = self.edge_ptr.tolist(), self.denominator.tolist()
        rows = list(zip(self.edge_delta.tolist(), self.edge_to.tolist(), self.edge_ways.tolist()))
        return tuple(tuple((d, j, Fraction(w, den[i])) for d, j, w in rows[ptr[i]:ptr[i + 1]])
                     for i in range(len(self)))

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
        return np.repeat(np.arange(len(self)), np.diff(self.edge_ptr))

    @cached_property
    def ways(self) -> sp.csr_matrix:
        """Every roll's ways as one integer matrix (as `BusTable.ways`): row `i`, column ``(delta - min_delta) * n
        + j`` for a roll of `i` that shows ``delta`` brains and leads to `j` (the probability is ways over
        ``denominator[i]``; the self-loop excluded). The exact score distribution's residue flow reads it."""
        n, width = len(self), self.max_delta - self.min_delta + 1
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
        return len(self.codes)


class KeyIndex(Mapping):
    """Key -> number for a table's states (or a bus table's nodes), found by their integer codes: a dice state's
    code and a number for the rest (0, or a bus node's kind and tokens), in sorted arrays. A dict of 300,000 to
    700,000 namedtuples takes seconds to build, for a lookup or two. ``encode(key)`` gives the two numbers (None:
    not a key of this kind) and ``decode(i)`` number i's key, which a key found must equal (a key out of the codes'
    range could share a table key's code)."""

    def __init__(self, codes: np.ndarray, subs: np.ndarray, encode: Callable[[object], tuple[int, int] | None],
                 decode: Callable[[int], object]):
        self._order = np.lexsort((subs, codes))
        self._codes, self._subs = codes[self._order], subs[self._order]
        self._encode, self._decode = encode, decode

    def __getitem__(self, key: object) -> int:
        try:
            found = self._encode(key)
        except (AttributeError, TypeError, ValueError):  # not dice or counts, or an effect or phase there is none of
            found = None
        if found is not None and -2**63 <= found[0] < 2**63:
            lo, hi = (int(np.searchsorted(self._codes, found[0], side)) for side in ("left", "right"))
            k = lo + int(np.searchsorted(self._subs[lo:hi], found[1]))
            if k < hi and self._subs[k] == found[1]:
                i = int(self._order[k])
                if self._decode(i) == key:
                    return i
        raise KeyError(key)

    def __iter__(self) -> Iterator:
        return (self._decode(i) for i in range(len(self)))

    def __len__(self) -> int:
        return len(self._order)


class _Codes:
    """Dice states as integers, one mixed-radix digit per (field, kind) and a bitmask of effects.

    Codes add: a roll's result is the state's code plus a constant of its draw and faces (the hand and
    the effects are replaced, the piles grow), so a table's search works on arrays of codes."""

    def __init__(self, mode: Mode):
        self.mode = mode
        self.fields = 3 if mode.plain else 6
        radix = [c + 1 for c in mode.counts] * self.fields
        self.weights = np.cumprod([1, *radix[:-1]]).astype(np.int64)
        self._weights, self._radix = self.weights.tolist(), radix  # (Python ints: `fields_code` runs per roll kernel,
        # and `digits` divides by one at a time)
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

    def digits(self, codes: np.ndarray, *fields: int) -> np.ndarray:
        """Per code, its per-kind counts field after field (the effects left out): every field, or the `fields`
        named (0 hand, 1 brains, 2 shotguns, 3 double brains, 4 double shotguns, 5 aside).

        A column at a time: numpy divides an array by one integer faster than by a row of them (it precomputes
        the division), and a caller that reads two fields of six divides a third as much."""
        k = len(self.mode.counts)
        columns = [f * k + j for f in (fields or range(self.fields)) for j in range(k)]
        out = np.empty((len(codes), len(columns)), dtype=np.int64)
        for at, c in enumerate(columns):
            np.remainder(codes // self._weights[c], self._radix[c], out=out[:, at])
        return out

    def states(self, codes: np.ndarray) -> list[DiceState]:
        digits = self.digits(codes)
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
        digits = self.digits(codes)
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

    def pile_brains(self, codes: np.ndarray) -> np.ndarray:
        """Brains in the brain pile of each state (a double brain counts 2: `DiceState.pile_brains`)."""
        return self.digits(codes, *((1,) if self.mode.plain else (1, 3))).sum(axis=1)

    def shotgun_counts(self, codes: np.ndarray) -> np.ndarray:
        return self.digits(codes, *((2,) if self.mode.plain else (2, 4))).sum(axis=1)


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


def state_code(mode: Mode, state: DiceState) -> int:
    """The integer a table knows `state` by (`Table.codes`)."""
    return _codes(mode).code(state)


@cache
def _codes(mode: Mode) -> _Codes:
    return _Codes(mode)


def _draws(mode: Mode, state: DiceState, need: int, recycle: str, arrays) -> tuple[DiceState, int, int, list]:
    """The draw of `need` new dice from `state` (`roll._draw_plan`), each composition's roll as `arrays` of the
    dice rolled (`_faces_arrays`, or `_bus_faces_arrays`): the pile (recycled if the cup ran out), the draw's
    ways, the shift from the state's code to the pile's less its hand and effects (a result's code adds to it),
    and (arrays, ways) per composition."""
    codes = _codes(mode)
    pile, _, drawn, ways = _draw_plan(mode, state, need, recycle)
    shift = codes.code(pile) - codes.code(state) - codes.fields_code(state.hand) - codes.effects_code(pile.effects)
    if mode.plain:
        brains = doubles = ()
    else:
        mask = _rescuable(mode)
        brains = tuple(b if m else 0 for b, m in zip(pile.brains, mask))
        doubles = tuple(d if m else 0 for d, m in zip(pile.double_brains, mask))
    return pile, ways, shift, [(arrays(mode, tuple(map(_add, state.hand, take)), pile.effects, brains, doubles), w)
                               for take, w in drawn]


def _kernel(mode: Mode, state: DiceState, recycle: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int,
                                                                  int]:
    """Every result of the next roll from `state`, before merging, in `roll.transitions`' order: the code
    added to the state's, shotguns shown less the threshold's rise, brains gained, ways; the denominator,
    and the bust threshold before the roll. Every state with the same key (`_Codes.kernel_keys`) shares them."""
    pile, ways, shift, parts = _draws(mode, state, mode.dice_per_roll - sum(state.hand), recycle, _faces_arrays)
    add = np.concatenate([a[0] for a, _ in parts]) + shift
    shown = np.concatenate([a[1] for a, _ in parts])
    gain = np.concatenate([a[2] for a, _ in parts])
    ways_out = np.concatenate([a[3] * w for a, w in parts])
    return add, shown, gain, ways_out, ways * len(mode.dice[0].faces) ** mode.dice_per_roll, pile.bust_at(mode)


class _Interned:
    """Integers numbered in order of first appearance (a breadth-first search's numbering)."""

    def __init__(self) -> None:
        self.parts: list[np.ndarray] = []
        self.count = 0
        self.known = np.zeros(0, dtype=np.int64)  # sorted values, their numbers
        self.known_idx = np.zeros(0, dtype=np.int64)

    @cached_property
    def values(self) -> np.ndarray:
        return np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=np.int64)

    def ids(self, values: np.ndarray) -> np.ndarray:
        """The numbers of `values`; new ones are numbered in the order they first appear in `values`."""
        uniq, first_at, inverse = np.unique(values, return_index=True, return_inverse=True)  # (each looked up once)
        ids = np.full(len(uniq), -1, dtype=np.int64)
        if len(self.known):
            at = np.minimum(np.searchsorted(self.known, uniq), len(self.known) - 1)
            found = self.known[at] == uniq
            ids[found] = self.known_idx[at[found]]
        new = np.flatnonzero(ids < 0)  # (in value order)
        if len(new):
            first = new[np.argsort(first_at[new], kind="stable")]
            ids[first] = np.arange(self.count, self.count + len(new))
            self.parts.append(uniq[first])
            self.__dict__.pop("values", None)
            at = np.searchsorted(self.known, uniq[new])
            self.known = np.insert(self.known, at, uniq[new])
            self.known_idx = np.insert(self.known_idx, at, ids[new])
            self.count += len(new)
        return ids[inverse.reshape(values.shape)]


def spread(ptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The places of every item of `rows` in CSR arrays with pointers `ptr`, row after row."""
    counts = ptr[rows + 1] - ptr[rows]
    return np.repeat(ptr[rows] - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))


def owners(ptr: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The row of each of the places `at` in CSR arrays with pointers `ptr` (`spread` the other way)."""
    return np.searchsorted(ptr, at, side="right") - 1


def _padded(ptr: np.ndarray, to: np.ndarray, rows: np.ndarray, fill: int, width: int = 1) -> np.ndarray:
    """The items of `rows` in CSR arrays (`spread`), a row each, padded with `fill` (at least `width` wide)."""
    counts = ptr[rows + 1] - ptr[rows]
    out = np.full((len(rows), max(width, int(counts.max(initial=0)))), fill, dtype=np.int64)
    at = spread(ptr, rows)
    out[np.repeat(np.arange(len(rows)), counts), at - np.repeat(ptr[rows], counts)] = to[at]
    return out


def _rows(ptr: np.ndarray, items: list) -> tuple[tuple, ...]:
    """CSR rows of `items` as a tuple of tuples."""
    bounds = ptr.tolist()
    return tuple(tuple(items[a:b]) for a, b in zip(bounds[:-1], bounds[1:]))


def _spread(start: np.ndarray, length: np.ndarray, kernel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``start[kernel[r]]`` on, ``length[kernel[r]]`` of them, of every r, in order: (r, row) per result."""
    size = length[kernel]
    parent = np.repeat(np.arange(len(kernel)), size)
    first = np.concatenate([[0], np.cumsum(size)])[:-1]
    return parent, np.arange(len(parent)) - first[parent] + start[kernel][parent]


class _Kernels:
    """Rolls shared by every dice state with the same `_Codes.kernel_keys`, as flat arrays over kernels: each
    worked out once from one such state, read by every other up to a shift of its code. Kernel ``k``'s results
    are rows ``start[k]`` on, ``length[k]`` of them, of the arrays `flat`; `per` holds one number per kernel."""

    def __init__(self) -> None:
        self.keys = _Interned()
        self._flat: tuple[np.ndarray, ...] = ()  # `flat` with room to grow (doubled when full)
        self._size = 0
        self.start = self.length = np.zeros(0, dtype=np.int64)
        self.per: tuple[np.ndarray, ...] = ()

    @property
    def flat(self) -> tuple[np.ndarray, ...]:
        return tuple(a[:self._size] for a in self._flat)

    def _append(self, flat: tuple[np.ndarray, ...]) -> None:
        """`flat` after the results held: in place, the arrays doubled when full (concatenating the sequel's
        22 chunks one by one copied them all 22 times)."""
        size = self._size + len(flat[0])
        if self._flat and size <= len(self._flat[0]):
            for held, new in zip(self._flat, flat):
                np.copyto(held[self._size:size], new, casting="safe")
        else:  # (the spare room left unwritten: its pages are not touched until used)
            grown = tuple(np.empty(max(size, 2 * self._size), dtype=new.dtype) for new in flat)
            for into, old, new in zip(grown, self._flat or tuple(a[:0] for a in flat), flat):
                into[:self._size], into[self._size:size] = old[:self._size], new
            self._flat = grown
        self._size = size

    def of(self, keys: np.ndarray, make) -> np.ndarray:
        """Kernel numbers of `keys`. New ones are made by ``make(rows)``, the rows of `keys` that first show them
        (in their numbers' order): (result arrays, each kernel's first row in them, its number of rows, the
        per-kernel numbers)."""
        before = self.keys.count
        ids = self.keys.ids(keys)
        if self.keys.count > before:
            numbers, first = np.unique(ids, return_index=True)
            flat, start, length, per = make(first[numbers >= before])
            self.start = np.concatenate([self.start, start + self._size])
            self._append(flat)
            self.length = np.concatenate([self.length, length])
            self.per = tuple(np.concatenate([old, new]) for old, new in zip(self.per, per)) if self.per else per
        return ids


def _each(make, states):
    """A `_Kernels` maker from one that makes a kernel from one state (``(result arrays, per-kernel numbers)``),
    ``states(r)`` the state of row r."""
    def many(rows: np.ndarray) -> tuple:
        made = [make(states(r)) for r in rows.tolist()]
        length = np.array([len(arrays[0]) for arrays, _ in made], dtype=np.int64)
        flat = tuple(np.concatenate(c) for c in zip(*(arrays for arrays, _ in made)))
        per = tuple(np.array(c, dtype=np.int64) for c in zip(*(each for _, each in made)))
        return flat, np.cumsum(length) - length, length, per
    return many


@cache
def _compositions(k: int, most: int) -> tuple[np.ndarray, np.ndarray]:
    """Every way to draw up to `most` dice of `k` kinds, in `roll._draw_ways`' order for each number drawn
    (lexicographic, the first kind first), and how many each draws."""
    takes = [t for t in product(range(most + 1), repeat=k) if sum(t) <= most]
    return np.array(takes, dtype=np.int64).reshape(-1, k), np.array([sum(t) for t in takes], dtype=np.int64)


def _ordinary(faces: _Faces, recycle: str, every: np.ndarray, rows: np.ndarray) -> tuple:
    """`_kernel` of the states of codes ``every[rows]`` at once (a `_Kernels` maker): where the cup holds the dice
    to draw, all at once (`_drawn`); states that recycle first one by one (`_kernel`). Either kind may be all of
    them: a search rooted after a recycling, or at a position whose next roll recycles, may meet no state that
    draws from the cup alone."""
    mode = faces.mode
    codes = every[rows]
    c, k = _codes(mode), len(mode.counts)
    digits = c.digits(codes)
    hand, brains, shotguns = digits[:, :k], digits[:, k:2 * k], digits[:, 2 * k:3 * k]
    plain = mode.plain
    doubles = np.zeros_like(hand) if plain else digits[:, 3 * k:4 * k]
    aside = np.zeros_like(hand) if plain else digits[:, 5 * k:]
    effects = np.zeros(len(codes), dtype=np.int64) if plain else codes // c.effect_weight
    cup = np.array(mode.counts)[None, :] - hand - brains - shotguns - aside
    need = mode.dice_per_roll - hand.sum(axis=1)
    drawn = np.flatnonzero(cup.sum(axis=1) >= need)
    recycles = np.setdiff1d(np.arange(len(codes)), drawn)
    parts = []  # (flat, start, length, per) of the states that draw, then of those that recycle
    if len(drawn):
        parts.append(_drawn(faces, *(x[drawn] for x in (hand, brains, doubles, effects, cup, need))))
    if len(recycles):
        parts.append(_each(lambda state: _split(_kernel(mode, state, recycle)),
                           lambda j: c.state(int(codes[recycles[j]])))(np.arange(len(recycles))))
    flat, start, length, per = zip(*parts)
    offset = np.cumsum([0, *(len(f[0]) for f in flat)])
    back = np.argsort(np.concatenate([drawn, recycles]))  # (rows back in the order asked)
    return (tuple(np.concatenate(col) for col in zip(*flat)),
            np.concatenate([s + o for s, o in zip(start, offset)])[back], np.concatenate(length)[back],
            tuple(np.concatenate(col)[back] for col in zip(*per)))


def _drawn(faces: _Faces, hand: np.ndarray, brains: np.ndarray, doubles: np.ndarray, effects: np.ndarray,
           cup: np.ndarray, need: np.ndarray) -> tuple:
    """`_ordinary` of states whose cup holds the `need` dice to draw (per-kind rows, at least one): the draws of
    every state as arrays (prod_k C(cup_k, take_k) ways, in `roll._draw_ways`' order), each draw's roll read from
    `_faces_arrays` (one per dice rolled, effects and rescuable brains: `faces`, the search's own)."""
    mode = faces.mode
    c, k = _codes(mode), len(mode.counts)
    takes, size = _compositions(k, mode.dice_per_roll)
    fits = (size[None, :] == need[:, None]) & (takes[None, :, :] <= cup[:, None, :]).all(axis=2)
    row, take = np.nonzero(fits)  # each state's draws in order
    ways = _BINOMIAL[cup[row], takes[take]].prod(axis=1)
    mask = np.array(_rescuable(mode) if not mode.plain else (False,) * k)
    fid = faces.of(hand[row] + takes[take], brains[row] * mask, doubles[row] * mask, effects[row])
    r, pos = _spread(faces.kernels.start, faces.kernels.length, fid)
    add, shown, gain, w = faces.kernels.flat
    shift = -(hand @ c.weights[:k]) - effects * c.effect_weight
    rows_of = row[r]
    flat = (add[pos] + shift[rows_of], shown[pos], gain[pos], w[pos] * ways[r])
    length = np.bincount(rows_of, minlength=len(hand)).astype(np.int64)
    den = _BINOMIAL[cup.sum(axis=1), need] * len(mode.dice[0].faces) ** mode.dice_per_roll
    return flat, np.cumsum(length) - length, length, (den, mode.bust_at + _bonus(mode)[effects])


_BINOMIAL = np.array([[comb(n, r) for r in range(16)] for n in range(16)], dtype=np.int64)


@cache
def _bonus(mode: Mode) -> np.ndarray:
    """The rise of the bust threshold per bitmask of effects (`_Codes.effect_names`)."""
    names = _codes(mode).effect_names
    return np.array([sum(EFFECTS[e].bust_bonus for b, e in enumerate(names) if m >> b & 1)
                     for m in range(1 << len(names))], dtype=np.int64)


class _Faces:
    """`_faces_arrays` as `_Kernels`, keyed by the dice rolled, the rescuable brains and doubles, and the effects.
    Each search has its own (a server's threads may search at once; `_faces_arrays` keeps the arrays)."""

    def __init__(self, mode: Mode):
        self.mode, self.kernels = mode, _Kernels()
        self.radix = np.array([n + 1 for n in mode.counts], dtype=np.int64)
        self.weights = np.cumprod(np.concatenate([[1], np.tile(self.radix, 3)]))[:-1].reshape(3, -1)
        self.top = int(np.prod(self.radix) ** 3)
        self.names = _codes(mode).effect_names

    def of(self, rolled: np.ndarray, brains: np.ndarray, doubles: np.ndarray, effects: np.ndarray) -> np.ndarray:
        keys = rolled @ self.weights[0] + brains @ self.weights[1] + doubles @ self.weights[2] + effects * self.top

        def make(rows: np.ndarray) -> tuple:
            return _each(lambda args: (_faces_arrays(self.mode, *args), ()), lambda j: (
                tuple(rolled[j].tolist()), tuple(e for b, e in enumerate(self.names) if effects[j] >> b & 1),
                *((tuple(brains[j].tolist()), tuple(doubles[j].tolist())) if not self.mode.plain else ((), ()))))(rows)
        return self.kernels.of(keys, make)


def _split(kernel: tuple) -> tuple[tuple, tuple]:
    """`_kernel`'s result as `_Kernels` keeps it: the per-result arrays, then the per-roll numbers."""
    return kernel[:4], kernel[4:]


_DELTAS = 64  # room for every delta a roll shows, -32..31 brains
_CHUNK = 3_000_000  # results of rolls worked out at once (memory), at least one state's


def _search(mode: Mode, start: DiceState, recycle: str) -> tuple:
    """Breadth-first search from `start` on codes (see `table_for`), a chunk of the queue at a time.

    States are numbered as a breadth-first search that takes each state's results in `roll.transitions`'
    order numbers them: new states by their first appearance among the results of the states before them
    in the queue, each state's results in order. Returns the states' codes, and per state (sorted by
    delta, then target) the rolls' deltas, targets and ways, the denominator, bust and self-loop ways."""
    codes = _codes(mode)
    interned = _Interned()
    interned.ids(np.array([codes.code(start)], dtype=np.int64))
    kernels, faces = _Kernels(), _Faces(mode)
    ptr_parts, delta_parts, to_parts, ways_parts, den_parts, bust_parts, loop_parts = [], [], [], [], [], [], []
    lo = 0
    while lo < interned.count:
        chunk = interned.values[lo:lo + 16384]
        kid = kernels.of(codes.kernel_keys(chunk), partial(_ordinary, faces, recycle, chunk))
        length = kernels.length[kid]
        cut = max(1, int(np.searchsorted(np.cumsum(length), _CHUNK, side="right")))
        hi, chunk, kid = lo + cut, chunk[:cut], kid[:cut]
        add, shown, gain, ways = kernels.flat
        den, bust_at = (x[kid] for x in kernels.per)
        room = bust_at - codes.shotgun_counts(chunk)
        # every result of every state, state after state, each state's in order
        parent, pos = _spread(kernels.start, kernels.length, kid)
        busted = shown[pos] >= room[parent]
        bust = np.bincount(parent[busted], weights=ways[pos[busted]], minlength=cut).astype(np.int64)
        ok = ~busted
        parent, pos = parent[ok], pos[ok]
        target_idx = interned.ids(chunk[parent] + add[pos])
        n = interned.count
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
    return (interned.values, edge_ptr, *(np.concatenate(x) for x in (
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
    """Breadth-first search from the empty turn over every roll; kept (`kept`: every whole table, the last few
    rooted ones).

    With `root`, the search starts from that dice state instead: the table then holds only the states
    a turn can reach from there (state 0 is the root), which is all a question about one mid-turn
    position needs; Double Feature modes answer positions this way (see odds.py).

    The search is `roll.transitions` on arrays (`_search`): states that share the next roll's dice, effects
    and rescuable brains (`_Codes.kernel_keys`) share its results up to a shift of their codes, so each such
    roll is worked out once and every state's results are a vector sum; probabilities stay integer ways
    over a denominator per state.
    """
    return _whole_table(mode_name, recycle) if root is None else _rooted_table(mode_name, recycle, root)


@kept("whole")
def _whole_table(mode_name: str, recycle: str) -> Table:
    return _table(mode_name, recycle, None)


@kept("rooted")
def _rooted_table(mode_name: str, recycle: str, root: DiceState) -> Table:
    return _table(mode_name, recycle, root)


def _table(mode_name: str, recycle: str, root: DiceState | None) -> Table:
    mode = MODES[mode_name]
    empty = tuple(0 for _ in mode.counts)
    start = DiceState(empty, empty, empty) if mode.plain else DiceState(empty, empty, empty, empty, empty, empty)
    start = root if root is not None else start
    codes, ptr, delta, to, ways, den, bust, loop = _search(mode, start, recycle)
    n = len(codes)
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
        codes=codes,
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
    decision node), all at the same score. Each is held as flat arrays (CSR: row ``i`` from
    ``ptr[i]`` to ``ptr[i + 1]``), the tuples built from them when asked for.
    """

    mode: Mode
    recycle: str
    dice_codes: np.ndarray  # per node: its dice's code (`_Codes`; the stopped node: the start's)
    subs: np.ndarray  # per node: its kind and phase or flag (`_node_key`), times _TOKENS, plus its shotgun tokens
    kind: np.ndarray
    shotguns: np.ndarray
    can_stop: np.ndarray
    act_ptr: np.ndarray  # the actions of decision node i, in legal order: act_ptr[i] <= k < act_ptr[i + 1]
    act_to: np.ndarray  # the chance node each rolls
    act_name: np.ndarray  # its name, a place in `BUS_ACTIONS`
    edge_ptr: np.ndarray  # the results of chance node i: edge_ptr[i] <= k < edge_ptr[i + 1], by delta then node
    edge_delta: np.ndarray
    edge_to: np.ndarray
    edge_ways: np.ndarray
    loop_ptr: np.ndarray  # the loops of chance node i, in the order its roll first shows them
    loop_to: np.ndarray
    loop_ways: np.ndarray
    bust_ways: np.ndarray  # per chance node
    den_ways: np.ndarray  # per chance node: every probability of its roll is ways / den_ways
    opt_ptr: np.ndarray  # the choices of tyre node i
    opt_to: np.ndarray  # the decision node each leads to
    opt_name: np.ndarray  # the brain each gives up, a place in `give_up`
    give_up: tuple[str, ...]
    bust_f: np.ndarray
    gain_f: np.ndarray  # per chance node: E[brains; no bust], loops included (they show none)
    blocks: tuple[tuple[np.ndarray, ...], ...]
    cyclic: tuple[bool, ...]
    min_delta: int
    max_delta: int
    root: BusState | None = None

    start = 0

    def __len__(self) -> int:
        return len(self.kind)

    @cached_property
    def actions(self) -> tuple[tuple[tuple[str, int], ...], ...]:
        """Per node: (name, chance node) of each of its actions but stop, in legal order."""
        names = [BUS_ACTIONS[a] for a in self.act_name.tolist()]
        return _rows(self.act_ptr, list(zip(names, self.act_to.tolist())))

    @cached_property
    def options(self) -> tuple[tuple[tuple[str, int], ...], ...]:
        """Per node: (brain given up, decision node) of each of its tyre tracks' choices."""
        return _rows(self.opt_ptr, list(zip([self.give_up[w] for w in self.opt_name.tolist()], self.opt_to.tolist())))

    @cached_property
    def loops(self) -> tuple[tuple[tuple[int, int], ...], ...]:
        """Per node: (decision node, ways) of each result of its roll that can roll it again at once."""
        return _rows(self.loop_ptr, list(zip(self.loop_to.tolist(), self.loop_ways.tolist())))

    @cached_property
    def bust(self) -> tuple[int, ...]:
        """Per node: the ways of its roll that bust."""
        return tuple(self.bust_ways.tolist())

    @cached_property
    def denominator(self) -> tuple[int, ...]:
        """Per node: its roll's denominator (every probability of it is ways / denominator)."""
        return tuple(self.den_ways.tolist())

    @cached_property
    def matrices(self) -> dict[int, sp.csr_matrix]:
        """Per delta, the probabilities of the results of every roll that shows it: row a chance node, column the
        node it leads to (column n: a sentinel the sweep pads with)."""
        return _delta_matrices(self, np.arange(len(self)), len(self))

    @cached_property
    def keys(self) -> tuple:
        """Every node's key, by number (built on first use: a whole bus table's 600,000 take seconds)."""
        used, at = np.unique(self.dice_codes, return_inverse=True)
        states = _codes(self.mode).states(used)
        subs, tokens = (self.subs // _TOKENS).tolist(), (self.subs % _TOKENS).tolist()
        return tuple(_node_key(states[j], sub, t) for j, sub, t in zip(at.tolist(), subs, tokens))

    @cached_property
    def index(self) -> KeyIndex:
        """Node key -> number."""
        codes = _codes(self.mode)

        def encode(key: object) -> tuple[int, int] | None:
            if key == ("stopped",):
                stopped = np.flatnonzero(self.subs == _STOP * _TOKENS)
                return (int(self.dice_codes[stopped[0]]), _STOP * _TOKENS) if len(stopped) else None
            parts = _node_parts(key)
            return None if parts is None else (codes.code(parts[0]), parts[1] * _TOKENS + parts[2])

        def decode(i: int) -> object:
            sub = int(self.subs[i])
            return _node_key(codes.state(int(self.dice_codes[i])), sub // _TOKENS, sub % _TOKENS)

        return KeyIndex(self.dice_codes, self.subs, encode, decode)

    @property
    def compulsory(self) -> bool:
        return not self.can_stop[self.start]

    @cached_property
    def edges(self) -> tuple[tuple[tuple[int, int, int], ...], ...]:
        """Per node: (delta, node, ways) of every result but the loops; p = ways / denominator."""
        results = list(zip(self.edge_delta.tolist(), self.edge_to.tolist(), self.edge_ways.tolist()))
        ptr = self.edge_ptr.tolist()
        return tuple(tuple(results[a:b]) for a, b in zip(ptr[:-1], ptr[1:]))

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
    def offsets(self) -> np.ndarray:
        """Per block, how many levels behind block 0's the sweep's wavefront solves it (`policy.bus_sweep`). A node
        reads earlier blocks at its own level and above, and ``-delta`` levels below through a roll that loses
        brains (tyre tracks, YIELD): a block runs at least as far behind as the block before it (then the earlier
        blocks' levels at and above its own are done first), and at least ``-delta`` levels further behind than
        each earlier block such a roll reaches. The least such offsets."""
        src, dst, lose = self.falls
        src, dst = self.block_of[src], self.block_of[dst]
        cross = (dst >= 0) & (dst != src)
        out = np.zeros(len(self.blocks), dtype=np.int64)
        for b in range(1, len(self.blocks)):
            pick = cross & (src == b)
            out[b] = max(int(out[b - 1]), int((out[dst[pick]] + lose[pick]).max(initial=0)))
        return out

    @cached_property
    def falls(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every roll's result that loses brains (tyre tracks, YIELD): the chance node, the node it leads to and the
        brains lost."""
        fall = np.flatnonzero(self.edge_delta < 0)
        return owners(self.edge_ptr, fall), self.edge_to[fall].astype(np.int64), -self.edge_delta[fall].astype(np.int64)

    @cached_property
    def back_nodes(self) -> np.ndarray:
        """The nodes a roll reaches at a lower level of its own block (rescues with YIELD), sorted."""
        src, dst, _ = self.falls
        return np.unique(dst[self.block_of[dst] == self.block_of[src]])

    @cached_property
    def ways(self) -> sp.csr_matrix:
        """Every roll's results as exact ways in one integer matrix: row a chance node, column
        ``(delta - min_delta) * (n + 1) + node`` (the probability is ways / denominator; loops excluded)."""
        n, width = len(self), self.max_delta - self.min_delta + 1
        columns = self.edge_to + (self.edge_delta.astype(np.int64) - self.min_delta) * (n + 1)  # (ascending per row)
        return sp.csr_matrix((self.edge_ways.astype(np.uint64), columns, self.edge_ptr), shape=(n, width * (n + 1)))

    def padded_options(self, tyre: np.ndarray) -> np.ndarray:
        """Tyre nodes' choices (decision nodes), a row each, padded with the sentinel ``len(self)``."""
        return _padded(self.opt_ptr, self.opt_to, tyre, len(self))

    @cached_property
    def layer_arrays(self) -> tuple[tuple[dict, ...], ...]:
        """Per block, per layer, what the sweep needs, sliced once (see `policy.bus_sweep`)."""
        n = len(self)
        out = []
        for block in self.blocks:
            layers = []
            for layer in block:
                kinds = self.kind[layer]
                chance, decision, tyre = (layer[kinds == k] for k in (CHANCE, DECISION, TYRE))
                layers.append({"chance": chance, "decision": decision, "tyre": tyre,
                               "mats": tuple(_delta_matrices(self, chance, n).items()),
                               "loops": self._loop_arrays(chance),
                               "actions": _padded(self.act_ptr, self.act_to, decision, n),
                               "options": self.padded_options(tyre)})
            out.append(tuple(layers))
        return tuple(out)

    def _loop_arrays(self, chance: np.ndarray) -> list[tuple[np.ndarray, ...]]:
        """The chance nodes with loops (most have none), grouped by how many: their rows of `chance`, and per loop its
        decision, its probability and that decision's other actions (padded with the sentinel to two)."""
        n = len(self)
        count = self.loop_ptr[chance + 1] - self.loop_ptr[chance]
        out = []
        for k in np.unique(count[count > 0]).tolist():
            looped = np.flatnonzero(count == k)
            c = chance[looped]
            at = self.loop_ptr[c][:, None] + np.arange(k)
            succ = self.loop_to[at].astype(np.int64)
            prob = self.loop_ways[at] / self.den_ways[c][:, None]
            acts = _padded(self.act_ptr, self.act_to, succ.ravel(), n, 2).reshape(len(c), k, 2)
            rolls_c = acts == c[:, None, None]
            other = acts.copy()
            other[..., 0] = np.where(rolls_c[..., 0], acts[..., 1], acts[..., 0])
            other[..., 1] = np.where(rolls_c.any(axis=2), n, acts[..., 1])
            out.append((looped, succ, prob, other))
        return out


def _delta_matrices(table: BusTable, rows: np.ndarray, n: int) -> dict[int, sp.csr_matrix]:
    """Per delta shown (ascending), the probabilities of the results of the rolls of chance nodes `rows`: a row each,
    a column per node and the sentinel (n)."""
    counts = table.edge_ptr[rows + 1] - table.edge_ptr[rows]
    at = spread(table.edge_ptr, rows)
    row = np.repeat(np.arange(len(rows)), counts)
    delta = table.edge_delta[at]
    p = table.edge_ways[at] / table.den_ways[rows][row]
    out = {}
    for d in np.unique(delta).tolist():
        pick = np.flatnonzero(delta == d)
        ptr = np.searchsorted(row[pick], np.arange(len(rows) + 1))
        out[d] = sp.csr_matrix((p[pick], table.edge_to[at[pick]], ptr), shape=(len(rows), n + 1))
    return out


@cache
def _bus_faces() -> tuple[np.ndarray, ...]:
    """The bus die's faces by group (`roll._bus_groups`): brains, shotguns, effect (1 STOP, 2 tyre tracks, else
    0), sides, and each group's first face and number of faces (as `_spread` reads them)."""
    faces = [(f.brains, f.shotguns, {"stop": 1, "tyre-tracks": 2}.get(f.effect, 0), sides)
             for _, group in _bus_groups() for f, sides in group]
    length = np.array([len(group) for _, group in _bus_groups()], dtype=np.int64)
    return (*(np.array(c, dtype=np.int64) for c in zip(*faces)), np.cumsum(length) - length, length)


@cache
def _bus_faces_arrays(mode: Mode, rolled: tuple[int, ...], effects: tuple[str, ...], brains: tuple[int, ...],
                      double_brains: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """`_faces_arrays` for the ordinary dice of a bus roll, once per group of bus faces (`roll._bus_groups`) with
    its `roll.bus_step` applied, result after result, the groups of each together: the group, the code added
    (hand and effects replaced), shotguns counted, brains gained, rise of the bust threshold, ways."""
    codes = _codes(mode)
    groups = _bus_groups()
    out: list[tuple] = []
    rows = _plain_settled(mode, rolled) if mode.plain else _summed(mode, rolled, effects, brains, double_brains)
    for (hand, b, d, s, ds, aside, now, rb, rd, _), w, shots, gained, bonus in rows:
        for g, (effect, faces) in enumerate(groups):
            h2, b2, s2, ds2 = bus_step(faces[0][0], hand, b, s, ds) if effect else (hand, b, s, ds)
            add = codes.fields_code(h2, tuple(map(_add, b2, rb)), s2, tuple(map(_add, d, rd)), ds2, aside)
            out.append((g, add + codes.effects_code(now), 0 if effect == "yield" else shots,
                        gained + (sum(hand) if effect == "dead-end" else 0), bonus, w))
    return tuple(np.array(c, dtype=np.int64) for c in zip(*out))


# A node's key during the search: ((dice * _SUBS + sub) * _TOKENS + shotgun tokens), dice interned as numbers.
# sub: a decision's phase * 2 + brain-token flag (0-5), an ordinary roll's phase after it (6 ready, 7 out), a bus
# roll's token flag (8, 9), tyre tracks' token flag (10, 11), the turn ended by STOP (12).
_SUBS, _TOKENS = 16, 32
_ROLL, _BUS, _TYRE, _STOP = 6, 8, 10, 12
BUS_ACTIONS = ("roll", "get-off", "board", "stay")
_PHASES = ("ready", "riding", "out")
_AFTER = ("ready", "out")  # an ordinary roll's phase after it


def _node_key(dice: DiceState, sub: int, tokens: int) -> object:
    """A bus node's public key (see `BusTable`): its dice, sub and shotgun tokens."""
    if sub < _ROLL:
        return BusState(dice, _PHASES[sub // 2], sub % 2, tokens)
    if sub < _BUS:
        return ("roll", dice, _AFTER[sub - _ROLL], tokens)
    if sub < _TYRE:
        return ("bus", dice, sub - _BUS, tokens)
    if sub < _STOP:
        return TyreTracks(dice, sub - _TYRE, tokens)
    return ("stopped",)


def bus_node_code(mode: Mode, key: object) -> tuple[int, int] | None:
    """The integers a bus table knows a node key by (`BusTable.dice_codes`, `BusTable.subs`), None for what is no
    node's key (the stopped node's dice are the start's)."""
    parts = _node_parts(key)
    return None if parts is None else (_codes(mode).code(parts[0]), parts[1] * _TOKENS + parts[2])


def _node_parts(key: object) -> tuple[DiceState, int, int] | None:
    """`_node_key` undone: (dice, sub, shotgun tokens), or None for what is no node's key (the stopped node's dice
    are the start's: `BusTable.index` finds it by its sub)."""
    if isinstance(key, BusState):
        return key.dice, _PHASES.index(key.phase) * 2 + key.tokens, key.shotguns
    if isinstance(key, TyreTracks):
        return key.dice, _TYRE + key.tokens, key.shotguns
    if isinstance(key, tuple) and len(key) == 4 and key[0] in ("roll", "bus"):
        sub = _ROLL + _AFTER.index(key[2]) if key[0] == "roll" else _BUS + key[2]
        return key[1], sub, key[3]
    return None


_NONE = (np.zeros(0, dtype=np.int64),) * 3 + (lambda p, ids: None,)  # no node of a kind on this level


def _compact(parent: np.ndarray, delta: np.ndarray, child: np.ndarray, ways: np.ndarray) -> tuple[np.ndarray, ...]:
    """Roll results as the search keeps them: int32 nodes and ways, int16 deltas (the sequel's bus turn has 71
    million; its denominators, and so its ways, stay below 2**30)."""
    if len(ways) and int(ways.max()) >= 2**31:
        raise OverflowError("a roll's ways do not fit 32 bits")
    return parent.astype(np.int32), delta.astype(np.int16), child.astype(np.int32), ways.astype(np.int32)


def _merged_results(chunks: list[tuple[np.ndarray, ...]], n: int) -> tuple[np.ndarray, ...]:
    """One level's roll results (`_compact`, nodes below `n`) merged per (node, delta, target), in that order: the
    nodes, deltas, targets, summed ways, and where each first appeared among them (a loop's place among its node's)."""
    ri, rd, rj, rw = (np.concatenate(c) for c in zip(*chunks))
    low = int(rd.min(initial=0))
    key = (ri.astype(np.int64) * (int(rd.max(initial=0)) - low + 1) + (rd - low)) * n + rj
    sort = np.argsort(key, kind="stable")
    first = np.flatnonzero(np.concatenate([[True], np.diff(key[sort]) != 0]))
    del key
    if not len(sort):
        return ri, rd, rj, rw, sort.astype(np.int32)
    met = np.minimum.reduceat(sort, first).astype(np.int32)
    rw = np.add.reduceat(rw[sort], first)
    pick = sort[first]
    return ri[pick], rd[pick], rj[pick], rw, met


class _BusSearch:
    """The breadth-first search behind `bus_table_for`, a whole level of nodes at a time, on integer keys.

    A node's successors (a decision's actions, a roll's results that do not bust, tyre tracks' choices) are
    numbered in the order a queue would meet them: level after level, node after node, each node's in order.
    Every dice state's ordinary roll (`_ordinary`, as `_search` reads it) and bus roll (`roll._bus_roll_groups` on
    arrays, face by face: `_bus_kernel`) is worked out once per kernel key and applied to every bus status (phase,
    token flag, shotgun tokens) at once, as `roll.bus_results` does one at a time (tests compare the two)."""

    def __init__(self, mode: Mode, recycle: str):
        self.mode, self.recycle, self.codes = mode, recycle, _codes(mode)
        self.dice, self.nodes = _Interned(), _Interned()
        k = self.k = len(mode.counts)
        w = self.codes.weights
        self.w_hand, self.w_brain = w[:k], w[k:2 * k]
        self.w_double = w[3 * k:4 * k] if not mode.plain else np.zeros(k, dtype=np.int64)
        self.ordinary, self.bus, self.faces = _Kernels(), _Kernels(), _Faces(mode)
        # what the search keeps: (parent, slot, name, child) of actions and options; rolls' results
        self.acts: list[tuple[np.ndarray, ...]] = []
        self.opts: list[tuple[np.ndarray, ...]] = []
        self.results: list[tuple[np.ndarray, ...]] = []
        self.rolled: list[tuple[np.ndarray, ...]] = []  # (chance node, bust ways, denominator)

    # -- dice ----------------------------------------------------------------------------------------------
    def _ordinary_kernels(self, code: np.ndarray):
        """A `_Kernels` maker of ordinary rolls (`_ordinary`), each kernel's ways and denominator divided by their
        greatest common divisor."""
        def make(rows: np.ndarray) -> tuple:
            (add, shown, gain, ways), start, length, (den, bust_at) = _ordinary(self.faces, self.recycle, code, rows)
            order = np.argsort(start)  # the kernels as their rows lie, one after another
            common = np.empty_like(den)
            common[order] = np.gcd(np.gcd.reduceat(ways, start[order]), den[order])
            ways = ways // np.repeat(common[order], length[order])
            return (add, shown, gain, ways), start, length, (den // common, bust_at)
        return make

    def _bus_kernel(self, dice: DiceState) -> tuple[tuple, tuple]:
        """The bus roll (`roll._bus_roll_groups` on arrays), face by face: bus brains and shotguns, effect (1 STOP,
        2 tyre tracks), code added, brains gained, shotguns in the pile, bust threshold, brains in the pile, ways;
        results that agree on all of these merged, in the order they first appear."""
        mode = self.mode
        pile, ways, shift, parts = _draws(mode, dice, mode.dice_per_roll - 1 - sum(dice.hand), self.recycle,
                                          _bus_faces_arrays)
        den = ways * len(mode.dice[0].faces) ** (mode.dice_per_roll - 1) * len(BUS.faces)
        group, add, counted, gain, bonus = (np.concatenate([a[i] for a, _ in parts]) for i in range(5))
        w = np.concatenate([a[5] * w for a, w in parts])
        cols = np.stack([group, add, counted, gain, bonus], axis=1)
        order = np.lexsort(cols.T)
        start = np.flatnonzero(np.concatenate([[True], (np.diff(cols[order], axis=0) != 0).any(axis=1)]))
        first = np.minimum.reduceat(order, start)  # each distinct result's first row
        w = np.add.reduceat(w[order], start)
        keep = np.argsort(first)
        group, add, counted, gain, bonus = cols[first[keep]].T
        w = w[keep]
        fb, fs, effect, sides, start, length = _bus_faces()
        r, pos = _spread(start, length, group)
        rows = (fb[pos], fs[pos], effect[pos], (add + shift)[r], gain[r], (pile.shotgun_count + counted)[r],
                (pile.bust_at(mode) + bonus)[r], (pile.pile_brains + gain)[r], w[r] * sides[pos])
        return rows, (den, dice.shotgun_count, dice.pile_brains)

    def give_up(self, codes: np.ndarray, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Tyre tracks' choices (`roll.give_up`) of many dice at once: per choice, whose (row of `codes`),
        which (0 token, 1 + 2k a die of kind k, 2 + 2k its double, -1 nothing) and the dice code after."""
        brains = self.codes.digits(codes, 1)
        doubles = np.zeros_like(brains) if self.mode.plain else self.codes.digits(codes, 3)
        cols = [tokens > 0]
        after = [codes]
        for k in range(self.k):
            cols += [brains[:, k] > doubles[:, k], doubles[:, k] > 0]
            after += [codes - self.w_brain[k], codes - self.w_brain[k] - self.w_double[k]]
        mask = np.stack(cols, axis=1)
        nothing = ~mask.any(axis=1)
        mask = np.concatenate([mask, nothing[:, None]], axis=1)
        after = np.stack(after + [codes], axis=1)
        row, col = np.nonzero(mask)  # row-major: each row's choices in order
        which = np.where(col == mask.shape[1] - 1, -1, col)
        return row, which, after[row, col]

    def give_up_names(self) -> tuple[str, ...]:
        names = ["token"]
        for die in self.mode.die_names:
            names += [die, f"double:{die}"]
        return (*names, "nothing")

    # -- nodes ---------------------------------------------------------------------------------------------
    def keys(self, codes: np.ndarray, sub: np.ndarray | int, shotguns: np.ndarray | int) -> np.ndarray:
        if np.any(np.asarray(shotguns) >= _TOKENS):
            raise ValueError("more shotgun tokens than the table's keys allow")
        return (self.dice.ids(codes) * _SUBS + sub) * _TOKENS + shotguns

    def run(self, start: BusState) -> None:
        """The search from `start`. Each kind of node on a level gives (parent, place among the parent's successors,
        successor's key, what to keep once the successors are numbered); the successors are numbered together,
        node after node, each node's in place order, so the numbering is a queue's."""
        code = np.array([self.codes.code(start.dice)], dtype=np.int64)
        self.nodes.ids(self.keys(code, _PHASES.index(start.phase) * 2 + start.tokens, start.shotguns))
        level = np.zeros(1, dtype=np.int64)
        while len(level):
            key = self.nodes.values[level]
            x, sub, s = key // (_SUBS * _TOKENS), key // _TOKENS % _SUBS, key % _TOKENS
            code = self.dice.values[x]
            found = [self.decide(level, sub, s, code), self.tyre(level, sub, s, code),
                     self.roll(level, sub, s, code), self.ride(level, sub, s, code)]
            parent = np.concatenate([f[0] for f in found])
            order = np.lexsort((np.concatenate([f[1] for f in found]), parent))  # node after node, each's in order
            before = self.nodes.count
            ids = np.empty(len(order), dtype=np.int64)
            ids[order] = self.nodes.ids(np.concatenate([f[2] for f in found])[order])
            at = np.cumsum([0] + [len(f[0]) for f in found])
            held = len(self.results)
            for (p, _, _, keep), a, b in zip(found, at[:-1], at[1:]):
                keep(p, ids[a:b])
            if len(self.results) > held:  # (parents of one level: disjoint from every other level's, and after them)
                self.results[held:] = [_merged_results(self.results[held:], self.nodes.count)]
            level = np.arange(before, self.nodes.count)

    def decide(self, level, sub, s, code):
        """Decisions' actions (`roll.legal_actions` but stop): slot, action name, the roll's key."""
        pick = sub < _ROLL
        node, phase, tokens, s, code = level[pick], sub[pick] // 2, sub[pick] % 2, s[pick], code[pick]
        d = self.codes.digits(code)
        k = self.k
        hand = d[:, :k]
        turn_start = ~(d[:, :3 * k].any(axis=1) | (d[:, 5 * k:].any(axis=1) if not self.mode.plain else False))
        empty = code - hand @ self.w_hand
        riding = phase == 1
        # first action: roll (ready), roll (out), stay (riding); second: board (ready, not the turn start, room
        # in the hand), get-off (riding)
        first_name = np.where(riding, 3, 0)
        first = np.where(riding, self.keys(empty, _BUS + tokens, s),
                         self.keys(code, _ROLL + (phase == 2), s))
        board = (phase == 0) & ~turn_start & (hand.sum(axis=1) < self.mode.dice_per_roll)
        second = riding | board
        names2 = np.where(riding, 1, 2)[second]
        keys2 = np.where(riding, self.keys(code, _ROLL + 1, s), self.keys(code, _BUS, 0))[second]
        # legal order: (roll, board) before boarding, (stay, get-off) riding
        parent = np.concatenate([node, node[second]])
        slot = np.concatenate([np.zeros(len(node), dtype=np.int64), np.ones(second.sum(), dtype=np.int64)])
        names = np.concatenate([first_name, names2])

        def keep(p, ids):
            self.acts.append((p, slot, names, ids.astype(np.int32)))  # (a copy: not a view holding the level's)
        return parent, slot, np.concatenate([first, keys2]), keep

    def tyre(self, level, sub, s, code):
        pick = (sub >= _TYRE) & (sub < _STOP)
        node, tokens, s = level[pick], sub[pick] - _TYRE, s[pick]
        row, which, after = self.give_up(code[pick], tokens)
        slot = np.arange(len(row)) - np.searchsorted(row, row)

        def keep(p, ids):
            self.opts.append((p, slot, which, ids.astype(np.int32)))
        return node[row], slot, self.keys(after, 2 * 2, s[row]), keep

    def roll(self, level, sub, s, code):
        """Ordinary rolls: every result of the dice's kernel; those that bust are counted, not kept."""
        pick = (sub >= _ROLL) & (sub < _BUS)
        node, out, s, code = level[pick], sub[pick] - _ROLL, s[pick], code[pick]
        if not len(node):
            return _NONE
        kid = self.ordinary.of(self.codes.kernel_keys(code), self._ordinary_kernels(code))
        add, shown, gain, ways = self.ordinary.flat
        den, bust_at = self.ordinary.per
        room = bust_at[kid] - self.codes.shotgun_counts(code) - s
        r, pos = _spread(self.ordinary.start, self.ordinary.length, kid)
        busted = shown[pos] >= room[r]
        bust = np.bincount(r[busted], weights=ways[pos[busted]], minlength=len(node)).astype(np.int64)
        self.rolled.append((node, bust, den[kid]))
        r, pos = r[~busted], pos[~busted]
        keys = self.keys(code[r] + add[pos], 4 * out[r], s[r])  # (a decision: ready 0 or out 4, no token)

        def keep(p, ids):
            self.results.append(_compact(p, gain[pos], ids, ways[pos]))
        return node[r], pos, keys, keep

    def ride(self, level, sub, s, code):
        """Bus rolls, face by face: STOP ends the turn, tyre tracks take a brain (a choice, or the only one), the
        rest leave the player riding, with a brain token once the bus showed a brain."""
        pick = (sub >= _BUS) & (sub < _TYRE)
        node, tokens, s, code = level[pick], sub[pick] - _BUS, s[pick], code[pick]
        if not len(node):
            return _NONE
        make = _each(self._bus_kernel, lambda r: self.codes.state(int(code[r])))
        kid = self.bus.of(self.codes.kernel_keys(code), make)
        fb, fs, effect, add, gain, count, top, left, ways = self.bus.flat
        den, shotguns, brains = self.bus.per
        r, pos = _spread(self.bus.start, self.bus.length, kid)
        more = (self.codes.shotgun_counts(code) - shotguns[kid])[r]
        tokens_after = s[r] + fs[pos]
        busted = count[pos] + more + tokens_after >= top[pos]
        bust = np.bincount(r[busted], weights=ways[pos[busted]], minlength=len(node)).astype(np.int64)
        self.rolled.append((node, bust, den[kid]))
        ok = ~busted
        r, pos, tokens_after = r[ok], pos[ok], tokens_after[ok]
        after = code[r] + add[pos]
        tok = tokens[r]
        delta = gain[pos] + fb[pos]
        keys = self.keys(after, 1 * 2 + ((tok > 0) | (fb[pos] > 0)), tokens_after)
        keys[effect[pos] == 1] = _STOP * _TOKENS  # (dice 0, sub STOP: one node)
        tyre = np.flatnonzero(effect[pos] == 2)
        if len(tyre):
            held = (tok[tyre] > 0) | (left[pos[tyre]] + (self.codes.pile_brains(code) - brains[kid])[r[tyre]] > 0)
            delta[tyre] -= held
            row, _, choice = self.give_up(after[tyre], tok[tyre])
            single = np.bincount(row, minlength=len(tyre)) == 1  # the only choice: no tyre node, its decision
            only = after[tyre].copy()
            only[row[single[row]]] = choice[single[row]]
            keys[tyre] = np.where(single, self.keys(only, 2 * 2, tokens_after[tyre]),
                                  self.keys(after[tyre], _TYRE + tok[tyre], tokens_after[tyre]))

        def keep(p, ids):
            self.results.append(_compact(p, delta, ids, ways[pos]))
        return node[r], pos, keys, keep


def bus_table_for(mode_name: str, recycle: str = "before-draw", root: BusState | None = None) -> BusTable:
    """Breadth-first search over every School Bus node from the turn start (or from `root`); kept (`kept`: every
    mode's whole table, the last rooted one)."""
    return (_bus_whole if root is None else _bus_rooted)(mode_name, recycle, root)


def _csr(parent: np.ndarray, slot: np.ndarray, n: int, *columns: np.ndarray) -> tuple[np.ndarray, ...]:
    """Items of `n` nodes, given as (parent, place among its items) and their `columns`, as CSR arrays: the pointers,
    then each column in order (actions, options, loops)."""
    order = np.lexsort((slot, parent))
    return np.searchsorted(parent[order], np.arange(n + 1)), *(c[order] for c in columns)


def _bus_table(mode_name: str, recycle: str, root: BusState | None) -> BusTable:
    mode = MODES[mode_name]
    empty = tuple(0 for _ in mode.counts)
    dice = DiceState(empty, empty, empty) if mode.plain else DiceState(empty, empty, empty, empty, empty, empty)
    start = root if root is not None else BusState(dice)
    search = _BusSearch(mode, recycle)
    search.run(start)
    key, dice_codes, give_up_names = search.nodes.values, search.dice.values, search.give_up_names()
    acts, opts, rolled, results = search.acts, search.opts, search.rolled, search.results
    del search  # (its rolls' kernels: a gigabyte for the sequel)
    n = len(key)
    x, sub, s = key // (_SUBS * _TOKENS), key // _TOKENS % _SUBS, key % _TOKENS
    code = dice_codes[x]
    kind = np.select([sub < _ROLL, sub < _TYRE, sub < _STOP], [DECISION, CHANCE, TYRE], STOPPED).astype(np.int8)
    shotguns = np.where(kind == STOPPED, 0, _codes(mode).shotgun_counts(code) + s)
    ai, a_slot, name, ac = (np.concatenate(c) for c in zip(*acts))
    act_ptr, act_to, act_name = _csr(ai, a_slot, n, ac, name.astype(np.int8))
    oi, o_slot, which, oo = (np.concatenate(c) for c in zip(*opts)) if opts else (np.zeros(0, dtype=np.int64),) * 4
    opt_ptr, opt_to, opt_name = _csr(oi, o_slot, n, oo.astype(np.int32), which.astype(np.int8))
    rolled, bust_ways, den_ways = (np.concatenate(c) for c in zip(*rolled))
    den = np.ones(n, dtype=np.int64)
    den[rolled] = den_ways
    bust = np.zeros(n, dtype=np.int64)
    bust[rolled] = bust_ways
    # every result of every chance node, merged per (node, delta, target) level by level (`_merged_results`): the
    # levels one after another are in that order; each column joined while the levels' copies of it are let go
    columns: list = list(zip(*results))
    del results
    for k, column in enumerate(columns):
        columns[k] = np.concatenate(column)
    ri, rd, rj, rw, met = columns
    del columns, column
    # a result is a loop when it shows no brain and is a decision that can roll the same chance node again
    rolls = np.full((n, 2), -1, dtype=np.int32)  # per decision, the chance nodes its actions roll (at most two)
    rolls[ai, a_slot] = ac
    zero = np.flatnonzero(rd == 0)
    is_loop = np.zeros(len(ri), dtype=bool)
    is_loop[zero[(rolls[rj[zero], 0] == ri[zero]) | (rolls[rj[zero], 1] == ri[zero])]] = True
    del zero
    li, lj, lw = ri[is_loop], rj[is_loop], rw[is_loop]
    loop_ptr, loop_to, loop_ways = _csr(li, met[is_loop], n, lj, lw)
    del met
    keep = ~is_loop
    ri, rd, rj, rw = ri[keep], rd[keep], rj[keep], rw[keep]
    del keep, is_loop
    edge_ptr = np.searchsorted(ri, np.arange(n + 1))
    # blocks in sweep order: the bus out (0), tyre tracks (1), the bus not out yet (2); most shotguns first in each
    phase_out = ((sub < _ROLL) & (sub // 2 == 2)) | (sub == _ROLL + 1)
    group = np.where(kind == TYRE, 1, np.where(phase_out, 0, 2))
    block_key = np.where(kind == STOPPED, -1, group * _TOKENS * 4 + (_TOKENS * 4 - 1 - shotguns))
    order, block_of = np.unique(block_key, return_inverse=True)
    block_of = block_of.reshape(-1) - (order[0] == -1)  # (the stopped node: -1)
    n_blocks = len(order) - (order[0] == -1)
    if (block_of[ac] > block_of[ai]).any():
        raise ValueError("an action leads to a later block")
    b_from, b_to = (block_of.astype(np.int16)[r] for r in (ri, rj))
    if (b_to > b_from).any():
        raise ValueError("a roll leads to a later block")
    same = b_to == b_from
    cyclic = [False] * n_blocks
    for b in np.unique(b_from[same & (rd < 0)]).tolist():
        cyclic[b] = True  # a rescue with YIELD: a lower score in the same block
    if (block_of[oo] >= block_of[oi]).any():
        raise ValueError("tyre tracks lead to a node not yet solved")
    # (i, j): i is computed after j at the same score: an action rolling a chance node of its own block, a roll
    # showing no brain within its block, and a loop's decision's other actions within the block
    other = rolls[lj]
    pick = (other >= 0) & (other != li[:, None])
    bi, ba = np.broadcast_to(li[:, None], other.shape)[pick], other[pick]
    inside = block_of[ac] == block_of[ai], same & (rd == 0), block_of[ba] == block_of[bi]
    src = np.concatenate([ai[inside[0]], ri[inside[1]], bi[inside[2]]])
    dst = np.concatenate([ac[inside[0]], rj[inside[1]], ba[inside[2]]])
    depth = _depths(n, src, dst)
    blocks = tuple(_layered(np.flatnonzero(block_of == b), depth) for b in range(n_blocks))
    del b_from, b_to, same
    gain = np.zeros(n)  # per chance node, E[brains; no bust]: its results a few million at a time, each node's in one
    cuts = edge_ptr[np.unique(np.searchsorted(edge_ptr, np.arange(0, len(ri), _CHUNK)))].tolist() + [len(ri)]
    for a, b in zip(cuts[:-1], cuts[1:]):
        gain += np.bincount(ri[a:b], weights=rd[a:b] * (rw[a:b] / den[ri[a:b]]), minlength=n)
    max_delta, min_delta = int(rd.max(initial=0)), int(min(0, rd.min(initial=0)))
    root_is_start = root is None or (root.phase == "ready" and not (any(root.dice.hand) or any(root.dice.brains)
                                                                     or any(root.dice.shotguns)
                                                                     or any(root.dice.aside)))
    can_stop = kind == DECISION
    can_stop[0] = not root_is_start
    return BusTable(
        mode=mode, recycle=recycle, dice_codes=code, subs=key % (_SUBS * _TOKENS), kind=kind, shotguns=shotguns,
        can_stop=can_stop, act_ptr=act_ptr, act_to=act_to, act_name=act_name,
        edge_ptr=edge_ptr, edge_delta=rd, edge_to=rj, edge_ways=rw, loop_ptr=loop_ptr, loop_to=loop_to,
        loop_ways=loop_ways, bust_ways=bust, den_ways=den, opt_ptr=opt_ptr, opt_to=opt_to, opt_name=opt_name,
        give_up=give_up_names, bust_f=bust / den, gain_f=gain,
        blocks=blocks, cyclic=tuple(cyclic), min_delta=min_delta, max_delta=max_delta, root=root,
    )


_bus_whole, _bus_rooted = kept("bus whole")(_bus_table), kept("bus rooted")(_bus_table)
