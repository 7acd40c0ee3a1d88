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

School Bus (RULES.md section 3, any mode) adds actions (`legal_actions`): from a `BusState` a roll is
``roll`` (ordinary dice), ``board`` (the bus replaces one new die), ``stay`` (riding: the footprint
dice go back into the cup, the bus rolls with 2 new dice) or ``get-off`` (riding: the bus is out, an
ordinary roll with the footprint dice). `bus_transitions` gives each one's exact distribution. A bus
roll takes the same draw (of 2 ordinary dice) and the same Double Feature steps, then one more step,
`bus_step`, for the bus die's face: tokens, STOP, YIELD (shotguns of the roll become footprints), DEAD
END (footprints become single brains), tyre tracks (a brain given up, `give_up`, and the bus out).
Double Feature effects therefore resolve before School Bus effects. A transition then says which bus
face showed (``bus``), the brain tokens it gave (``tokens``), whether STOP ended the turn
(``stopped``), and for tyre tracks the brains the player may give up (``choices``: the player picks
one; every choice loses exactly one brain, or nothing when the turn has none to lose, so ``brains``
does not depend on it).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, cached_property
from math import comb, factorial, gcd
from operator import add, sub
from typing import NamedTuple

from .dice import BRAIN, BUS, EFFECTS, Die, Face, Mode
from .kept import kept
from .position import BusState, DiceState, Position

__all__ = ["Transition", "NextRoll", "transitions", "next_roll", "draws", "needs_recycling", "set_aside", "convert",
           "rescue", "settle", "recycled", "ACTIONS", "BUS_ROLLS", "legal_actions", "default_action", "bus_transitions",
           "bus_step", "give_up", "bus_results", "TyreTracks"]

# Every action a player may take between two rolls (which ones are legal depends on the position).
ACTIONS = ("stop", "roll", "board", "stay", "get-off")
BUS_ROLLS = ("board", "stay")  # the actions that roll the bus die (its tyre tracks among its faces)


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
    # School Bus (a bus roll, or any roll of a School Bus position; ``state`` is then a `BusState`):
    tokens: int = 0  # brain tokens the bus gave on this roll (counted in ``brains``)
    bus: str = ""  # the bus die's face ("" if the bus was not rolled)
    stopped: bool = False  # the bus showed STOP: the turn is over and scores (state None)
    choices: tuple[tuple[str, BusState], ...] = ()  # tyre tracks: (brain given up, state after) per choice


@dataclass(frozen=True)
class NextRoll:
    """The exact next roll from a position (aggregated for people; `transitions` keeps detail)."""

    position: Position
    outcomes: tuple[tuple[int, int, Fraction], ...]  # (brains, shotguns, probability), joint
    bust: Fraction
    expected_brains: Fraction
    recycles: bool

    action: str = "roll"

    @cached_property
    def transitions(self) -> tuple[Transition, ...]:
        """Every distinct result, in detail (the dice afterwards, the bus's face, tyre tracks' choices), built when
        first asked for: an answer reads them only for its best rolling action."""
        p = self.position
        if p.school_bus:
            return bus_transitions(p.game_mode, p.bus_state, self.action, p.recycle)
        return transitions(p.game_mode, p.state, p.recycle)

    def results(self) -> list[tuple[Fraction, Position | tuple[Position, ...] | None]]:
        """Each resulting position with its exact probability: None when the turn is over (a bust; with the
        School Bus also STOP), and for tyre tracks the tuple of positions the player chooses among."""
        p = self.position
        if not p.school_bus:
            return [
                (t.probability, None if t.bust else Position.from_state(p.game_mode, t.state, p.banked + t.banked,
                                                                         p.recycle))
                for t in self.transitions
            ]

        def at(t: Transition, state: BusState, given_up: str = "") -> Position:
            tokens = p.bus_brains + t.tokens - (given_up == "token") + given_up.startswith("double:")
            return Position.from_bus_state(p.game_mode, state, p.banked + t.banked, p.recycle, tokens)

        return [(t.probability, None if t.bust or t.stopped else
                 tuple(at(t, s, g) for g, s in t.choices) if t.choices else at(t, t.state))
                for t in self.transitions]


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


