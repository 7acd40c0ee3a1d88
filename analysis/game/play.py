"""Whole games played with physical dice (analysis.simulate), for Monte Carlo checks of the solvers.

`PolicyTable` turns a `GameSolution` into a roll/stop lookup for every position of the game (the
decisions of one full sweep per score total, computed once); `play_duel` plays one two-player game
with the physical-dice turn of analysis.simulate, asking each seat's policy before every roll.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from ..dice import MODES
from ..kept import kept
from ..simulate import Turn, roll_once
from ..table import table_for
from .duel import certain_tops, pairs_of, phase, stop_values
from .kernel import Kernel, kernel_for, sweep
from .solution import GameSolution

__all__ = ["PolicyTable", "policy_table", "Chooser", "play_duel", "dice_state_index", "fresh_turn"]

# chooser(seat, my score, their score, dice state index, turn total) -> True to roll again
Chooser = Callable[[int, int, int, int, int], bool]


class PolicyTable:
    """The optimal decisions of a solved game, computed in batches and kept: one sweep per score total
    (both seats), one for every final turn at once (by translation, as in duel.solve_tiebreak), one
    per other column. Also a duel.Player, so rules.py can fix the optimal player's decisions."""

    def __init__(self, solution: GameSolution):
        self.solution = solution
        self.kernel = kernel_for(solution.mode, solution.recycle)
        self._masks: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # key -> (tops per block, rolls[T, i])
        self._block = np.concatenate([np.full(b.hi - b.lo, k) for k, b in enumerate(self.kernel.blocks)])

    def __call__(self, seat: int, mover: int, other: int, state: int, total: int) -> bool:
        """True when the optimal policy rolls at this position (`state`: table index)."""
        tops, rolls = self.fix(self.kernel, seat, mover, other)
        i = int(self.kernel.where[state])
        return bool(total <= tops[self._block[i]] and rolls[total, i])

    def fix(self, kernel: Kernel, seat: int, mover: int, other: int) -> tuple[np.ndarray, np.ndarray]:
        """The decisions of the turn of `seat` at ``(mover, other)``: per block the last level at which
        a state may roll, and ``rolls[T, i]`` (sweep order) up to the highest."""
        g, cap = self.solution.goal, self.solution.cap
        kind = phase(g, seat, mover, other)
        d = other - mover
        if kind == "beat" and 1 <= d <= cap:  # level T of deficit d is level T + cap - d of deficit cap
            tops, rolls = self._mask((2, g, g + cap))
            return np.full_like(tops, d), rolls[cap - d:]
        if kind == "normal" and (seat, mover, other) not in self._masks:
            specs = [s for a, b in pairs_of(mover + other, g) for s in ((1, a, b), (2, b, a))]
            self._masks.update(zip(specs, self._sweep(specs)))
        return self._mask((2, g, g + d) if kind == "beat" else (seat, mover, other))

    def _mask(self, key: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
        if key not in self._masks:
            self._masks[key] = self._sweep([key])[0]
        return self._masks[key]

    def _sweep(self, columns: list[tuple[int, int, int]]) -> list[tuple[np.ndarray, np.ndarray]]:
        v, kernel = self.solution.values, self.kernel
        tops = np.array([certain_tops(kernel, v, *c) for c in columns]).T
        levels = int(tops.max()) + 1 + kernel.max_delta
        stop = np.stack([stop_values(v, *c, levels) for c in columns], axis=1)
        out = sweep(kernel, stop, tops, full="decisions")
        return [(tops[:, c], out.rolls[: tops[:, c].max() + 1, :, c]) for c in range(len(columns))]


@kept("game")
def policy_table(solution: GameSolution) -> PolicyTable:
    """One shared `PolicyTable` per solution (its masks are computed once per process)."""
    return PolicyTable(solution)


def fresh_turn(mode: str = "original", recycle: str = "before-draw") -> Turn:
    """A turn before its first roll: every die in the cup."""
    return Turn(mode, [die for die, n in MODES[mode].cup for _ in range(n)], recycle=recycle)


def dice_state_index(turn: Turn) -> int:
    """The table index of a physical turn's dice state: in the base game by counts per kind (fast: a
    simulation asks this every roll); in a Double Feature mode by its full `DiceState` (faces set aside,
    effects, Santa kept out)."""
    if not MODES[turn.mode].plain:
        return table_for(turn.mode, turn.recycle).index[turn.position().state]
    return _state_index(turn.mode, turn.recycle)[_counts(turn)]


def _counts(turn: Turn) -> tuple:
    names = MODES[turn.mode].die_names
    return tuple(tuple(pile.count(d) for d in names) for pile in (turn.hand, turn.brains, turn.shotguns))


_INDEX: dict[tuple[str, str], dict] = {}


def _state_index(mode: str, recycle: str) -> dict:
    if (mode, recycle) not in _INDEX:
        table = table_for(mode, recycle)
        index = {(s.hand, s.brains, s.shotguns): i for i, s in enumerate(table.states)}
        if len(index) != len(table.states):
            raise ValueError(f"mode {mode}: dice states are not determined by hand, brains and shotguns")
        _INDEX[(mode, recycle)] = index
    return _INDEX[(mode, recycle)]


def play_duel(seat1: Chooser, seat2: Chooser, rng: random.Random, mode: str = "original",
              recycle: str = "before-draw", goal: int = 13, max_turns: int = 10_000) -> int:
    """Play one two-player game with physical dice; returns the winning seat (1 or 2).

    RULES.md section 1: when seat 1 ends a turn at ``goal`` or more, seat 2 has a final turn; seat 2
    reaching the goal first ends the game; tied leaders play tie-break rounds (scores accumulate).
    """
    scores = [0, 0]
    choosers = (seat1, seat2)
    finished = False
    for turn_number in range(max_turns):
        seat = turn_number % 2
        me, them = scores[seat], scores[1 - seat]
        turn = fresh_turn(mode, recycle)
        roll_once(turn, rng)
        while not turn.bust and choosers[seat](seat + 1, me, them, dice_state_index(turn), turn.score):
            roll_once(turn, rng)
        scores[seat] += turn.score
        if seat == 1 and (finished or scores[1] >= goal) and scores[0] != scores[1]:
            return 1 if scores[0] > scores[1] else 2
        finished = finished or scores[seat] >= goal
    raise RuntimeError("no winner after max_turns turns")
