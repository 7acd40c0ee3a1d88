"""Shared Monte Carlo checks: physical dice (analysis/simulate.py) against the exact engine."""

import math
import random

import numpy as np

from analysis import Position, next_roll, odds, parse_objective
from analysis.exact import exact_bus_turn, exact_turn
from analysis.simulate import Turn, _lose_brain, play_turn, roll_once
from workers import solutions

N = 20_000


def within_4_sigma(samples: list[float], exact: float) -> bool:
    """The sample mean lies within 4 standard errors of the exact value (the larger of the sample's
    and, for a probability, the exact Bernoulli variance)."""
    n = len(samples)
    mean = sum(samples) / n
    var = sum((x - mean) ** 2 for x in samples) / (n - 1)
    sigma = math.sqrt(max(var, exact * (1 - exact) if 0 <= exact <= 1 else var) / n)
    return abs(mean - exact) <= 4 * sigma + 1e-12


def assert_next_roll_matches(position: Position, seed: int, n: int = N, action: str | None = None) -> None:
    """Bust, brains and shotguns of one roll (of `action`, with the School Bus), simulated n times, against
    the exact distribution."""
    rng = random.Random(seed)
    busts, brains, shotguns = [], [], []
    exact = next_roll(position, action)
    for _ in range(n):
        turn = Turn.at(position)
        b, s = roll_once(turn, rng, exact.action)
        busts.append(float(turn.bust))
        brains.append(b)
        shotguns.append(s)
    assert within_4_sigma(busts, float(exact.bust))
    assert within_4_sigma(brains, float(exact.expected_brains))
    assert within_4_sigma(shotguns, float(sum(s * p for _, s, p in exact.outcomes)))


def solved_policy(position: Position, objective: str, rooted: bool = False):
    """The solved policy as a function of a physical turn (looks its position up in the table; a rooted
    table holds only what `position` can reach, which expansion modes need)."""
    exact = exact_turn(position.mode, position.recycle, parse_objective(objective),
                       position.state if rooted else None)
    index = exact.solution.table.index

    def rolls(turn: Turn) -> bool:
        p = turn.position()
        return exact.decision(index[p.state], p.score) == "roll"

    return rolls


def assert_turn_matches(position: Position, objective: str, seed: int, scores_to_check: tuple[int, ...],
                        rooted: bool = False, n: int = N // 4) -> None:
    """Whole turns played with the solved policy against the exact value and score distribution."""
    o = odds(position, objective)
    rng = random.Random(seed)
    policy = solved_policy(position, objective, rooted)
    scores = [play_turn(position, policy, rng) for _ in range(n)]
    if objective.startswith("reach:"):
        k = int(objective.removeprefix("reach:"))
        assert within_4_sigma([float(s >= k) for s in scores], float(o.decision.roll))
    else:
        assert within_4_sigma(scores, float(o.decision.roll))
    for k in scores_to_check:
        assert within_4_sigma([float(s == k) for s in scores], float(o.score_distribution.get(k, 0))), k


def bus_turns(position: Position, objective: str, seed: int, first: str | None = None, stored: bool = False
              ) -> list[int]:
    """The scores of `N` / 4 whole School Bus turns played on physical dice from `position` by the solved policy
    (rolling `first` first, `play_turn`'s default otherwise): the exact one, or with `stored` the stored solution's
    (the policy the API answers from, for expected brains)."""
    best, value = _stored_bus_policy(position, objective) if stored else _exact_bus_policy(position, objective)

    def act(turn: Turn) -> str:
        return best(turn.position())

    def give_up(turn: Turn, options: list[str]) -> str:
        worth = []
        for g in options:
            after = Turn.at(turn.position())
            _lose_brain(after, g)
            after.riding, after.bus_out = False, True
            worth.append(value(after.position()))
        return options[worth.index(max(worth))]

    rng = random.Random(seed)
    return [play_turn(position, act, rng, give_up, first) for _ in range(N // 4)]


def _exact_bus_policy(position: Position, objective: str):
    """(the best action at a position, its value) by the exact solution of what `position` can reach."""
    root = None if position.game_mode.plain else position.bus_state
    exact = exact_bus_turn(position.mode, position.recycle, parse_objective(objective), root)
    index = exact.table.index
    return (lambda p: exact.best(index[p.bus_state], p.score),
            lambda p: exact.value(index[p.bus_state], p.score))


def _stored_bus_policy(position: Position, objective: str):
    """(the best action at a position, its value) by the mode's stored School Bus solution (of expected brains)."""
    if objective != "expected-brains":
        raise ValueError(f"a stored solution plays expected-brains, not {objective}")
    turn = solutions.load(position.mode, position.recycle, True)
    assert turn is not None, "the session builds it (tests/conftest.py)"

    def best(p: Position) -> str:
        i = turn.index(p.bus_state)
        rolled = int(turn.policy(np.array([i]), p.score)[0])
        return "stop" if rolled < 0 else next(a for a, c in turn.actions(i).items() if c == rolled)

    return best, lambda p: float(turn.values(np.array([turn.index(p.bus_state)]), p.score)[0])
