"""A turn's forward flow, compiled: P(final turn score = k) under a stored policy, edge by edge in machine code.

The flow is linear: the probability mass at a (state, score) either ends the turn there (the policy stops; a
roll that busts ends it at 0) or rolls on, passing ``m p_e`` along each of the state's results ``e`` to
``(to_e, score + delta_e)``, its self-loop closed as a geometric series (``m / (1 - loop)``). Linearity makes
any order of taking the waiting masses correct; a good order only saves work, by letting a (state, score)
gather all its mass before it passes it on, once, and by reading memory in order. So the masses wait in a ring
of dense vectors, one per score level; the lowest level with mass is taken first, its states in the order of
their numbers, each state's mass read when its turn comes (so that what reached it meanwhile goes with it): the
table numbers states breadth-first from the turn's start, so a state's mass is mostly complete when its number
comes, and its rolls are read in the order they are stored (twice as fast, for about 8% more rolls, as the
solver's reverse order, which jumps about in memory). A roll raises the score by at most ``max_delta``; a
roll that lowers it (the sequel's) lands in an earlier block (more shotguns), so a chain of them lowers it by
at most ``blocks |min_delta|``: the ring needs ``max_delta + blocks |min_delta| + 1`` levels (`ring_size`),
and the kernel refuses (ValueError) to let the live levels span more.

Whether a state rolls at a score is the stored policy's (`solutions.StoredTurn.rolls_at`): held at the level
(its place in `order` below the level's length) and its float roll value above the score; the empty turn
(state 0) always rolls where rolling is compulsory. Masses below `PRUNE` are dropped and their sum returned,
for the caller's bound.

The School Bus turn (`bus_solutions.StoredBusTurn`) reads its policy in numpy, a group of nodes at a time, so its
masses wait in a `Flow`, in numpy: by (block, score, layer), taken in the solver's reverse order, so that a
group's masses are complete when it is taken. Its longest flows roll as much as a plain turn's (24 million
results for Santa's), so they are the slow ones; a ring does not fit them as it is, for a cyclic block (YIELD's
rescues) can send masses down every level of the block.
"""

from __future__ import annotations

from collections.abc import Iterator

import numba
import numpy as np

__all__ = ["PRUNE", "Flow", "ring_size", "turn_flow"]

PRUNE = 1e-15  # a mass this small is dropped from a flowing distribution (and counted in its bound)


def ring_size(blocks: int, min_delta: int, max_delta: int) -> int:
    """How many score levels can hold mass at once (module docstring)."""
    return max_delta + blocks * max(0, -min_delta) + 1


@numba.njit(cache=True, nogil=True)
def _roll(j, s, m, ptr, to, delta, p, bust, ended, mass, waiting, count, level_of, span, busy):  # pragma: no cover
    """Mass `m` rolls at (`j`, `s`): its bust ends at 0, each result waits at its (state, level)."""
    ring = len(count)
    ended[0] += m * bust[j]
    for e in range(ptr[j], ptr[j + 1]):
        t = s + delta[e]
        slot = t % ring
        if level_of[slot] != t:
            if count[slot] > 0 or slot == busy:
                raise ValueError("two live score levels share a slot of the flow's ring")
            level_of[slot] = t
        span[0] = min(span[0], t)
        span[1] = max(span[1], t)
        if span[1] - span[0] >= ring:
            raise ValueError("the live score levels span more than the flow's ring")
        k = to[e]
        if mass[slot, k] == 0.0:
            waiting[slot, count[slot]] = k
            count[slot] += 1
        mass[slot, k] += m * p[e]


@numba.njit(cache=True, nogil=True)
def _turn_flow(i0, score0, closed, ptr, to, delta, p, bust, loop, rank, offsets, rolls, top, compulsory, prune,
               ended, mass, waiting):  # pragma: no cover - compiled
    ring = len(mass)
    count = np.zeros(ring, dtype=np.int64)
    level_of = np.full(ring, np.iinfo(np.int64).min, dtype=np.int64)  # the level a slot holds
    span = np.array([score0, score0], dtype=np.int64)  # no live level lies outside [span[0], span[1]]
    dropped = 0.0
    if not closed:  # the policy stops here: the roll's loop comes back to stop
        ended[score0] += loop[i0]
    m0 = 1.0 / (1.0 - loop[i0]) if closed else 1.0
    _roll(i0, score0, m0, ptr, to, delta, p, bust, ended, mass, waiting, count, level_of, span, -1)
    while True:
        s = span[0]
        while s < span[0] + ring and not (count[s % ring] > 0 and level_of[s % ring] == s):
            s += 1
        if s == span[0] + ring:
            return dropped
        span[0] = s
        slot = s % ring
        todo = waiting[slot, :count[slot]].copy()
        count[slot] = 0
        for j in np.sort(todo):
            m = mass[slot, j]
            if m == 0.0:
                continue
            mass[slot, j] = 0.0
            if m < prune:
                dropped += m
                continue
            held = 0 <= s <= top and rank[j] < offsets[s + 1] - offsets[s]
            if (compulsory and j == 0) or (held and rolls[offsets[s] + rank[j]] > s):
                _roll(j, s, m / (1.0 - loop[j]), ptr, to, delta, p, bust, ended, mass, waiting, count, level_of,
                      span, slot)
            else:
                ended[s] += m


