"""Monte Carlo simulation of Lightning Dice: an independent check of the exact analyses.

Why a second code path: the exact engine works on multiset tables, transition counts and
back-substitution. Here dice are physical lists rolled one by one with a seeded
``random.Random``; a match is decided by ``Card.matches`` (the pattern evaluated on the dice, not
the solver's mask) and six of a kind by looking at the dice. The only thing shared with the
engine is the keep decision (``advice`` / ``point_advice``), which is exactly what is being
tested: that following it produces the distribution the engine claims. Every returned keep is
checked to be a sub-multiset of the dice showing (with fewer than six dice).

Functions return raw per-trial samples; statistics are left to the caller.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

from .bonus import point_advice
from .cards import Card, parse_card
from .chase import advice

__all__ = ["simulate_chase", "simulate_race", "simulate_bonus", "simulate_points"]

MAX_THROWS = 100_000  # a trial this long means a broken policy; fail loudly instead of hanging


def _reroll(rng: random.Random, dice: list[int], keep: tuple[int, ...]) -> list[int]:
    held = Counter(keep)
    if len(keep) >= 6 or any(held[f] > dice.count(f) for f in held):
        raise AssertionError(f"illegal keep {keep} from {dice}")
    return list(keep) + [rng.randint(1, 6) for _ in range(6 - len(keep))]


def _fresh(rng: random.Random) -> list[int]:
    return [rng.randint(1, 6) for _ in range(6)]


def _chooser(card: Card) -> Callable[[list[int]], tuple[int, ...]]:
    return lambda dice: advice(card, dice).keep


def simulate_chase(card: Card | str, trials: int, *, seed: int) -> tuple[int, ...]:
    """Throws needed to match ``card`` in each of ``trials`` solo chases (optimal keeps)."""
    card = parse_card(card)
    rng = random.Random(seed)
    keep_for = _chooser(card)
    result = []
    for _ in range(trials):
        dice = _fresh(rng)
        throws = 1
        while not card.matches(dice):
            dice = _reroll(rng, dice, keep_for(dice))
            throws += 1
            if throws > MAX_THROWS:
                raise AssertionError("chase did not end")
        result.append(throws)
    return tuple(result)


def simulate_race(card: Card | str, players: int, trials: int, *, seed: int) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """Per trial: the throw on which someone first matched and the players (0-based) who did."""
    card = parse_card(card)
    rng = random.Random(seed)
    keep_for = _chooser(card)
    result = []
    for _ in range(trials):
        hands = [_fresh(rng) for _ in range(players)]
        throws = 1
        while True:
            winners = tuple(i for i, dice in enumerate(hands) if card.matches(dice))
            if winners:
                break
            hands = [_reroll(rng, dice, keep_for(dice)) for dice in hands]
            throws += 1
            if throws > MAX_THROWS:
                raise AssertionError("race did not end")
        result.append((throws, winners))
    return tuple(result)


def simulate_bonus(card: Card | str, number: int, trials: int, *, seed: int) -> tuple[int, ...]:
    """Per chase of ``card``: how many throws showed six ``number``s, the matching throw included
    (after a non-matching one all six dice are rerolled, as the rules say)."""
    card = parse_card(card)
    rng = random.Random(seed)
    keep_for = _chooser(card)
    result = []
    for _ in range(trials):
        dice = _fresh(rng)
        passes = 0
        throws = 1
        while True:
            six = all(d == number for d in dice)
            passes += six
            if card.matches(dice):
                break
            dice = _fresh(rng) if six else _reroll(rng, dice, keep_for(dice))
            throws += 1
            if throws > MAX_THROWS:
                raise AssertionError("chase did not end")
        result.append(passes)
    return tuple(result)


def simulate_points(
    card: Card | str, players: int, throws: int, *, seed: int, best: bool = True
) -> tuple[tuple[int, int], ...]:
    """Play ``throws`` throws of a steady stream of ``card`` with the scoring of ``point_rate``;
    return (points, throws) of every completed cycle (a cycle ends when the dice are all rerolled:
    after a score, or when the policy keeps nothing). ``best`` selects the points-maximising
    policy, otherwise the card-optimal one."""
    card = parse_card(card)
    rng = random.Random(seed)
    if best:
        keep_for: Callable[[list[int]], tuple[int, ...]] = lambda dice: point_advice(card, dice, players)  # noqa: E731
    else:
        keep_for = _chooser(card)
    cycles = []
    points = length = 0
    dice = _fresh(rng)
    for _ in range(throws):
        length += 1
        scored = 0
        if card.matches(dice):
            scored += 2
        if dice.count(dice[0]) == 6 and dice[0] <= players:
            scored += 1
        points += scored
        keep = () if scored else keep_for(dice)
        if not keep:
            cycles.append((points, length))
            points = length = 0
            dice = _fresh(rng)
        else:
            dice = _reroll(rng, dice, keep)
    return tuple(cycles)
