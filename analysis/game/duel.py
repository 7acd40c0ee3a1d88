"""Two players, each maximising the probability of winning: the values at every start of a turn.

Notation (RULES.md section 1, "End of the game"; goal ``G = 13``). Seat 1 moves first in a round.

* ``W1[a, b]``: P(seat 1 wins) with seat 1 to move, seat 1 at ``a`` and seat 2 at ``b`` (``a, b < G``).
* ``W2[b, a]``: P(seat 2 wins) with seat 2 to move, seat 2 at ``b`` and seat 1 at ``a`` (``a, b < G``).
* ``F[d]``: P(seat 2 wins) at the start of a turn in which seat 2 must beat a lead of ``d >= 0``: its
  final turn after seat 1 reached ``G`` (``d = a - b >= 1``), or its turn of a tie-break round after
  seat 1 scored ``d``. ``T > d`` wins, ``T = d`` ties (another tie-break round), less loses.
* ``W``: P(seat 1 wins) from the start of a tie-break round (only differences matter).

Each is the value of one turn whose stop values ``S(T)`` (the mover's win probability after ending
the turn with ``T`` brains; a bust is worth ``S(0)``: the turn ends and the score does not change)::

    seat 1 at (a, b):  S(T) = 1 - W2[b, a + T]        if a + T < G
                            = 1 - F[a + T - b]        otherwise (seat 2 gets its final turn)
    seat 2 at (b, a):  S(T) = 1 - W1[a, b + T]        if b + T < G
                            = 1                       otherwise (seat 2 ends the game at once)
    seat 2 beating d:  S(T) = [T > d] + [T = d] (1 - W)
    tie-break, seat 1: S(T) = 1 - F[T]

Order of solution: ``W`` and ``F`` first (a fixed point in the scalar ``W``: `solve_tiebreak`), then
score pairs by decreasing total ``a + b`` (`solve_total`): every turn that scores leads to a larger
total, so the only cycle is a turn that ends with 0 (a bust, or stopping at 0), which hands the move
to the other seat at the same scores. For one pair, ``A = W1[a, b]`` and ``B = W2[b, a]`` satisfy
``A = f(1 - B)`` and ``B = g(1 - A)``, where ``f(c)`` is seat 1's turn value when ending with 0 is
worth ``c``: convex, piecewise linear and increasing, with slope P(the turn ends with 0) under the
optimal policy at ``c``. Newton's method on the pair (policy iteration) converges in 3 or 4 sweeps
and stops when a sweep moves the pair by less than ``RESIDUAL_TOL = 1e-12`` (a tolerance, not a cap:
the map is a contraction, so the error is of that order; a brute-force Jacobi value iteration over
all 338 columns with policy.sweep agreed with this solver to 1e-14). All pairs of one total are
independent columns of the same sweeps. Either seat may instead play a fixed policy (a `Player`,
see rules.py): its decisions are then given, not maximised.

Caps (the only approximation): ``F[d] = 0`` for ``d > cap`` (``CAP = 48``). ``F[d] <= R(d)``, the best
probability of scoring at least ``d`` in one turn, which falls about 0.58x per brain; every value is
an expectation of terminal payoffs, so the cap moves any value by at most ``F[cap + 1] <= F[cap]``
(`GameSolution.cap_error`, about 4e-11 in the base game; a test re-solves with a larger cap). Nothing
else is capped: seat 2 stops for sure once ``b + T >= G`` (it has won), and seat 1, once ``a + T >= G``
with a lead ``d``, stops for sure in every state of a block whose bust probability is at least ``q``
as soon as ``F[d] <= q F[G - b]``: rolling is worth at most ``1 - q (1 - c)``, stopping ``1 - F[d]``,
and ``1 - c = W2[b, a] >= F[G - b]`` (seat 2 can win by reaching ``G`` in its next turn). Those
positions are not computed; their value is exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .kernel import Kernel, fixed_policy, sweep

__all__ = ["GOAL", "CAP", "OPTIMAL", "Player", "Values", "phase", "stop_values", "certain_tops", "solve_tiebreak",
           "solve_total", "pairs_of"]

GOAL = 13
CAP = 48
RESIDUAL_TOL = 1e-12  # a pair is solved once a sweep moves its values by less than this
SLOPES_BELOW = 1e-7  # below this residual a step reuses the last slopes (a chord step): no slope columns
MAX_NEWTON = 50


@dataclass(frozen=True, eq=False)
class Values:
    """The numbers a two-player solution consists of (NaN where not solved yet)."""

    goal: int
    w1: np.ndarray  # (goal, goal): W1[a, b]
    w2: np.ndarray  # (goal, goal): W2[b, a]
    f: np.ndarray  # F[0..cap]
    w: float

    @property
    def cap(self) -> int:
        return len(self.f) - 1

    def final(self, d: int) -> float:
        return float(self.f[d]) if d <= self.cap else 0.0


def pairs_of(total: int, goal: int = GOAL) -> list[tuple[int, int]]:
    """Score pairs ``(a, b)``, both below the goal, with ``a + b = total``."""
    return [(a, total - a) for a in range(max(0, total - goal + 1), min(goal - 1, total) + 1)]


def phase(goal: int, seat: int, mover: int, other: int) -> str:
    """Which turn this is: ``normal``, ``beat`` (seat 2 must beat ``other - mover``: its final turn or
    its tie-break turn) or ``tiebreak`` (seat 1 opening a tie-break round); ValueError otherwise."""
    if seat not in (1, 2) or mover < 0 or other < 0:
        raise ValueError("seat must be 1 or 2 and scores non-negative")
    if mover < goal and other < goal:
        return "normal"
    if seat == 2 and other >= goal and other >= mover:
        return "beat"
    if seat == 1 and mover == other:
        return "tiebreak"
    raise ValueError(f"seat {seat} at {mover} against {other} is not a start of a turn: the game is over")


def stop_values(v: Values, seat: int, mover: int, other: int, levels: int) -> np.ndarray:
    """``S(T)`` for ``T < levels`` (see the module docstring); entry 0 is also the value of a bust."""
    kind, g, s = phase(v.goal, seat, mover, other), v.goal, np.empty(levels)
    for t in range(levels):
        if kind == "beat":
            d = other - mover
            s[t] = float(t > d) + (t == d) * (1 - v.w)
        elif kind == "tiebreak":
            s[t] = 1 - v.final(t)
        elif seat == 1:
            s[t] = 1 - (v.w2[other, mover + t] if mover + t < g else v.final(mover + t - other))
        else:
            s[t] = 1 - v.w1[other, mover + t] if mover + t < g else 1.0
    return s


def certain_tops(kernel: Kernel, v: Values, seat: int, mover: int, other: int) -> np.ndarray:
    """Per block of dice states, the last turn total at which the mover may roll; above it, it stops.

    Seat 2 stops once it has won (``T > d`` when beating ``d``, ``b + T >= G`` otherwise). Seat 1 in a
    tie-break stops once ``F[T] = 0`` (the cap). Seat 1 at ``(a, b)``: see the module docstring.
    """
    kind, g, cap, blocks = phase(v.goal, seat, mover, other), v.goal, v.cap, len(kernel.blocks)
    if kind == "beat":
        return np.full(blocks, other - mover)
    if kind == "tiebreak":
        return np.full(blocks, cap)
    if seat == 2:
        return np.full(blocks, g - 1 - mover)
    a, b = mover, other
    bound = v.final(g - b)
    tops = []
    for block in kernel.blocks:
        top = g - 1 - a
        for t in range(g - a, b - a + cap + 1):
            if v.f[a + t - b] > block.min_bust * bound:
                top = t
        tops.append(top)
    return np.array(tops)


class Player(Protocol):
    """A seat that plays a fixed policy instead of maximising (rules.py). ``fix`` returns, for the
    turn of `seat` at ``(mover, other)``, the levels above which every state stops (per block) and
    the decisions below them, ``rolls[T, i]`` in sweep order (True: roll)."""

    def fix(self, kernel: Kernel, seat: int, mover: int, other: int) -> tuple[np.ndarray, np.ndarray]: ...


Players = tuple["Player | None", "Player | None"]
OPTIMAL: Players = (None, None)


def _columns(kernel: Kernel, v: Values, specs: list[tuple[int, int, int]], players: Players,
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Stop values ``(levels, k)``, tops ``(blocks, k)`` and the fixed decisions ``(levels, n, k)`` (1
    roll, 0 stop, -1 optimise; None if every column optimises) of turns ``(seat, mover, other)``."""
    tops, fixed = [], []
    for seat, mover, other in specs:
        player = players[seat - 1]
        if player is None:
            tops.append(certain_tops(kernel, v, seat, mover, other))
            fixed.append(None)
        else:
            t, rolls = player.fix(kernel, seat, mover, other)
            tops.append(t)
            fixed.append(rolls)
    tops = np.array(tops).T
    levels = int(tops.max()) + 1 + kernel.max_delta
    stop = np.stack([stop_values(v, *spec, levels) for spec in specs], axis=1)
    return stop, tops, fixed_policy(kernel, fixed, int(tops.max()) + 1)


