"""Shared Monte Carlo checks: physical dice (analysis/simulate.py) against the exact engine."""

import math
import random

from analysis import Position, next_roll, odds, parse_objective
from analysis.exact import exact_bus_turn, exact_turn
from analysis.simulate import Turn, _lose_brain, play_turn, roll_once

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


def bus_turns(position: Position, objective: str, seed: int, first: str | None = None) -> list[int]:
    """The scores of `N` / 4 whole School Bus turns played on physical dice from `position` by the solved policy
    (rolling `first` first, `play_turn`'s default otherwise)."""
    act, give_up = _bus_policy(position, objective)
    rng = random.Random(seed)
    return [play_turn(position, act, rng, give_up, first) for _ in range(N // 4)]


def _bus_policy(position: Position, objective: str):
    """The solved policy and tyre-tracks choices as functions of a physical turn."""
    root = None if position.game_mode.plain else position.bus_state
    exact = exact_bus_turn(position.mode, position.recycle, parse_objective(objective), root)
    index = exact.table.index

    def act(turn: Turn) -> str:
        p = turn.position()
        return exact.best(index[p.bus_state], p.score)

    def give_up(turn: Turn, options: list[str]) -> str:
        worth = []
        for g in options:
            after = Turn.at(turn.position())
            _lose_brain(after, g)
            after.riding, after.bus_out = False, True
            p = after.position()
            worth.append(exact.value(index[p.bus_state], p.score))
        return options[worth.index(max(worth))]

    return act, give_up
