"""`GameSolution`: the two-player game solved, as a frozen value object, and how to compute it in pieces.

The solution keeps only the start-of-turn values (``W1``, ``W2``, ``F``, ``W``: see duel.py); any
mid-turn decision is one sweep of one column away and is recomputed on demand (and memoised).

Work units for workers (`game_layers`, `solve_layer`, `assemble`): layer 0 is the tie-break and the
final turns; layer ``k >= 1`` is the score total ``2 (G - 1) - (k - 1)``, whose pairs are independent
of each other (each pair iterates on its own, so a pair's numbers are the same bit for bit whatever
unit it is solved in). Units of one layer can run in parallel; a layer needs every earlier layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from ..kept import SIZES, kept
from ..table import table_for
from .duel import CAP, GOAL, Values, certain_tops, pairs_of, phase, solve_tiebreak, solve_total, stop_values
from .kernel import Sweep, kernel_for, sweep

__all__ = ["GameSolution", "GameDecision", "WorkUnit", "solve_game", "game_layers", "solve_layer", "assemble"]

FIXED = 6  # a level of a sweep costs about as much as this many columns of it (see `_chunks`)
# Units per score total at least, so that one unit's sweeps stay within the memory budget of a table job
# (4 GiB): the sweep holds every level of its columns over all dice states (kernel.py). In
# direct-to-video-sequel (303,836 dice states) a whole total's 26 columns passed 4 GiB beside the 1.6 GiB
# kernel; a third of them peaked at 2.5 GiB in all (`solve_game` in a fresh process).
MEMORY_SPLIT = {"direct-to-video-sequel": 3}

FORMAT = "zombie-odds/game/1"


class GameDecision(NamedTuple):
    """The best action and each action's probability of winning (the empty turn must roll: its
    ``p_win_stop`` is the value of ending the turn with 0, for comparison)."""

    action: str  # "roll", "stop" or "tie" (equal values)
    p_win_roll: float
    p_win_stop: float

    @classmethod
    def of(cls, roll: float, stop: float, forced: bool = False) -> GameDecision:
        """The better of rolling (worth `roll`) and stopping (`stop`); rolling when it is `forced` (a turn's first)."""
        return cls("roll" if forced or roll > stop else "stop" if roll < stop else "tie", roll, stop)


@dataclass(frozen=True)
class GameSolution:
    """Two players, both maximising their probability of winning (RULES.md section 1).

    ``seat1[a][b]`` = P(seat 1 wins) with seat 1 to move at ``a`` against ``b``; ``seat2[b][a]`` the
    same for seat 2 to move at ``b`` against ``a`` (scores below the goal); ``final[d]`` = P(seat 2
    wins) at the start of a turn in which it must beat a lead of ``d`` (final turn or tie-break);
    ``tiebreak`` = P(seat 1 wins) from the start of a tie-break round. ``final[d]`` is 0 for
    ``d > cap`` (the cap, see duel.py; its effect is at most `cap_error`).
    """

    mode: str
    recycle: str
    goal: int
    cap: int
    seat1: tuple[tuple[float, ...], ...]
    seat2: tuple[tuple[float, ...], ...]
    final: tuple[float, ...]
    tiebreak: float
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    # -- values ---------------------------------------------------------------------------------
    @property
    def p_first_player_wins(self) -> float:
        """P(seat 1 wins) from 0-0, seat 1 to move."""
        return self.seat1[0][0]

    @property
    def cap_error(self) -> float:
        """A bound on the effect of the cap on any value: ``F[cap] >= F[cap + 1]``."""
        return self.final[self.cap]

    @cached_property
    def values(self) -> Values:
        return Values(self.goal, np.array(self.seat1), np.array(self.seat2), np.array(self.final), self.tiebreak)

    def win_probability(self, seat: int, mover_score: int, other_score: int) -> float:
        """P(the player to move wins) at the start of its turn.

        Both scores below the goal: the normal game. Seat 2 with ``other_score >= goal`` and
        ``other_score >= mover_score``: it must beat ``other_score - mover_score`` (its final turn, or
        its turn of a tie-break round). Seat 1 with equal scores at or above the goal: the start of
        a tie-break round. Anything else is not the start of a turn (ValueError).
        """
        kind = phase(self.goal, seat, mover_score, other_score)
        if kind == "normal":
            return (self.seat1 if seat == 1 else self.seat2)[mover_score][other_score]
        if kind == "beat":
            return self.values.final(other_score - mover_score)
        return self.tiebreak

    def stop_value(self, seat: int, mover_score: int, other_score: int, turn_total: int) -> float:
        """P(the mover wins) if it ends its turn now with `turn_total` brains (a bust: 0 brains)."""
        return float(stop_values(self.values, seat, mover_score, other_score, turn_total + 1)[turn_total])

    def decision(self, seat: int, mover_score: int, other_score: int, dice_state_index: int,
                 turn_total: int) -> GameDecision:
        """The optimal action at a mid-turn position and the win probability of each action.

        `dice_state_index` indexes ``table_for(mode, recycle).states``; `turn_total` is the turn's
        score so far (brains noted plus brains in the pile). ``p_win_roll`` is the value of rolling
        now and playing on optimally.
        """
        kernel = kernel_for(self.mode, self.recycle)
        phase(self.goal, seat, mover_score, other_score)
        if not 0 <= dice_state_index < kernel.n:
            raise ValueError(f"no dice state {dice_state_index}: the table has {kernel.n}")
        i = int(kernel.where[dice_state_index])
        if turn_total < kernel.least[i] or (dice_state_index == kernel.table.start and turn_total):
            raise ValueError(f"a turn total of {turn_total} is impossible in dice state {dice_state_index}")
        out, _ = self._turn(seat, mover_score, other_score, turn_total)
        stop = self.stop_value(seat, mover_score, other_score, turn_total)
        roll = float(out.roll[turn_total, i, 0])
        return GameDecision.of(roll, stop, dice_state_index == kernel.table.start)

    def _turn(self, seat: int, mover: int, other: int, level: int) -> tuple[Sweep, int]:
        """A full sweep of one column, every state computed up to at least `level` (memoised)."""
        key = (seat, mover, other)
        hit = self._cache.get(key)
        if hit is None or hit[1] < level:
            kernel = kernel_for(self.mode, self.recycle)
            top = max(level, int(certain_tops(kernel, self.values, seat, mover, other).max()))
            stop = stop_values(self.values, seat, mover, other, top + 1 + kernel.max_delta)
            hit = (sweep(kernel, stop[:, None], np.array([top]), full=True), top)
            if len(self._cache) >= SIZES["game sweep"]:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    # -- plain data -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready plain data; `from_dict` gives back an equal solution (floats round-trip)."""
        return {
            "format": FORMAT,
            "mode": self.mode,
            "recycle": self.recycle,
            "goal": self.goal,
            "cap": self.cap,
            "seat1": [list(row) for row in self.seat1],
            "seat2": [list(row) for row in self.seat2],
            "final": list(self.final),
            "tiebreak": self.tiebreak,
            "p_first_player_wins": self.p_first_player_wins,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameSolution:
        if data.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} document")
        g = int(data["goal"])
        seat1 = tuple(tuple(float(x) for x in row) for row in data["seat1"])
        seat2 = tuple(tuple(float(x) for x in row) for row in data["seat2"])
        final = tuple(float(x) for x in data["final"])
        if len(seat1) != g or len(seat2) != g or any(len(r) != g for r in seat1 + seat2):
            raise ValueError("seat1 and seat2 must be goal x goal")
        if len(final) != int(data["cap"]) + 1:
            raise ValueError("final must have cap + 1 entries")
        return cls(str(data["mode"]), str(data["recycle"]), g, int(data["cap"]), seat1, seat2, final,
                   float(data["tiebreak"]))


# -- work units -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class WorkUnit:
    """One independent piece of the solve: layer 0 (tie-break and final turns) or some pairs of one
    score total (layer ``k`` is total ``2 (goal - 1) - (k - 1)``)."""

    mode: str
    recycle: str
    layer: int
    pairs: tuple[tuple[int, int], ...] = ()
    cap: int = CAP

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "recycle": self.recycle, "layer": self.layer,
                "pairs": [list(p) for p in self.pairs], "cap": self.cap}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkUnit:
        return cls(data["mode"], data["recycle"], int(data["layer"]), tuple(tuple(p) for p in data["pairs"]),
                   int(data["cap"]))


