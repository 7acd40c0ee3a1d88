"""Precomputed combinatorics of six d6, shared by every card.

Why: every question about a card is a Markov chain over the 462 multisets of six dice ("states",
what the dice show after a throw) and the 462 multisets of zero to five dice ("keeps", what is held
before the next throw). The chance of reaching state ``t`` from keep ``K`` does not depend on the
card: the ``m = 6 - |K|`` rerolled dice must show the multiset ``t - K``, which happens in

    ways(K, t) = m! / prod_f (t_f - K_f)!      out of 6**m equally likely ordered outcomes.

So these tables are built once; a card only adds a 462-entry mask of matching states.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import combinations_with_replacement, product
from math import factorial

import numpy as np

__all__ = ["STATES", "KEEPS", "STATE_INDEX", "KEEP_INDEX", "EMPTY", "Tables", "tables"]

FACES = (1, 2, 3, 4, 5, 6)
#: The 462 sorted six-dice rolls; the position in this tuple is the state index.
STATES: tuple[tuple[int, ...], ...] = tuple(combinations_with_replacement(FACES, 6))
#: The 462 sorted keeps of 0..5 dice, by size then lexicographically; KEEPS[0] == () is "keep nothing".
KEEPS: tuple[tuple[int, ...], ...] = tuple(k for m in range(6) for k in combinations_with_replacement(FACES, m))
STATE_INDEX: dict[tuple[int, ...], int] = {s: i for i, s in enumerate(STATES)}
KEEP_INDEX: dict[tuple[int, ...], int] = {k: i for i, k in enumerate(KEEPS)}
EMPTY = 0  # index of the empty keep


@dataclass(frozen=True, eq=False)
class Tables:
    """Card-independent transition structure (see the module docstring).

    ``out_states[K]``/``out_ways[K]``/``out_probs[K]``: the states reachable from keep ``K`` in one
    throw, the integer number of ways (out of ``denom[K] = 6**(6-|K|)``) and the float
    probability; they are slices ``offsets[K]:offsets[K+1]`` of the flat arrays ``flat_keeps``,
    ``flat_states``, ``flat_ways``, ``flat_probs`` (11 914 keep-state pairs); ``prob`` is the dense
    float matrix ``prob[K, t]``; ``subs[t]`` lists the proper sub-multisets of state ``t`` (the
    legal keeps), padded with the sentinel ``462``; ``sub_lists[t]`` is the same unpadded.
    """

    out_states: tuple[np.ndarray, ...]
    out_ways: tuple[np.ndarray, ...]
    out_probs: tuple[np.ndarray, ...]
    denom: tuple[int, ...]
    flat_keeps: np.ndarray
    flat_states: np.ndarray
    flat_ways: np.ndarray
    flat_probs: np.ndarray
    offsets: np.ndarray
    prob: np.ndarray
    subs: np.ndarray
    sub_lists: tuple[tuple[int, ...], ...]
    keep_size: np.ndarray
    state_counts: tuple[tuple[int, ...], ...]


def _ways(rolled: tuple[int, ...]) -> int:
    result = factorial(len(rolled))
    for f in FACES:
        result //= factorial(rolled.count(f))
    return result


@cache
def tables() -> Tables:
    """Build the tables once (about 50 ms)."""
    n = len(STATES)
    prob = np.zeros((len(KEEPS), n))
    flat_keeps, flat_states, flat_ways, denom, offsets = [], [], [], [], [0]
    for ki, keep in enumerate(KEEPS):
        m = 6 - len(keep)
        for rolled in combinations_with_replacement(FACES, m):
            t = STATE_INDEX[tuple(sorted(keep + rolled))]
            flat_keeps.append(ki)
            flat_states.append(t)
            flat_ways.append(_ways(rolled))
            prob[ki, t] = flat_ways[-1] / 6**m
        denom.append(6**m)
        offsets.append(len(flat_states))
    fk = np.array(flat_keeps, dtype=np.int64)
    fs = np.array(flat_states, dtype=np.int64)
    fw = np.array(flat_ways, dtype=np.int64)
    fp = fw / np.array(denom, dtype=np.float64)[fk]
    bounds = np.array(offsets, dtype=np.int64)
    for arr in (fk, fs, fw, fp, bounds):
        arr.setflags(write=False)
    slices = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
    sub_lists = []
    for state in STATES:
        counts = [state.count(f) for f in FACES]
        subs = []
        for sub in product(*(range(c + 1) for c in counts)):
            if sum(sub) < 6:
                subs.append(KEEP_INDEX[tuple(f for f, c in zip(FACES, sub) for _ in range(c))])
        sub_lists.append(tuple(sorted(subs)))
    width = max(map(len, sub_lists))
    padded = np.full((n, width), len(KEEPS), dtype=np.int64)
    for i, subs in enumerate(sub_lists):
        padded[i, : len(subs)] = subs
    for arr in (prob, padded):
        arr.setflags(write=False)
    keep_size = np.array([len(k) for k in KEEPS], dtype=np.int64)
    keep_size.setflags(write=False)
    return Tables(
        out_states=tuple(fs[sl] for sl in slices),
        out_ways=tuple(fw[sl] for sl in slices),
        out_probs=tuple(fp[sl] for sl in slices),
        denom=tuple(denom),
        flat_keeps=fk,
        flat_states=fs,
        flat_ways=fw,
        flat_probs=fp,
        offsets=bounds,
        prob=prob,
        subs=padded,
        sub_lists=tuple(sub_lists),
        keep_size=keep_size,
        state_counts=tuple(tuple(s.count(f) for f in FACES) for s in STATES),
    )
