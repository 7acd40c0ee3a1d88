"""What a player maximises over one turn: each objective a type that says what stopping is worth, where the
player must stop, and how far its solve needs to look.

A solver (policy.py, exact.py) values a turn by backward induction from the stop values ``S(T)`` at each
turn score ``T``; the objective supplies them and nothing else about the game:

* `ExpectedBrains`: ``S(T) = T``. The player stops where rolling is worth less. The score levels to solve
  are the table's own (above a bound every state stops: `policy.stop_bound`), so `top` is None.
* `Reach` ``K``: ``S(T) = 1`` if ``T >= K`` else 0, the chance of ending the turn with at least ``K``
  brains. At ``T >= K`` stopping is worth 1 and rolling less, so levels ``0..K-1`` are solved.
* `FixedRule` ``N, S``: the fixed rule "stop at >= N brains or >= S shotguns", its expected score: the player
  never chooses (`chooses` is false): it stops where `forced` says so and rolls everywhere else.

Every stop value is an integer, so that exact solvers keep it exact and float solvers read it exactly.

* `Win`: the chance of winning the game around the turn (its scores, read against the mode's full-game table).
  Its values are the game table's (analysis/game), not a turn solve's: `odds.win_odds` answers it, and it has no
  stop values or levels of its own. Nor is it parsed from text alone: its scores are checked around the position
  (`game.advice.game_around`, which also says which table decides) and its table found for them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np

if TYPE_CHECKING:
    from .game import GameSolution, SeatsSolution
    from .game.advice import GameScores

__all__ = ["Objective", "ExpectedBrains", "Reach", "FixedRule", "Win", "parse_objective", "MAX_REACH"]

MAX_REACH = 40  # the highest K of reach:K (a turn rarely scores more; the solve grows with K)


@dataclass(frozen=True)
class _Objective:
    """What objectives share unless they say otherwise: stopping is worth the score, the player chooses where to
    stop and is never made to, and the table's own levels are solved."""

    chooses: ClassVar[bool] = True  # the player stops where stopping is worth as much as the best action
    forces: ClassVar[bool] = False  # the objective makes the player stop somewhere (`forced`)
    top: ClassVar[int | None] = None  # the highest score level to solve, where the objective sets it

    def stop_value(self, score: int) -> int:
        """What stopping is worth at `score` (an array of scores: an array of values)."""
        return score

    def forced(self, score: int | np.ndarray, shotguns: int | np.ndarray) -> np.ndarray:
        """Where the player must stop, at these scores and shotgun counts (arrays broadcast). Solvers ask only an
        objective that `forces`: for the others it is nowhere."""
        return np.zeros(np.broadcast(score, shotguns).shape, dtype=bool)

    def roll_where_all_stop(self, bust: float | np.ndarray, gain: float | np.ndarray,
                            score: int) -> float | np.ndarray:
        """The value of rolling once where every result then stops: ``(1 - q) T + m``."""
        return (1.0 - bust) * score + gain

    def above(self, score: int) -> int:
        """How many brains above `score` the objective's target lies (0: it has none)."""
        return 0


@dataclass(frozen=True)
class ExpectedBrains(_Objective):
    """Maximise the turn's expected score."""

    name: ClassVar[str] = "expected-brains"


@dataclass(frozen=True)
class _Target(_Objective):
    """An objective with a brain `target`: the levels below it are solved (at it and above, the turn is done)."""

    target: int

    @property
    def top(self) -> int:  # type: ignore[override]
        return self.target - 1

    def above(self, score: int) -> int:
        return self.target - score


@dataclass(frozen=True)
class Reach(_Target):
    """Maximise the chance of ending the turn with at least `target` brains."""

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"reach:{self.target}"

    def stop_value(self, score: int) -> int:
        return (score >= self.target) * 1  # (an array of scores: an array of 0s and 1s)

    def roll_where_all_stop(self, bust: float | np.ndarray, gain: float | np.ndarray,
                            score: int) -> float | np.ndarray:
        return 1.0 - bust


@dataclass(frozen=True)
class FixedRule(_Target):
    """Follow "stop at >= `target` brains or >= `shotguns` shotguns": its expected score."""

    shotguns: int
    chooses: ClassVar[bool] = False
    forces: ClassVar[bool] = True

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"rule:{self.target},{self.shotguns}"

    def forced(self, score: int | np.ndarray, shotguns: int | np.ndarray) -> np.ndarray:
        return (np.asarray(score) >= self.target) | (np.asarray(shotguns) >= self.shotguns)


Objective = ExpectedBrains | Reach | FixedRule


@dataclass(frozen=True)
class Win:
    """Maximise the chance of winning the game `scores` (`game.advice.game_around`), read against the mode's
    full-game `table` of `scores.table_players` players."""

    scores: GameScores
    table: GameSolution | SeatsSolution = field(compare=False, repr=False)
    name: ClassVar[str] = "win"


def parse_objective(text: str) -> Objective:
    """Parse ``expected-brains``, ``reach:K`` (1 <= K <= `MAX_REACH`) or ``rule:N,S`` (N >= 1, 1 <= S <= 3)."""
    if text == ExpectedBrains.name:
        return ExpectedBrains()
    if m := re.fullmatch(r"reach:(\d{1,3})", text):
        k = int(m[1])
        if 1 <= k <= MAX_REACH:
            return Reach(k)
        raise ValueError(f"reach:K needs 1 <= K <= {MAX_REACH}")
    if m := re.fullmatch(r"rule:(\d{1,3}),(\d)", text):
        n, s = int(m[1]), int(m[2])
        if 1 <= n <= 100 and 1 <= s <= 3:
            return FixedRule(n, s)
        raise ValueError("rule:N,S needs 1 <= N <= 100 and 1 <= S <= 3")
    raise ValueError("expected 'expected-brains', 'reach:K' or 'rule:N,S'")
