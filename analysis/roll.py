"""The exact distribution of one roll: draw x faces x effects, as fractions.

From a dice state, rolling again means (RULES.md section 1):

1. keep the footprint dice in hand and draw ``n = 3 - len(hand)`` new dice from the cup;
2. if the cup holds fewer than ``n`` dice, the cup runs out first: the brain pile is noted (banked)
   and its dice go back into the cup, either before drawing (``before-draw``) or after taking the
   last dice of the cup (``draw-then-recycle``);
3. roll the three dice, each face equally likely.

The draw is multivariate hypergeometric: a draw of ``a_k`` dice of kind ``k`` out of a cup holding
``c_k`` of them has probability ``prod_k C(c_k, a_k) / C(sum c, n)``. The roll of ``m`` dice of one
kind is multinomial over that die's faces; kinds are independent. Every probability is an exact
``Fraction``; floats are only derived from them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from math import comb, factorial
from operator import add

from .dice import Die, Face, Mode
from .position import DiceState, Position

__all__ = ["Transition", "NextRoll", "transitions", "next_roll", "draws", "needs_recycling"]


@dataclass(frozen=True)
class Transition:
    """One way the next roll can go, with every detail a solver or a reader needs."""

    probability: Fraction
    brains: int  # brains shown on this roll
    shotguns: int  # shotguns shown on this roll
    bust: bool
    state: DiceState | None  # the dice afterwards; None on a bust (the turn is over)
    banked: int  # brains noted by recycling before this roll (0 if the cup did not run out)


@dataclass(frozen=True)
class NextRoll:
    """The exact next roll from a position (aggregated for people; `transitions` keeps detail)."""

    position: Position
    transitions: tuple[Transition, ...]
    outcomes: tuple[tuple[int, int, Fraction], ...]  # (brains, shotguns, probability), joint
    bust: Fraction
    expected_brains: Fraction
    recycles: bool

    def results(self) -> list[tuple[Fraction, Position | None]]:
        """Each resulting position (None for a bust) with its exact probability."""
        p = self.position
        return [
            (t.probability, None if t.bust else Position.from_state(p.game_mode, t.state, p.banked + t.banked,
                                                                     p.recycle))
            for t in self.transitions
        ]


def draws(cup: tuple[int, ...], n: int) -> list[tuple[tuple[int, ...], Fraction]]:
    """Every colour composition of `n` dice drawn blind from `cup`, with its hypergeometric probability."""
    total = comb(sum(cup), n)
    return [(take, Fraction(ways, total)) for take, ways in _draw_ways(cup, n)]


def _draw_ways(cup: tuple[int, ...], n: int) -> list[tuple[tuple[int, ...], int]]:
    """Compositions of a draw of `n` dice with their numbers of ways, prod_k C(c_k, a_k)."""
    result = []
    for take in itertools.product(*(range(min(c, n) + 1) for c in cup)):
        if sum(take) == n:
            ways = 1
            for c, a in zip(cup, take):
                ways *= comb(c, a)
            result.append((take, ways))
    return result


@cache
def _faces_of(die: Die, m: int) -> tuple[tuple[tuple[int, int, int], int], ...]:
    """(brains, shotguns, footprint dice) when `m` dice of one kind roll, with the number of the
    ``sides ** m`` equally likely face assignments giving each: multinomial coefficients."""
    sides: dict[Face, int] = {}
    for face in die.faces:
        sides[face] = sides.get(face, 0) + 1
    out: dict[tuple[int, int, int], int] = {}
    for counts in itertools.product(range(m + 1), repeat=len(sides)):
        if sum(counts) != m:
            continue
        ways = factorial(m)
        key = [0, 0, 0]
        for (face, n), k in zip(sides.items(), counts):
            ways = ways // factorial(k) * n**k
            key[0] += face.brains * k
            key[1] += face.shotguns * k
            key[2] += k if face.footprints else 0
        out[tuple(key)] = out.get(tuple(key), 0) + ways
    return tuple(out.items())


@cache
def _roll(mode: Mode, dice: tuple[int, ...]) -> tuple[tuple[int, int, tuple, tuple, tuple, int], ...]:
    """Every result of rolling `dice` (counts per kind): (brains, shotguns, brains per kind, shotguns per
    kind, footprint dice per kind, ways), the ways counted over ``prod sides ** count``."""
    per_kind = [_faces_of(die, m) if m else (((0, 0, 0), 1),) for die, m in zip(mode.dice, dice)]
    result = []
    for combo in itertools.product(*per_kind):
        ways = 1
        for _, w in combo:
            ways *= w
        keys = [k for k, _ in combo]
        result.append((sum(k[0] for k in keys), sum(k[1] for k in keys), tuple(k[0] for k in keys),
                       tuple(k[1] for k in keys), tuple(k[2] for k in keys), ways))
    return tuple(result)


def needs_recycling(mode: Mode, state: DiceState) -> bool:
    """True when the cup cannot supply the dice the next roll needs."""
    return sum(state.cup(mode)) < mode.dice_per_roll - sum(state.hand)


@cache
def transitions(mode: Mode, state: DiceState, recycle: str = "before-draw") -> tuple[Transition, ...]:
    """Every distinct result of rolling again from `state`, merged, with exact probabilities.

    Weights are integers (ways to draw x ways to show faces) over one common denominator,
    ``C(cup, n) * 6**3``, so a position costs one Fraction per distinct result.
    """
    need = mode.dice_per_roll - sum(state.hand)
    cup = state.cup(mode)
    brains, banked = state.brains, 0
    zero = tuple(0 for _ in cup)
    if sum(cup) >= need:
        drawn = _draw_ways(cup, need)
        pool = sum(cup)
    else:
        banked = sum(brains)  # every base-game brain die shows one brain
        if recycle == "before-draw":
            pool = sum(cup) + sum(brains)
            drawn = _draw_ways(tuple(c + b for c, b in zip(cup, brains)), need)
        else:  # draw-then-recycle: the last dice of the cup first, then from the returned brains
            need_more = need - sum(cup)
            pool = sum(brains)
            drawn = [(tuple(c + a for c, a in zip(cup, take)), w) for take, w in _draw_ways(brains, need_more)]
            need = need_more
        brains = zero
    faces = len(mode.dice[0].faces)
    denominator = comb(pool, need) * faces**mode.dice_per_roll
    merged: dict[tuple, int] = {}
    bust_at = mode.bust_at - sum(state.shotguns)
    for take, w_draw in drawn:
        rolled = tuple(map(add, state.hand, take))
        for b, s, brains_k, shots_k, hand_k, w_roll in _roll(mode, rolled):
            bust = s >= bust_at
            after = None if bust else DiceState(hand_k, tuple(map(add, brains, brains_k)),
                                                tuple(map(add, state.shotguns, shots_k)))
            key = (b, s, bust, after)
            merged[key] = merged.get(key, 0) + w_draw * w_roll
    return tuple(Transition(Fraction(w, denominator), b, s, bust, after, banked)
                 for (b, s, bust, after), w in merged.items())


def next_roll(position: Position) -> NextRoll:
    """The exact distribution of the next roll from `position`."""
    mode = position.game_mode
    trans = transitions(mode, position.state, position.recycle)
    joint: dict[tuple[int, int], Fraction] = {}
    for t in trans:
        joint[(t.brains, t.shotguns)] = joint.get((t.brains, t.shotguns), 0) + t.probability
    return NextRoll(
        position=position,
        transitions=trans,
        outcomes=tuple((b, s, p) for (b, s), p in sorted(joint.items())),
        bust=sum((t.probability for t in trans if t.bust), Fraction(0)),
        expected_brains=sum((t.probability * t.brains for t in trans), Fraction(0)),
        recycles=needs_recycling(mode, position.state),
    )