@kept("dice state")
def transitions(mode: Mode, state: DiceState, recycle: str = "before-draw") -> tuple[Transition, ...]:
    """Every distinct result of rolling again from `state`, merged, with exact probabilities.

    Weights are integers (ways to draw x ways to show faces) over one common denominator,
    ``C(cup, n) * 6**3``, so a position costs one Fraction per distinct result.
    """
    denominator, banked, merged = _transition_ways(mode, state, recycle)
    return tuple(Transition(Fraction(w, denominator), b, s, bust, after, banked, lost)
                 for (b, s, bust, after, lost), w in merged.items())


def _transition_ways(mode: Mode, state: DiceState, recycle: str) -> tuple[int, int, dict[tuple, int]]:
    """`transitions` in integers: the denominator, the brains noted by recycling, and every distinct result
    ``(brains, shotguns, bust, dice after, brains rescued)`` with its ways (`_ordinary_rolls` reads them
    without building a Fraction per result)."""
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
            key = (b, s, bust, after, 0)
            merged[key] = merged.get(key, 0) + w_draw * w_roll
    return denominator, banked, merged


# -- Double Feature: the resolution steps --------------------------------------------------------------
# A roll is a tuple over the mode's kinds of ``((face, count), ...)``: what each kind of die shows.
Roll = tuple[tuple[tuple[Face, int], ...], ...]


def set_aside(roll: Roll, effects: tuple[str, ...]) -> tuple[Roll, tuple[int, ...], tuple[str, ...]]:
    """Step 1: every face with an effect sets its die aside and puts the effect in force.

    Returns the roll without those dice, the dice set aside per kind, and the effects now in force."""
    aside, now, rest = [], set(effects), []
    for faces in roll:
        n = 0
        left = []
        for face, c in faces:
            if face.effect in EFFECTS:
                n += c
                now.add(face.effect)
            else:
                left.append((face, c))
        aside.append(n)
        rest.append(tuple(left))
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


def _draw_plan(mode: Mode, state: DiceState, need: int, recycle: str,
               ) -> tuple[DiceState, int, list[tuple[tuple[int, ...], int]], int]:
    """The draw of `need` new dice (section 1, steps 4-5): the dice after any recycling, the brains it
    noted, every composition of the dice drawn with its number of ways, and the total number of ways.

    When the cup holds fewer than `need` dice the brain pile is noted and its dice go back into the cup
    (dice that stay out, Santa, are set aside), before the draw or after the cup's last dice."""
    cup = state.cup(mode)
    if sum(cup) >= need:
        return state, 0, _draw_ways(cup, need), comb(sum(cup), need)
    if state.aside:
        pile = recycled(mode, state)
        back = tuple(b - (a1 - a0) for b, a0, a1 in zip(state.brains, state.aside, pile.aside))
        banked = state.pile_brains
    else:  # the base game's states: every brain die goes back, each showed one brain
        pile, back, banked = state._replace(brains=tuple(0 for _ in cup)), state.brains, sum(state.brains)
    if recycle == "before-draw":
        return pile, banked, _draw_ways(tuple(map(add, cup, back)), need), comb(sum(cup) + sum(back), need)
    need_more = need - sum(cup)
    drawn = [(tuple(map(add, cup, take)), w) for take, w in _draw_ways(back, need_more)]
    return pile, banked, drawn, comb(sum(back), need_more)


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


def _resolve(mode: Mode, roll: Roll, effects: tuple[str, ...], brains: tuple[int, ...],
             double_brains: tuple[int, ...]) -> tuple:
    """Steps 1-4 for one roll against the brain pile (the only part of the state a roll's faces meet)."""
    roll, aside, now = set_aside(roll, effects)
    roll = convert(mode, roll, now)
    roll, brains_left, doubles_left, lost = rescue(mode, roll, brains, double_brains)
    return settle(roll), aside, now, brains_left, doubles_left, lost


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


