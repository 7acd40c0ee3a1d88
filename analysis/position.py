"""`Position`: one moment of a Zombie Dice turn, between two rolls, validated.

A position lists the dice by name: the footprint dice in hand, the brain pile, the shotgun pile,
plus the brains already noted when the cup ran out (`banked`). The cup is derived, never given, so
it cannot disagree with the rest. A position that no sequence of legal rolls can produce is
rejected with every offending field and the reason; nothing is ever silently corrected (the only
normalisation is sorting each pile into the mode's die order, which changes no meaning).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from .dice import MODES, Mode

__all__ = ["Position", "PositionError", "FieldError", "DiceState", "RECYCLE_VARIANTS", "MAX_BANKED",
           "banked_reachable"]

RECYCLE_VARIANTS = ("before-draw", "draw-then-recycle")
# A turn that noted more than this many brains has probability far below 1e-100: we call it absurd.
MAX_BANKED = 1000


class DiceState(NamedTuple):
    """Where each die is, as counts per die kind in the mode's order (the engine's state)."""

    hand: tuple[int, ...]
    brains: tuple[int, ...]
    shotguns: tuple[int, ...]

    def cup(self, mode: Mode) -> tuple[int, ...]:
        return tuple(n - h - b - s for n, h, b, s in zip(mode.counts, self.hand, self.brains, self.shotguns))


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
    """A validated mid-turn position. Build it with keyword arguments; piles are die-name lists."""

    mode: str = "original"
    footprints: tuple[str, ...] = ()
    brains: tuple[str, ...] = ()
    shotguns: tuple[str, ...] = ()
    banked: int = 0
    recycle: str = "before-draw"
    _state: DiceState = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        errors: list[FieldError] = []
        mode = MODES.get(self.mode) if isinstance(self.mode, str) else None
        if mode is None:
            errors.append(FieldError("mode", f"unknown mode {self.mode!r}; known: {', '.join(MODES)}"))
            raise PositionError(errors)
        if self.recycle not in RECYCLE_VARIANTS:
            errors.append(
                FieldError("recycle", f"unknown variant {self.recycle!r}; known: {', '.join(RECYCLE_VARIANTS)}")
            )
        piles = {}
        for name in ("footprints", "brains", "shotguns"):
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
        banked = self.banked
        if isinstance(banked, bool) or not isinstance(banked, int):
            errors.append(FieldError("banked", "must be a whole number of brains"))
            banked = 0
        elif banked < 0:
            errors.append(FieldError("banked", "cannot be negative"))
        elif banked > MAX_BANKED:
            errors.append(FieldError("banked", f"{banked} brains noted in one turn is absurd (limit {MAX_BANKED})"))
        if errors:
            raise PositionError(errors)

        for die, available in mode.cup:
            used = sum(piles[p][die] for p in piles)
            if used > available:
                where = next(p for p in ("shotguns", "brains", "footprints") if piles[p][die])
                errors.append(FieldError(where, f"{used} {die} dice in play but mode {mode.name} has {available}"))
        hand, shots = len(self.footprints), len(self.shotguns)
        if hand > mode.dice_per_roll:
            errors.append(FieldError("footprints", f"{hand} footprint dice in hand; a roll has only "
                                     f"{mode.dice_per_roll} dice"))
        if shots >= mode.bust_at:
            errors.append(FieldError("shotguns", f"{shots} shotguns: the turn is already over (bust at "
                                     f"{mode.bust_at})"))
        out = hand + len(self.brains) + shots
        if 0 < out < mode.dice_per_roll:
            errors.append(FieldError("footprints", f"only {out} dice out of the cup, but every roll sets out "
                                     f"{mode.dice_per_roll}: no roll leads here"))
        if out == 0 and banked:
            errors.append(FieldError("banked", "brains are noted only when the cup runs out mid-turn, which "
                                     "leaves dice out of the cup; none are"))
        elif not errors and not banked_reachable(banked, shots, out, mode.total_dice, mode.dice_per_roll):
            errors.append(FieldError("banked", f"no sequence of recyclings notes exactly {banked} brains and "
                                     f"leaves {out} dice out with {shots} shotgun(s): a recycling notes "
                                     f"{mode.total_dice - mode.dice_per_roll + 1 - shots} to "
                                     f"{mode.total_dice} brains, and every roll after it sets out "
                                     f"{mode.dice_per_roll} dice"))
        if errors:
            raise PositionError(errors)
        object.__setattr__(
            self,
            "_state",
            DiceState(*(tuple(piles[p][d] for d in mode.die_names) for p in ("footprints", "brains", "shotguns"))),
        )

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
    def score(self) -> int:
        """Brains of the turn so far: noted plus the brain pile."""
        return self.banked + len(self.brains)

    @property
    def turn_start(self) -> bool:
        """Nothing rolled yet: the first roll is compulsory."""
        return not (self.footprints or self.brains or self.shotguns)

    @classmethod
    def from_state(cls, mode: Mode, state: DiceState, banked: int = 0, recycle: str = "before-draw") -> Position:
        def names(counts: tuple[int, ...]) -> tuple[str, ...]:
            return tuple(d for d, n in zip(mode.die_names, counts) for _ in range(n))

        return cls(mode.name, names(state.hand), names(state.brains), names(state.shotguns), banked, recycle)
