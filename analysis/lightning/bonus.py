"""Bonus and Thunder: passing through six of a kind, and points per throw.

Pass-through (``bonus_chase``). Chasing a card with the card-optimal policy, the chance that some
throw up to and including the matching one shows all six dice equal to ``number``:

    B(K) = [hit(K) + sum_{t not matching, t != v^6} ways(K, t) B(next(t))] / 6**(6-|K|)

(``hit(K)`` counts the outcomes showing v^6; they end the question whether or not they also match
the card). Solved exactly by back-substitution in the card policy's order. After a non-matching
pass the player collects all dice and starts over, so the number of passes before the card is
matched is geometric: E[passes] = p / (1 - p), or p when v^6 itself matches the card.

Points per throw (``point_rate``). A renewal-reward / average-reward MDP over the 462 keeps.
Players are numbered 1..``players``; six dice showing a player's number score +1 (own number:
Bonus) or take 1 from that opponent (Thunder) -- **counted here as +1 for the chaser**, which is
exact for the score difference with a lone opponent and a simplification with more. A match
scores +2; a throw that is both scores both. After scoring a card or a Bonus/Thunder all six dice
are rerolled (the chain renews at the empty keep; the next card is taken to be the same card,
so the gain is the long-run rate of a steady stream of this card). With ``r(t)`` the points of
state ``t``, a stationary policy has gain

    g = E[points per cycle] / E[throws per cycle],   a cycle = from one empty keep to the next,

and the optimal gain solves the average-reward optimality equations with h(()) = 0:

    h(K) = sum_t P(t | K) [ r(t) - g + (0 if t renews else max_{K' proper subset of t} h(K')) ].

(Choosing to keep nothing also returns to the empty keep, and then contributes h(()) = 0.)
The policy is found by float policy iteration; then the gain of the greedy policy is computed
exactly as R(()) / L(()) from two exact back-substitutions (expected points R and throws L per
cycle), and the equations above are verified exactly with h = R - g L: no state has a strictly
better keep. A pair (g, h) solving them proves ``g`` optimal from every start.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..kept import kept
from .cards import Card, dice_counts, parse_card
from .chain import back_substitute, float_back_substitute, greedy_policy, rank_of, transitions
from .chase import Chase, check_greedy, solve_chase
from .tables import EMPTY, KEEPS, STATE_INDEX, STATES, tables

__all__ = ["BonusChase", "PointRate", "bonus_chase", "point_rate", "point_advice"]


@dataclass(frozen=True)
class BonusChase:
    """``p_pass``: P(some throw shows six ``number``s while chasing ``card`` optimally, up to and
    including the matching throw); ``expected_passes``: expected number of such throws before the
    card is matched (all dice rerolled after each); ``also_matches``: six ``number``s match the
    card themselves."""

    card: Card
    number: int
    p_pass: Fraction
    expected_passes: Fraction
    also_matches: bool


@dataclass(frozen=True)
class PointRate:
    """Points per throw (see the module docstring) for a player with ``players`` in the game.

    ``card_policy_gain``: gain of the card-optimal keep policy under the scoring rules;
    ``best_gain``: optimal gain; ``best_card_points`` / ``best_bonus_points``: the optimal gain
    split into card points and Bonus/Thunder points per throw; ``changed_states``: the number of
    non-scoring rolls where the card-optimal keep is strictly worse for points than the best;
    ``policy_summary``: keeps of the best policy for a few showcase rolls."""

    card: Card
    players: int
    card_policy_gain: Fraction
    best_gain: Fraction
    best_card_points: Fraction
    best_bonus_points: Fraction
    changed_states: int
    policy_summary: str


def _check_number(name: str, value: object, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"{name} must be an integer {low}..{high}, got {value!r}")
    return value


@kept("card")
def _bonus(text: str, number: int) -> BonusChase:
    chase = solve_chase(parse_card(text))
    tab = tables()
    six = STATE_INDEX[(number,) * 6]
    stop = chase.matched.copy()
    stop[six] = True
    trans = transitions(chase.policy, stop)
    base = [0] * len(KEEPS)
    for keep in chase.reach:
        states = tab.out_states[keep]
        base[keep] = int(tab.out_ways[keep][states == six].sum())
    p = back_substitute(chase.order, trans, base, only=set(chase.reach))[EMPTY]
    also = bool(chase.matched[six])
    return BonusChase(chase.card, number, p, p if also else p / (1 - p), also)


def bonus_chase(card: Card | str, number: int) -> BonusChase:
    """Probability of passing through six ``number``s (1..6) while chasing ``card`` optimally."""
    _check_number("number", number, 1, 6)
    return _bonus(parse_card(card).text, number)


def _scoring(chase: Chase, players: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per state: points, card points, renewal flag."""
    special = np.zeros(len(STATES), dtype=bool)
    for v in range(1, players + 1):
        special[STATE_INDEX[(v,) * 6]] = True
    card_points = 2 * chase.matched.astype(np.int64)
    points = card_points + special
    return points, card_points, chase.matched | special


def _cycle(
    order: list[int] | tuple[int, ...], policy: np.ndarray, renew: np.ndarray, weights: tuple[np.ndarray, ...]
) -> tuple[dict[int, Fraction], ...]:
    """Exact per-cycle expectations from every keep: one solve per weight vector on states
    (a weight of 1 on every outcome gives the expected number of throws)."""
    tab = tables()
    trans = transitions(policy, renew)
    results = []
    for w in weights:
        base = [int((tab.out_ways[k] * w[tab.out_states[k]]).sum()) for k in range(len(KEEPS))]
        results.append(back_substitute(order, trans, base, empty_terminal=True))
    return tuple(results)