@kept("pile")
def _summed(mode: Mode, rolled: tuple[int, ...], effects: tuple[str, ...], brains: tuple[int, ...],
            double_brains: tuple[int, ...]) -> tuple[tuple[tuple, int, int, int, int], ...]:
    """`_outcomes`, each with the shotguns it shows, its change of the pile's brains (rescues included)
    and the rise of the bust threshold by the effects it puts in force: (result, ways, those three)."""
    return tuple((key, ways, sum(key[3]) + sum(key[4]), sum(key[1]) + sum(key[2]) + sum(key[7]) + sum(key[8]),
                  sum(EFFECTS[e].bust_bonus for e in key[6] if e not in effects))
                 for key, ways in _outcomes(mode, rolled, effects, brains, double_brains))


@cache
def _rescuable(mode: Mode) -> tuple[bool, ...]:
    return tuple(die.name in {b for _, b in mode.rescues} for die in mode.dice)


def _special_transitions(mode: Mode, state: DiceState, recycle: str) -> tuple[int, int, dict[tuple, int]]:
    """`_transition_ways` for Double Feature modes: the same draw, then the faces resolved step by step."""
    pile, banked, drawn, ways = _draw_plan(mode, state, mode.dice_per_roll - sum(state.hand), recycle)
    denominator = ways * len(mode.dice[0].faces)**mode.dice_per_roll
    merged: dict[tuple, int] = {}
    mask = _rescuable(mode)
    rescuable = tuple(b if m else 0 for b, m in zip(pile.brains, mask))
    doubles = tuple(d if m else 0 for d, m in zip(pile.double_brains, mask))
    bust_before = pile.bust_at(mode) - pile.shotgun_count
    for take, w_draw in drawn:
        rolled = tuple(map(add, state.hand, take))
        for (hand, b, d, s, ds, aside, effects, rb, rd, lost), w_roll, shown, gain, bonus in _summed(
                mode, rolled, pile.effects, rescuable, doubles):
            if shown >= bust_before + bonus:
                key = (gain, shown, True, None, lost)
            else:
                after = DiceState(hand, tuple(map(add, pile.brains, map(add, b, rb))),
                                  tuple(map(add, pile.shotguns, s)),
                                  tuple(map(add, pile.double_brains, map(add, d, rd))),
                                  tuple(map(add, pile.double_shotguns, ds)), tuple(map(add, pile.aside, aside)),
                                  effects)
                key = (gain, shown, False, after, lost)
            merged[key] = merged.get(key, 0) + w_draw * w_roll
    return denominator, banked, merged


# -- School Bus: the actions and the bus step ----------------------------------------------------------
def _turn_start(dice: DiceState) -> bool:
    return not (any(dice.hand) or any(dice.brains) or any(dice.shotguns) or any(dice.aside))


def legal_actions(mode: Mode, state: DiceState | BusState) -> tuple[str, ...]:
    """The actions the rules allow between two rolls, in `ACTIONS` order.

    The first roll of a turn is compulsory (``roll``). Without the bus: ``stop`` or ``roll``. With it,
    before boarding: ``board`` as well whenever new dice are needed (fewer than 3 footprint dice in
    hand); riding: ``stop``, ``stay`` or ``get-off``; once the bus is out: ``stop`` or ``roll``."""
    bus = isinstance(state, BusState)
    dice = state.dice if bus else state
    if _turn_start(dice) and (not bus or state.phase == "ready"):
        return ("roll",)
    if not bus or state.phase == "out":
        return ("stop", "roll")
    if state.phase == "riding":
        return ("stop", "stay", "get-off")
    return ("stop", "roll", "board") if sum(dice.hand) < mode.dice_per_roll else ("stop", "roll")


def bus_step(face: Face, hand: tuple[int, ...], brains: tuple[int, ...], shotguns: tuple[int, ...],
             double_shotguns: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...],
                                                         tuple[int, ...]]:
    """The bus face's effect on the ordinary dice of the roll, after the Double Feature steps, per kind:
    YIELD turns every shotgun (a double too) into footprints, so those dice join the hand; DEAD END turns
    every footprint into one single brain. Other faces leave the dice alone (their tokens, STOP and
    tyre tracks act on the turn). Returns hand, brains, shotguns, double shotguns of the roll."""
    if face.effect == "yield":
        zero = tuple(0 for _ in hand)
        return tuple(map(add, hand, shotguns)), brains, zero, zero if double_shotguns else ()
    if face.effect == "dead-end":
        return tuple(0 for _ in hand), tuple(map(add, brains, hand)), shotguns, double_shotguns
    return hand, brains, shotguns, double_shotguns


