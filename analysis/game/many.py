"""Three to eight players: a reduced model, checked against whole games played with physical dice.

Exact play is out of reach beyond two players here: the start of a turn would need every player's
score (``13^(N-1) N`` normal-game turns, 6,591 for three players, 114,244 for four, each a sweep
like duel.py's) plus final rounds whose players react to every earlier total. Instead:

**Reduced model ("duel the leader").** A player sees only its score ``m``, the best score ``L``
among the others, and whether anyone still plays after it in the current round, and plays the exact
two-player decision (duel.py) for that duel:

* normal game: seat 1 at ``(m, L)`` if someone still plays after it this round (reaching the goal
  lets them answer), seat 2 if it closes the round (reaching the goal ends the game);
* final round (someone reached the goal): beat the best total so far, as seat 2 must (ties go to a
  tie-break); players still to come are ignored;
* tie-break rounds (only the tied leaders play): the first opens like seat 1 of a two-player
  tie-break, the others beat the best total of the round so far.

Its estimate of each seat's chance to win at the start: the two-player values of the duel each
seat opens (``w = W1[0, 0]`` for a seat that someone follows, ``1 - W1[0, 0]`` for the last seat),
normalised to sum to 1: ``P_k = w_k / sum_j w_j`` (exact for two players). `check_reduced_model`
plays N-player games with physical dice (analysis.simulate), every player following the model, and
reports each seat's simulated frequency, the estimate and their difference with its standard error.

Measured (base game, before-draw, 20,000 games per N, standard error about 0.003): the largest
error of the estimate over the seats is 0.013 (3 players), 0.018 (4), 0.023 (5), 0.021 (6), 0.022
(7), 0.023 (8). The simulated frequencies rise steadily along the seat order (3 players: 0.305,
0.325, 0.371; 8 players: 0.099 for the first seat to 0.150 for the last), which the estimate only
grants the last seat. The estimate is rough; the policy and the simulated frequencies are the
useful part.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ..simulate import roll_once
from .play import dice_state_index, fresh_turn, policy_table
from .solution import GameSolution

__all__ = ["ReducedPolicy", "play_many", "estimate_reduced", "check_reduced_model", "ModelCheck"]


class ReducedPolicy:
    """The reduced model's decisions, from the state of the whole table."""

    def __init__(self, solution: GameSolution):
        self.solution = solution
        self.table = policy_table(solution)

    def rolls(self, scores: list[int], mover: int, players: list[int], final: bool, state: int, total: int) -> bool:
        """`players`: the seats (0-based) playing this round, in order (everyone, or the tied leaders
        of a tie-break round); `final`: someone has reached the goal (or this is a tie-break)."""
        m = scores[mover]
        leader = max(scores[p] for p in players if p != mover)
        if not final:
            closes = players[-1] == mover
            return self.table(2 if closes else 1, m, leader, state, total)
        if m == leader >= self.solution.goal:  # opening a tie-break round
            return self.table(1, m, m, state, total)
        return self.table(2, m, leader, state, total)

    def beat(self, best: int, state: int, total: int) -> bool:
        """A later player of a tie-break round, whose turn must beat the round's best total `best`."""
        goal = self.solution.goal
        return self.table(2, goal, goal + best, state, total)


def play_many(n: int, policy: ReducedPolicy, rng: random.Random, mode: str = "original",
              recycle: str = "before-draw", goal: int = 13, max_rounds: int = 10_000) -> int:
    """One game of `n` players (seats 0..n-1) with physical dice; returns the winner's seat.

    RULES.md section 1: when a player ends a turn at the goal or more, the round is completed; the
    highest total wins; tied leaders alone play tie-break rounds (one turn each, same order) until
    the tie is broken. Scores accumulate through tie-breaks (only differences matter).
    """
    scores = [0] * n
    players = list(range(n))
    final = tiebreak = False
    for _ in range(max_rounds):
        best: int | None = None  # a tie-break round's best turn total so far
        for p in players:
            turn = fresh_turn(mode, recycle)
            roll_once(turn, rng)
            while not turn.bust:
                i = dice_state_index(turn)
                if tiebreak and best is not None:
                    go = policy.beat(best, i, turn.score)
                else:
                    go = policy.rolls(scores, p, players, final, i, turn.score)
                if not go:
                    break
                roll_once(turn, rng)
            scores[p] += turn.score
            best = turn.score if best is None else max(best, turn.score)
            final = final or scores[p] >= goal
        if final:
            top = max(scores[p] for p in players)
            leaders = [p for p in players if scores[p] == top]
            if len(leaders) == 1:
                return leaders[0]
            players, tiebreak = leaders, True
    raise RuntimeError("no winner after max_rounds rounds")


def estimate_reduced(solution: GameSolution, n: int) -> list[float]:
    """The model's estimate of each seat's probability to win (see the module docstring)."""
    w = [solution.p_first_player_wins] * (n - 1) + [1 - solution.p_first_player_wins]
    return [x / sum(w) for x in w]


@dataclass(frozen=True)
class ModelCheck:
    players: int
    games: int
    simulated: tuple[float, ...]  # frequency of wins per seat
    estimate: tuple[float, ...]
    standard_error: tuple[float, ...]

    @property
    def errors(self) -> tuple[float, ...]:
        """Estimate minus simulated frequency, per seat."""
        return tuple(e - s for e, s in zip(self.estimate, self.simulated))


def check_reduced_model(solution: GameSolution, n: int, games: int, seed: int = 0) -> ModelCheck:
    """Play `games` games of `n` players, all following the reduced model; compare with its estimate."""
    if not 2 <= n <= 8:
        raise ValueError("2 to 8 players")
    policy = ReducedPolicy(solution)
    rng = random.Random(seed)
    wins = [0] * n
    for _ in range(games):
        wins[play_many(n, policy, rng, solution.mode, solution.recycle, solution.goal)] += 1
    freq = tuple(w / games for w in wins)
    return ModelCheck(n, games, freq, tuple(estimate_reduced(solution, n)),
                      tuple(math.sqrt(f * (1 - f) / games) for f in freq))
