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
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, cached_property

import numpy as np
import scipy.sparse as sp

from .dice import MODES, Mode
from .position import DiceState
from .roll import transitions

__all__ = ["Table", "table_for"]


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
