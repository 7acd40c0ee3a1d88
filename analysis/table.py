"""A mode's transition table, built once: every dice state a turn can reach, and every roll from it.

The turn's score does not change how dice move, so the table is over dice states only; a solver
adds the score as a second index. A roll from state ``i`` that shows ``delta`` brains and does not
bust leads to ``(j, T + delta)``: recycling notes the brain pile but does not change the turn's
score ``T = banked + brains in the pile``.

For the solvers the table keeps, per ``delta``, a sparse matrix of float probabilities, the exact
``Fraction`` of every entry, and the bust probability of every state. States are grouped in
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

import numpy as np
import scipy.sparse as sp

from .dice import MODES, Mode
from .position import BusState, DiceState
from .roll import TyreTracks, _bus_rolls, _ordinary_rolls, give_up, legal_actions, transitions

__all__ = ["Table", "table_for", "BusTable", "bus_table_for", "DECISION", "CHANCE", "TYRE", "STOPPED"]


@dataclass(frozen=True, eq=False)
class Table:
    mode: Mode
    recycle: str
    states: tuple[DiceState, ...]
    index: dict[DiceState, int]
    shotguns: np.ndarray  # shotguns set aside, per state
    edges: tuple[tuple[tuple[int, int, Fraction], ...], ...]  # per state: (delta, j, p), self-loop excluded
    bust: tuple[Fraction, ...]  # exact bust probability of the next roll, per state
    self_loop: tuple[Fraction, ...]  # exact probability that a roll leads back to the same state
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


def _layers(states: np.ndarray, zero_edges: list[tuple[int, int]]) -> tuple[np.ndarray, ...]:
    """Split `states` so that every no-brain roll between them leads to an earlier layer.

    Longest-path layering of the no-brain graph restricted to `states` (a DAG once self-loops are
    removed; a cycle is a bug in the rules and raises).
    """
    inside = set(states.tolist())
    succ: dict[int, list[int]] = {i: [] for i in inside}
    for i, j in zero_edges:
        if i in inside and j in inside:
            succ[i].append(j)
    depth: dict[int, int] = {}
    for root in inside:
        stack, on_path = [(root, 0)], set()
        while stack:
            node, k = stack.pop()
            if k == 0:
                if node in depth:
                    continue
                on_path.add(node)
            if k < len(succ[node]):
                stack.append((node, k + 1))
                child = succ[node][k]
                if child in on_path:
                    raise ValueError("no-brain rolls form a cycle: the table cannot be layered")
                if child not in depth:
                    stack.append((child, 0))
            else:
                depth[node] = 1 + max((depth[c] for c in succ[node]), default=-1)
                on_path.discard(node)
    order = np.array([depth[i] for i in states.tolist()])
    return tuple(states[order == d] for d in range(order.max() + 1))


def _blocks(states: tuple[DiceState, ...], zero_edges: list[tuple[int, int]]) -> tuple[tuple[np.ndarray, ...], ...]:
    """Blocks by shotguns set aside, most first (rolls never take a shotgun back)."""
    shotguns = np.array([s.shotgun_count for s in states])
    return tuple(_layers(np.flatnonzero(shotguns == s), zero_edges) for s in sorted(set(shotguns), reverse=True))


@cache
def table_for(mode_name: str, recycle: str = "before-draw", root: DiceState | None = None) -> Table:
    """Breadth-first search from the empty turn over every roll; cached per mode and variant.

    With `root`, the search starts from that dice state instead: the table then holds only the states
    a turn can reach from there (state 0 is the root), which is all a question about one mid-turn
    position needs; Double Feature modes answer positions this way (see odds.py).
    """
    mode = MODES[mode_name]
    empty = tuple(0 for _ in mode.counts)
    start = DiceState(empty, empty, empty) if mode.plain else DiceState(empty, empty, empty, empty, empty, empty)
    start = root if root is not None else start
    index = {start: 0}
    states = [start]
    queue = deque([start])
    edges, bust, loops = [], [], []
    while queue:
        state = queue.popleft()
        out: dict[tuple[int, int], Fraction] = {}
        b = Fraction(0)
        for t in transitions(mode, state, recycle):
            if t.bust:
                b += t.probability
                continue
            if t.state not in index:
                index[t.state] = len(states)
                states.append(t.state)
                queue.append(t.state)
            key = (t.brains, index[t.state])
            out[key] = out.get(key, 0) + t.probability
        here = index[state]
        loops.append(out.pop((0, here), Fraction(0)))
        edges.append(tuple((d, j, p) for (d, j), p in sorted(out.items())))
        bust.append(b)
    n = len(states)
    max_delta = max((d for row in edges for d, _, _ in row), default=0)
    min_delta = min(0, min((d for row in edges for d, _, _ in row), default=0))
    matrices = {}
    for delta in range(min_delta, max_delta + 1):
        rows, cols, vals = [], [], []
        for i, row in enumerate(edges):
            for d, j, p in row:
                if d == delta:
                    rows.append(i)
                    cols.append(j)
                    vals.append(float(p))
        matrices[delta] = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    gain = np.array([float(sum((d * p for d, _, p in row), Fraction(0))) for row in edges])
    zero_edges = [(i, j) for i, row in enumerate(edges) for d, j, _ in row if d == 0]
    return Table(
        mode=mode,
        recycle=recycle,
        states=tuple(states),
        index=index,
        shotguns=np.array([s.shotgun_count for s in states]),
        edges=tuple(edges),
        bust=tuple(bust),
        self_loop=tuple(loops),
        matrices=matrices,
        self_loop_f=np.array([float(x) for x in loops]),
        bust_f=np.array([float(x) for x in bust]),
        gain_f=gain,
        blocks=_blocks(tuple(states), zero_edges),
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

    It reads roll.py's cached rolls of each dice state (`_ordinary_rolls`, `_bus_rolls`) once and maps
    them to every bus status (phase, token flag, shotgun tokens) that rolls those dice, the way
    `roll.bus_results` does one at a time (tests compare the two)."""

    def __init__(self, mode: Mode, recycle: str):
        self.mode, self.recycle = mode, recycle
        self.dice: list[DiceState] = []
        self.dice_id: dict[DiceState, int] = {}
        self.keys: list[tuple] = []
        self.index: dict[tuple, int] = {}
        self.queue: deque[int] = deque()
        self._ordinary: dict[int, tuple] = {}
        self._bus: dict[int, tuple] = {}
        self._empty_hand: dict[int, int] = {}
        self._give_up: dict[tuple[int, int], tuple] = {}

    def did(self, dice: DiceState) -> int:
        if dice not in self.dice_id:
            self.dice_id[dice] = len(self.dice)
            self.dice.append(dice)
        return self.dice_id[dice]

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
            return BusState(self.dice[x], *rest)
        if kind == "t":
            return TyreTracks(self.dice[x], *rest)
        if kind == "s":
            return ("stopped",)
        return (kind, self.dice[x], *rest)

    def actions(self, key: tuple) -> tuple[tuple[str, int], ...]:
        _, x, phase, tokens, shotguns = key
        out = []
        for action in legal_actions(self.mode, BusState(self.dice[x], phase, tokens, shotguns)):
            if action in ("roll", "get-off"):
                out.append((action, self.node(("roll", x, "ready" if phase == "ready" else "out", shotguns))))
            elif action == "board":
                out.append((action, self.node(("bus", x, 0, 0))))
            elif action == "stay":
                if x not in self._empty_hand:
                    dice = self.dice[x]
                    self._empty_hand[x] = self.did(dice._replace(hand=tuple(0 for _ in dice.hand)))
                out.append((action, self.node(("bus", self._empty_hand[x], tokens, shotguns))))
        return tuple(out)

    def options(self, x: int, tokens: int, shotguns: int) -> tuple[tuple[str, tuple], ...]:
        """Tyre tracks' choices as compact decision keys (`roll.give_up`)."""
        if (x, tokens) not in self._give_up:
            self._give_up[(x, tokens)] = tuple((g, self.did(d)) for g, d in give_up(self.mode, self.dice[x], tokens))
        return tuple((g, ("d", y, "out", 0, shotguns)) for g, y in self._give_up[(x, tokens)])

    def roll(self, key: tuple) -> tuple[dict[tuple[int, int], int], int, int]:
        """A chance node's results: ways per (delta, node), bust ways, denominator."""
        out: dict[tuple[int, int], int] = {}
        bust = 0
        if key[0] == "roll":
            _, x, phase, shotguns = key
            if x not in self._ordinary:
                den, rows = _ordinary_rolls(self.mode, self.dice[x], self.recycle)
                self._ordinary[x] = den, tuple((b, -1 if a is None else self.did(a), c, top, w)
                                               for b, _, a, c, top, _, _, w in rows)
            den, rows = self._ordinary[x]
            for brains, a, count, bust_at, ways in rows:
                if a < 0 or count + shotguns >= bust_at:
                    bust += ways
                    continue
                j = self.node(("d", a, phase, 0, shotguns))
                out[(brains, j)] = out.get((brains, j), 0) + ways
            return out, bust, den
        _, x, tokens, shotguns = key
        if x not in self._bus:
            rows, den, _ = _bus_rolls(self.mode, self.dice[x], self.recycle)
            self._bus[x] = den, tuple((f.brains, f.shotguns, f.effect, self.did(a), d, c, top, left > 0, w)
                                      for f, a, d, _, _, c, top, left, w in rows)
        den, rows = self._bus[x]
        for fb, fs, effect, a, delta, count, bust_at, brains_left, ways in rows:
            s = shotguns + fs
            if count + s >= bust_at:
                bust += ways
                continue
            if effect == "stop":
                target = ("s", 0)
            elif effect == "tyre-tracks":  # one brain lost if the turn has one (see roll.bus_results)
                delta -= tokens > 0 or brains_left
                choices = self.options(a, tokens, s)
                target = choices[0][1] if len(choices) == 1 else ("t", a, tokens, s)
            else:
                target = ("d", a, "riding", int(tokens or fb > 0), s)
            j = self.node(target)
            out[(delta + fb, j)] = out.get((delta + fb, j), 0) + ways
        return out, bust, den


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
    loops: list[tuple] = [()] * n
    edge_rows: list[tuple] = [()] * n
    rolled_by = {(c, j) for j, row in actions.items() for _, c in row}  # (chance node, decision that rolls it)
    for i, out in edges.items():
        loop = []
        for d, j in [k for k in out if k[0] == 0 and (i, k[1]) in rolled_by]:
            loop.append((j, out.pop((d, j))))
        loops[i] = tuple(loop)
        edge_rows[i] = tuple((d, j, w) for (d, j), w in sorted(out.items()))
    block_keys = [_bus_block(k) if kinds[i] != STOPPED else None for i, k in enumerate(keys)]
    order = {b: r for r, b in enumerate(sorted({b for b in block_keys if b is not None}))}
    block_of = [-1 if b is None else order[b] for b in block_keys]
    deps: list[tuple[int, int]] = []  # (i, j): i is computed after j at the same score
    cyclic = [False] * len(order)
    for i in range(n):
        b = block_of[i]
        for _, c in actions.get(i, ()):
            if block_of[c] == b:
                deps.append((i, c))
            elif block_of[c] > b:
                raise ValueError(f"an action leads to a later block: {keys[i]} -> {keys[c]}")
        for d, j, _ in edge_rows[i]:
            bj = block_of[j]
            if bj < b or (bj == b and d > 0):
                continue
            if bj > b:
                raise ValueError(f"a roll leads to a later block: {keys[i]} -> {keys[j]}")
            if d == 0:
                deps.append((i, j))
            else:
                cyclic[b] = True  # a rescue with YIELD: a lower score in the same block
        for h, _ in loops[i]:
            deps += [(i, a) for _, a in actions[h] if a != i and block_of[a] == b]
        for _, o in options.get(i, ()):
            if block_of[o] >= b:
                raise ValueError("tyre tracks lead to a node not yet solved")
    block_arr = np.array(block_of)
    blocks = tuple(_layers(np.flatnonzero(block_arr == b), deps) for b in range(len(order)))
    den = [denominators.get(i, 1) for i in range(n)]
    flat = [(i, d, j, w / den[i]) for i, row in enumerate(edge_rows) for d, j, w in row]
    rows, deltas, cols, vals = (np.array(x) for x in zip(*flat)) if flat else (np.zeros(0, int),) * 4
    max_delta, min_delta = int(deltas.max(initial=0)), int(min(0, deltas.min(initial=0)))
    matrices = {}
    for delta in range(min_delta, max_delta + 1):
        pick = deltas == delta
        if pick.any():  # column n: a sentinel the sweep pads with
            matrices[delta] = sp.csr_matrix((vals[pick], (rows[pick], cols[pick])), shape=(n, n + 1))
    gain = np.zeros(n)
    np.add.at(gain, rows, deltas * vals)
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