def solve_tiebreak(kernel: Kernel, cap: int = CAP, goal: int = GOAL, players: Players = OPTIMAL,
                   ) -> tuple[float, np.ndarray, int]:
    """``(W, F[0..cap], sweeps)``.

    ``F[1..cap]`` come from one column by translation: a turn that must beat ``d >= 1`` from turn
    score ``T`` is the turn that must beat ``cap`` from ``T + cap - d`` (a bust loses in both), so
    ``F[d] = value(empty turn, level cap - d)``. ``F[0]`` has its own column: there a bust ties. (A
    fixed policy for seat 2 need not be translation invariant: then one column per ``d``.)
    ``W = Phi(W)``, seat 1's tie-break turn with ``S(T) = 1 - F_W[T]``; ``Phi`` is increasing with
    slope P(tie) < 1, and Newton's method finds the fixed point.
    """
    w, sweeps = 0.5, 0
    beat = [(2, goal, goal + d) for d in ([cap, 0] if players[1] is None else range(cap + 1))]

    def finals(w: float, slopes: bool) -> tuple[np.ndarray, np.ndarray | None]:
        v = Values(goal, np.empty((0, 0)), np.empty((0, 0)), np.zeros(cap + 1), w)
        stop, tops, policy = _columns(kernel, v, beat, players)
        dstop = None
        if slopes:
            t = np.arange(len(stop))[:, None]
            dstop = -(t == np.array([other - mover for _, mover, other in beat])).astype(float)
        out = sweep(kernel, stop, tops, dstop, policy)
        if players[1] is None:  # by translation: level cap - d of the first column
            f, df = out.start[cap::-1, 0].copy(), None if dstop is None else out.dstart[cap::-1, 0].copy()
            f[0] = out.start[0, 1]
            if df is not None:
                df[0] = out.dstart[0, 1]
            return f, df
        return out.start[0].copy(), None if dstop is None else out.dstart[0].copy()

    while True:
        sweeps += 1
        f, df = finals(w, True)
        v = Values(goal, np.empty((0, 0)), np.empty((0, 0)), f, w)
        stop, tops, policy = _columns(kernel, v, [(1, goal, goal)], players)
        dstop = np.zeros_like(stop)
        reach = min(len(stop), cap + 1)
        dstop[:reach, 0] = -df[:reach]
        out = sweep(kernel, stop, tops, dstop, policy)
        phi, slope = out.start[0, 0], out.dstart[0, 0]
        step = (phi - w) / (1 - slope)
        w += step
        if abs(step) < RESIDUAL_TOL or sweeps >= MAX_NEWTON:
            break
    return w, finals(w, False)[0], sweeps


