"""`Position`: one moment of a Zombie Dice turn, between two rolls, validated.

A position lists the dice by name: the footprint dice in hand, the brain pile, the shotgun pile,
plus the brains already noted when the cup ran out (`banked`). The cup is derived, never given, so
it cannot disagree with the rest. A position that no sequence of legal rolls can produce is
rejected with every offending field and the reason; nothing is ever silently corrected (the only
normalisation is sorting each pile into the mode's die order, which changes no meaning).

With the School Bus (``school_bus=True``, RULES.md section 3) a position also says what the bus left:
brain and shotgun tokens, whether the player rides the bus, whether the bus is out for the turn.
Whether this is the turn's first roll is derived (`first_roll`: nothing rolled yet; every later roll
leaves at least one die out of the cup). The engine sees such a position as a `BusState`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from .dice import EFFECTS, MODES, Mode

__all__ = ["Position", "PositionError", "FieldError", "DiceState", "BusState", "RECYCLE_VARIANTS", "MAX_BANKED",
           "BUS_PHASES", "banked_reachable", "min_noted", "BASE_FIELDS", "DOUBLE_FEATURE_FIELDS", "SCHOOL_BUS_FIELDS",
           "POSITION_FIELDS", "PILES", "COUNTS"]

RECYCLE_VARIANTS = ("before-draw", "draw-then-recycle")
# A position's fields, by the part of the rules they belong to: the one list that the API's requests and answers,
# the CLI's options and the review's logs read (tests/analysis/test_position.py checks `Position`, openapi.yaml and the
# CLI against it).
BASE_FIELDS = ("mode", "footprints", "brains", "shotguns", "banked", "recycle")
DOUBLE_FEATURE_FIELDS = ("double_brains", "double_shotguns", "effects", "kept_out")  # empty in the base game
SCHOOL_BUS_FIELDS = ("school_bus", "bus_brains", "bus_shotguns", "riding", "bus_out")  # rejected without the bus
POSITION_FIELDS = BASE_FIELDS + DOUBLE_FEATURE_FIELDS + SCHOOL_BUS_FIELDS
PILES = ("footprints", "brains", "shotguns", "double_brains", "double_shotguns", "kept_out")  # lists of die names
COUNTS = ("banked", "bus_brains", "bus_shotguns")  # whole numbers
# A turn that noted more than this many brains has probability far below 1e-100: we call it absurd.
MAX_BANKED = 1000


class DiceState(NamedTuple):
    """Where each die is, as counts per die kind in the mode's order (the engine's state).

    The base game uses the first three fields only; the others keep their empty defaults there, so
    base states are exactly what they always were. In Double Feature modes every field is filled
    (per-kind tuples of the mode's length): ``double_brains`` / ``double_shotguns`` count the dice of
    the brain / shotgun pile that show a double face (they are also counted in ``brains`` /
    ``shotguns``), ``aside`` the dice out of play for the turn (Santa after a drink or a helmet, or
    kept out at a recycling), ``effects`` the effects in force (sorted names).
    """

    hand: tuple[int, ...]
    brains: tuple[int, ...]
    shotguns: tuple[int, ...]
    double_brains: tuple[int, ...] = ()
    double_shotguns: tuple[int, ...] = ()
    aside: tuple[int, ...] = ()
    effects: tuple[str, ...] = ()

    def cup(self, mode: Mode) -> tuple[int, ...]:
        if self.aside:
            return tuple(n - h - b - s - a for n, h, b, s, a in
                         zip(mode.counts, self.hand, self.brains, self.shotguns, self.aside))
        return tuple(n - h - b - s for n, h, b, s in zip(mode.counts, self.hand, self.brains, self.shotguns))

    @property
    def pile_brains(self) -> int:
        """Brains in the brain pile (a double brain counts 2)."""
        return sum(self.brains) + sum(self.double_brains)

    @property
    def shotgun_count(self) -> int:
        """Shotguns in the shotgun pile (a double shotgun counts 2)."""
        return sum(self.shotguns) + sum(self.double_shotguns)

    def bust_at(self, mode: Mode) -> int:
        """Shotguns that end the turn: the mode's threshold plus every effect's bonus (helmet)."""
        return mode.bust_at + sum(EFFECTS[e].bust_bonus for e in self.effects)


BUS_PHASES = ("ready", "riding", "out")


class BusState(NamedTuple):
    """A School Bus position as the engine sees it: the dice, plus what the bus adds (RULES.md 3).

    ``phase``: ``ready`` (not boarded yet this turn: the bus may be boarded whenever new dice are drawn,
    from the second roll on), ``riding``, or ``out`` (got off, or tyre tracks: ordinary dice only).
    ``tokens``: 1 when the turn holds a brain token that tyre tracks could take, else 0. The number of
    brain tokens is part of the turn's score (the solvers' second index); only whether there is one
    changes what a roll can do, and only while the bus can still show tyre tracks, so it is 0 once the
    bus is out. ``shotguns``: shotgun tokens, which count toward the bust with the shotgun pile.
    """

    dice: DiceState
    phase: str = "ready"
    tokens: int = 0
    shotguns: int = 0

    @property
    def shotgun_count(self) -> int:
        """Shotguns toward the bust: the pile's (a double counts 2) plus the shotgun tokens."""
        return self.dice.shotgun_count + self.shotguns

    def bust_at(self, mode: Mode) -> int:
        return self.dice.bust_at(mode)


