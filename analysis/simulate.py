"""Monte Carlo: physical dice in a cup, shaken by a seeded random generator.

This is deliberately a second, independent implementation of the rules (lists of dice moved
between a cup, a hand and two piles, one random face per die), sharing only the face tables of
dice.py with the exact engine. Tests compare the two within 4 standard errors; it never produces an
answer the API serves.

Double Feature (RULES.md section 2) is written here again from the rules' text, one die at a time,
without dice.py's effect data or roll.py's steps: which dice rescue each other (`RESCUE_GROUPS`),
what the drink and the helmet do, and Santa staying out at a recycling are spelled out below.

School Bus (RULES.md section 3) likewise: the bus die is rolled as one more physical die (only its
face table comes from dice.py), with tokens counted in the turn; boarding, staying, getting off, STOP,
YIELD, DEAD END and tyre tracks are written from the rules' text in `_roll_bus`. A policy then answers
with an action name (``stop``, ``roll``, ``board``, ``stay``, ``get-off``; True means ``roll``), and a
`GiveUp` callback picks the brain lost to tyre tracks.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from .dice import BUS, MODES
from .position import Position
from .roll import legal_actions

__all__ = ["Turn", "play_turn", "roll_once", "random_position", "RESCUE_GROUPS", "tyre_options"]

# The special dice of a mode that rescue each other (every shotgun on one rescues the others).
RESCUE_GROUPS = {
    "big-summer-action-movie": ("hunk", "hottie"),
    "direct-to-video-sequel": ("hunk", "hottie", "santa"),
}
SPECIAL = ("hunk", "hottie", "santa")

# policy(turn) -> True to roll again (or, with the School Bus, the action's name; False or "stop" to stop)
Policy = Callable[["Turn"], "bool | str"]
# give_up(turn, options) -> the option chosen when the bus shows tyre tracks (see `tyre_options`)
GiveUp = Callable[["Turn", list[str]], str]


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
    school_bus: bool = False
    bus_brains: int = 0  # brain tokens
    bus_shotguns: int = 0  # shotgun tokens
    riding: bool = False
    bus_out: bool = False
    stopped: bool = False  # the bus showed STOP: the turn is over

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
        turn.school_bus, turn.riding, turn.bus_out = position.school_bus, position.riding, position.bus_out
        turn.bus_brains, turn.bus_shotguns = position.bus_brains, position.bus_shotguns
        return turn

    @property
    def score(self) -> int:
        return 0 if self.bust else self.banked + len(self.brains) + len(self.double_brains) + self.bus_brains

    def position(self) -> Position:
        effects = tuple(e for e, on in (("energy-drink", self.drink), ("helmet", self.helmet)) if on)
        bus = dict(school_bus=True, bus_brains=self.bus_brains, bus_shotguns=self.bus_shotguns, riding=self.riding,
                   bus_out=self.bus_out) if self.school_bus else {}
        return Position(self.mode, tuple(self.hand), tuple(self.brains), tuple(self.shotguns), self.banked,
                        self.recycle, tuple(self.double_brains), tuple(self.double_shotguns), effects,
                        tuple(self.kept_out), **bus)


def _draw(rng: random.Random, cup: list[str], n: int) -> list[str]:
    rng.shuffle(cup)
    taken, cup[:] = cup[:n], cup[n:]
    return taken


def roll_once(turn: Turn, rng: random.Random, action: str = "roll", give_up: GiveUp | None = None,
              ) -> tuple[int, int]:
    """Roll again (in place): returns (brains shown, shotguns shown); sets `turn.bust`.

    In Double Feature modes and with the School Bus the brains returned are the change of the turn's
    score (a rescue or tyre tracks can take brains back). `action` is ``roll`` or, with the School Bus,
    ``board``, ``stay`` or ``get-off``; `give_up` chooses the brain tyre tracks take (default: the first
    of `tyre_options`)."""
    mode = MODES[turn.mode]
    if turn.school_bus:
        return _roll_school_bus(turn, rng, action, give_up)
    if any(die in SPECIAL for die in mode.die_names):
        return _roll_double_feature(turn, rng)
    dice = _take_dice(turn, rng, mode.dice_per_roll - len(turn.hand))
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
    turn.bust = len(turn.shotguns) + turn.bus_shotguns >= mode.bust_at
    return brains, shotguns


def play_turn(position: Position, policy: Policy, rng: random.Random, give_up: GiveUp | None = None,
              first: str | None = None) -> int:
    """Roll once (compulsorily: `first`, by default ``roll``, or ``stay`` riding the bus), then while
    `policy` says so; the final score (0 on a bust)."""
    turn = Turn.at(position)
    roll_once(turn, rng, first or ("stay" if turn.riding else "roll"), give_up)
    while not turn.bust and not turn.stopped:
        action = policy(turn)
        if action is True:
            action = "roll"
        if not action or action == "stop":
            break
        roll_once(turn, rng, action, give_up)
    return turn.score


def random_position(mode: str, rng: random.Random, recycle: str = "before-draw", school_bus: bool = False,
                    go_on: float = 0.8) -> Position:
    """A position reached by play: from the turn start, roll (with the School Bus, a random legal rolling action)
    and go on with probability `go_on` after each roll, until the turn ends; the last position before it ended
    (the turn start itself if the first roll busts)."""
    turn = Turn.at(Position(mode, recycle=recycle, school_bus=school_bus))
    position = turn.position()
    while True:
        rolling = [a for a in legal_actions(MODES[mode], position.bus_state if school_bus else position.state)
                   if a != "stop"]
        roll_once(turn, rng, rng.choice(rolling))
        if turn.bust or turn.stopped:
            return position
        position = turn.position()
        if rng.random() > go_on:
            return position


def _recycle(turn: Turn) -> None:
    """Note the brain pile; the brain dice go back to the cup, but Santa stays out until next turn."""
    turn.banked += len(turn.brains) + len(turn.double_brains)
    for die in turn.brains:
        if die == "santa":
            turn.kept_out.append(die)
        else:
            turn.cup.append(die)
    turn.brains, turn.double_brains = [], []


def _take_dice(turn: Turn, rng: random.Random, need: int) -> list[str]:
    """The hand plus `need` dice drawn from the cup (the hand leaves the turn's hand); when the cup runs
    short, the brain pile is noted and goes back into the cup first (or after the cup's last dice)."""
    dice = turn.hand
    turn.hand = []
    if len(turn.cup) >= need:
        dice += _draw(rng, turn.cup, need)
    elif turn.recycle == "before-draw":
        _recycle(turn)
        dice += _draw(rng, turn.cup, need)
    else:
        dice += turn.cup
        need -= len(turn.cup)
        turn.cup = []
        _recycle(turn)
        dice += _draw(rng, turn.cup, need)
    return dice


def _double_feature_effects(turn: Turn, rolled: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Santa's drink and helmet, then rescues; returns the dice of the roll still to be settled."""
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
    return kept


def _settle(turn: Turn, kept: list[tuple[str, str]]) -> int:
    """Each die to the hand, the shotgun pile or the brain pile; returns the shotguns shown."""
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
    return shotguns


def _busted(turn: Turn) -> bool:
    shotguns = len(turn.shotguns) + len(turn.double_shotguns) + turn.bus_shotguns
    return shotguns >= (4 if turn.helmet else 3)


def _roll_double_feature(turn: Turn, rng: random.Random) -> tuple[int, int]:
    mode = MODES[turn.mode]
    before = turn.banked + len(turn.brains) + len(turn.double_brains)
    dice = _take_dice(turn, rng, mode.dice_per_roll - len(turn.hand))
    rolled = [(die, rng.choice(mode.dice[mode.index(die)].faces).name) for die in dice]
    shotguns = _settle(turn, _double_feature_effects(turn, rolled))
    turn.bust = _busted(turn)
    return turn.banked + len(turn.brains) + len(turn.double_brains) - before, shotguns


def tyre_options(turn: Turn) -> list[str]:
    """What tyre tracks may take: ``token``, a single-brain die's name (back into the cup), or
    ``double:<die>`` (that double-brain die back into the cup, one brain token instead); ``nothing``
    when the turn has no token and no brain die (noted brains are never lost)."""
    options = ["token"] if turn.bus_brains else []
    for die in dict.fromkeys(turn.brains):
        if turn.brains.count(die) > turn.double_brains.count(die):
            options.append(die)
        if die in turn.double_brains:
            options.append(f"double:{die}")
    return options or ["nothing"]


def _lose_brain(turn: Turn, choice: str) -> None:
    if choice == "token":
        turn.bus_brains -= 1
    elif choice.startswith("double:"):
        die = choice.removeprefix("double:")
        turn.brains.remove(die)
        turn.double_brains.remove(die)
        turn.cup.append(die)
        turn.bus_brains += 1
    elif choice != "nothing":
        turn.brains.remove(choice)
        turn.cup.append(choice)


def _roll_school_bus(turn: Turn, rng: random.Random, action: str, give_up: GiveUp | None) -> tuple[int, int]:
    """One roll of a School Bus turn: ordinary dice (``roll``, ``get-off``) or the bus plus 2 ordinary dice
    (``board``, ``stay``), the rules of RULES.md section 3 applied one die at a time."""
    mode = MODES[turn.mode]
    first = len(turn.cup) + len(turn.kept_out) + turn.drink + turn.helmet == mode.total_dice
    legal = {"roll"} if first else {"stay", "get-off"} if turn.riding else {"roll"} if turn.bus_out else (
        {"roll", "board"} if len(turn.hand) < 3 else {"roll"})
    if action not in legal:
        raise ValueError(f"{action} is not legal here ({', '.join(sorted(legal))})")
    before = turn.banked + len(turn.brains) + len(turn.double_brains) + turn.bus_brains
    if action in ("roll", "get-off"):
        if action == "get-off":
            turn.riding, turn.bus_out = False, True
        school_bus, turn.school_bus = turn.school_bus, False
        brains, shotguns = roll_once(turn, rng)
        turn.school_bus = school_bus
        turn.bust = _busted(turn)
        return brains, shotguns
    if action == "stay":  # the footprint dice escape: back into the cup
        turn.cup += turn.hand
        turn.hand = []
    turn.riding = True
    dice = _take_dice(turn, rng, 2 - len(turn.hand))
    rolled = [(die, rng.choice(mode.dice[mode.index(die)].faces).name) for die in dice]
    bus = rng.choice(BUS.faces)
    kept = _double_feature_effects(turn, rolled)  # Double Feature first
    if bus.name == "yield":
        kept = [(d, "footprints" if f in ("shotgun", "double-shotgun") else f) for d, f in kept]
    elif bus.name == "dead-end":
        kept = [(d, "brain" if f == "footprints" else f) for d, f in kept]
    shotguns = _settle(turn, kept) + bus.shotguns
    turn.bus_brains += bus.brains
    turn.bus_shotguns += bus.shotguns
    turn.bust = _busted(turn)
    if not turn.bust and bus.name == "stop":
        turn.stopped = True
    elif not turn.bust and bus.name == "tyre-tracks":
        options = tyre_options(turn)
        _lose_brain(turn, give_up(turn, options) if give_up else options[0])
        turn.riding, turn.bus_out = False, True
    return turn.banked + len(turn.brains) + len(turn.double_brains) + turn.bus_brains - before, shotguns
