"""Exact values and final-score distributions along a solved policy.

The float solution (policy.py) decides every action whose two values differ by more than
``MARGIN``; float error there is below 1e-12, so such decisions are certain. Exact rational
values are then computed lazily, by the same equations as policy.py but in exact arithmetic
(``gmpy2.mpq``), only for the states a question reaches, and memoised. Near-ties are settled by
comparing the exact values, and an exact tie is reported as a tie. Denominators stay small: every
probability is a product of hypergeometric and multinomial factors whose primes are at most 13 (17
with a three-footprint die), so exact values cost little more than floats.
"""

from __future__ import annotations

from collections import OrderedDict
from fractions import Fraction
from functools import lru_cache

import numpy as np
from gmpy2 import mpq

from .policy import CAP_MARGIN, Objective, Solution, solve
from .position import DiceState

__all__ = ["ExactTurn", "exact_turn", "to_fraction"]

MARGIN = 1e-9
DISTRIBUTIONS_KEPT = 4096  # distributions are per position (a forward pass each): keep the recent ones
_CHOICE = ("stop", "roll", None)


def to_fraction(x: mpq) -> Fraction:
    return Fraction(int(x.numerator), int(x.denominator))


def _mpq(x: Fraction) -> mpq:
    return mpq(x.numerator, x.denominator)