@dataclass(frozen=True)
class FieldError:
    field: str
    reason: str


class PositionError(ValueError):
    """An impossible position; `errors` names every field at fault and why."""

    def __init__(self, errors: list[FieldError]):
        self.errors = errors
        super().__init__("; ".join(f"{e.field}: {e.reason}" for e in errors))


def banked_reachable(banked: int, shotguns: int, out: int, total: int = 13, per_roll: int = 3) -> bool:
    """Can a turn have noted exactly `banked` brains, with `shotguns` set aside and `out` dice out of the cup?

    The cup runs out only when the dice set aside leave fewer than needed: with ``f`` footprint dice
    kept, ``total - b - s - f < per_roll - f``, so ``b + s >= total - per_roll + 1``. A recycling at a
    moment with ``sigma`` shotguns therefore notes between ``total - 2 - sigma`` and ``total - sigma``
    brains (base game: 11 - sigma to 13 - sigma), and shotguns only grow. After the last recycling
    (at ``sigma_m``) the brain pile is empty and every roll since set ``per_roll`` dice out, so
    ``out - sigma_m >= per_roll``. With ``m`` recyclings, the earlier ones at any ``sigma <= sigma_m``,
    exactly the sums in ``[m (total - 2 - sigma_m), m total - sigma_m]`` are possible.
    """
    if banked == 0:
        return True
    for sigma in range(min(shotguns, out - per_roll) + 1):
        low = total - per_roll + 1 - sigma
        for m in range(1, banked // low + 1):
            if m * low <= banked <= m * total - sigma:
                return True
    return False


@dataclass(frozen=True)
class Position:
    """A validated mid-turn position. Build it with keyword arguments; piles are die-name lists.

    Double Feature fields (empty in the base game): ``double_brains`` names the dice of ``brains``
    that show a double brain (Hunk, Santa), ``double_shotguns`` the dice of ``shotguns`` that show a
    double shotgun (Hunk), ``effects`` Santa's effects in force (``energy-drink``, ``helmet``: his die
    is then set aside), ``kept_out`` the dice kept out of the cup by a recycling (Santa).

    School Bus fields (RULES.md section 3; all rejected without ``school_bus``): ``bus_brains`` and
    ``bus_shotguns`` are the tokens taken from the bus this turn (unlimited; brain tokens score like
    brains, shotgun tokens count toward the bust), ``riding`` says the player rides the bus, ``bus_out``
    that the bus is out for the rest of the turn (got off, or tyre tracks). Neither riding nor out means
    the player has not boarded yet (and so holds no token).
    """

    mode: str = "original"
    footprints: tuple[str, ...] = ()
    brains: tuple[str, ...] = ()
    shotguns: tuple[str, ...] = ()
    banked: int = 0
    recycle: str = "before-draw"
    double_brains: tuple[str, ...] = ()
    double_shotguns: tuple[str, ...] = ()
    effects: tuple[str, ...] = ()
    kept_out: tuple[str, ...] = ()
    school_bus: bool = False
    bus_brains: int = 0
    bus_shotguns: int = 0
    riding: bool = False
    bus_out: bool = False
    _state: DiceState = field(init=False, repr=False, compare=False)
    _bus: BusState | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Validate by parts: each field alone (`_fields`), then the base game's rules of the dice (`_base_rules`), the
        Double Feature's (`_double_feature_rules`) and the School Bus's (`_bus_rules`); every error of a stage is
        reported together."""
        mode = MODES.get(self.mode) if isinstance(self.mode, str) else None
        if mode is None:
            raise PositionError([FieldError("mode", f"unknown mode {self.mode!r}; known: {', '.join(MODES)}")])
        piles, owners, errors = self._fields(mode)
        if errors:
            raise PositionError(errors)
        aside = piles["kept_out"] + Counter(owners.values())
        out = len(self.footprints) + len(self.brains) + len(self.shotguns) + sum(aside.values())  # of the cup
        errors = (self._base_rules(mode, piles, owners, aside, out) + self._double_feature_rules(mode, piles, owners)
                  + self._bus_rules(mode, out))
        if errors:
            raise PositionError(errors)
        names = ("footprints", "brains", "shotguns") + (() if mode.plain else ("double_brains", "double_shotguns"))
        state = DiceState(*(tuple(piles[p][d] for d in mode.die_names) for p in names))
        if not mode.plain:
            state = state._replace(aside=tuple(aside[d] for d in mode.die_names), effects=self.effects)
        object.__setattr__(self, "_state", state)
        bus = None
        if self.school_bus:
            phase = "riding" if self.riding else "out" if self.bus_out else "ready"
            bus = BusState(state, phase, int(self.bus_brains > 0 and phase != "out"), self.bus_shotguns)
        object.__setattr__(self, "_bus", bus)

    # -- each field alone ------------------------------------------------------------------------------------------
    def _fields(self, mode: Mode) -> tuple[dict[str, Counter], dict[str, str], list[FieldError]]:
        """Each field's type and range, the piles sorted into the mode's die order: (the piles as counts, each
        effect in force -> the die showing it, the errors)."""
        errors = []
        if self.recycle not in RECYCLE_VARIANTS:
            errors.append(
                FieldError("recycle", f"unknown variant {self.recycle!r}; known: {', '.join(RECYCLE_VARIANTS)}")
            )
        piles = {}
        for name in PILES:
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, (list, tuple)):
                errors.append(FieldError(name, "must be a list of die names"))
                value = ()
            for i, die in enumerate(value):
                if die not in mode.die_names:
                    errors.append(
                        FieldError(f"{name}[{i}]", f"unknown die {die!r} in mode {mode.name}; "
                                   f"known: {', '.join(mode.die_names)}")
                    )
            clean = tuple(sorted((d for d in value if d in mode.die_names), key=mode.index))
            object.__setattr__(self, name, clean)
            piles[name] = Counter(clean)
        owners, faults = self._effects(mode)
        errors += faults
        banked = self.banked
        if isinstance(banked, bool) or not isinstance(banked, int):
            errors.append(FieldError("banked", "must be a whole number of brains"))
        elif banked < 0:
            errors.append(FieldError("banked", "cannot be negative"))
        elif banked > MAX_BANKED:
            errors.append(FieldError("banked", f"{banked} brains noted in one turn is absurd (limit {MAX_BANKED})"))
        return piles, owners, errors + self._bus_fields()

    def _effects(self, mode: Mode) -> tuple[dict[str, str], list[FieldError]]:
        """The effects in force (sorted names, set on the position), each -> the die showing it; and the errors: the
        effects no die of the mode shows, or no die could show with the others."""
        errors = []
        effects = self.effects
        owners: dict[str, str] = {}  # effect -> the die showing it
        if isinstance(effects, str) or not isinstance(effects, (list, tuple)):
            errors.append(FieldError("effects", "must be a list of effect names"))
            effects = ()
        for i, effect in enumerate(effects):
            die = next((d.name for d in mode.dice for f in d.faces if f.effect == effect and effect in EFFECTS), None)
            known = sorted({f.effect for d in mode.dice for f in d.faces if f.effect in EFFECTS})
            if die is None:
                errors.append(FieldError(f"effects[{i}]", f"no die of mode {mode.name} shows {effect!r}; known: "
                                         f"{', '.join(known) or 'none'}"))
            elif effect in owners:
                errors.append(FieldError(f"effects[{i}]", f"{effect} listed twice"))
            elif die in owners.values():
                errors.append(FieldError(f"effects[{i}]", f"one {die} die shows one face: it cannot have put "
                                         f"both {next(e for e, d in owners.items() if d == die)} and {effect} "
                                         f"in force"))
            else:
                owners[effect] = die
        object.__setattr__(self, "effects", tuple(sorted(owners)))
        return owners, errors

    def _bus_fields(self) -> list[FieldError]:
        """The School Bus fields' types and ranges, and that none is used without ``school_bus``."""
        errors = []
        for name in ("school_bus", "riding", "bus_out"):
            if not isinstance(getattr(self, name), bool):
                errors.append(FieldError(name, "must be true or false"))
        for name, what in (("bus_brains", "brain"), ("bus_shotguns", "shotgun")):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                errors.append(FieldError(name, f"must be a whole number of {what} tokens"))
            elif value < 0:
                errors.append(FieldError(name, "cannot be negative"))
            elif value > MAX_BANKED:
                errors.append(FieldError(name, f"{value} {what} tokens in one turn is absurd (limit {MAX_BANKED})"))
        if errors or self.school_bus:
            return errors
        for name, default in (("bus_brains", 0), ("bus_shotguns", 0), ("riding", False), ("bus_out", False)):
            if getattr(self, name) != default:
                errors.append(FieldError(name, f"{name} without school_bus: only the School Bus has bus tokens, "
                                         "riding and a bus out"))
        return errors

    # -- the rules of the dice, by part -----------------------------------------------------------------------------
    def _base_rules(self, mode: Mode, piles: dict[str, Counter], owners: dict[str, str], aside: Counter,
                    out: int) -> list[FieldError]:
        """No more dice of a kind than the mode has, the turn is not over, the hand holds no more than a roll, some
        roll leads here (`out` dice out of the cup), and the brains noted are what recyclings can note."""
        errors = []
        for die, available in mode.cup:
            used = sum(piles[p][die] for p in ("footprints", "brains", "shotguns")) + aside[die]
            if used > available:
                where = next(p for p in ("shotguns", "brains", "footprints", "kept_out", "effects")
                             if (piles[p][die] if p != "effects" else die in owners.values()))
                errors.append(FieldError(where, f"{used} {die} dice in play but mode {mode.name} has {available}"))
        bust_at = mode.bust_at + sum(EFFECTS[e].bust_bonus for e in owners)
        hand = len(self.footprints)
        shots = len(self.shotguns) + len(self.double_shotguns)
        if hand > mode.dice_per_roll:
            errors.append(FieldError("footprints", f"{hand} footprint dice in hand; a roll has only "
                                     f"{mode.dice_per_roll} dice"))
        if shots >= bust_at:
            errors.append(FieldError("shotguns", f"{shots} shotguns: the turn is already over (bust at "
                                     f"{bust_at})"))
        elif shots + self.bus_shotguns >= bust_at:
            errors.append(FieldError("bus_shotguns", f"{shots} shotgun(s) and {self.bus_shotguns} shotgun "
                                     f"token(s): the turn is already over (bust at {bust_at})"))
        least = mode.dice_per_roll - mode.max_rescued
        boarded = self.riding or self.bus_out  # a bus roll sets out only 2 dice, and may send dice back
        if 0 < out < least and not boarded:
            errors.append(FieldError("footprints", f"only {out} dice out of the cup, but every roll sets out "
                                     f"{least if mode.plain else f'at least {least}'}: no roll leads here"))
        banked = self.banked
        if out == 0 and banked:
            errors.append(FieldError("banked", "brains are noted only when the cup runs out mid-turn, which "
                                     "leaves dice out of the cup; none are"))
        elif not errors and mode.plain and not self.school_bus and not banked_reachable(
                banked, shots, out, mode.total_dice, mode.dice_per_roll):
            errors.append(FieldError("banked", f"no sequence of recyclings notes exactly {banked} brains and "
                                     f"leaves {out} dice out with {shots} shotgun(s): a recycling notes "
                                     f"{mode.total_dice - mode.dice_per_roll + 1 - shots} to "
                                     f"{mode.total_dice} brains, and every roll after it sets out "
                                     f"{mode.dice_per_roll} dice"))
        elif not errors and (self.school_bus or not mode.plain) and 0 < banked < (least_noted := min_noted(mode)):
            errors.append(FieldError("banked", f"a recycling notes at least {least_noted} brains in mode "
                                     f"{mode.name} (the cup runs out only when that many brain dice are set "
                                     "aside)"))
        return errors

    def _double_feature_rules(self, mode: Mode, piles: dict[str, Counter], owners: dict[str, str]) -> list[FieldError]:
        """Every die shows a face it has; only the dice that stay out are kept out, and only after a recycling;
        footprints an effect turns into brains are not in hand."""
        errors = []
        # footprints that become single brains: any die's with the School Bus (DEAD END), or an effect's in force
        converted = {d.name for d in mode.dice if self.school_bus and d.face("footprints")}
        converted |= {die for effect in owners for die in EFFECTS[effect].converts}
        errors += self._faces(mode, piles, converted)
        for i, die in enumerate(self.kept_out):
            if not mode.dice[mode.index(die)].stays_out:
                errors.append(FieldError(f"kept_out[{i}]", f"a recycling puts every {die} brain die back in the cup; "
                                         f"only {', '.join(d.name for d in mode.dice if d.stays_out) or 'no die'} "
                                         f"stays out"))
        if self.kept_out and not self.banked:
            errors.append(FieldError("kept_out", "dice are kept out only by a recycling, which notes brains; "
                                     "banked is 0"))
        for effect in owners:  # (with the School Bus, YIELD can still turn such a die's shotgun into footprints)
            for die in EFFECTS[effect].converts:
                if piles["footprints"][die] and not self.school_bus:
                    errors.append(FieldError("footprints", f"{die} footprints count as brains while the {effect} "
                                             f"is in force: no {die} die stays in hand"))
        return errors

    def _bus_rules(self, mode: Mode, out: int) -> list[FieldError]:
        """What the bus fields say against the dice: the first roll is ordinary, tokens come from the bus."""
        if not self.school_bus:
            return []
        errors = []
        if self.riding and self.bus_out:
            errors.append(FieldError("bus_out", "riding and bus_out cannot both be true: getting off (or tyre "
                                     "tracks) puts the bus out and ends the ride"))
        if out == 0:
            for name in ("bus_brains", "bus_shotguns", "riding", "bus_out"):
                if getattr(self, name):
                    errors.append(FieldError(name, "nothing is rolled yet, and the first roll of a turn is "
                                             "always 3 ordinary dice: no bus before it"))
        elif not (self.riding or self.bus_out):
            for name in ("bus_brains", "bus_shotguns"):
                if getattr(self, name):
                    errors.append(FieldError(name, "tokens come only from the bus, and a player who has not "
                                             "boarded yet (riding and bus_out false) has never rolled it"))
        if self.riding and (hand := len(self.footprints)) > mode.dice_per_roll - 1:
            errors.append(FieldError("footprints", f"{hand} footprint dice in hand while riding, but the bus "
                                     f"rolls with {mode.dice_per_roll - 1} ordinary dice"))
        return errors

    @staticmethod
    def _faces(mode: Mode, piles: dict[str, Counter], converted: set[str]) -> list[FieldError]:
        """Every die of the brain (shotgun) pile shows a face it has: a double one when it is listed in
        ``double_brains`` (``double_shotguns``) too, else a single one, or for a die of `converted` footprints
        counted as a single brain. (Hunk's only brain face is a double brain: in ``brains`` without
        ``double_brains`` he would score one brain, which no roll gives.)"""
        errors = []
        for name, pile, face, single in (("double_brains", "brains", "double-brain", "brain"),
                                         ("double_shotguns", "shotguns", "double-shotgun", "shotgun")):
            for die, n in piles[name].items():
                if mode.dice[mode.index(die)].face(face) is None:
                    errors.append(FieldError(name, f"a {die} die has no {face} face"))
                elif n > piles[pile][die]:
                    errors.append(FieldError(name, f"{n} {die} dice show a {face} but {pile} lists "
                                             f"{piles[pile][die]}: list every die of the pile in {pile}"))
            for die, n in piles[pile].items():
                singles = n - piles[name][die]
                has_double = mode.dice[mode.index(die)].face(face) is not None
                if singles > 0 and mode.dice[mode.index(die)].face(single) is None and not (
                        single == "brain" and die in converted):
                    errors.append(FieldError(pile, f"a {die} die has no single {single} face" + (
                        f": in {pile} it shows a {face}, so list it in {name} too" if has_double else "")))
        return errors

    @property
    def game_mode(self) -> Mode:
        return MODES[self.mode]

    @property
    def state(self) -> DiceState:
        return self._state

    @property
    def cup(self) -> dict[str, int]:
        """The dice still in the cup, by die name (derived from the piles)."""
        return dict(zip(self.game_mode.die_names, self._state.cup(self.game_mode)))

    @property
    def bus_state(self) -> BusState:
        """The engine's view of a School Bus position (ValueError without ``school_bus``)."""
        if self._bus is None:
            raise ValueError("not a School Bus position (school_bus is false)")
        return self._bus

    @property
    def score(self) -> int:
        """Brains of the turn so far: noted plus the brain pile (a double brain counts 2) plus brain tokens."""
        return self.banked + len(self.brains) + len(self.double_brains) + self.bus_brains

    @property
    def turn_start(self) -> bool:
        """Nothing rolled yet: the first roll is compulsory."""
        return not (self.footprints or self.brains or self.shotguns or self.effects or self.kept_out)

    @property
    def first_roll(self) -> bool:
        """The next roll is the turn's first (always 3 ordinary dice, with or without the bus): the same as
        `turn_start`, since every later roll leaves a die out of the cup."""
        return self.turn_start

    @classmethod
    def from_state(cls, mode: Mode, state: DiceState, banked: int = 0, recycle: str = "before-draw",
                   **bus: object) -> Position:
        """The position of a dice state (School Bus fields, if any, as keywords)."""
        def names(counts: tuple[int, ...]) -> tuple[str, ...]:
            return tuple(d for d, n in zip(mode.die_names, counts) for _ in range(n))

        if not state.aside:
            return cls(mode.name, names(state.hand), names(state.brains), names(state.shotguns), banked, recycle,
                       **bus)
        aside = list(names(state.aside))
        for effect in state.effects:
            aside.remove(next(d.name for d in mode.dice if any(f.effect == effect for f in d.faces)))
        return cls(mode.name, names(state.hand), names(state.brains), names(state.shotguns), banked, recycle,
                   names(state.double_brains), names(state.double_shotguns), state.effects, tuple(aside), **bus)

    @classmethod
    def from_bus_state(cls, mode: Mode, state: BusState, banked: int = 0, recycle: str = "before-draw",
                       bus_brains: int | None = None) -> Position:
        """The School Bus position of `state`; `bus_brains` defaults to the state's token flag (0 or 1)."""
        tokens = state.tokens if bus_brains is None else bus_brains
        if state.phase != "out" and int(tokens > 0) != state.tokens:
            raise PositionError([FieldError("bus_brains", f"{tokens} brain tokens but the state says "
                                            f"{'some' if state.tokens else 'none'}")])
        return cls.from_state(mode, state.dice, banked, recycle, school_bus=True, bus_brains=tokens,
                              bus_shotguns=state.shotguns, riding=state.phase == "riding",
                              bus_out=state.phase == "out")


def min_noted(mode: Mode) -> int:
    """Fewest brains a recycling can note: the cup runs out only when brain, shotgun and set-aside dice
    leave fewer than the roll needs (``b + s + a >= total - per_roll + 1``); at most ``bust - 1`` shotgun
    dice (the highest threshold any effect allows) and every die that can be set aside."""
    top_bust = mode.bust_at + sum(EFFECTS[f.effect].bust_bonus for d in mode.dice for f in d.faces
                                  if f.effect in EFFECTS)
    aside = sum(n for d, (_, n) in zip(mode.dice, mode.cup)
                if d.stays_out or any(f.effect in EFFECTS for f in d.faces))
    return max(1, mode.total_dice - mode.dice_per_roll + 1 - (top_bust - 1) - aside)