def give_up(mode: Mode, dice: DiceState, tokens: int) -> tuple[tuple[str, DiceState], ...]:
    """Tyre tracks: every way to lose one brain (the player chooses), with the dice afterwards.

    ``token`` (if the turn holds one), ``<die>`` (a single-brain die of that kind back into the cup) or
    ``double:<die>`` (a double-brain die back into the cup, one brain token taken instead). Brains noted
    at a recycling are never lost: with no token and no brain die the only choice is ``nothing``."""
    out = [("token", dice)] if tokens else []
    doubles = dice.double_brains or tuple(0 for _ in dice.brains)
    for k, (die, b, d) in enumerate(zip(mode.die_names, dice.brains, doubles)):
        one = tuple(int(i == k) for i in range(len(dice.brains)))
        if b > d:
            out.append((die, dice._replace(brains=tuple(map(sub, dice.brains, one)))))
        if d:
            out.append((f"double:{die}", dice._replace(brains=tuple(map(sub, dice.brains, one)),
                                                        double_brains=tuple(map(sub, dice.double_brains, one)))))
    return tuple(out) or (("nothing", dice),)


def _settled(mode: Mode, pile: DiceState, rolled: tuple[int, ...]) -> tuple[tuple, ...]:
    """Every result of rolling the ordinary dice `rolled` against the brain pile, after the Double Feature
    steps (`_summed`): ((hand, brains, double brains, shotguns, double shotguns, set aside, effects, change
    of the pile's brains and double brains by rescues, brains rescued) per kind, ways, shotguns shown,
    brains gained, rise of the bust threshold); base-game states leave the Double Feature parts empty."""
    if not pile.aside:
        return _plain_settled(mode, rolled)
    mask = _rescuable(mode)
    rescuable = tuple(b if m else 0 for b, m in zip(pile.brains, mask))
    doubles = tuple(d if m else 0 for d, m in zip(pile.double_brains, mask))
    return _summed(mode, rolled, pile.effects, rescuable, doubles)


@cache
def _plain_settled(mode: Mode, rolled: tuple[int, ...]) -> tuple[tuple, ...]:
    zero = tuple(0 for _ in rolled)
    return tuple(((hand, brains, (), shots, (), (), (), zero, (), 0), w, s, b, 0)
                 for b, s, brains, shots, hand, w in _roll(mode, rolled))


@kept("dice state")  # (a table's search keeps its own copy of each)
def _bus_rolls(mode: Mode, dice: DiceState, recycle: str) -> tuple[tuple[tuple, ...], int, int]:
    """A bus roll from `dice`: its footprint dice, new dice to make the roll's 2 ordinary dice, and the bus.

    Returns every result as (bus face, dice afterwards, change of the pile's brains, shotguns the
    ordinary dice count, brains rescued, shotguns in the pile afterwards, the bust threshold then,
    brains in the pile afterwards, ways), the ways' common denominator and the brains noted by
    recycling. The tokens, the bust (which needs the tokens already held) and tyre tracks' choices are
    left to `bus_results`."""
    grouped, denominator, banked = _bus_roll_groups(mode, dice, recycle)
    rows = tuple((face, *common, w * sides) for faces, common, w in grouped for face, sides in faces)
    return rows, denominator, banked