class _Pair:
    """Newton's method for ``A = f(1 - B)``, ``B = g(1 - A)``, with its own state so that a pair's
    numbers do not depend on the batch it is solved in.

    A sweep at ``c = (1 - B, 1 - A)`` gives ``f, g`` and (when asked) their slopes; the linear model
    ``A' = f + f' (1 - B' - c1)``, ``B' = g + g' (1 - A' - c2)`` is solved for the next ``(A, B)``. The
    pair is solved when the residual ``max(|f - A|, |g - B|)`` is below ``RESIDUAL_TOL``; the map is a
    contraction with factor ``f' g' < 1``, so the error is then about residual / (1 - f' g') at most,
    and in practice far less (the accepted step is a Newton step from there).
    """

    def __init__(self, a: float, b: float):
        self.a, self.b = a, b
        self.slopes: tuple[float, float] | None = None
        self.residual = 1.0
        self.sweeps = 0

    @property
    def wants_slopes(self) -> bool:
        return self.slopes is None or self.residual > SLOPES_BELOW

    def step(self, f: float, g: float, slopes: tuple[float, float] | None) -> bool:
        """One step from a sweep's values; False once solved."""
        self.sweeps += 1
        if slopes is not None:
            self.slopes = slopes
        sa, sb = self.slopes
        c1, c2 = 1 - self.b, 1 - self.a
        self.residual = max(abs(f - self.a), abs(g - self.b))
        alpha, gamma = f + sa * (1 - c1), g + sb * (1 - c2)
        self.a = (alpha - sa * gamma) / (1 - sa * sb)
        self.b = gamma - sb * self.a
        return self.residual >= RESIDUAL_TOL and self.sweeps < MAX_NEWTON


