"""Exact evaluation machinery shared by the chase, race and scoring analyses.

Why the exact solves are cheap: every policy used here is *greedy with respect to a total order*
of the keeps: in state ``t`` it keeps the best-ranked proper sub-multiset of ``t``. The keep ``K``
that produced ``t`` is itself a sub-multiset of ``t``, so the next keep is never ranked worse than
``K``. Hence the chain over keeps is triangular in rank order (apart from self-loops), and every
linear system "value = immediate + sum over next keeps" is solved exactly by back-substitution:

    x(K) = (base(K) + sum_{C != K} ways(K, C) x(C)) / (denom(K) - ways(K, K))

with ``ways(K, C)`` the number of the ``denom(K) = 6**(6-|K|)`` outcomes that continue to keep
``C``. This needs no numerical luck: triangularity holds by construction for any ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from .tables import EMPTY, KEEPS, tables

try:  # GMP integers (a project dependency) multiply big numbers ~10x faster than int.
    from gmpy2 import mpz as big_int
except ImportError:  # pragma: no cover - pure-Python fallback, same results
    big_int = int

__all__ = [
    "big_int",
    "Transitions",
    "greedy_policy",
    "transitions",
    "back_substitute",
    "float_back_substitute",
    "rank_of",
    "reachable",
]

#: Per keep: (next keeps, ways) for the outcomes that continue the chain.
Transitions = tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]


def rank_of(order: Sequence[int]) -> np.ndarray:
    """Inverse permutation: ``rank[K]`` is the position of keep ``K`` in ``order``."""
    rank = np.empty(len(KEEPS), dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(KEEPS))
    return rank


def greedy_policy(rank: np.ndarray) -> np.ndarray:
    """For every state the proper sub-multiset with the smallest rank (best first)."""
    tab = tables()
    padded = np.append(rank, np.iinfo(np.int64).max)
    choice = np.argmin(padded[tab.subs], axis=1)
    return tab.subs[np.arange(len(tab.subs)), choice]


def transitions(policy: np.ndarray, stop: np.ndarray) -> Transitions:
    """Aggregate, per keep, the continuing outcomes by the keep the policy moves to.

    ``stop[t]`` marks states where the chain ends (card matched, or a renewal)."""
    tab = tables()
    n = len(KEEPS)
    go = ~stop[tab.flat_states]
    pair = tab.flat_keeps[go] * n + policy[tab.flat_states[go]]
    counts = np.bincount(pair, weights=tab.flat_ways[go], minlength=n * n).reshape(n, n)
    rows, cols = np.nonzero(counts)
    ways = counts[rows, cols].astype(np.int64)
    cuts = np.searchsorted(rows, np.arange(n + 1))
    cols_list, ways_list = cols.tolist(), ways.tolist()
    return tuple((tuple(cols_list[a:b]), tuple(ways_list[a:b])) for a, b in zip(cuts[:-1], cuts[1:]))


def float_back_substitute(
    order: Sequence[int],
    policy: np.ndarray,
    stop: np.ndarray,
    base: np.ndarray,
    *,
    empty_terminal: bool = False,
) -> np.ndarray:
    """Float twin of :func:`back_substitute` for finding policies (no BLAS, O(pairs)).

    ``base`` holds expected immediate amounts per keep (one column per right-hand side). A keep
    that cannot leave itself gets ``nan``."""
    tab = tables()
    x = np.zeros(base.shape)
    for keep in order:
        sl = slice(int(tab.offsets[keep]), int(tab.offsets[keep + 1]))
        states = tab.flat_states[sl]
        probs = np.where(stop[states], 0.0, tab.flat_probs[sl])
        nxt = policy[states]
        if empty_terminal:
            probs = np.where(nxt == EMPTY, 0.0, probs)
        loop = nxt == keep
        stay = probs[loop].sum()
        moves = probs @ np.where(loop[:, None], 0.0, x[nxt]) if base.ndim == 2 else probs[~loop] @ x[nxt[~loop]]
        x[keep] = (base[keep] + moves) / (1.0 - stay) if stay < 1.0 - 1e-12 else np.nan
    return x


def back_substitute(
    order: Sequence[int],
    trans: Transitions,
    base: Sequence[int | Fraction],
    *,
    empty_terminal: bool = False,
    only: set[int] | None = None,
) -> dict[int, Fraction]:
    """Solve ``x = (base + sum ways * x(next)) / denom`` exactly, in ``order``.

    ``order`` must list every next keep before the keep that moves to it (see module docstring).
    With ``empty_terminal`` a move to the empty keep ends the chain (renewal) and contributes 0.
    ``only`` restricts the solve to a set of keeps closed under transitions.
    """
    denom = tables().denom
    x: dict[int, Fraction] = {}
    for keep in order:
        if only is not None and keep not in only:
            continue
        num = Fraction(base[keep])
        loop = 0
        for nxt, ways in zip(*trans[keep]):
            if empty_terminal and nxt == EMPTY:
                continue
            if nxt == keep:
                loop += ways
            else:
                num += ways * x[nxt]
        if loop >= denom[keep]:
            raise ArithmeticError(f"keep {KEEPS[keep]} never leaves itself under this policy")
        x[keep] = num / (denom[keep] - loop)
    return x


def reachable(trans: Transitions, start: int = EMPTY, *, empty_terminal: bool = False) -> set[int]:
    """Keeps reachable from ``start`` (including it)."""
    seen = {start}
    stack = [start]
    while stack:
        for nxt in trans[stack.pop()][0]:
            if nxt not in seen and not (empty_terminal and nxt == EMPTY):
                seen.add(nxt)
                stack.append(nxt)
    return seen