class ExactTurn:
    """Exact roll and stop values, decisions and score distributions for one solved objective."""

    def __init__(self, solution: Solution):
        self.solution = solution
        table = solution.table
        self._edges = [tuple((d, j, _mpq(p)) for d, j, p in row) for row in table.edges]
        self._loop = [_mpq(p) for p in table.self_loop]
        self._bust = [_mpq(p) for p in table.bust]
        self._place = {}  # state -> (block, layer within the block)
        for b, block in enumerate(table.blocks):
            for k, layer in enumerate(block):
                for i in layer.tolist():
                    self._place[i] = (b, k)
        self._rest: dict[tuple[int, int], mpq] = {}
        self._distributions: OrderedDict[tuple[int, int], dict[int, Fraction]] = OrderedDict()
        self._choice = self._choices()

    def _choices(self) -> np.ndarray:
        """Per (score, state) up to ``top``: 1 roll, 0 stop (float-certain), 2 near-tie."""
        sol, obj = self.solution, self.solution.objective
        scores = np.arange(sol.top + 1)
        if obj.kind == "rule":
            forced = (scores[:, None] >= obj.target) | (sol.table.shotguns[None, :] >= obj.shotguns)
            grid = np.where(forced, 0, 1).astype(np.int8)
        else:
            stop = np.array([float(obj.stop_value(s)) for s in scores])[:, None]
            margin = MARGIN * np.maximum(1.0, np.abs(stop))
            grid = np.full(sol.roll.shape, 2, dtype=np.int8)
            grid[sol.roll > stop + margin] = 1
            grid[sol.roll < stop - margin] = 0
        if sol.table.compulsory:
            grid[:, sol.table.start] = 1  # the first roll is compulsory
        return grid

    # -- values -------------------------------------------------------------------------------
    def stop(self, score: int) -> mpq:
        if self.solution.objective.kind == "reach":
            return mpq(int(score >= self.solution.objective.target))
        return mpq(score)

    def _float_choice(self, i: int, score: int) -> str | None:
        """'roll' or 'stop' where the float solution is certain; None for a near-tie."""
        if score > self.solution.top:
            return "stop"
        return _CHOICE[self._choice[score, i]]

    def _rest_of(self, i: int, score: int) -> mpq:
        """Sum over the non-loop, non-bust results of a roll of p * V(next), exactly (memoised)."""
        key = (score, i)
        if key not in self._rest:
            self._fill(i, score)
        return self._rest[key]

    def _fill(self, i0: int, score0: int) -> None:
        """Iterative post-order over the states that (i0, score0) needs, so deep chains cannot overflow."""
        stack = [(i0, score0)]
        while stack:
            i, score = stack[-1]
            if (score, i) in self._rest:
                stack.pop()
                continue
            missing = [(j, score + d) for d, j, _ in self._edges[i]
                       if (score + d, j) not in self._rest and self._needs_rest(j, score + d)]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            total = mpq(0)
            for d, j, p in self._edges[i]:
                total += p * self._value_known(j, score + d)
            self._rest[(score, i)] = total

    def _needs_rest(self, i: int, score: int) -> bool:
        return self._float_choice(i, score) != "stop"

    def _value_known(self, i: int, score: int) -> mpq:
        if not self._needs_rest(i, score):
            return self.stop(score)
        return self._value_from_rest(i, score, self._rest[(score, i)])

    def _value_from_rest(self, i: int, score: int, rest: mpq) -> mpq:
        roll = self._roll_from_rest(i, score, rest)
        choice = self._float_choice(i, score)
        if choice == "roll":
            return roll
        return max(roll, self.stop(score))

    def _roll_from_rest(self, i: int, score: int, rest: mpq) -> mpq:
        """roll = r / (1 - p) if that is at least S (or the rule rolls here), else r + p * S."""
        p, stop = self._loop[i], self.stop(score)
        if p == 0:
            return rest
        keep = rest / (1 - p)
        if self._float_choice(i, score) == "roll" or (self._float_choice(i, score) is None and keep >= stop):
            return keep
        return rest + p * stop

    def roll(self, i: int, score: int) -> mpq:
        """Exact value of rolling now and then playing the objective's policy."""
        return self._roll_from_rest(i, score, self._rest_of(i, score))

    def decision(self, i: int, score: int) -> str:
        """'roll', 'stop' or 'tie' (exactly equal values). The empty turn must roll."""
        if i == self.solution.table.start and self.solution.table.compulsory:
            return "roll"
        choice = self._float_choice(i, score)
        if choice is not None and self.solution.objective.kind == "rule":
            return choice
        if choice is not None:
            return choice
        roll, stop = self.roll(i, score), self.stop(score)
        return "tie" if roll == stop else ("roll" if roll > stop else "stop")

    def _rolls(self, i: int, score: int) -> bool:
        """The action the policy takes (ties stop: a player who is indifferent banks the brains)."""
        return self.decision(i, score) == "roll"

    # -- distributions ------------------------------------------------------------------------
    def score_distribution(self, i0: int, score0: int) -> dict[int, Fraction]:
        """P(final turn score = k) if the player rolls now and then follows the policy (memoised, LRU)."""
        key = (i0, score0)
        if key in self._distributions:
            self._distributions.move_to_end(key)
        else:
            self._distributions[key] = self._forward(i0, score0)
            if len(self._distributions) > DISTRIBUTIONS_KEPT:
                self._distributions.popitem(last=False)
        return self._distributions[key]

    def _forward(self, i0: int, score0: int) -> dict[int, Fraction]:
        """P(final turn score = k) if the player rolls now and then follows the policy.

        Probability mass flows forward in the reverse of the solvers' sweep: blocks from last to
        first, score levels upwards, layers from last to first. A state the policy rolls from
        passes on its mass times ``1 / (1 - p)`` (the geometric series of its self-loop).
        """
        final: dict[int, mpq] = {}
        pending: dict[tuple[int, int], dict[int, dict[int, mpq]]] = {}  # (block, score) -> layer -> mass

        def spread(i: int, score: int, mass: mpq) -> None:
            p = self._loop[i]
            if p and self._rolls(i, score):
                mass = mass / (1 - p)
            elif p:  # the forced first roll came back to a position where the policy stops
                final[score] = final.get(score, mpq(0)) + mass * p
            if self._bust[i]:
                final[0] = final.get(0, mpq(0)) + mass * self._bust[i]
            for d, j, q in self._edges[i]:
                b, k = self._place[j]
                here = pending.setdefault((b, score + d), {}).setdefault(k, {})
                here[j] = here.get(j, mpq(0)) + mass * q

        spread(i0, score0, mpq(1))
        while pending:
            key = max(pending, key=lambda bs: (bs[0], -bs[1]))
            layers = pending[key]
            while layers:
                for i, mass in layers.pop(max(layers)).items():
                    if self._rolls(i, key[1]):
                        spread(i, key[1], mass)
                    else:
                        final[key[1]] = final.get(key[1], mpq(0)) + mass
            del pending[key]
        return {k: to_fraction(v) for k, v in sorted(final.items())}


@lru_cache(maxsize=64)
def exact_turn(mode: str, recycle: str, objective: Objective, root: DiceState | None = None,
               margin: int = CAP_MARGIN) -> ExactTurn:
    return ExactTurn(solve(mode, recycle, objective, root, margin))
