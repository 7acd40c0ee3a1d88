"""One player chasing one card: the optimal keep policy, exactly.

Model. A *keep* ``K`` (0..5 dice held) is the state before a throw; the throw rolls ``6 - |K|``
dice and shows a state ``t``. If ``t`` matches the card the chase ends; otherwise the player keeps a
proper sub-multiset of ``t`` and throws again. The first throw is from the empty keep, so the
expected number of throws to match from nothing is ``W(())`` where, for every keep ``K``,

    W(K) = 1 + sum_t P(t | K) * E(t),   E(t) = 0 if t matches, else min_{K' proper subset of t} W(K')

(a stochastic-shortest-path MDP over 462 keeps and 462 states). Keeping all six is not a throw
and is not allowed.

Method. Policy iteration in floats (numpy) finds the policy; the keeps are ranked by value and the
greedy policy for that ranking is evaluated *exactly* by back-substitution (see ``chain.py``).
Then optimality is verified exactly: no state has a proper sub-multiset whose exact value is
below that of the chosen keep. If one had (float trouble), the policy is improved exactly and
re-evaluated (exact policy iteration); the loop ends with exactly optimal values, so
``verified_optimal`` is always True on return. Ties between equally good keeps are broken
deterministically: fewer dice kept first, then the lexicographically smaller keep.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from itertools import islice

import numpy as np

from ..kept import kept
from .cards import Card, dice_counts, parse_card
from .chain import (
    Transitions,
    back_substitute,
    big_int,
    float_back_substitute,
    greedy_policy,
    rank_of,
    reachable,
    transitions,
)
from .tables import EMPTY, KEEPS, STATE_INDEX, STATES, tables

__all__ = [
    "CardAnalysis",
    "Advice",
    "analyze",
    "advice",
    "WITHIN_HORIZON",
    "solve_chase",
    "Chase",
    "check_greedy",
    "survival_masses",
    "survival_numerators",
]

#: ``CardAnalysis.within`` covers k = 1..WITHIN_HORIZON throws.
WITHIN_HORIZON = 20
_SHOWCASE = (
    (1, 2, 3, 4, 5, 6),
    (1, 1, 2, 4, 5, 6),
    (2, 2, 3, 3, 5, 6),
    (1, 3, 3, 3, 4, 6),
    (2, 4, 4, 4, 4, 6),
    (1, 1, 3, 5, 5, 5),
    (2, 2, 2, 6, 6, 6),
)


@dataclass(frozen=True, eq=False)
class Chase:
    """Internal exact solution of one card (shared by ``analyze``, ``advice``, race, scoring)."""

    card: Card
    matched: np.ndarray  # bool per state
    values: tuple[Fraction, ...]  # optimal W(K) for every keep
    order: tuple[int, ...]  # keeps by (value, index): best first
    policy: np.ndarray  # state -> keep index (meaningless where matched)
    ties: dict[int, tuple[int, ...]]  # state -> other keeps with exactly the same value
    trans: Transitions  # per keep: next keeps and ways under ``policy``
    reach: tuple[int, ...]  # keeps reachable from the empty keep, in ``order``
    exact_rounds: int  # exact policy-iteration rounds needed (1 = float policy was optimal)


def _float_values(matched: np.ndarray) -> np.ndarray:
    """Policy iteration in floats, from the proper policy "always keep nothing".

    Each improved policy is greedy for the ranking of the previous values, so it is evaluated
    by float back-substitution in that ranking (``chain.py``) -- no dense solve needed."""
    tab = tables()
    n = len(KEEPS)
    p_match = tab.prob @ matched
    values = 1.0 + (1.0 - p_match) / p_match[EMPTY]
    policy = None
    for _ in range(60):
        order = np.lexsort((np.arange(n), np.round(values, 9)))
        new_policy = greedy_policy(rank_of(order))
        if policy is not None and np.array_equal(np.where(matched, 0, new_policy), np.where(matched, 0, policy)):
            break
        policy = new_policy
        values = float_back_substitute(order, policy, matched, np.ones(n))
    return values


def _exact_order(values: dict[int, Fraction] | tuple[Fraction, ...]) -> list[int]:
    return sorted(range(len(KEEPS)), key=lambda k: (values[k], k))


def check_greedy(values: dict[int, Fraction], policy: np.ndarray, matched: np.ndarray, sign: int):
    """Exact optimality test of a greedy policy; returns (optimal?, ties per state).

    ``sign=+1`` for minimisation, ``-1`` for maximisation. Floats of the exact values prefilter
    the comparisons: a gap above 1e-9 is decided by the floats (they are correctly rounded)."""
    tab = tables()
    approx = np.array([float(values[k]) for k in range(len(KEEPS))]) * sign
    padded = np.append(approx, np.inf)
    chosen = approx[policy]
    close = padded[tab.subs] <= (chosen + 1e-9 * np.maximum(1.0, np.abs(chosen)))[:, None]
    ties: dict[int, tuple[int, ...]] = {}
    for t in np.flatnonzero(~matched & (close.sum(axis=1) > 1)).tolist():
        pick = values[int(policy[t])]
        same = []
        for k in tab.subs[t][close[t]].tolist():
            if k == policy[t]:
                continue
            diff = (values[k] - pick) * sign
            if diff < 0:
                return False, {}
            if diff == 0:
                same.append(k)
        if same:
            ties[t] = tuple(same)
    return True, ties


def solve_chase(card: Card) -> Chase:
    """Solve a card exactly (cached per canonical text; use :func:`analyze` from outside)."""
    return _solve(card.text)


def _exact_policy_iteration(matched: np.ndarray, order: list[int]) -> tuple[dict[int, Fraction], int]:
    """Exact policy iteration from the greedy policy of ``order``; returns optimal values.

    Raises ``ArithmeticError`` if a policy on the way is improper (cannot happen when the first
    one is proper: policy improvement keeps an SSP policy proper)."""
    rounds = 0
    while True:
        rounds += 1
        policy = greedy_policy(rank_of(order))
        values = back_substitute(order, transitions(policy, matched), tables().denom)
        if check_greedy(values, policy, matched, +1)[0]:
            return values, rounds
        order = _exact_order(values)


@kept("card")
def _solve(text: str) -> Chase:
    card = parse_card(text)
    tab = tables()
    matched = np.array([card.matches_counts(c) for c in tab.state_counts], dtype=bool)
    matched.setflags(write=False)
    approx = _float_values(matched)
    try:
        values, rounds = _exact_policy_iteration(
            matched, list(np.lexsort((np.arange(len(KEEPS)), np.round(approx, 9))))
        )
    except ArithmeticError:
        # The float policy was improper (float trouble): restart from the greedy improvement of
        # "always keep nothing", whose exact values are W(K) = 1 + P(K misses) / P(() matches).
        hits = [int(tab.out_ways[k][matched[tab.out_states[k]]].sum()) for k in range(len(KEEPS))]
        start = Fraction(hits[EMPTY], tab.denom[EMPTY])
        naive = [1 + (1 - Fraction(h, tab.denom[k])) / start for k, h in enumerate(hits)]
        values, rounds = _exact_policy_iteration(matched, _exact_order(naive))
    # Canonical tie-break (by exact value, then index). Values of an optimal policy are the
    # optimal values, so switching among exact ties changes no value: no re-evaluation needed.
    order = _exact_order(values)
    policy = greedy_policy(rank_of(order))
    policy.setflags(write=False)
    trans = transitions(policy, matched)
    _, ties = check_greedy(values, policy, matched, +1)
    reach = reachable(trans)
    return Chase(
        card=card,
        matched=matched,
        values=tuple(values[k] for k in range(len(KEEPS))),
        order=tuple(order),
        policy=policy,
        ties=ties,
        trans=trans,
        reach=tuple(k for k in order if k in reach),
        exact_rounds=rounds,
    )


def survival_masses(chase: Chase) -> Iterator[dict[int, int]]:
    """Yield, for k = 0, 1, 2, ..., the unmatched mass after k throws, per keep held.

    Exact forward propagation scaled to integers: the mass ``m`` at keep ``K`` means probability
    ``m / 6**(6k)``; an outcome counted ``w`` times out of ``6**(6-|K|)`` is counted
    ``w * 6**|K|`` times out of ``6**6``. P(T > k) is the sum of the masses over ``6**(6k)``."""
    size = tables().keep_size
    step = {k: [(c, w * 6 ** int(size[k])) for c, w in zip(*chase.trans[k])] for k in chase.reach}
    mass = {EMPTY: big_int(1)}
    while True:
        yield mass
        new: dict[int, int] = {}
        for keep, m in mass.items():
            for nxt, w in step[keep]:
                new[nxt] = new.get(nxt, 0) + m * w
        mass = new


def survival_numerators(chase: Chase, horizon: int) -> list[int]:
    """``A[k]`` for k = 0..horizon with P(T > k) = A[k] / 6**(6k) (T: throws to match)."""
    return [int(sum(m.values())) for m in islice(survival_masses(chase), horizon + 1)]


@dataclass(frozen=True)
class CardAnalysis:
    """Exact single-player analysis of a card under the optimal keep policy.

    ``expected_throws`` = E[T] and ``variance`` = Var[T] for T, the number of throws to match from
    nothing (throw 1 rolls all six); ``within[k-1]`` = P(T <= k) for k = 1..20;
    ``typical_keeps`` pairs a few showcase rolls that do not match with the optimal keep;
    ``keeps_used`` counts the keeps the policy can reach from nothing."""

    card: Card
    expected_throws: Fraction
    variance: Fraction
    within: tuple[Fraction, ...]
    policy_summary: str
    typical_keeps: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    keeps_used: int
    verified_optimal: bool


@dataclass(frozen=True)
class Advice:
    """What to do with six dice: ``keep`` (sorted; empty = reroll all), ``reroll`` the rest.

    ``expected_throws_left`` counts the coming throws including the next one (0 if ``matched``);
    ``equally_good`` lists other keeps with exactly the same expected value."""

    card: Card
    dice: tuple[int, ...]
    matched: bool
    keep: tuple[int, ...]
    reroll: tuple[int, ...]
    expected_throws_left: Fraction
    equally_good: tuple[tuple[int, ...], ...]


def _fmt(dice: Iterable[int]) -> str:
    text = " ".join(map(str, dice))
    return text or "nothing"


def _summary(chase: Chase) -> tuple[str, tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]]:
    tab = tables()
    first_states = tab.out_states[EMPTY]
    first_ways = tab.out_ways[EMPTY]
    miss = ~chase.matched[first_states]
    kept = tab.keep_size[chase.policy[first_states[miss]]]
    examples = tuple(
        (roll, KEEPS[int(chase.policy[STATE_INDEX[roll]])])
        for roll in _SHOWCASE
        if not chase.matched[STATE_INDEX[roll]]
    )[:3]
    if not miss.any():
        return "every roll matches: nothing to keep", ()
    mean = float((kept * first_ways[miss]).sum() / first_ways[miss].sum())
    parts = [f"after a missed first throw keep {mean:.2f} dice on average"]
    parts += [f"{_fmt(roll)} -> keep {_fmt(keep)}" for roll, keep in examples]
    return "; ".join(parts), examples


@kept("card")
def _analyze(text: str) -> CardAnalysis:
    chase = _solve(text)
    tab = tables()
    values = chase.values
    only = set(chase.reach)
    # Second moment: T = 1 + T' so E[T^2] = 1 + 2 E[T'] + E[T'^2]; with T' = 0 on a match.
    base = [0] * len(KEEPS)
    for k in chase.reach:
        base[k] = tab.denom[k] + 2 * sum(w * values[c] for c, w in zip(*chase.trans[k]))
    second = back_substitute(chase.order, chase.trans, base, only=only)
    mean = values[EMPTY]
    survival = survival_numerators(chase, WITHIN_HORIZON)
    within = tuple(1 - Fraction(a, 6 ** (6 * k)) for k, a in enumerate(survival) if k)
    summary, examples = _summary(chase)
    return CardAnalysis(
        card=chase.card,
        expected_throws=mean,
        variance=second[EMPTY] - mean * mean,
        within=within,
        policy_summary=summary,
        typical_keeps=examples,
        keeps_used=len(chase.reach),
        verified_optimal=True,
    )


def analyze(card: Card | str) -> CardAnalysis:
    """Exact optimal-policy analysis of ``card`` (cached on the canonical text).

    Raises :class:`CardError` for invalid card text."""
    return _analyze(parse_card(card).text)


@kept("card")
def _advice_table(text: str) -> dict[tuple[int, ...], Advice]:
    chase = _solve(text)
    table = {}
    for t, roll in enumerate(STATES):
        if chase.matched[t]:
            table[roll] = Advice(chase.card, roll, True, roll, (), Fraction(0), ())
            continue
        keep = KEEPS[int(chase.policy[t])]
        rest = list(roll)
        for d in keep:
            rest.remove(d)
        others = tuple(KEEPS[k] for k in chase.ties.get(t, ()))
        table[roll] = Advice(chase.card, roll, False, keep, tuple(rest), chase.values[int(chase.policy[t])], others)
    return table


def advice(card: Card | str, dice: Iterable[int]) -> Advice:
    """The optimal keep for six ``dice`` showing (any order) while chasing ``card``.

    A dictionary lookup once the card is solved. Raises ``ValueError`` for invalid dice and
    :class:`CardError` for an invalid card."""
    roll = tuple(dice)
    dice_counts(roll)
    return _advice_table(parse_card(card).text)[tuple(sorted(roll))]
