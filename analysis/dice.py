"""Dice, faces and modes as data (RULES.md sections 1-2), nothing else.

A die is a name plus six faces; a face says how many brains and shotguns it shows and whether the
die stays in hand as footprints. A mode is the multiset of dice in the cup. Everything the engine
knows about a die comes from these tables, so an expansion die is one more row, not new code.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

__all__ = ["Face", "Die", "Mode", "DICE", "MODES", "FACES", "mode_named"]


@dataclass(frozen=True)
class Face:
    """One face of a die: what it scores and where the die goes after the roll."""

    name: str
    brains: int = 0
    shotguns: int = 0
    effect: str = ""

    @property
    def footprints(self) -> bool:
        """Footprints keep the die in hand to be rerolled."""
        return self.name == "footprints"


BRAIN = Face("brain", brains=1)
SHOTGUN = Face("shotgun", shotguns=1)
FOOTPRINTS = Face("footprints")
FACES = {face.name: face for face in (BRAIN, SHOTGUN, FOOTPRINTS)}


@dataclass(frozen=True)
class Die:
    """A die: a name, a colour for people, and its six equally likely faces."""

    name: str
    colour: str
    faces: tuple[Face, ...]

    @cached_property
    def face_probabilities(self) -> dict[Face, Fraction]:
        """P(face) = (number of sides showing it) / 6."""
        counts = Counter(self.faces)
        return {face: Fraction(n, len(self.faces)) for face, n in counts.items()}

    def probability(self, face_name: str) -> Fraction:
        return sum((p for f, p in self.face_probabilities.items() if f.name == face_name), Fraction(0))


def _die(name: str, colour: str, brains: int, shotguns: int, footprints: int) -> Die:
    return Die(name, colour, (BRAIN,) * brains + (SHOTGUN,) * shotguns + (FOOTPRINTS,) * footprints)


DICE: dict[str, Die] = {
    die.name: die
    for die in (
        _die("green", "green", brains=3, shotguns=1, footprints=2),
        _die("yellow", "yellow", brains=2, shotguns=2, footprints=2),
        _die("red", "red", brains=1, shotguns=3, footprints=2),
    )
}


@dataclass(frozen=True)
class Mode:
    """A game mode: which dice are in the cup, how many of each (in a fixed display order)."""

    name: str
    title: str
    cup: tuple[tuple[str, int], ...]
    bust_at: int = 3
    dice_per_roll: int = 3

    @cached_property
    def die_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.cup)

    @cached_property
    def dice(self) -> tuple[Die, ...]:
        return tuple(DICE[name] for name in self.die_names)

    @cached_property
    def counts(self) -> tuple[int, ...]:
        return tuple(n for _, n in self.cup)

    @property
    def total_dice(self) -> int:
        return sum(self.counts)

    def index(self, die_name: str) -> int:
        return self.die_names.index(die_name)


MODES: dict[str, Mode] = {
    mode.name: mode
    for mode in (Mode("original", "Zombie Dice", (("green", 6), ("yellow", 4), ("red", 3))),)
}


def mode_named(name: str) -> Mode:
    """The mode called `name`; KeyError if there is none."""
    return MODES[name]
