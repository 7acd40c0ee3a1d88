"""Fixed simple policies against the optimal player: exact win probabilities by policy evaluation.

A `Rule` stops as soon as the turn total reaches a threshold ``t`` or the shotguns set aside reach
``S`` (``S = 3`` never stops for shotguns: three end the turn anyway); the first roll of a turn is
compulsory. Two families (RULES.md section 1 scores; ``m``: my score, ``o``: the opponent's):

* ``stop-at:N,S``: ``t = N`` (the classic "hold at N brains"), whatever the scores;
* ``ahead-by:D,S``: ``t = max(0, o + D - m)`` ("roll until ahead by D"), and also stop as soon as
  stopping wins the game at once (seat 2 reaching the goal in the normal game; seat 2 beating
  seat 1's total in its final turn or a tie-break turn). In a tie-break both totals count from 0.

The opponent either plays the two-player optimal policy (`GameSolution`: ``opponent="optimal"``,
it does not know it faces a rule) or the best response to the rule (``"best-response"``: it
maximises its probability of winning against this very rule). Either way the game is solved by the
same layered sweeps as duel.py, with the rule's decisions fixed (and the optimal player's too in the
first case): each value is then a policy evaluation, exact up to the same cap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..kept import kept
from .duel import CAP, GOAL, Values, pairs_of, phase, solve_tiebreak, solve_total
from .kernel import Kernel, kernel_for
from .play import policy_table
from .solution import GameSolution, solve_game

__all__ = ["Rule", "parse_rule", "rule_win_probability", "rule_game"]


@dataclass(frozen=True)
class Rule:
    """``stop-at`` (``target`` = N brains this turn) or ``ahead-by`` (``target`` = lead D)."""

    kind: str
    target: int
    shotguns: int = 3

    def __post_init__(self) -> None:
        if self.kind not in ("stop-at", "ahead-by") or not 1 <= self.target <= 100 or not 1 <= self.shotguns <= 3:
            raise ValueError("a rule is stop-at:N,S or ahead-by:D,S with 1 <= N, D <= 100 and 1 <= S <= 3")

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.target},{self.shotguns}"

    def threshold(self, seat: int, mover: int, other: int, goal: int = GOAL) -> int:
        """The turn total from which the rule stops, for the turn of `seat` at ``(mover, other)``."""
        if self.kind == "stop-at":
            return self.target
        kind = phase(goal, seat, mover, other)
        t = other + self.target - mover
        if seat == 2 and kind == "normal":
            t = min(t, goal - mover)
        elif kind == "beat":
            t = min(t, other - mover + 1)
        return max(t, 0)

    def fix(self, kernel: Kernel, seat: int, mover: int, other: int) -> tuple[np.ndarray, np.ndarray]:
        """duel.Player: stop above ``threshold - 1``; below, roll unless ``S`` shotguns are set aside."""
        t = self.threshold(seat, mover, other)
        top = max(t - 1, 0)
        levels = np.arange(top + 1)[:, None]
        shotguns = kernel.table.shotguns[kernel.order][None, :]
        return np.full(len(kernel.blocks), top), (levels < t) & (shotguns < self.shotguns)


def parse_rule(text: str) -> Rule:
    """``stop-at:N`` / ``stop-at:N,S`` / ``ahead-by:D`` / ``ahead-by:D,S``."""
    m = re.fullmatch(r"(stop-at|ahead-by):(\d{1,3})(?:,(\d))?", text)
    if not m:
        raise ValueError("expected stop-at:N[,S] or ahead-by:D[,S]")
    return Rule(m[1], int(m[2]), int(m[3] or 3))


def rule_game(rule: Rule, rule_seat: int, mode: str = "original", recycle: str = "before-draw",
              opponent: str = "optimal", cap: int = CAP, solution: GameSolution | None = None) -> Values:
    """The start-of-turn values (duel.Values: each mover's win probability) of the game between the
    rule in seat `rule_seat` and the opponent (``optimal`` or ``best-response``). The optimal opponent
    plays `solution` when given (a stored table), else the game solved in this process."""
    if rule_seat not in (1, 2) or opponent not in ("optimal", "best-response"):
        raise ValueError("rule_seat is 1 or 2; opponent is 'optimal' or 'best-response'")
    kernel = kernel_for(mode, recycle)
    other = policy_table(solution or solve_game(mode, recycle, cap)) if opponent == "optimal" else None
    players = (rule, other) if rule_seat == 1 else (other, rule)
    w, f, _ = solve_tiebreak(kernel, cap, GOAL, players)
    v = Values(GOAL, np.full((GOAL, GOAL), np.nan), np.full((GOAL, GOAL), np.nan), f, w)
    for total in range(2 * GOAL - 2, -1, -1):
        for (a, b), (x, y, _) in solve_total(kernel, v, pairs_of(total), players).items():
            v.w1[a, b], v.w2[b, a] = x, y
    return v


@kept("game")
def rule_win_probability(rule: Rule | str, rule_seat: int, mode: str = "original", recycle: str = "before-draw",
                         opponent: str = "optimal") -> float:
    """P(the rule's player wins) from 0-0 when it sits in `rule_seat` (1 moves first)."""
    rule = parse_rule(rule) if isinstance(rule, str) else rule
    v = rule_game(rule, rule_seat, mode, recycle, opponent)
    return float(v.w1[0, 0] if rule_seat == 1 else 1 - v.w1[0, 0])
