"""Monte Carlo: physical dice in a cup, shaken by a seeded random generator.

This is deliberately a second, independent implementation of the rules (lists of dice moved
between a cup, a hand and two piles, one random face per die), sharing only the face tables of
dice.py with the exact engine. Tests compare the two within 4 standard errors; it never produces an
answer the API serves.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from .dice import MODES
from .position import Position

__all__ = ["Turn", "play_turn", "roll_once"]

# policy(turn) -> True to roll again
Policy = Callable[["Turn"], bool]


@dataclass
class Turn:
    """The physical state of a turn in progress."""

    mode: str
    cup: list[str]
    hand: list[str] = field(default_factory=list)
    brains: list[str] = field(default_factory=list)
    shotguns: list[str] = field(default_factory=list)
    banked: int = 0
    recycle: str = "before-draw"
    bust: bool = False

    @classmethod
    def at(cls, position: Position) -> Turn:
        mode = MODES[position.mode]
        cup = []
        for die, n in mode.cup:
            used = position.footprints.count(die) + position.brains.count(die) + position.shotguns.count(die)
            cup += [die] * (n - used)
        return cls(position.mode, cup, list(position.footprints), list(position.brains),
                   list(position.shotguns), position.banked, position.recycle)

    @property
    def score(self) -> int:
        return 0 if self.bust else self.banked + len(self.brains)

    def position(self) -> Position:
        return Position(self.mode, tuple(self.hand), tuple(self.brains), tuple(self.shotguns), self.banked,
                        self.recycle)


def _draw(rng: random.Random, cup: list[str], n: int) -> list[str]:
    rng.shuffle(cup)
    taken, cup[:] = cup[:n], cup[n:]
    return taken


def roll_once(turn: Turn, rng: random.Random) -> tuple[int, int]:
    """Roll again (in place): returns (brains shown, shotguns shown); sets `turn.bust`."""
    mode = MODES[turn.mode]
    need = mode.dice_per_roll - len(turn.hand)
    dice = turn.hand
    turn.hand = []
    if len(turn.cup) >= need:
        dice += _draw(rng, turn.cup, need)
    elif turn.recycle == "before-draw":
        turn.banked += len(turn.brains)
        turn.cup += turn.brains
        turn.brains = []
        dice += _draw(rng, turn.cup, need)
    else:
        dice += turn.cup
        need -= len(turn.cup)
        turn.banked += len(turn.brains)
        turn.cup, turn.brains = turn.brains, []
        dice += _draw(rng, turn.cup, need)
    brains = shotguns = 0
    for die in dice:
        face = rng.choice(mode.dice[mode.index(die)].faces)
        if face.footprints:
            turn.hand.append(die)
        elif face.shotguns:
            shotguns += face.shotguns
            turn.shotguns.append(die)
        else:
            brains += face.brains
            turn.brains.append(die)
    turn.bust = len(turn.shotguns) >= mode.bust_at
    return brains, shotguns


def play_turn(position: Position, policy: Policy, rng: random.Random) -> int:
    """Roll once (compulsorily), then while `policy` says so; the final score (0 on a bust)."""
    turn = Turn.at(position)
    roll_once(turn, rng)
    while not turn.bust and policy(turn):
        roll_once(turn, rng)
    return turn.score