def turn_flow(i0: int, score0: int, closed: bool, ptr: np.ndarray, to: np.ndarray, delta: np.ndarray,
              p: np.ndarray, bust: np.ndarray, loop: np.ndarray, rank: np.ndarray, offsets: np.ndarray,
              rolls: np.ndarray, top: int, compulsory: bool, levels: int, ended: np.ndarray) -> float:
    """A plain turn's flow: roll once at (`i0`, `score0`), its self-loop closed if `closed` (else the loop comes
    back to a stop), then follow the stored policy (`rank`, `offsets`, `rolls`: `policy.Solution`'s layout; the
    empty turn, state 0, rolls where `compulsory`), with a ring of `levels` score levels. Adds P(final score = k)
    into ``ended[k]``; returns the mass dropped below `PRUNE`."""
    n = len(bust)
    # np.zeros maps fresh zero pages: a flow only ever touches the pages it uses
    mass, waiting = np.zeros((levels, n)), np.empty((levels, n), dtype=np.int32)
    return _turn_flow(i0, score0, closed, ptr, to, delta, p, bust, loop, rank, offsets, rolls, top, compulsory,
                      PRUNE, ended, mass, waiting)


class Flow:
    """Probability masses waiting at (block, score, layer) in a turn's forward flow, taken in the reverse of the
    solver's order (exact.py's `_first_of`): blocks from last to first and levels upwards, or levels upwards and
    blocks from last to first where no roll lowers the score; within, layers from last to first. Iterating gives
    (score, nodes, masses) a layer at a time, the masses of a node summed, those below `PRUNE` dropped (`dropped`);
    masses pushed meanwhile, even to the layer just given, are given in their turn."""

    def __init__(self, block: np.ndarray, layer: np.ndarray, lowers: bool):
        self.block, self.layer, self.lowers = block, layer, lowers
        self.pending: dict[tuple[int, int], dict[int, list[tuple[np.ndarray, np.ndarray]]]] = {}
        self.ended: dict[int, float] = {}
        self.dropped = 0.0
        self.total, self.seen = np.zeros(len(block)), np.zeros(len(block), dtype=np.bool_)  # `_gathered`'s

    def end(self, score: int, mass: float) -> None:
        """`mass` ends the turn with `score`."""
        self.ended[score] = self.ended.get(score, 0.0) + mass

    def push(self, nodes: np.ndarray, scores: np.ndarray, masses: np.ndarray) -> None:
        """Masses arriving at (node, score)."""
        if not len(nodes):
            return
        # where each waits, as one small key: (block, score, layer), the score counted from the lowest here
        low, levels = int(scores.min()), int(scores.max() - scores.min()) + 1
        order, keys = _grouped(nodes, scores, low, levels, self.block, self.layer)
        nodes, masses = nodes[order], masses[order]
        cuts = (np.flatnonzero(keys[1:] != keys[:-1]) + 1).tolist()
        for lo, hi in zip([0, *cuts], [*cuts, len(order)]):
            group, layer = divmod(int(keys[lo]), 256)
            b, s = divmod(group, levels)
            self.pending.setdefault((b - 1, s + low), {}).setdefault(layer, []).append((nodes[lo:hi], masses[lo:hi]))

    def _first(self, key: tuple[int, int]) -> tuple[int, int]:
        b, s = key
        return (b, -s) if self.lowers else (-s, b)

    def __iter__(self) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        while self.pending:
            key = max(self.pending, key=self._first)
            layers = self.pending[key]
            while layers:
                parts = layers.pop(max(layers))
                nodes, masses = _gathered(np.concatenate([n for n, _ in parts]), np.concatenate([m for _, m in parts]),
                                          self.total, self.seen)
                small = masses < PRUNE
                if small.any():
                    self.dropped += float(masses[small].sum())
                    nodes, masses = nodes[~small], masses[~small]
                yield key[1], nodes, masses
            del self.pending[key]

    def final(self) -> dict[int, float]:
        """P(final score = k), the scores in order."""
        return {k: v for k, v in sorted(self.ended.items()) if v > 0}


@numba.njit(cache=True, nogil=True)
def _grouped(nodes, scores, low, levels, block, layer):  # pragma: no cover - compiled
    """`Flow.push`'s keys ``((block + 1) levels + score - low) 256 + layer`` of (`nodes`, `scores`), and the order
    that sorts them stably (a counting sort where they span little, else a merge sort): (order, sorted keys)."""
    keys = np.empty(len(nodes), dtype=np.int64)
    for i in range(len(nodes)):
        keys[i] = ((block[nodes[i]] + 1) * levels + scores[i] - low) * 256 + layer[nodes[i]]
    first, last = keys.min(), keys.max()
    if last - first > 4 * len(keys) + 65536:
        order = np.argsort(keys, kind="mergesort")
        return order, keys[order]
    starts = np.zeros(last - first + 2, dtype=np.int64)
    for k in keys:
        starts[k - first + 1] += 1
    starts = np.cumsum(starts)
    order = np.empty(len(keys), dtype=np.int64)
    for i in range(len(keys)):
        b = keys[i] - first
        order[starts[b]] = i
        starts[b] += 1
    return order, keys[order]


@numba.njit(cache=True, nogil=True)
def _gathered(nodes, masses, total, seen):  # pragma: no cover - compiled
    """The distinct `nodes` in order and each one's masses summed (`total` and `seen`: zeroed scratch, per node,
    left zeroed)."""
    distinct = np.empty(len(nodes), dtype=np.int64)
    k = 0
    for i in range(len(nodes)):
        j = nodes[i]
        if not seen[j]:
            seen[j] = True
            distinct[k] = j
            k += 1
        total[j] += masses[i]
    distinct = np.sort(distinct[:k])
    summed = np.empty(k)
    for r in range(k):
        summed[r] = total[distinct[r]]
        total[distinct[r]], seen[distinct[r]] = 0.0, False
    return distinct, summed
