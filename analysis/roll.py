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

Double Feature modes (``not mode.plain``) take the same draw and the same multinomial roll, over each
die's distinct faces, then resolve the faces in small steps, each a function of its own (RULES.md 2):

1. `set_aside`: a face with an effect (Santa's energy drink, helmet) sets its die aside and puts the
   effect in force, for this very roll on;
2. `convert`: effects in force turn footprints into brains (the drink: green footprints);
3. `rescue`: a shotgun on a rescuer sends every eligible rescued die back to the cup, from the brain
   pile (its brains lost) or from this roll (no brain from it); a ``gift`` double brain never goes;
4. `settle`: the faces go to the hand and the piles; the bust threshold counts the effects.

Recycling keeps dice with ``stays_out`` (Santa) out of the cup; their brains are noted. In these modes
a transition's ``brains`` is the change of the turn's score (negative when a rescue takes more back
than the roll shows); ``rescued`` counts the brains a rescue took back from the pile.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from math import comb, factorial
from operator import add, sub

from .dice import BRAIN, EFFECTS, Die, Face, Mode
from .position import DiceState, Position

__all__ = ["Transition", "NextRoll", "transitions", "next_roll", "draws", "needs_recycling", "set_aside", "convert",
           "rescue", "settle", "recycled"]


@dataclass(frozen=True)
class Transition:
    """One way the next roll can go, with every detail a solver or a reader needs."""

    probability: Fraction
    brains: int  # brains shown on this roll
    shotguns: int  # shotguns shown on this roll
    bust: bool
    state: DiceState | None  # the dice afterwards; None on a bust (the turn is over)
    banked: int  # brains noted by recycling before this roll (0 if the cup did not run out)
    rescued: int = 0  # brains a rescue took back from the brain pile (Double Feature)


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
    if not mode.plain:
        return _special_transitions(mode, state, recycle)
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


# -- Double Feature: the resolution steps --------------------------------------------------------------
# A roll is a tuple over the mode's kinds of ``((face, count), ...)``: what each kind of die shows.
Roll = tuple[tuple[tuple[Face, int], ...], ...]


def set_aside(roll: Roll, effects: tuple[str, ...]) -> tuple[Roll, tuple[int, ...], tuple[str, ...]]:
    """Step 1: every face with an effect sets its die aside and puts the effect in force.

    Returns the roll without those dice, the dice set aside per kind, and the effects now in force."""
    aside, now, rest = [], set(effects), []
    for faces in roll:
        n = 0
        kept = []
        for face, c in faces:
            if face.effect in EFFECTS:
                n += c
                now.add(face.effect)
            else:
                kept.append((face, c))
        aside.append(n)
        rest.append(tuple(kept))
    return tuple(rest), tuple(aside), tuple(sorted(now))


def convert(mode: Mode, roll: Roll, effects: tuple[str, ...]) -> Roll:
    """Step 2: footprints on the dice an effect in force converts count as single brains."""
    converts = {d for e in effects for d in EFFECTS[e].converts}
    if not converts:
        return roll
    out = []
    for die, faces in zip(mode.dice, roll):
        if die.name in converts:
            merged: dict[Face, int] = {}
            for face, c in faces:
                face = BRAIN if face.footprints else face
                merged[face] = merged.get(face, 0) + c
            faces = tuple(merged.items())
        out.append(faces)
    return tuple(out)


def rescue(mode: Mode, roll: Roll, brains: tuple[int, ...], double_brains: tuple[int, ...],
           ) -> tuple[Roll, tuple[int, ...], tuple[int, ...], int]:
    """Step 3: a shotgun face on a rescuer rescues every die it may rescue, in the pile or in this roll.

    Rescued dice go back to the cup (out of the roll, out of the pile). A rescued die is a single die
    of its kind (the special dice are one each). A ``gift`` face (Santa's double brain) is never
    rescued. Returns the roll, the brain pile and its double brains afterwards, and the brains taken
    back from the pile."""
    if not mode.rescues:
        return roll, brains, double_brains, 0
    rescuers = {die.name for die, faces in zip(mode.dice, roll) if any(f.shotguns and c for f, c in faces)}
    targets = {b for a, b in mode.rescues if a in rescuers}
    if not targets:
        return roll, brains, double_brains, 0
    roll_out, b_out, d_out, lost = [], list(brains), list(double_brains), 0
    for k, (die, faces) in enumerate(zip(mode.dice, roll)):
        if die.name in targets:
            faces = tuple((f, c) for f, c in faces if not (f.brains and f.effect != "gift"))
            if brains[k]:
                double = double_brains[k] > 0
                if not (double and die.face("double-brain").effect == "gift"):
                    b_out[k] -= 1
                    d_out[k] -= int(double)
                    lost += 2 if double else 1
        roll_out.append(faces)
    return tuple(roll_out), tuple(b_out), tuple(d_out), lost


def settle(roll: Roll) -> tuple[tuple[int, ...], ...]:
    """Step 4: per kind, the dice to the hand, to the brain pile (and how many of them double), to
    the shotgun pile (and how many double); plus the brains and shotguns the roll shows."""
    hand, brains, dbl, shots, dshots = [], [], [], [], []
    for faces in roll:
        h = b = d = s = ds = 0
        for face, c in faces:
            if face.footprints:
                h += c
            elif face.brains:
                b += c
                d += c if face.brains == 2 else 0
            elif face.shotguns:
                s += c
                ds += c if face.shotguns == 2 else 0
        hand.append(h)
        brains.append(b)
        dbl.append(d)
        shots.append(s)
        dshots.append(ds)
    return tuple(hand), tuple(brains), tuple(dbl), tuple(shots), tuple(dshots)


def recycled(mode: Mode, state: DiceState) -> DiceState:
    """The dice after the brain pile goes back into the cup: dice that stay out (Santa) are set aside."""
    keep = tuple(b if die.stays_out else 0 for die, b in zip(mode.dice, state.brains))
    zero = tuple(0 for _ in state.brains)
    return state._replace(brains=zero, double_brains=zero, aside=tuple(map(add, state.aside, keep)))


@cache
def _face_rolls(die: Die, m: int) -> tuple[tuple[tuple[tuple[Face, int], ...], int], ...]:
    """Every way `m` dice of one kind can fall, as (face, count) pairs, with the number of the
    ``sides ** m`` equally likely assignments giving it."""
    faces = die.distinct_faces
    out = []
    for counts in itertools.product(range(m + 1), repeat=len(faces)):
        if sum(counts) != m:
            continue
        ways = factorial(m)
        for (_, n), k in zip(faces, counts):
            ways = ways // factorial(k) * n**k
        out.append((tuple((f, k) for (f, _), k in zip(faces, counts) if k), ways))
    return tuple(out)


@cache
def _special_rolls(mode: Mode, dice: tuple[int, ...]) -> tuple[tuple[Roll, int], ...]:
    per_kind = [_face_rolls(die, m) if m else (((), 1),) for die, m in zip(mode.dice, dice)]
    out = []
    for combo in itertools.product(*per_kind):
        ways = 1
        for _, w in combo:
            ways *= w
        out.append((tuple(r for r, _ in combo), ways))
    return tuple(out)


@cache
def _resolve(mode: Mode, roll: Roll, effects: tuple[str, ...], brains: tuple[int, ...],
             double_brains: tuple[int, ...]) -> tuple:
    """Steps 1-4 for one roll against the brain pile (the only part of the state a roll's faces meet)."""
    roll, aside, now = set_aside(roll, effects)
    roll = convert(mode, roll, now)
    roll, brains_left, doubles_left, lost = rescue(mode, roll, brains, double_brains)
    return settle(roll), aside, now, brains_left, doubles_left, lost


@cache
def _outcomes(mode: Mode, rolled: tuple[int, ...], effects: tuple[str, ...], brains: tuple[int, ...],
              double_brains: tuple[int, ...]) -> tuple[tuple[tuple, int], ...]:
    """Every resolved result of rolling `rolled` against the rescuable part of the brain pile, merged:
    (hand, brains, double brains, shotguns, double shotguns, set aside, effects, brain dice rescued,
    double brains rescued, brains lost) as per-kind changes, with its number of ways."""
    merged: dict[tuple, int] = {}
    for roll, ways in _special_rolls(mode, rolled):
        settled, aside, now, left, doubles_left, lost = _resolve(mode, roll, effects, brains, double_brains)
        key = (*settled, aside, now, tuple(map(sub, left, brains)), tuple(map(sub, doubles_left, double_brains)),
               lost)
        merged[key] = merged.get(key, 0) + ways
    return tuple(merged.items())


@cache
def _rescuable(mode: Mode) -> tuple[bool, ...]:
    return tuple(die.name in {b for _, b in mode.rescues} for die in mode.dice)


def _special_transitions(mode: Mode, state: DiceState, recycle: str) -> tuple[Transition, ...]:
    """`transitions` for Double Feature modes: the same draw, then the faces resolved step by step."""
    need = mode.dice_per_roll - sum(state.hand)
    cup = state.cup(mode)
    banked = 0
    pile = state
    if sum(cup) >= need:
        drawn = _draw_ways(cup, need)
        pool = sum(cup)
    else:
        banked = state.pile_brains
        pile = recycled(mode, state)
        back = tuple(b - (a1 - a0) for b, a0, a1 in zip(state.brains, state.aside, pile.aside))
        if recycle == "before-draw":
            pool = sum(cup) + sum(back)
            drawn = _draw_ways(tuple(map(add, cup, back)), need)
        else:
            need_more = need - sum(cup)
            pool = sum(back)
            drawn = [(tuple(map(add, cup, take)), w) for take, w in _draw_ways(back, need_more)]
            need = need_more
    denominator = comb(pool, need) * len(mode.dice[0].faces)**mode.dice_per_roll
    merged: dict[tuple, int] = {}
    before = pile.pile_brains
    mask = _rescuable(mode)
    rescuable = tuple(b if m else 0 for b, m in zip(pile.brains, mask))
    doubles = tuple(d if m else 0 for d, m in zip(pile.double_brains, mask))
    bust_before = pile.bust_at(mode) - pile.shotgun_count
    for take, w_draw in drawn:
        rolled = tuple(map(add, state.hand, take))
        for (hand, b, d, s, ds, aside, effects, rb, rd, lost), w_roll in _outcomes(mode, rolled, pile.effects,
                                                                                   rescuable, doubles):
            shown = sum(s) + sum(ds)
            bust = shown >= bust_before + sum(EFFECTS[e].bust_bonus for e in effects if e not in pile.effects)
            if bust:
                key = (sum(b) + sum(d) + sum(rb) + sum(rd), shown, True, None, lost)
            else:
                after = DiceState(hand, tuple(map(add, pile.brains, map(add, b, rb))),
                                  tuple(map(add, pile.shotguns, s)),
                                  tuple(map(add, pile.double_brains, map(add, d, rd))),
                                  tuple(map(add, pile.double_shotguns, ds)), tuple(map(add, pile.aside, aside)),
                                  effects)
                key = (after.pile_brains - before, shown, False, after, lost)
            merged[key] = merged.get(key, 0) + w_draw * w_roll
    return tuple(Transition(Fraction(w, denominator), b, s, bust, after, banked, lost)
                 for (b, s, bust, after, lost), w in merged.items())


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