def _bus_roll_groups(mode: Mode, dice: DiceState, recycle: str) -> tuple[tuple[tuple, ...], int, int]:
    """`_bus_rolls` with the bus faces that act alike on the dice (all but YIELD and DEAD END) kept together:
    every result as (those faces with their sides, the rest of `_bus_rolls`' result but the face, ways of each
    side), in the same order once expanded face by face. A table's search reads a group's dice once."""
    pile, banked, drawn, ways = _draw_plan(mode, dice, mode.dice_per_roll - 1 - sum(dice.hand), recycle)
    denominator = ways * len(mode.dice[0].faces) ** (mode.dice_per_roll - 1) * len(BUS.faces)
    groups = _bus_groups()
    shots_before, bust_before, brains_before = pile.shotgun_count, pile.bust_at(mode), pile.pile_brains
    merged: dict[tuple, int] = {}
    for take, w_draw in drawn:
        rolled = tuple(map(add, dice.hand, take))
        for (hand, b, d, s, ds, aside, effects, rb, rd, lost), w_roll, shots, gained, bonus in _settled(
                mode, pile, rolled):
            footprints, bust_at = sum(hand), bust_before + bonus
            for effect, faces in groups:
                h2, b2, s2, ds2 = bus_step(faces[0][0], hand, b, s, ds) if effect else (hand, b, s, ds)
                if pile.aside:
                    after = DiceState(h2, tuple(map(add, pile.brains, map(add, b2, rb))),
                                      tuple(map(add, pile.shotguns, s2)),
                                      tuple(map(add, pile.double_brains, map(add, d, rd))),
                                      tuple(map(add, pile.double_shotguns, ds2)), tuple(map(add, pile.aside, aside)),
                                      effects)
                else:
                    after = DiceState(h2, tuple(map(add, pile.brains, b2)), tuple(map(add, pile.shotguns, s2)))
                counted = 0 if effect == "yield" else shots
                gain = gained + (footprints if effect == "dead-end" else 0)
                key = (faces, after, gain, counted, lost, shots_before + counted, bust_at, brains_before + gain)
                merged[key] = merged.get(key, 0) + w_draw * w_roll
    return tuple((faces, common, w) for (faces, *common), w in merged.items()), denominator, banked


@cache
def _bus_groups() -> tuple[tuple[str, tuple[tuple[Face, int], ...]], ...]:
    """The bus die's distinct faces grouped by what they do to the ordinary dice: YIELD, DEAD END, the rest."""
    groups: dict[str, list[tuple[Face, int]]] = {}
    for face, sides in BUS.distinct_faces:
        groups.setdefault(face.effect if face.effect in ("yield", "dead-end") else "", []).append((face, sides))
    return tuple((effect, tuple(faces)) for effect, faces in groups.items())


