"""A mode's transition table, built once: every dice state a turn can reach, and every roll from it.

The turn's score does not change how dice move, so the table is over dice states only; a solver
adds the score as a second index. A roll from state ``i`` that shows ``delta`` brains and does not
bust leads to ``(j, T + delta)``: recycling notes the brain pile but does not change the turn's
score ``T = banked + brains in the pile``.

For the solvers the table keeps, per ``delta``, a sparse matrix of float probabilities, the exact
``Fraction`` of every entry, and the bust probability of every state. States are grouped in
*layers*: a roll that shows no brain never goes from a layer to a later one (it adds shotguns or
fills the hand), so solvers can sweep one score level layer by layer; the only cycle is a hand of
three footprint dice rolling three footprints again, a self-loop kept apart in ``self_loop``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

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
    layers: tuple[np.ndarray, ...]  # sweep order within one score level
    max_delta: int

    @property
    def start(self) -> int:
        return 0

    def __len__(self) -> int:
        return len(self.states)


def _layers(n: int, zero_edges: list[tuple[int, int]]) -> tuple[np.ndarray, ...]:
    """Group states so that every no-brain roll leads to an earlier group (longest-path layering)."""
    succ: list[list[int]] = [[] for _ in range(n)]
    for i, j in zero_edges:
        succ[i].append(j)
    depth = [-1] * n

    def visit(i: int) -> int:  # iterative depth-first search, for deep chains
        stack = [(i, 0)]
        on_path = set()
        while stack:
            node, k = stack.pop()
            if k == 0:
                if depth[node] >= 0:
                    continue
                on_path.add(node)
            if k < len(succ[node]):
                stack.append((node, k + 1))
                child = succ[node][k]
                if child in on_path:
                    raise ValueError("no-brain rolls form a cycle: the table cannot be layered")
                if depth[child] < 0:
                    stack.append((child, 0))
            else:
                depth[node] = 1 + max((depth[c] for c in succ[node]), default=-1)
                on_path.discard(node)
        return depth[i]

    for i in range(n):
        visit(i)
    order = np.array(depth)
    return tuple(np.flatnonzero(order == d) for d in range(order.max() + 1))


@cache
def table_for(mode_name: str, recycle: str = "before-draw") -> Table:
    """Breadth-first search from the empty turn over every roll; cached per mode and variant."""
    mode = MODES[mode_name]
    empty = tuple(0 for _ in mode.counts)
    start = DiceState(empty, empty, empty)
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
    max_delta = max(d for row in edges for d, _, _ in row)
    matrices = {}
    for delta in range(max_delta + 1):
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
        shotguns=np.array([sum(s.shotguns) for s in states]),
        edges=tuple(edges),
        bust=tuple(bust),
        self_loop=tuple(loops),
        matrices=matrices,
        self_loop_f=np.array([float(x) for x in loops]),
        bust_f=np.array([float(x) for x in bust]),
        gain_f=gain,
        layers=_layers(n, zero_edges),
        max_delta=max_delta,
    )