def _float_gain_policy(chase: Chase, points: np.ndarray, renew: np.ndarray) -> np.ndarray:
    """Average-reward policy iteration in floats from the card-optimal policy; returns h.

    Each policy is greedy for the ranking of the previous h (best first), so R and L are found
    by float back-substitution in that ranking with the empty keep terminal."""
    tab = tables()
    n = len(KEEPS)
    base = np.column_stack([tab.prob @ points, np.ones(n)])
    order, policy = np.array(chase.order), chase.policy
    h = np.zeros(n)
    for _ in range(60):
        totals = float_back_substitute(order, policy, renew, base, empty_terminal=True)
        gain = totals[EMPTY, 0] / totals[EMPTY, 1]
        h = totals[:, 0] - gain * totals[:, 1]
        h[EMPTY] = 0.0
        order = np.lexsort((np.arange(n), -np.round(h, 9)))
        new_policy = greedy_policy(rank_of(order))
        if np.array_equal(np.where(renew, 0, new_policy), np.where(renew, 0, policy)):
            break
        policy = new_policy
    return h


def _exact_gain_iteration(
    order: list[int],
    policy: np.ndarray | None,
    points: np.ndarray,
    card_points: np.ndarray,
    renew: np.ndarray,
) -> tuple[list[int], np.ndarray, Fraction, dict[int, Fraction], dict[int, Fraction], dict[int, Fraction]]:
    """Exact average-reward policy iteration; ``policy`` None means greedy for ``order``.

    Returns the final order, policy, exact gain g, bias h (h(()) = 0), throws per cycle L and
    card points per cycle, per keep. Raises ``ArithmeticError`` on an improper policy."""
    ones = np.ones(len(STATES), dtype=np.int64)
    while True:
        if policy is None:
            policy = greedy_policy(rank_of(order))
        r, length, c = _cycle(order, policy, renew, (points, ones, card_points))
        gain = r[EMPTY] / length[EMPTY]
        h = {k: r[k] - gain * length[k] for k in range(len(KEEPS))}
        h[EMPTY] = Fraction(0)
        if check_greedy(h, policy, renew, -1)[0]:
            return order, policy, gain, h, length, c
        order, policy = sorted(range(len(KEEPS)), key=lambda k: (-h[k], k)), None


@kept("card")
def _points(text: str, players: int) -> tuple[PointRate, dict[tuple[int, ...], tuple[int, ...]]]:
    chase = solve_chase(parse_card(text))
    points, card_points, renew = _scoring(chase, players)
    ones = np.ones(len(STATES), dtype=np.int64)
    # Card-optimal policy under the scoring rules: its order keeps the chain triangular.
    r_card, l_card = _cycle(chase.order, chase.policy, renew, (points, ones))
    card_gain = r_card[EMPTY] / l_card[EMPTY]

    approx = _float_gain_policy(chase, points, renew)
    start = list(np.lexsort((np.arange(len(KEEPS)), -np.round(approx, 9))))
    try:
        order, policy, gain, h, length, c = _exact_gain_iteration(start, None, points, card_points, renew)
    except ArithmeticError:  # an improper float policy: restart from the (proper) card policy
        order, policy, gain, h, length, c = _exact_gain_iteration(
            list(chase.order), chase.policy, points, card_points, renew
        )
    # Canonical tie-break among exactly equal keeps (by exact h, then index); (g, h) still solve
    # the equations of the re-ranked greedy policy, so nothing needs re-evaluating.
    order = sorted(range(len(KEEPS)), key=lambda k: (-h[k], k))
    policy = greedy_policy(rank_of(order))
    go = np.flatnonzero(~renew).tolist()
    changed = sum(h[int(policy[t])] > h[int(chase.policy[t])] for t in go)
    keeps = {STATES[t]: KEEPS[int(policy[t])] for t in go}
    examples = []
    for roll in ((1, 2, 3, 4, 5, 6), (1, 1, 2, 4, 5, 6), (2, 2, 3, 3, 5, 6), (1, 1, 1, 1, 5, 6)):
        t = STATE_INDEX[roll]
        if not renew[t]:
            keep = KEEPS[int(policy[t])]
            examples.append(f"{' '.join(map(str, roll))} -> keep {' '.join(map(str, keep)) or 'nothing'}")
    summary = "; ".join([f"beats the card-optimal keep in {changed} of 462 rolls", *examples])
    card_share = c[EMPTY] / length[EMPTY]
    rate = PointRate(
        card=chase.card,
        players=players,
        card_policy_gain=card_gain,
        best_gain=gain,
        best_card_points=card_share,
        best_bonus_points=gain - card_share,
        changed_states=changed,
        policy_summary=summary,
    )
    return rate, keeps


def point_rate(card: Card | str, players: int = 6) -> PointRate:
    """Best points per throw with Bonus, Thunder and the card all counting (module docstring).

    ``players`` (2..6) decides which six-of-a-kinds score: players are numbered 1..players."""
    _check_number("players", players, 2, 6)
    return _points(parse_card(card).text, players)[0]


def point_advice(card: Card | str, dice: Iterable[int], players: int = 6) -> tuple[int, ...]:
    """The keep of the points-maximising policy of :func:`point_rate` for six ``dice``.

    Returns ``()`` (reroll everything) when the roll scores: a match or a Bonus/Thunder renews."""
    _check_number("players", players, 2, 6)
    roll = tuple(dice)
    dice_counts(roll)
    return _points(parse_card(card).text, players)[1].get(tuple(sorted(roll)), ())
