"""Single-turn solvers: the value of rolling and of stopping from every position of a mode.

The state of a turn is a dice state ``i`` (table.py) and the turn's score ``T``. For an objective
with stop value ``S(T)``::

    roll(i, T) = sum_{j, d} P_d[i, j] * V(j, T + d)        (a bust is worth 0)
    V(i, T)    = max(S(T), roll(i, T))                    (the empty turn must roll)

The only cycle is the self-loop ``p`` of a hand of three footprint dice; with ``r`` the rest of the
sum, ``roll = r + p * max(S, roll)`` solves to ``r / (1 - p)`` when that is at least ``S`` and to
``r + p * S`` otherwise.

Objectives:

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
  ``floor(max C)`` is below 1e-12 (tests/test_expansions.py solves with a cap twice as far and
  compares); `Solution.capped` says whether a cap is in force.
* ``reach:K``: ``S(T) = [T >= K]``, the probability of ending the turn with at least ``K`` brains.
  At ``T >= K`` stopping is worth 1 and rolling less; below ``K`` rolling is worth more than 0.
* ``rule:N,S``: the fixed rule "stop at >= N brains or >= S shotguns", its expected score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from .position import DiceState
from .table import Table, table_for

__all__ = ["Objective", "Solution", "solve", "sweep", "parse_objective", "MAX_REACH", "CAP_MARGIN", "stop_bound"]

MAX_REACH = 40
CAP_MARGIN = 60  # brains above floor(max C) that a capped (q = 0) table still solves exactly


@dataclass(frozen=True)
class Objective:
    """What the player maximises: ``expected-brains``, ``reach:K`` or ``rule:N,S``."""

    kind: str = "expected-brains"
    target: int = 0  # K for reach, N for rule
    shotguns: int = 0  # S for rule

    @property
    def name(self) -> str:
        if self.kind == "reach":
            return f"reach:{self.target}"
        if self.kind == "rule":
            return f"rule:{self.target},{self.shotguns}"
        return self.kind

    def stop_value(self, score: int) -> Fraction:
        if self.kind == "reach":
            return Fraction(int(score >= self.target))
        return Fraction(score)

    def forced_stop(self, score: int, shotguns: int) -> bool:
        return self.kind == "rule" and (score >= self.target or shotguns >= self.shotguns)


def parse_objective(text: str) -> Objective:
    """Parse ``expected-brains``, ``reach:K`` (1 <= K <= 40) or ``rule:N,S`` (N >= 1, 1 <= S <= 3)."""
    if text == "expected-brains":
        return Objective()
    if m := re.fullmatch(r"reach:(\d{1,3})", text):
        k = int(m[1])
        if 1 <= k <= MAX_REACH:
            return Objective("reach", k)
        raise ValueError(f"reach:K needs 1 <= K <= {MAX_REACH}")
    if m := re.fullmatch(r"rule:(\d{1,3}),(\d)", text):
        n, s = int(m[1]), int(m[2])
        if 1 <= n <= 100 and 1 <= s <= 3:
            return Objective("rule", n, s)
        raise ValueError("rule:N,S needs 1 <= N <= 100 and 1 <= S <= 3")
    raise ValueError("expected 'expected-brains', 'reach:K' or 'rule:N,S'")


@dataclass(frozen=True, eq=False)
class Solution:
    """Float values of a solved objective over every (dice state, score) of a mode.

    ``roll[T, i]`` and ``value[T, i]`` for ``T <= top``; above ``top`` every state stops and is worth
    ``objective.stop_value(T)``.
    """

    table: Table
    objective: Objective
    top: int
    roll: np.ndarray
    value: np.ndarray
    capped: bool = False  # some state cannot bust (q = 0): every state is made to stop above `top`

    def values_at(self, state: int, score: int) -> tuple[float, float]:
        """(roll, stop) float values at a dice state and score."""
        stop = float(self.objective.stop_value(score))
        if score <= self.top:
            return float(self.roll[score, state]), stop
        return float(self._roll_above(state, score)), stop

    def _roll_above(self, i: int, score: int) -> float:
        t = self.table
        if self.objective.kind == "reach":
            return 1.0 - t.bust_f[i]
        return (1.0 - t.bust_f[i]) * score + t.gain_f[i]


def stop_bound(table: Table) -> tuple[Fraction, bool]:
    """``max C`` of the block induction (see the module docstring) and whether some state has q = 0.

    States with q = 0 are left out of the maximum (they never stop by this argument)."""
    block_of = {}
    for b, block in enumerate(table.blocks):
        for layer in block:
            for i in layer.tolist():
                block_of[i] = b
    bounds: list[Fraction] = []
    unbounded = False
    for b, block in enumerate(table.blocks):
        c = Fraction(0)
        for layer in block:
            for i in layer.tolist():
                q, row = table.bust[i], table.edges[i]
                if q:
                    c = max(c, sum((d * p for d, _, p in row), Fraction(0)) / q)
                else:
                    unbounded = True
                for d, j, _ in row:
                    if block_of[j] != b:
                        c = max(c, bounds[block_of[j]] - d)
        bounds.append(c)
    return max(bounds), unbounded


def _top(table: Table, objective: Objective, margin: int = CAP_MARGIN) -> tuple[int, bool]:
    if objective.kind == "reach":
        return objective.target - 1, False
    if objective.kind == "rule":
        return objective.target - 1, False
    bound, unbounded = stop_bound(table)
    if unbounded:
        return int(bound) + margin, True
    return int(bound), False  # floor(T1): every state strictly stops above it


def sweep(table: Table, stop: np.ndarray, top: int, forced: np.ndarray | None = None,
          ) -> tuple[np.ndarray, np.ndarray]:
    """The backward induction every solver shares, over all states at once.

    `stop[T]` is the value of stopping at score ``T`` for ``T`` in ``0..top + max_delta``, either a
    vector over levels or a ``(levels, k)`` array that solves ``k`` objectives at once (the game
    solver passes one column per opponent score). Above `top` every state stops. `forced[T, i]`
    (optional) makes the state stop whatever the values (fixed rules). Returns ``roll`` of shape
    ``(top + 1, n[, k])`` and ``value`` of shape ``(len(stop), n[, k])``.
    """
    n = len(table)
    stop = np.asarray(stop, dtype=float)
    cols = stop.shape[1:]
    value = np.empty((len(stop), n, *cols))
    value[:] = stop[:, None]
    roll = np.zeros((top + 1, n, *cols))
    loop = table.self_loop_f.reshape(-1, *(1 for _ in cols))
    for block, block_mats in zip(table.blocks, table.layer_matrices):
        for score in range(top, -1, -1):
            s = stop[score]
            for layer, mats in zip(block, block_mats):
                rest = np.zeros((len(layer), *cols))
                for d, m in mats:
                    if 0 <= score + d < len(stop):
                        rest += m @ value[score + d]
                p = loop[layer]
                keep = rest / (1 - p)
                if forced is None:
                    r = np.where(keep >= s, keep, rest + p * s)
                    v = np.maximum(s, r)
                else:
                    f = forced[score, layer].reshape(-1, *(1 for _ in cols))
                    r = np.where(f, rest + p * s, keep)
                    v = np.where(f, s, keep)
                roll[score, layer] = r
                value[score, layer] = v
    if table.compulsory:
        value[: top + 1, table.start] = roll[:, table.start]  # the first roll of a turn is compulsory
    return roll, value


@lru_cache(maxsize=64)
def solve(mode: str, recycle: str, objective: Objective, root: DiceState | None = None,
          margin: int = CAP_MARGIN) -> Solution:
    """Solve one objective over every state of a mode (see `sweep`), or every state `root` reaches."""
    table = table_for(mode, recycle, root) if root is not None else table_for(mode, recycle)
    top, capped = _top(table, objective, margin)
    stop = np.array([float(objective.stop_value(s)) for s in range(top + 1 + table.max_delta)])
    forced = None
    if objective.kind == "rule":
        scores = np.arange(top + 1)[:, None]
        forced = (scores >= objective.target) | (table.shotguns[None, :] >= objective.shotguns)
    roll, value = sweep(table, stop, top, forced)
    return Solution(table, objective, top, roll, value, capped)