def _guess(v: Values, a: int, b: int) -> tuple[float, float]:
    """Linear extrapolation from the two nearest pairs of larger totals (or 1/2)."""
    g = v.goal

    def line(values: np.ndarray, first: tuple[int, int], second: tuple[int, int]) -> float:
        if max(second) < g:
            return float(np.clip(2 * values[first] - values[second], 0, 1))
        return float(values[first]) if max(first) < g else 0.5

    a0 = line(v.w1, (a, b + 1), (a, b + 2)) if b + 1 < g else line(v.w1, (a + 1, b), (a + 2, b))
    b0 = line(v.w2, (b, a + 1), (b, a + 2)) if a + 1 < g else line(v.w2, (b + 1, a), (b + 2, a))
    return a0, b0


def solve_total(kernel: Kernel, v: Values, pairs: list[tuple[int, int]], players: Players = OPTIMAL,
                ) -> dict[tuple[int, int], tuple[float, float, int]]:
    """``{(a, b): (W1[a, b], W2[b, a], sweeps)}`` for pairs of one total (any subset of it).

    Column ``2p`` is seat 1 at pair ``p``, column ``2p + 1`` seat 2; entry 0 of their stop values is
    the unknown (``1 - B``, ``1 - A``), set at every step.
    """
    specs = [spec for a, b in pairs for spec in ((1, a, b), (2, b, a))]
    stop, tops, policy = _columns(kernel, v, specs, players)
    dstop = np.zeros_like(stop)
    dstop[0] = 1
    state = [_Pair(*_guess(v, a, b)) for a, b in pairs]
    todo = list(range(len(pairs)))
    while todo:
        cols = np.array([[2 * p, 2 * p + 1] for p in todo]).ravel()
        s = stop[:, cols].copy()
        for q, p in enumerate(todo):
            s[0, 2 * q], s[0, 2 * q + 1] = 1 - state[p].b, 1 - state[p].a
        slopes = any(state[p].wants_slopes for p in todo)
        out = sweep(kernel, s, tops[:, cols], dstop[:, cols] if slopes else None,
                    None if policy is None else policy[..., cols])
        still = []
        for q, p in enumerate(todo):
            fresh = (out.dstart[0, 2 * q], out.dstart[0, 2 * q + 1]) if state[p].wants_slopes else None
            if state[p].step(out.start[0, 2 * q], out.start[0, 2 * q + 1], fresh):
                still.append(p)
        todo = still
    return {pair: (st.a, st.b, st.sweeps) for pair, st in zip(pairs, state)}
