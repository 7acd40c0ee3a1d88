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

from .table import Table, table_for

__all__ = ["Objective", "Solution", "solve", "parse_objective", "MAX_REACH"]

MAX_REACH = 40


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


def _top(table: Table, objective: Objective) -> int:
    if objective.kind == "reach":
        return objective.target - 1
    if objective.kind == "rule":
        return objective.target - 1
    best = Fraction(0)
    for gain_edges, q in zip(table.edges, table.bust):
        m = sum((d * p for d, _, p in gain_edges), Fraction(0))
        best = max(best, m / q)
    return int(best)  # floor(T1): every state strictly stops above it


@lru_cache(maxsize=64)
def solve(mode: str, recycle: str, objective: Objective) -> Solution:
    """Solve one objective over every state of a mode, score level by score level, layer by layer."""
    table = table_for(mode, recycle)
    n = len(table)
    top = _top(table, objective)
    levels = top + 1 + table.max_delta
    value = np.zeros((levels, n))
    roll = np.zeros((top + 1, n))
    for score in range(top + 1, levels):
        value[score] = float(objective.stop_value(score))
    loop = table.self_loop_f
    mats = [(d, table.matrices[d]) for d in range(table.max_delta + 1)]
    layer_mats = [[(d, m[layer]) for d, m in mats] for layer in table.layers]
    shotguns = table.shotguns
    for score in range(top, -1, -1):
        stop = float(objective.stop_value(score))
        for layer, sub in zip(table.layers, layer_mats):
            rest = sum(m @ value[score + d] for d, m in sub)
            p = loop[layer]
            if objective.kind == "rule":
                forced = (score >= objective.target) | (shotguns[layer] >= objective.shotguns)
                keep_rolling = rest / (1 - p)
                r = np.where(forced, rest + p * stop, keep_rolling)
                v = np.where(forced, stop, keep_rolling)
            else:
                r = np.where(rest / (1 - p) >= stop, rest / (1 - p), rest + p * stop)
                v = np.maximum(stop, r)
            roll[score, layer] = r
            value[score, layer] = v
        value[score, table.start] = roll[score, table.start]  # the first roll is compulsory
    return Solution(table, objective, top, roll, value)