def game_layers(mode: str, recycle: str = "before-draw", split: int = 1, cap: int = CAP) -> list[list[WorkUnit]]:
    """The solve as layers of independent units: every unit of a layer needs the results of all
    earlier layers only. `split` cuts each score total into at most that many units, and a mode in
    `MEMORY_SPLIT` (a sweep's memory grows with the columns it carries) into at least that many. (Not a
    multiple of the split asked: the sequel's table on two workers took 643 s wall in three units per
    total, one worker idling, and 665 s in four, each unit paying its own passes over 12M rolls.)"""
    split = max(split, MEMORY_SPLIT.get(mode, 1))
    layers = [[WorkUnit(mode, recycle, 0, (), cap)]]
    for k, total in enumerate(range(2 * GOAL - 2, -1, -1), start=1):
        layers.append([WorkUnit(mode, recycle, k, chunk, cap) for chunk in _chunks(pairs_of(total), split)])
    return layers


def _chunks(pairs: list[tuple[int, int]], split: int) -> list[tuple[tuple[int, int], ...]]:
    """At most `split` runs of consecutive `pairs` (by seat 1's score) with about equal work each.

    The work of a unit is estimated from the sweep's cost (kernel.py): every level up to the unit's
    highest top costs about as much as ``FIXED`` columns (a pass over the rolls), and each column
    costs its own levels. Seat 1 at ``(a, b)`` may roll up to about ``GOAL - a + 11`` brains (past the
    goal while seat 2's final turn could still win), seat 2 up to ``GOAL - 1 - b``. Runs rather than
    every other pair: seat 1's longest turns then fall in one unit, and the others sweep fewer levels.
    """
    tops = [(GOAL - a + 11, GOAL - 1 - b) for a, b in pairs]

    def work(i: int, j: int) -> int:
        return FIXED * (max(t for t, _ in tops[i:j]) + 1) + sum(t + u + 2 for t, u in tops[i:j])

    n = len(pairs)
    parts = min(split, n)
    best = {(0, 0): (0, ())}  # (pairs used, runs) -> (largest work, cut points)
    for runs in range(1, parts + 1):
        for j in range(runs, n + 1):
            best[(j, runs)] = min((max(best[(i, runs - 1)][0], work(i, j)), (*best[(i, runs - 1)][1], j))
                                  for i in range(runs - 1, j) if (i, runs - 1) in best)
    cuts = (0, *best[(n, parts)][1])
    return [tuple(pairs[i:j]) for i, j in zip(cuts, cuts[1:])]