@kept("dice state")
def _ordinary_rolls(mode: Mode, dice: DiceState, recycle: str) -> tuple[int, tuple[tuple, ...]]:
    """`transitions` as integer weights over their least common denominator, with each result's shotguns in the
    pile and bust threshold (the School Bus adds its tokens to them)."""
    denominator, banked, merged = _transition_ways(mode, dice, recycle)
    common = gcd(denominator, *merged.values())  # the lcm of the reduced denominators is denominator / common
    return denominator // common, tuple(
        (b, s, after, after.shotgun_count if after else 0, after.bust_at(mode) if after else 0, banked, lost,
         w // common) for (b, s, _, after, lost), w in merged.items())


class TyreTracks(NamedTuple):
    """A bus roll that showed tyre tracks, before the player gives up a brain (`give_up` lists the ways):
    the dice afterwards, whether the turn holds a brain token, the shotgun tokens. The bus is then out."""

    dice: DiceState
    tokens: int
    shotguns: int

    def choices(self, mode: Mode) -> tuple[tuple[str, BusState], ...]:
        return tuple((g, BusState(d, "out", 0, self.shotguns)) for g, d in give_up(mode, self.dice, self.tokens))


def bus_results(mode: Mode, state: BusState, action: str, recycle: str = "before-draw",
                ) -> tuple[int, tuple[tuple, ...]]:
    """`bus_transitions` as integer weights over one denominator, for solvers that merge many of them.

    Returns ``(denominator, results)``, each result ``(brains, shotguns, bust, after, banked, rescued,
    tokens, bus face, ways)`` with ``after`` a `BusState`, a `TyreTracks`, or None when the turn is over
    (a bust, or STOP)."""
    if action not in legal_actions(mode, state):
        raise ValueError(f"{action!r} is not legal here; legal: {', '.join(legal_actions(mode, state))}")
    merged: dict[tuple, int] = {}
    if action in ("roll", "get-off"):
        phase = "out" if action == "get-off" or state.phase == "out" else "ready"
        tokens, shotguns = (0 if phase == "out" else state.tokens), state.shotguns
        denominator, results = _ordinary_rolls(mode, state.dice, recycle)
        for brains, shown, after, count, bust_at, banked, rescued, ways in results:
            bust = after is None or count + shotguns >= bust_at
            key = (brains, shown, bust, None if bust else BusState(after, phase, tokens, shotguns), banked, rescued,
                   0, "")
            merged[key] = merged.get(key, 0) + ways
    else:
        dice = state.dice if action == "board" else state.dice._replace(hand=tuple(0 for _ in state.dice.hand))
        results, denominator, banked = _bus_rolls(mode, dice, recycle)
        for face, after, delta, shown, lost, count, bust_at, left, ways in results:
            shotguns = state.shotguns + face.shotguns
            bust = count + shotguns >= bust_at
            target = None
            if not bust and face.effect == "tyre-tracks":
                target = TyreTracks(after, state.tokens, shotguns)
                delta -= state.tokens > 0 or left > 0  # one brain lost, if the turn has one
            elif not bust and face.effect != "stop":
                target = BusState(after, "riding", int(state.tokens or face.brains > 0), shotguns)
            key = (delta + face.brains, shown + face.shotguns, bust, target, banked, lost, face.brains, face.name)
            merged[key] = merged.get(key, 0) + ways
    return denominator, tuple((*key, w) for key, w in merged.items())


def bus_transitions(mode: Mode, state: BusState, action: str, recycle: str = "before-draw",
                    ) -> tuple[Transition, ...]:
    """Every distinct result of `action` from a School Bus position, merged, with exact probabilities.

    ``roll`` and ``get-off`` are ordinary rolls (`transitions`; the shotgun tokens count toward the
    bust; ``get-off`` puts the bus out); ``board`` and ``stay`` roll the bus (`_bus_rolls`), ``stay``
    after the footprint dice went back into the cup. ValueError for an action not legal here."""
    denominator, results = bus_results(mode, state, action, recycle)
    out = []
    for b, s, bust, after, banked, lost, tokens, face, ways in results:
        tyre = isinstance(after, TyreTracks)
        out.append(Transition(Fraction(ways, denominator), b, s, bust, None if tyre else after, banked, lost, tokens,
                              face, face == "stop" and not bust, after.choices(mode) if tyre else ()))
    return tuple(out)


def default_action(position: Position) -> str:
    """The roll `next_roll` describes unless told: ``roll``, or ``stay`` for a player riding the bus."""
    return "stay" if position.riding else "roll"


def next_roll(position: Position, action: str | None = None) -> NextRoll:
    """The exact distribution of the next roll from `position` (with the School Bus: of `action`, one of
    `legal_actions` but ``stop``; by default `default_action`)."""
    mode = position.game_mode
    action = action or default_action(position)
    if position.school_bus:
        denominator, results = bus_results(mode, position.bus_state, action, position.recycle)
        summary = [(b, s, bust, ways) for b, s, bust, *_, ways in results]
        dice = position.state
        need = mode.dice_per_roll - sum(dice.hand) - (action in BUS_ROLLS)
        if action == "stay":
            dice = dice._replace(hand=tuple(0 for _ in dice.hand))
            need = mode.dice_per_roll - 1
        recycles = sum(dice.cup(mode)) < need
    elif action != "roll":
        raise ValueError(f"{action!r} needs the School Bus; without it the only roll is 'roll'")
    else:
        denominator, _, merged = _transition_ways(mode, position.state, position.recycle)
        summary = [(b, s, bust, ways) for (b, s, bust, *_), ways in merged.items()]
        recycles = needs_recycling(mode, position.state)
    # In integers over one denominator, a Fraction per figure at the end: a sum of Fractions reduces at every step.
    joint: dict[tuple[int, int], int] = {}
    bust = brains = 0
    for b, s, busts, ways in summary:
        joint[(b, s)] = joint.get((b, s), 0) + ways
        bust += ways if busts else 0
        brains += ways * b
    return NextRoll(
        position=position,
        outcomes=tuple((b, s, Fraction(w, denominator)) for (b, s), w in sorted(joint.items())),
        bust=Fraction(bust, denominator),
        expected_brains=Fraction(brains, denominator),
        recycles=recycles,
        action=action,
    )
