"""Monte Carlo: physical dice in a cup, shaken by a seeded random generator.

This is deliberately a second, independent implementation of the rules (lists of dice moved
between a cup, a hand and two piles, one random face per die), sharing only the face tables of
dice.py with the exact engine. Tests compare the two within 4 standard errors; it never produces an
answer the API serves.

Double Feature (RULES.md section 2) is written here again from the rules' text, one die at a time,
without dice.py's effect data or roll.py's steps: which dice rescue each other (`RESCUE_GROUPS`),
what the drink and the helmet do, and Santa staying out at a recycling are spelled out below.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from .dice import MODES
from .position import Position

__all__ = ["Turn", "play_turn", "roll_once", "RESCUE_GROUPS"]

# The special dice of a mode that rescue each other (every shotgun on one rescues the others).
RESCUE_GROUPS = {
    "big-summer-action-movie": ("hunk", "hottie"),
    "direct-to-video-sequel": ("hunk", "hottie", "santa"),
}
SPECIAL = ("hunk", "hottie", "santa")

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
    double_brains: list[str] = field(default_factory=list)  # dice of `brains` showing a double brain
    double_shotguns: list[str] = field(default_factory=list)  # dice of `shotguns` showing a double shotgun
    kept_out: list[str] = field(default_factory=list)  # Santa, kept out by a recycling
    drink: bool = False  # Santa's energy drink in force (his die out of play)
    helmet: bool = False  # Santa's helmet in force (his die out of play)

    @classmethod
    def at(cls, position: Position) -> Turn:
        mode = MODES[position.mode]
        out = list(position.kept_out) + ["santa"] * len(position.effects)
        cup = []
        for die, n in mode.cup:
            used = (position.footprints.count(die) + position.brains.count(die) + position.shotguns.count(die)
                    + out.count(die))
            cup += [die] * (n - used)
        turn = cls(position.mode, cup, list(position.footprints), list(position.brains),
                   list(position.shotguns), position.banked, position.recycle)
        turn.double_brains = list(position.double_brains)
        turn.double_shotguns = list(position.double_shotguns)
        turn.kept_out = list(position.kept_out)
        turn.drink = "energy-drink" in position.effects
        turn.helmet = "helmet" in position.effects
        return turn

    @property
    def score(self) -> int:
        return 0 if self.bust else self.banked + len(self.brains) + len(self.double_brains)

    def position(self) -> Position:
        effects = tuple(e for e, on in (("energy-drink", self.drink), ("helmet", self.helmet)) if on)
        return Position(self.mode, tuple(self.hand), tuple(self.brains), tuple(self.shotguns), self.banked,
                        self.recycle, tuple(self.double_brains), tuple(self.double_shotguns), effects,
                        tuple(self.kept_out))


def _draw(rng: random.Random, cup: list[str], n: int) -> list[str]:
    rng.shuffle(cup)
    taken, cup[:] = cup[:n], cup[n:]
    return taken


def roll_once(turn: Turn, rng: random.Random) -> tuple[int, int]:
    """Roll again (in place): returns (brains shown, shotguns shown); sets `turn.bust`.

    In Double Feature modes the brains returned are the change of the turn's score (a rescue can
    take brains back)."""
    mode = MODES[turn.mode]
    if any(die in SPECIAL for die in mode.die_names):
        return _roll_double_feature(turn, rng)
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


def _recycle(turn: Turn) -> None:
    """Note the brain pile; the brain dice go back to the cup, but Santa stays out until next turn."""
    turn.banked += len(turn.brains) + len(turn.double_brains)
    for die in turn.brains:
        if die == "santa":
            turn.kept_out.append(die)
        else:
            turn.cup.append(die)
    turn.brains, turn.double_brains = [], []


def _roll_double_feature(turn: Turn, rng: random.Random) -> tuple[int, int]:
    mode = MODES[turn.mode]
    before = len(turn.brains) + len(turn.double_brains)
    need = mode.dice_per_roll - len(turn.hand)
    dice = turn.hand
    turn.hand = []
    if len(turn.cup) >= need:
        dice += _draw(rng, turn.cup, need)
    elif turn.recycle == "before-draw":
        _recycle(turn)
        before = 0
        dice += _draw(rng, turn.cup, need)
    else:
        dice += turn.cup
        need -= len(turn.cup)
        turn.cup = []
        _recycle(turn)
        before = 0
        dice += _draw(rng, turn.cup, need)
    rolled = [(die, rng.choice(mode.dice[mode.index(die)].faces).name) for die in dice]
    # Santa's drink or helmet: his die leaves play, the effect holds from this roll on.
    for _, face in rolled:
        if face == "energy-drink":
            turn.drink = True
        elif face == "helmet":
            turn.helmet = True
    rolled = [(d, f) for d, f in rolled if f not in ("energy-drink", "helmet")]
    if turn.drink:
        rolled = [(d, "brain" if d == "green" and f == "footprints" else f) for d, f in rolled]
    # Rescue: a shotgun (single or double) on one special die of the group frees each other one.
    group = RESCUE_GROUPS.get(turn.mode, ())
    shooters = {d for d, f in rolled if d in group and f in ("shotgun", "double-shotgun")}
    freed = {d for d in group if shooters - {d}}
    kept = []
    for d, f in rolled:
        if d in freed and f in ("brain", "double-brain") and not (d == "santa" and f == "double-brain"):
            turn.cup.append(d)  # no brain from it
        else:
            kept.append((d, f))
    for d in list(turn.brains):
        if d in freed and not (d == "santa" and d in turn.double_brains):
            turn.brains.remove(d)
            if d in turn.double_brains:
                turn.double_brains.remove(d)
            turn.cup.append(d)
    shotguns = 0
    for d, f in kept:
        if f == "footprints":
            turn.hand.append(d)
        elif f in ("shotgun", "double-shotgun"):
            turn.shotguns.append(d)
            shotguns += 1
            if f == "double-shotgun":
                turn.double_shotguns.append(d)
                shotguns += 1
        else:
            turn.brains.append(d)
            if f == "double-brain":
                turn.double_brains.append(d)
    turn.bust = len(turn.shotguns) + len(turn.double_shotguns) >= (4 if turn.helmet else 3)
    return len(turn.brains) + len(turn.double_brains) - before, shotguns