def _known(known: dict[str, Any] | None, cap: int) -> Values:
    w1, w2 = np.full((GOAL, GOAL), np.nan), np.full((GOAL, GOAL), np.nan)
    known = known or {}
    for a, b, x, y in known.get("pairs", []):
        w1[a, b], w2[b, a] = x, y
    return Values(GOAL, w1, w2, np.array(known.get("final", [np.nan] * (cap + 1))), known.get("tiebreak", np.nan))


def solve_layer(unit: WorkUnit, known: dict[str, Any] | None = None) -> dict[str, Any]:
    """Solve one unit given the merged results of every earlier layer (`merge`); plain data out."""
    kernel = kernel_for(unit.mode, unit.recycle)
    if unit.layer == 0:
        w, f, _ = solve_tiebreak(kernel, unit.cap)
        return {"tiebreak": w, "final": f.tolist()}
    v = _known(known, unit.cap)
    if np.isnan(v.w):
        raise ValueError("layer 0 (tie-break and final turns) must be solved first")
    solved = solve_total(kernel, v, list(unit.pairs))
    return {"pairs": [[a, b, x, y] for (a, b), (x, y, _) in solved.items()]}


def merge(known: dict[str, Any] | None, result: dict[str, Any]) -> dict[str, Any]:
    """Known values plus one unit's result (a new dict)."""
    out = dict(known or {})
    if "tiebreak" in result:
        out["tiebreak"], out["final"] = result["tiebreak"], result["final"]
    out["pairs"] = list(out.get("pairs", [])) + list(result.get("pairs", []))
    return out


def assemble(mode: str, recycle: str, results: list[dict[str, Any]], cap: int = CAP) -> GameSolution:
    """The solution from the results of every unit (in any order)."""
    known: dict[str, Any] = {}
    for result in results:
        known = merge(known, result)
    v = _known(known, cap)
    if np.isnan(v.w1).any() or np.isnan(v.w2).any() or np.isnan(v.w):
        raise ValueError("results are missing some units")
    return GameSolution(mode, recycle, GOAL, cap, tuple(map(tuple, v.w1.tolist())), tuple(map(tuple, v.w2.tolist())),
                        tuple(v.f.tolist()), float(v.w))


@kept("game")
def solve_game(mode: str = "original", recycle: str = "before-draw", cap: int = CAP) -> GameSolution:
    """Solve the two-player game in this process: every layer in order, one unit per layer."""
    table_for(mode, recycle)  # the table is built (and cached) outside the solve proper
    known: dict[str, Any] = {}
    results = []
    for layer in game_layers(mode, recycle, 1, cap):
        for unit in layer:
            result = solve_layer(unit, known)
            known = merge(known, result)
            results.append(result)
    return assemble(mode, recycle, results, cap)
