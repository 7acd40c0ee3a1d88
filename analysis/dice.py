"""Dice, faces and modes as data (RULES.md sections 1-2), nothing else.

A die is a name plus six faces; a face says how many brains and shotguns it shows and whether the
die stays in hand as footprints. A mode is the multiset of dice in the cup. Everything the engine
knows about a die comes from these tables, so an expansion die is one more row, not new code.

Double Feature (section 2) adds, as data:

* faces worth two (``double-brain``, ``double-shotgun``);
* faces with an ``effect``: Santa's ``energy-drink`` and ``helmet`` set his die aside for the turn and
  put an `Effect` in force (footprints of some dice count as brains; the bust threshold rises);
  Santa's ``double-brain`` is a ``gift``: it is never rescued;
* `Die.stays_out`: the die stays out of the cup when the brain dice are recycled (Santa);
* `Mode.rescues`: (rescuer, rescued) pairs; a shotgun face on the rescuer sends the rescued die back
  from the brain pile (or from the same roll) to the cup.

School Bus (section 3) adds one die, `BUS`, that never goes into the cup and is usable with every mode:
twelve faces, brains and shotguns kept as tokens, and four faces whose ``effect`` (`BUS_EFFECTS`) acts on
the whole roll (roll.py's bus step reads them).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

__all__ = ["Face", "Die", "Mode", "Effect", "DICE", "MODES", "FACES", "EFFECTS", "SPECIAL_FACES", "BUS", "BUS_EFFECTS",
           "mode_named"]


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
DOUBLE_BRAIN = Face("double-brain", brains=2)
DOUBLE_SHOTGUN = Face("double-shotgun", shotguns=2)
GIFT = Face("double-brain", brains=2, effect="gift")  # Santa's double brain: never rescued
ENERGY_DRINK = Face("energy-drink", effect="energy-drink")
HELMET = Face("helmet", effect="helmet")
SPECIAL_FACES = (DOUBLE_BRAIN, DOUBLE_SHOTGUN, GIFT, ENERGY_DRINK, HELMET)


@dataclass(frozen=True)
class Effect:
    """What a set-aside face puts in force for the rest of the turn, from the roll that shows it on."""

    name: str
    bust_bonus: int = 0  # helmet: it takes one more shotgun to bust
    converts: tuple[str, ...] = ()  # energy drink: footprints on these dice count as (single) brains


EFFECTS: dict[str, Effect] = {
    e.name: e for e in (Effect("energy-drink", converts=("green",)), Effect("helmet", bust_bonus=1))
}


@dataclass(frozen=True)
class Die:
    """A die: a name, a colour for people, and its equally likely faces (six; twelve for the bus)."""

    name: str
    colour: str
    faces: tuple[Face, ...]
    stays_out: bool = False  # kept out of the cup when the brain dice are recycled (Santa)

    @cached_property
    def distinct_faces(self) -> tuple[tuple[Face, int], ...]:
        """Each distinct face with its number of sides, in the order of `faces`."""
        return tuple(Counter(self.faces).items())

    @cached_property
    def plain(self) -> bool:
        """Only the three base faces (green, yellow, red)."""
        return all(f in (BRAIN, SHOTGUN, FOOTPRINTS) for f in self.faces)

    def face(self, name: str) -> Face | None:
        """The face called `name` (None if the die has none)."""
        return next((f for f in self.faces if f.name == name), None)

    @cached_property
    def face_probabilities(self) -> dict[Face, Fraction]:
        """P(face) = (number of sides showing it) / (number of sides)."""
        counts = Counter(self.faces)
        return {face: Fraction(n, len(self.faces)) for face, n in counts.items()}

    def probability(self, face_name: str) -> Fraction:
        return sum((p for f, p in self.face_probabilities.items() if f.name == face_name), Fraction(0))


def _die(name: str, colour: str, brains: int, shotguns: int, footprints: int) -> Die:
    return Die(name, colour, (BRAIN,) * brains + (SHOTGUN,) * shotguns + (FOOTPRINTS,) * footprints)


# The School Bus die (RULES.md section 3): a D12, never in the cup; its brains and shotguns become tokens.
BUS_EFFECTS = ("stop", "yield", "dead-end", "tyre-tracks")
BUS = Die("bus", "yellow (D12)", (BRAIN, BRAIN, Face("2-brains", brains=2), Face("3-brains", brains=3), SHOTGUN,
                                  Face("2-shotguns", shotguns=2), Face("brain+shotgun", brains=1, shotguns=1),
                                  Face("2-brains+shotgun", brains=2, shotguns=1))
          + tuple(Face(effect, effect=effect) for effect in BUS_EFFECTS))

DICE: dict[str, Die] = {
    die.name: die
    for die in (
        _die("green", "green", brains=3, shotguns=1, footprints=2),
        _die("yellow", "yellow", brains=2, shotguns=2, footprints=2),
        _die("red", "red", brains=1, shotguns=3, footprints=2),
        Die("hunk", "black (white icons)", (FOOTPRINTS,) * 2 + (SHOTGUN,) * 2 + (DOUBLE_SHOTGUN, DOUBLE_BRAIN)),
        Die("hottie", "black (pink icons)", (FOOTPRINTS,) * 3 + (SHOTGUN,) * 2 + (BRAIN,)),
        Die("santa", "red (white icons)", (BRAIN, SHOTGUN, FOOTPRINTS, GIFT, ENERGY_DRINK, HELMET), stays_out=True),
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
    rescues: tuple[tuple[str, str], ...] = ()  # (rescuer, rescued): Double Feature's rescue

    @cached_property
    def plain(self) -> bool:
        """The base game's rules only: plain dice, no rescue (the engine's fast path)."""
        return all(d.plain for d in self.dice) and not self.rescues

    @cached_property
    def max_rescued(self) -> int:
        """At most how many dice one roll can send back to the cup (the others of a rescue group)."""
        return len({d for pair in self.rescues for d in pair}) - 1 if self.rescues else 0

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


def _mutual(*names: str) -> tuple[tuple[str, str], ...]:
    return tuple((a, b) for a in names for b in names if a != b)


MODES: dict[str, Mode] = {
    mode.name: mode
    for mode in (
        Mode("original", "Zombie Dice", (("green", 6), ("yellow", 4), ("red", 3))),
        Mode("big-summer-action-movie", "Zombie Dice 2: Big Summer Action Movie",
             (("green", 6), ("yellow", 2), ("red", 3), ("hunk", 1), ("hottie", 1)), rescues=_mutual("hunk", "hottie")),
        Mode("santa-claus-meets-the-zombies", "Zombie Dice 2: Santa Claus Meets the Zombies",
             (("green", 5), ("yellow", 4), ("red", 3), ("santa", 1))),
        Mode("direct-to-video-sequel", "Zombie Dice 2: Direct-to-Video Sequel",
             (("green", 5), ("yellow", 2), ("red", 3), ("hunk", 1), ("hottie", 1), ("santa", 1)),
             rescues=_mutual("hunk", "hottie", "santa")),
    )
}


def mode_named(name: str) -> Mode:
    """The mode called `name`; KeyError if there is none."""
    return MODES[name]
