"""Any number of players, each maximising its own probability of winning: exact values at every start of a turn.

With more than two players the game is no longer zero-sum, so a start of a turn is worth a vector, ``V[j]`` =
P(seat ``j`` wins), and the mover's policy (the best for its own entry) also decides the others'. Three kinds of
start of a turn, each a `Spot` (RULES.md section 1: the round is completed once someone reaches the goal ``G``;
the tied leaders alone play tie-break rounds, in seat order, until one is ahead):

* `Normal`: nobody has reached ``G``; every seat's score and the mover.
* `Final`: someone reached ``G`` this round; the seats still to play (the mover and those after it) and how far
  each is behind the leaders' total (its *lead to beat*, at least 1), and who the leaders are.
* `Tie`: a tie-break round among ``seats``; the ``i``-th of them moves; the round's best turn total so far and who
  made it (only turn totals count: the tied leaders started the round level).

Ending the turn with ``T`` brains (a bust is ``T = 0``) leads to one spot or to a winner (`Game.after`), so the
mover's turn is one column of kernel.py's sweep: ``stop[T] = V(after(spot, T))[mover]``. Every other seat's entry
is the same sweep's slope column with ``dstop[T] = V(after(spot, T))[j]``: the slope is carried under the mover's
decisions, so it is the expectation of seat ``j``'s value over the turn's end under the mover's policy.

Order of solution: tie-break rounds of 2, then 3, ... seats (a round that ends with its seats still all level starts
it again: ``W_S = Phi(W_S)``, iterated, a contraction with factor P(all level again); solved once for every set of
as many seats that play it alike, its values then renamed); then the final round, last mover first (every later
mover's spots are solved); then the normal game by decreasing total score. In the normal game a turn ending with 0
hands the move to the next seat at the same scores, the one cycle: for the ``n`` movers at one score tuple, under
fixed policies, ``x_m = A_m + p_m x_{m+1}`` (``x_m`` the vector at mover ``m``, ``p_m`` = P(the turn ends with 0),
one more slope column with ``dstop = [T = 0]``), solved exactly around the cycle; the policies are then improved
from the new values (policy iteration) until the values move by less than ``RESIDUAL_TOL``.

Mixed play (four players and more): the movers of a tuple play a game among themselves, and it may have no
equilibrium in pure policies. Mover ``m``'s best policy depends only on ``c_m = x_{m+1}[m]``, its value of a turn
that ends with 0, and movers' best answers can chase each other, as in matching pennies: four players of the base
game at 5, 6, 9, 3 brains (movers 1 and 2 each switch between two policies, and policy iteration goes round four
profiles), five players to 4 brains at 0, 1, 1, 3, 1 (movers 1, 2 and 3), four players of draw-then-recycle at 8, 0,
5, 0 (mover 3 among three policies). Once the policies go round, each mover plays one of the policies it met or mixes
two of them, choosing one at the start of its turn (`_mixed`): under a mixture a turn's outcome is the mixture of the
two policies' (``A_m`` and ``p_m`` are linear in its weight), and mover ``m`` is indifferent between policies
``(A, p)`` and ``(A', p')`` where ``A[m] + p c_m = A'[m] + p' c_m``; one equation per mixing mover, solved for the
weights. (Each policy's value to its mover is a line in ``c_m``: three meet at one ``c_m`` only by coincidence, so two
suffice.) Which movers mix, and which policies, is found by support enumeration, as for Nash equilibria of a
bimatrix game: fewest mixing first, the first whose weights lie in [0, 1] and leave no mover a better policy. The
result is checked as any step is (every mover's best answer over all its policies gives back its own value). A
mixing mover's decision served is one of its two policies, equal for it; the others' values are the mixture's.

Tops (where the sweep may stop computing): at turn total ``T``, rolling from a state whose next roll busts with
probability at least ``q`` is worth at most ``q stop[0] + (1 - q) max(stop)``, so every state of a block whose
least bust probability is ``q`` stops where ``stop[T]`` is at least that (`roll_tops`). A mover whose own chance no
decision can change (``stop`` constant) therefore stops as soon as it may: with three or more players its choice
still moves the others' chances, and that is the convention.

The cap (the only approximation): a seat that must beat a lead of more than ``cap`` brains, or a tie-break
turn total of more than ``cap``, in one turn, is taken not to (its chance is below the probability of scoring more
than ``cap`` brains in one turn, about 4e-11 in the base game for ``cap = 48``: duel.py); it still moves the
leaders' and others' chances by no more than that. A test solves again with a larger cap.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import scipy.optimize

from ..kept import SIZES, kept
from .duel import CAP, GOAL, solve_tiebreak
from .kernel import Kernel, Sweep, fixed_policy, kernel_for, sweep
from .rules import Rule, parse_rule
from .solution import GameDecision

__all__ = ["Normal", "Final", "Tie", "Spot", "Game", "SeatsSolution", "cap_error", "spot_for", "every_spot",
           "SeatsPolicy", "SeatsUnit", "seats_layers", "solve_unit", "solve_seats", "RESIDUAL_TOL", "roll_tops",
           "sweep_bytes"]

RESIDUAL_TOL = 1e-13  # a cycle (or a tie-break round) is solved once an iteration moves its values by less than this
CHECK_BELOW = 1e-7  # a step that moved a cycle's values by less than this is checked by a sweep of the values alone
MAX_ITERATIONS = 200
PASSES = 2  # a tie-break round's passes laid out as layers of units (`seats_layers`): it nearly always needs two
FORMAT = "zombie-odds/seats/1"
SWEEP_BYTES = 1 << 30  # the working memory of one sweep (kernel.py keeps every level of its columns) ...
SWEEP_NUMBERS = 24  # ... unless it carries fewer numbers a state than this (`_chunks`)


class Normal(NamedTuple):
    scores: tuple[int, ...]  # every seat's score, all below the goal
    mover: int


class Final(NamedTuple):
    mover: int
    leads: tuple[int, ...]  # seats mover, mover + 1, ...: the lead each must beat (1..cap), in seat order
    leaders: tuple[int, ...]  # the seats at the leaders' total


class Tie(NamedTuple):
    seats: tuple[int, ...]  # the tied leaders, in seat order
    i: int  # seats[i] moves
    best: int  # the round's best turn total so far (0 when i = 0)
    leaders: tuple[int, ...]  # who made it (() when i = 0)


Spot = Normal | Final | Tie


class Back(NamedTuple):
    """The key of a tie-break spot's chance, under its pass's policies, that the round ends with its seats all level
    again (and starts over): what a pass of the round's iteration hands on to the next mover and to the round's end
    (`_Solver.tiebreak`), kept with the values while the round is solved, and in no table."""

    spot: Tie


class Round(NamedTuple):
    """A tie-break round's spots: its start; the others that can lead back to it (`loops`), and those that cannot
    (`settled`), each by mover, last mover first (the start in neither)."""

    start: Tie
    loops: tuple[tuple[Tie, ...], ...]
    settled: tuple[tuple[Tie, ...], ...]

    @property
    def spots(self) -> list[Tie]:
        return [self.start, *(s for spots in self.loops + self.settled for s in spots)]


@dataclass(frozen=True)
class Game:
    """The rules of the end of the game for `n` players: which spot (or winner) ending a turn leads to."""

    n: int
    goal: int = GOAL
    cap: int = CAP

    def mover(self, spot: Spot) -> int:
        return spot.seats[spot.i] if isinstance(spot, Tie) else spot.mover

    @property
    def levels(self) -> int:
        """Turn totals past which every spot's outcome is the same (every later seat out of reach)."""
        return self.goal + 2 * self.cap + 2

    def start(self) -> Normal:
        return Normal((0,) * self.n, 0)

    def after(self, spot: Spot, t: int) -> Spot | int:
        """Where ending the turn at `spot` with `t` brains leads: a spot, or the winning seat."""
        if isinstance(spot, Normal):
            m, scores = spot.mover, spot.scores
            if scores[m] + t < self.goal:
                return Normal(scores[:m] + (scores[m] + t,) + scores[m + 1:], (m + 1) % self.n)
            total = scores[m] + t
            return self._final(m + 1, tuple(total - s for s in scores[m + 1:]), (m,))
        if isinstance(spot, Final):
            i, (lead, *rest), leaders = spot.mover, spot.leads, spot.leaders
            if t > lead:
                return self._final(i + 1, tuple(d + t - lead for d in rest), (i,))
            return self._final(i + 1, tuple(rest), leaders + (i,) if t == lead else leaders)
        seats, i = spot.seats, spot.i
        me = seats[i]
        if i == 0 or t > spot.best:
            best, leaders = t, (me,)
        else:
            best, leaders = spot.best, spot.leaders + (me,) if t == spot.best else spot.leaders
        if i + 1 < len(seats) and best <= self.cap:
            return Tie(seats, i + 1, best, leaders)
        return self._round_end(leaders)

    def _final(self, mover: int, leads: tuple[int, ...], leaders: tuple[int, ...]) -> Spot | int:
        """The final round from seat `mover` on; a seat more than `cap` behind is taken not to catch up."""
        while leads and leads[0] > self.cap:
            mover, leads = mover + 1, leads[1:]
        return Final(mover, leads, leaders) if leads else self._round_end(leaders)

    def _round_end(self, leaders: tuple[int, ...]) -> Tie | int:
        return leaders[0] if len(leaders) == 1 else Tie(leaders, 0, 0, ())

    def outcomes(self, spot: Spot, levels: int) -> Iterator[Spot | int]:
        return (self.after(spot, t) for t in range(levels))


@dataclass(frozen=True)
class SeatsSolution:
    """The values of every start of a turn: ``values[spot][j]`` = P(seat ``j`` wins); `rolls` the decisions."""

    mode: str
    recycle: str
    game: Game
    values: dict[Spot, np.ndarray] = field(repr=False)
    rules: tuple[tuple[int, str], ...] = ()  # (seat, rule): seats that follow a fixed rule
    _decisions: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _turns: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # `decision`'s sweeps

    @functools.cached_property
    def cap_error(self) -> float:
        """A bound on the cap's effect on any value (`cap_error`)."""
        return cap_error(self.mode, self.recycle, self.game.n, self.game.goal, self.game.cap)

    @property
    def p_seat_wins(self) -> tuple[float, ...]:
        """P(each seat wins) from the start of the game (every score 0, seat 0 to move)."""
        return tuple(float(v) for v in self.values[self.game.start()])

    @property
    def p_first_player_wins(self) -> float:
        return self.p_seat_wins[0]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready plain data (every start of a turn as `spot_dict`, with ``p``: P(each seat wins), in `_order`);
        `from_dict` gives back an equal solution (floats round-trip)."""
        return {"format": FORMAT, "mode": self.mode, "recycle": self.recycle, "players": self.game.n,
                "goal": self.game.goal, "cap": self.game.cap, "rules": [list(r) for r in self.rules],
                "cap_error": self.cap_error, "p_seat_wins": list(self.p_seat_wins),
                "p_first_player_wins": self.p_first_player_wins,
                **encode({spot: self.values[spot] for spot in sorted(self.values, key=_order)})}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SeatsSolution:
        if data.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} solution")
        game = Game(int(data["players"]), int(data["goal"]), int(data["cap"]))
        values = decode(data)
        if game.start() not in values or any(len(v) != game.n for v in values.values()):
            raise ValueError(f"every start of a turn needs {game.n} values, the game's start among them")
        solution = cls(str(data["mode"]), str(data["recycle"]), game, values,
                       tuple((int(seat), str(rule)) for seat, rule in data["rules"]))
        if "cap_error" in data:  # stored: no sweep to compute it again (where `cached_property` keeps its value)
            solution.__dict__["cap_error"] = float(data["cap_error"])
        return solution

    def rolls(self, spot: Spot, state: int, total: int) -> bool:
        """Whether the mover's policy (its rule, for a seat that follows one) rolls at dice state `state` (table
        index) with `total` brains this turn. The optimal decisions of the spots of one batch (a score total, a final
        round's mover, a tie-break round's mover) are computed together, with one sweep, and kept (a bit per dice
        state and turn total)."""
        name = dict(self.rules).get(self.game.mover(spot)) if self.rules else None
        if name is not None:
            rule, shotguns = parse_rule(name), kernel_for(self.mode, self.recycle).table.shotguns[state]
            return bool(total < rule.target and shotguns < rule.shotguns)
        if spot not in self._decisions:
            self._decide(spot)
        tops, bits = self._decisions[spot]
        where, block = self._places
        i = where[state]
        return bool(total <= tops[block[state]] and bits[total, i >> 3] >> (7 - (i & 7)) & 1)

    @functools.cached_property
    def _places(self) -> tuple[list[int], list[int]]:
        """Per dice state (table index): its place in the sweep's order, and its block (`rolls` asks every roll)."""
        kernel = kernel_for(self.mode, self.recycle)
        block = np.searchsorted([b.hi for b in kernel.blocks], kernel.where, side="right")
        return kernel.where.tolist(), block.tolist()

    def decision(self, spot: Spot, state: int, total: int) -> GameDecision:
        """The mover's best action at dice state `state` (table index) with `total` brains this turn, and the mover's
        P(win) of rolling and of stopping (the first roll of a turn is compulsory). One sweep of the spot's column,
        every dice state up to at least `total`, kept for the next questions about the spot."""
        kernel = kernel_for(self.mode, self.recycle)
        out, stop = self._turn(spot, total)
        roll, here = float(out.roll[total, int(kernel.where[state]), 0]), float(stop[total])
        return GameDecision.of(roll, here, state == kernel.table.start)

    def _turn(self, spot: Spot, level: int) -> tuple[Sweep, np.ndarray]:
        hit = self._turns.get(spot)
        if hit is None or hit[0].roll.shape[0] <= level:
            solver = _Solver(kernel_for(self.mode, self.recycle), self.game, self.rules)
            solver.values = self.values
            stop = solver.table(spot)[:, self.game.mover(spot)]
            tops = np.maximum(roll_tops(solver.kernel, stop[:, None]), level)
            needed = int(tops.max()) + 1 + solver.kernel.max_delta  # past `levels` every outcome is the last one
            stop = np.concatenate([stop, np.full(max(0, needed - len(stop)), stop[-1])])
            hit = (sweep(solver.kernel, stop[:, None], tops, full=True), stop)
            if len(self._turns) >= SIZES["seats sweep"]:
                self._turns.clear()
            self._turns[spot] = hit
        return hit

    def _decide(self, spot: Spot) -> None:
        key = _batch(spot)
        spots = [s for s in self.values if _batch(s) == key]
        solver = _Solver(kernel_for(self.mode, self.recycle), self.game, self.rules)
        solver.values = self.values
        tables = [solver.table(s) for s in spots]
        stop = np.stack([t[:, self.game.mover(s)] for s, t in zip(spots, tables)], axis=1)
        tops = roll_tops(solver.kernel, stop)
        for part in _chunks(solver.kernel, tops):
            out = sweep(solver.kernel, stop[:, part], tops[:, part], full="decisions")
            for c, k in enumerate(part.tolist()):
                top = int(tops[:, k].max())
                self._decisions[spots[k]] = (tops[:, k], np.packbits(out.rolls[: top + 1, :, c], axis=1))


def cap_error(mode: str, recycle: str, n: int, goal: int = GOAL, cap: int = CAP) -> float:
    """A bound on the cap's effect on any value of `n` players' table: ``F[cap]`` (duel.py: the chance of beating a
    lead of `cap` in one turn) once for each seat but one (module docstring)."""
    _, final, _ = solve_tiebreak(kernel_for(mode, recycle), cap, goal)
    return (n - 1) * float(final[cap])


def spot_for(game: Game, scores: tuple[int, ...], mover: int) -> Spot:
    """The start of a turn of seat `mover` when the seats' scores are `scores` (seat order, from 0); ValueError saying
    why if no game reaches it.

    Nobody at the goal: the normal game. Someone at the goal and the mover below it: the final round (the seats before
    the mover have played since someone reached the goal; a seat still to play is below it). The mover at the goal or
    more: a tie-break round, among the seats at the mover's score or more (those still to play, and those who scored
    nothing this round, are at the score the round started from; those who scored are above it)."""
    n, goal = game.n, game.goal
    if len(scores) != n or not 0 <= mover < n or min(scores) < 0:
        raise ValueError(f"{n} scores of 0 or more and a mover among the {n} seats")
    top = max(scores)
    if top < goal:
        return Normal(tuple(scores), mover)
    mine = scores[mover]
    if mine < goal:
        if any(s >= goal for s in scores[mover:]):
            raise ValueError("a seat still to play this round has reached the goal: the round would have ended")
        spot: Spot | int = game._final(mover, tuple(top - s for s in scores[mover:]),
                                       tuple(q for q in range(n) if scores[q] == top))
        if not isinstance(spot, Final) or spot.mover != mover:
            raise ValueError(f"the mover is more than {game.cap} brains behind: the table counts it out (its chance of "
                             f"winning is below the cap's bound)")
        return spot
    seats = tuple(q for q in range(n) if scores[q] >= mine)
    if len(seats) < 2 or any(scores[q] > mine for q in seats if q > mover):
        raise ValueError("no tie-break round: a tie-break is among two or more seats level at the goal or more, those "
                         "after the mover not played yet")
    i = seats.index(mover)
    totals = [scores[q] - mine for q in seats[:i]]
    best = max(totals, default=0)
    spot = Tie(seats, i, best, tuple(q for q, t in zip(seats, totals) if t == best) if i else ())
    if best > game.cap:
        raise ValueError(f"the mover must beat a tie-break total over {game.cap}: the table counts it out")
    return spot


def spot_dict(spot: Spot) -> dict[str, Any]:
    """A start of a turn as plain data: ``scores`` and ``mover`` (normal game), ``mover``, ``leads`` and ``leaders``
    (final round), or ``seats``, ``i``, ``best`` and ``leaders`` (a tie-break round)."""
    return {name: list(v) if isinstance(v, tuple) else v for name, v in spot._asdict().items()}


def spot_from(data: dict[str, Any]) -> Spot:
    """`spot_dict`'s inverse (ValueError for anything else)."""
    for kind in (Normal, Final, Tie):
        if set(data) == set(kind._fields):
            return kind(*(tuple(map(int, data[f])) if isinstance(data[f], list) else int(data[f])
                          for f in kind._fields))
    raise ValueError(f"not a start of a turn: {sorted(data)}")


def encode(values: dict[Spot | Back, np.ndarray]) -> dict[str, Any]:
    """Values by start of a turn as plain data: ``{"spots": [{...spot_dict, "p": [P(each seat wins)]}, ...]}``, and
    the `Back`s among them, if any, as ``"back"``: ``[{...spot_dict, "p": [chance]}, ...]``."""
    out = {"spots": [{**spot_dict(spot), "p": v.tolist()} for spot, v in values.items() if not isinstance(spot, Back)]}
    back = [{**spot_dict(key.spot), "p": v.tolist()} for key, v in values.items() if isinstance(key, Back)]
    return {**out, "back": back} if back else out


def decode(data: dict[str, Any]) -> dict[Spot | Back, np.ndarray]:
    """`encode`'s inverse."""
    def read(item: dict[str, Any]) -> Spot:
        return spot_from({k: v for k, v in item.items() if k != "p"})

    return {**{read(item): np.array(item["p"], dtype=float) for item in data.get("spots", [])},
            **{Back(read(item)): np.array(item["p"], dtype=float) for item in data.get("back", [])}}


def values_only(known: dict[Spot | Back, np.ndarray]) -> dict[Spot, np.ndarray]:
    """The values of the starts of a turn among what a solve's units gave (their tie-break rounds' `Back`s left out)."""
    return {spot: v for spot, v in known.items() if not isinstance(spot, Back)}


def _order(spot: Spot) -> tuple:
    """The stored order: the normal game, the final round, tie-breaks, each by its fields."""
    return ((Normal, Final, Tie).index(type(spot)), spot)


def _batch(spot: Spot) -> tuple:
    if isinstance(spot, Normal):
        return ("normal", sum(spot.scores))
    if isinstance(spot, Final):
        return ("final", spot.mover)
    return ("tie", spot.seats, spot.i)


class SeatsPolicy:
    """`SeatsSolution`'s decisions for analysis.game.many's `play_many` (its ``policy`` and ``on_turn``): the
    spot of each turn is read from the scores, the seats still playing and whether the game is in its final round;
    a round that starts after the final round is a tie-break round (its best so far from the scores' rise)."""

    def __init__(self, solution: SeatsSolution):
        self.solution, self.game = solution, solution.game
        self.spot: Spot | None = None
        self.last = self.game.n
        self.tiebreak = False
        self.base = 0

    def on_turn(self, scores: list[int], p: int, players: list[int], final: bool) -> None:
        if not final:
            self.tiebreak = False
            self.spot = Normal(tuple(scores), p)
        elif not self.tiebreak and p > self.last:  # the final round: leaders at the top score, all before p
            top = max(scores)
            leaders = tuple(q for q in range(self.game.n) if scores[q] == top)
            spot = self.game._final(p, tuple(top - scores[q] for q in range(p, self.game.n)), leaders)
            self.spot = spot if isinstance(spot, Final) and spot.mover == p else None
        else:
            if not self.tiebreak or p <= self.last:
                self.tiebreak, self.base = True, scores[p]
            seats = tuple(players)
            i = seats.index(p)
            totals = [scores[q] - self.base for q in seats[:i]]
            best = max(totals, default=0)
            self.spot = Tie(seats, i, best, tuple(q for q, t in zip(seats, totals) if t == best) if i else ())
            if self.spot not in self.solution.values:
                self.spot = None  # beyond the cap: no decision solved (a chance below the cap's bound)
        self.last = p

    def rolls(self, scores: list[int], p: int, players: list[int], final: bool, state: int, total: int) -> bool:
        return self.spot is None or self.solution.rolls(self.spot, state, total)

    def beat(self, best: int, state: int, total: int) -> bool:
        return self.spot is None or self.solution.rolls(self.spot, state, total)


class _Solver:
    def __init__(self, kernel: Kernel, game: Game, rules: tuple[tuple[int, str], ...] = ()):
        self.kernel, self.game = kernel, game
        self.rules = {seat: rule.fix(kernel, 1, 0, 0) for seat, rule in _rules(rules).items()}  # (tops, rolls)
        self.levels = game.levels + kernel.max_delta + 1
        self.values: dict[Spot, np.ndarray] = {}
        self.onehot = np.eye(game.n)

    def outcome(self, target: Spot | int) -> np.ndarray:
        return self.onehot[target] if isinstance(target, int) else self.values[target]

    def table(self, spot: Spot, cycle: np.ndarray | None = None) -> np.ndarray:
        """``(levels, n)``: every seat's value of ending the turn with ``T`` brains (`cycle`: for ``T = 0``). From
        the least total at which the mover wins outright, it wins at every higher total too (each lead over it only
        grows), so those rows are its win."""
        out = np.empty((self.levels, self.game.n))
        mover = self.game.mover(spot)
        for t, target in enumerate(self.game.outcomes(spot, self.levels)):
            if target == mover:
                out[t:] = self.onehot[mover]
                break
            out[t] = self.outcome(target) if t or cycle is None else cycle
        return out

    def solve(self, spots: list[Spot], tables: list[np.ndarray], back: list[np.ndarray] | None = None,
              others: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Each spot's vector of values (the mover's alone unless `others`), and the expectation of `back` (per
        spot, by turn total) under its policy.

        One column per spot, carrying one slope per seat whose outcomes are not all 0, but the mover (the column's
        value) and one other (the values sum to 1: someone wins), and one for `back`. Spots with as many slopes
        are swept together."""
        n, kernel = self.game.n, self.kernel
        movers = [self.game.mover(s) for s in spots]
        seats = [[j for j in range(n) if j != m and t[:, j].any()] if others else [] for t, m in zip(tables, movers)]
        values = np.zeros((len(spots), n))
        ends = np.zeros(len(spots))
        for width in sorted({len(j[:-1]) for j in seats}):
            group = [k for k in range(len(spots)) if len(seats[k][:-1]) == width]
            stop = np.stack([tables[k][:, movers[k]] for k in group], axis=1)
            slopes = [[tables[k][:, j] for j in seats[k][:-1]] + ([back[k]] if back is not None else []) for k in group]
            dstop = np.array(slopes).transpose(2, 1, 0) if slopes[0] else None
            tops = roll_tops(kernel, stop)
            ruled = [self.rules.get(movers[k]) for k in group]
            for c, rule in enumerate(ruled):
                if rule is not None:
                    tops[:, c] = rule[0]
            for part in _chunks(kernel, tops, 1 + len(slopes[0])):
                out = sweep(kernel, stop[:, part], tops[:, part], None if dstop is None else dstop[:, :, part],
                            fixed_policy(kernel, [None if ruled[c] is None else ruled[c][1] for c in part.tolist()],
                                         int(tops[:, part].max()) + 1))
                for c, at in enumerate(part.tolist()):
                    k = group[at]
                    values[k, movers[k]] = out.start[0, c]
                    values[k, seats[k][:-1]] = out.dstart[0, :width, c] if width else 0
                    if back is not None:
                        ends[k] = out.dstart[0, width, c]
        for k in range(len(spots)):  # the last seat with a chance: 1 - the others
            if seats[k]:
                values[k, seats[k][-1]] = 1 - values[k].sum()
        return values, ends

    def settle(self, spots: list[Spot]) -> None:
        """Spots whose turns lead only to solved spots."""
        if spots:
            values, _ = self.solve(spots, [self.table(s) for s in spots])
            self.values.update(zip(spots, values))

    def tiebreak(self, round_: Round, iteration: int) -> None:
        """The tie-break round `round_`, by policy iteration on the value ``W`` of the round's start: under fixed
        policies a spot is worth ``A + p W``, ``p`` the probability that the round ends with the seats all level again
        (carried as one more column, its `Back`); so ``W = A / (1 - p)`` at the start.

        A spot from which the round cannot come back to its start (no turn leads there, or to a spot that can) is
        worth the same whatever ``W``: it is settled once, before the iterations, and without the column of ``p``
        (theirs is 0). In the three seats' round that is two thirds of the last mover's spots: those where one seat
        leads.

        An iteration is a pass over the movers, last first (`tie_pass`: a turn leads to the round's next mover, or
        ends the round), then the start's turn (`restart`: the new ``W``). `seats_layers` lays the settling and the
        first `PASSES` passes out as layers of units, each pass's restart a unit, but the last pass's: the round's last
        unit makes it here (`iteration`: that pass's number, its values and backs in `values`), moves the spots to the
        new ``W``, and goes on with more passes while the round is not solved.

        As in the normal game (`normal`), every iteration but the first, and a first that moves ``W`` by less than
        `CHECK_BELOW`, is followed by a check rather than by another iteration to confirm it: the spots' values
        under the iteration's policies, moved to the new ``W`` (``A + p W``), must be what each mover gets by its
        best decisions against them, its own value alone, one number a column where an iteration carries three."""
        loops = [spot for spots in round_.loops for spot in spots]
        checked = sorted([round_.start, *loops])
        while True:
            w, new = self.restart(round_.start)
            moved = np.abs(new - w).max()
            for spot in loops:  # (no other spot's value depends on W)
                self.values[spot] = self.values[spot] + self.values[Back(spot)][0] * (new - w)
            if moved < RESIDUAL_TOL or ((iteration or moved < CHECK_BELOW) and self._settled(checked)):
                return
            iteration += 1
            if iteration == MAX_ITERATIONS:
                raise ArithmeticError(f"the tie-break of seats {round_.start.seats} did not converge")
            for spots in round_.loops:
                self.tie_pass(list(spots))

    def tie_pass(self, spots: list[Tie]) -> None:
        """One mover's spots of a tie-break round that can come back to its start, in one pass of its iteration
        (`tiebreak`): each one's values and `Back` under the pass's ``W`` (the start's value, even at first) and the
        next mover's backs."""
        start = Tie(spots[0].seats, 0, 0, ())
        first = start not in self.values  # (the first pass reads W at an even split; `restart` writes W)
        self.values[start] = self._w(start)
        tables = [self.table(s) for s in spots]
        if first:
            del self.values[start]
        values, ends = self.solve(spots, tables, [self._backs(s) for s in spots])
        self.values.update(zip(spots, values))
        self.values.update((Back(s), np.array([e])) for s, e in zip(spots, ends))

    def restart(self, start: Tie) -> tuple[np.ndarray, np.ndarray]:
        """The start's turn of a tie-break round against the pass's second mover (`tie_pass`): ``W`` before and
        after (the start's value, now the after)."""
        w = self._w(start)
        values, ends = self.solve([start], [self.table(start)], [self._backs(start)])
        new = self.values[start] = (values[0] - ends[0] * w) / (1 - ends[0])
        return w, new

    def _w(self, start: Tie) -> np.ndarray:
        """The value of a tie-break round's start in its pass: ``W``, an even split before the first restart."""
        w = self.values.get(start)
        return np.where(np.isin(np.arange(self.game.n), start.seats), 1 / len(start.seats), 0.0) if w is None else w

    def _backs(self, spot: Tie) -> np.ndarray:
        """By turn total, the chance that ending the turn at `spot` with it leads back to the round's start: 1 for
        the start itself, the pass's `Back` of a later mover's spot, 0 where the round cannot come back."""
        start = Tie(spot.seats, 0, 0, ())
        return np.array([1.0 if t == start else float(self.values[Back(t)][0]) if Back(t) in self.values else 0.0
                         for t in self.game.outcomes(spot, self.levels)])

    def _settled(self, spots: list[Spot]) -> bool:
        """Whether every spot's mover, deciding against the values of the spots its turn leads to, gets its own
        value in `values` (to within `RESIDUAL_TOL`): whether those values are an equilibrium's."""
        own, _ = self.solve(spots, [self.table(s) for s in spots], others=False)
        return self._holds(spots, own, np.array([self.values[s] for s in spots]))

    def _holds(self, spots: Sequence[Spot], own: np.ndarray, values: np.ndarray) -> bool:
        """Whether each spot's mover gets by its best decisions (`own`, a row a spot) its value in `values`, to within
        `RESIDUAL_TOL`: the movers' own values alone, the check of `tiebreak` and `normal`."""
        k, movers = np.arange(len(spots)), [self.game.mover(s) for s in spots]
        return bool(np.abs(own[k, movers] - values[k, movers]).max() < RESIDUAL_TOL)

    def guess(self, spot: Normal) -> np.ndarray:
        """A first guess of a normal spot's values from solved ones of larger totals: the polynomial through the
        nearest (up to three) with one seat's score raised, the seat furthest from the goal (a parabola guesses
        five times closer than a line, and a closer guess saves steps), else even."""
        scores, m = spot.scores, spot.mover
        k = int(np.argmin(scores))
        known = []
        for d in (1, 2, 3):
            up = Normal(scores[:k] + (scores[k] + d,) + scores[k + 1:], m)
            if up not in self.values:
                break
            known.append(self.values[up])
        if not known:
            return np.full(self.game.n, 1 / self.game.n)
        x = np.clip(sum(w * v for w, v in zip(_EXTRAPOLATE[len(known) - 1], known)), 0, 1)
        return x / x.sum()

    def normal(self, groups: list[tuple[Normal, ...]]) -> None:
        """Score tuples of one total: each a cycle of `n` movers through turns that end with 0, solved by policy
        iteration (module docstring). Every step but the first (from a guess: its policies nearly always change), and
        a first that moves the values by less than `CHECK_BELOW`, is followed by a check: the movers' own values alone
        under the last values, which the last step's policies give back (to within `RESIDUAL_TOL`) unless a policy
        changed; if one did, another full step. A check is one number a column where a step is three for three
        players, and most tuples need two steps: the second step's policies are nearly always the last.

        The check asks each mover about its own values only, as an equilibrium does: where a mover is indifferent
        between two decisions that matter to the others (its own chance the same either way), which one a sweep takes
        depends on rounding, and a check of every seat's values could fail at every step, round such a tie. So the
        others' values are those of one of the mover's best decisions there, not always the one served (they differed
        by up to 7e-11 from a solve that confirms every check with another full step, three players to 10 brains)."""
        n = self.game.n
        fixed = {spot: self.table(spot, cycle=np.zeros(n)) for group in groups for spot in group}
        guess = {group: np.array([self.guess(spot) for spot in group]) for group in groups}
        check = dict.fromkeys(groups, False)
        steps: dict[tuple[Normal, ...], list[tuple[np.ndarray, np.ndarray]]] = {group: [] for group in groups}
        zero = np.eye(self.levels)[0]
        todo = list(groups)
        for _ in range(MAX_ITERATIONS):
            for checking in (False, True):
                these = [group for group in todo if check[group] == checking]
                if not these:
                    continue
                spots, tables = [], []
                for group in these:
                    for m, spot in enumerate(group):
                        table = fixed[spot].copy()
                        table[0] = guess[group][(m + 1) % n]
                        spots.append(spot)
                        tables.append(table)
                if checking:
                    values, _ = self.solve(spots, tables, others=False)
                else:
                    values, ends = self.solve(spots, tables, [zero] * len(spots))
                for g, group in enumerate(these):
                    old = guess[group]
                    v = values[g * n:(g + 1) * n]
                    if checking:
                        check[group] = False
                        if self._holds(group, v, old):
                            self.values.update(zip(group, old))
                            todo.remove(group)
                        continue
                    p = ends[g * n:(g + 1) * n]
                    a = v - p[:, None] * np.roll(old, -1, axis=0)  # x_m = a_m + p_m x_{m+1}
                    x = _around(a, p)
                    seen = [q.tobytes() for q, _ in steps[group]]
                    steps[group].append((p, a))
                    mixed = None
                    if seen and p.tobytes() != seen[-1] and p.tobytes() in seen:  # the policies went round
                        mixed = _mixed(steps[group][seen.index(p.tobytes()):-1])
                    guess[group] = x if mixed is None else mixed
                    check[group] = len(steps[group]) > 1 or np.abs(x - old).max() < CHECK_BELOW
            if not todo:
                return
        stuck = ", ".join(str(group[0].scores) for group in todo)
        raise ArithmeticError(f"{len(todo)} score tuples did not converge in {MAX_ITERATIONS} steps: {stuck}")


_EXTRAPOLATE = ((1.0,), (2.0, -1.0), (3.0, -3.0, 1.0))  # the value at 0 of the polynomial through 1, 2, 3 points


def _around(a: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The movers' vectors around the cycle of zero-score turns: ``x_m = a_m + p_m x_{m+1}``, solved exactly."""
    n = len(p)
    x = np.empty_like(a)
    x[0] = sum(np.prod(p[:k]) * a[k] for k in range(n)) / (1 - np.prod(p))
    for m in range(n - 1, 0, -1):
        x[m] = a[m] + p[m] * x[(m + 1) % n]
    return x


def _mixed(steps: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray | None:
    """The movers' vectors at an equilibrium of the policies met where policy iteration went round `steps` (each
    step's ``(p, a)``: every mover's chance of a turn ending with 0 and its other outcomes' values, under its best
    policy). Each mover plays one of the policies it met or mixes two of them, at the weight that leaves it
    indifferent at its own ``c`` (module docstring): its policies' values at ``c`` are lines in ``c``, and more than
    two meet at one ``c`` only by coincidence. Supports are tried in order, fewest mixing movers first (as Nash
    equilibria are found by support enumeration); the first that is an equilibrium (weights in [0, 1], no mover
    gaining by another policy it met) is the answer; None if none is."""
    n = len(steps[0][0])
    met: list[dict[float, np.ndarray]] = [{} for _ in range(n)]  # per mover: its policies' a, by their p
    for p, a in steps:
        for m in range(n):
            met[m].setdefault(float(p[m]), a[m])
    ps = [np.array(list(policies)) for policies in met]
    as_ = [np.array(list(policies.values())) for policies in met]
    movers = np.arange(n)
    after = (movers + 1) % n  # c_m = x[m + 1, m]

    def at(pairs: tuple[tuple[int, int], ...], w: np.ndarray) -> np.ndarray:  # mover m: (1 - w) of i, w of j
        p = np.array([ps[m][i] + w[m] * (ps[m][j] - ps[m][i]) for m, (i, j) in enumerate(pairs)])
        a = np.array([as_[m][i] + w[m] * (as_[m][j] - as_[m][i]) for m, (i, j) in enumerate(pairs)])
        return _around(a, p)

    def equilibrium(pairs: tuple[tuple[int, int], ...]) -> np.ndarray | None:
        mixing = [m for m, (i, j) in enumerate(pairs) if i != j]
        w = np.zeros(n)
        if mixing:
            def gap(weights: np.ndarray) -> np.ndarray:  # each mixing mover's second policy's value less its first's
                c = at(pairs, np.bincount(mixing, weights, n))[after, movers]
                return np.array([as_[m][pairs[m][1], m] - as_[m][pairs[m][0], m]
                                 + (ps[m][pairs[m][1]] - ps[m][pairs[m][0]]) * c[m] for m in mixing])

            found = scipy.optimize.root(gap, np.full(len(mixing), 0.5), tol=1e-15)
            if not found.success or not ((found.x >= 0) & (found.x <= 1)).all():
                return None
            w = np.bincount(mixing, found.x, n)
        x = at(pairs, w)
        c = x[after, movers]
        gains = [(as_[m][:, m] + ps[m] * c[m]).max() - x[m, m] for m in range(n)]
        return x if max(gains) < RESIDUAL_TOL else None

    pure = [[(i, i) for i in range(len(p))] for p in ps]
    two = [list(itertools.combinations(range(len(p)), 2)) for p in ps]
    for size in range(n + 1):
        for mixing in itertools.combinations([m for m in range(n) if two[m]], size):
            for pairs in itertools.product(*(two[m] if m in mixing else pure[m] for m in range(n))):
                if (x := equilibrium(pairs)) is not None:
                    return x
    return None


def _rules(rules: tuple[tuple[int, str], ...]) -> dict[int, Rule]:
    """Seats that follow a fixed rule (rules.py's ``stop-at:N,S``, whatever the scores) instead of maximising."""
    out = {seat: parse_rule(name) for seat, name in rules}
    if any(rule.kind != "stop-at" for rule in out.values()):
        raise ValueError("with more than two players a seat's rule is stop-at:N,S (ahead-by reads a two-player game)")
    return out


def roll_tops(kernel: Kernel, stop: np.ndarray) -> np.ndarray:
    """``(blocks, k)``: per block the last turn total at which a state may roll (see the module docstring)."""
    best = stop.max(axis=0)
    tops = []
    for block in kernel.blocks:
        below = stop < block.min_bust * stop[0] + (1 - block.min_bust) * best
        tops.append(np.where(below.any(axis=0), len(stop) - 1 - np.argmax(below[::-1], axis=0), 0))
    tops = np.array(tops)
    if (tops + kernel.max_delta + 1 > len(stop)).any():
        raise ValueError("a column may roll at the last turn totals computed: more levels are needed")
    return tops


def _chunks(kernel: Kernel, tops: np.ndarray, m: int = 2) -> list[np.ndarray]:
    """Columns in groups whose sweep stays within `SWEEP_BYTES`, by decreasing top (similar columns together); a
    group carries at least `SWEEP_NUMBERS` numbers a state (columns times `m`, the value and slopes), whatever its
    bytes. A sweep's time is mostly per roll, reading where it leads and its probability, and the numbers it then
    adds are one vector operation: in the sequel's turn (303,836 states, 158 MB a number over 65 levels), a full
    step's column costs 11.4 s of CPU alone, 7.5 s two at a time (what 1 GiB holds) and 4.0 s eight at a time
    (bench/bench_sweep.py). Smaller turns hold far more than `SWEEP_NUMBERS` in `SWEEP_BYTES`."""
    order = np.argsort(-tops.max(axis=0), kind="stable")
    cost = sweep_bytes(kernel, tops, m)[order]
    out, first, used = [], 0, 0
    for c in range(len(order)):
        if used + cost[c] > SWEEP_BYTES and (c - first) * m >= SWEEP_NUMBERS:
            out.append(order[first:c])
            first, used = c, 0
        used += cost[c]
    out.append(order[first:])
    return out


def sweep_bytes(kernel: Kernel, tops: np.ndarray, m: int) -> np.ndarray:
    """Each column's working memory in a sweep (`kernel.sweep`, `tops` of shape ``(blocks, k)``): its levels, up to
    its top and the rolls' reach above it, times the turn's states times `m` numbers of 8 bytes."""
    return (tops.max(axis=0) + 1 + kernel.max_delta) * kernel.n * 8 * m


def every_spot(game: Game, levels: int) -> list[Spot]:
    """Every start of a turn of `game`: the normal game's, then those of the final round and tie-breaks it leads to."""
    finals, ties = _reachable(game, levels)
    return [Normal(s, m) for s in itertools.product(range(game.goal), repeat=game.n) for m in range(game.n)] + [
        *finals, *ties]


@kept("seats")  # (a job's layers and its table's check both ask: 3 s for four players)
def _reachable(game: Game, levels: int) -> tuple[tuple[Final, ...], tuple[Tie, ...]]:
    """Every start of a turn of the final round and of tie-breaks the normal game can lead to, in order.

    A normal turn that reaches the goal leads where the mover's total and the later seats' scores say, whatever the
    earlier seats' scores, so the normal game's ways out are those of one spot per mover and later seats' scores: its
    mover at 0, whose turn totals cover every other's (past `levels` the mover wins whatever its score)."""
    frontier: list[Spot] = [Normal((0,) * (m + 1) + later, m) for m in range(game.n)
                            for later in itertools.product(range(game.goal), repeat=game.n - 1 - m)]
    seen: set[Spot] = set()
    while frontier:
        for target in game.outcomes(frontier.pop(), levels):
            if isinstance(target, (Final, Tie)) and target not in seen:
                seen.add(target)
                frontier.append(target)
    return tuple(sorted(s for s in seen if isinstance(s, Final))), tuple(sorted(s for s in seen if isinstance(s, Tie)))


class SeatsUnit(NamedTuple):
    """One piece of a solve that a worker can do alone, given every value of the earlier layers (`kind`): of a
    tie-break round (`_Solver.tiebreak`), some of one mover's spots that cannot lead back to its start (``settle``) or
    that can, in one pass (``pass``), the start's turn ending a pass (``restart``: `items` the round's seats) or
    ending the round (``tie``: `items` the sets of seats that play it alike, the first solved, the others its values
    renamed: `_renamed`); some spots of the final round (``final``: one mover); some score tuples of one total
    (``normal``: their cycles of movers)."""

    n: int
    mode: str
    recycle: str
    goal: int
    cap: int
    kind: str  # "settle", "pass", "restart", "tie", "final" or "normal"
    items: tuple  # spots (`SPOT_KINDS`), sets of seats (as many, playing alike), or score tuples
    rules: tuple[tuple[int, str], ...] = ()  # (seat, rule): seats that follow a fixed rule

    def to_dict(self) -> dict[str, Any]:
        items = [spot_dict(f) for f in self.items] if self.kind in SPOT_KINDS else [list(t) for t in self.items]
        return {**self._asdict(), "items": items, "rules": [list(r) for r in self.rules]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SeatsUnit:
        kind = str(data["kind"])
        items = tuple(spot_from(f) if kind in SPOT_KINDS else tuple(map(int, f)) for f in data["items"])
        return cls(int(data["n"]), str(data["mode"]), str(data["recycle"]), int(data["goal"]), int(data["cap"]),
                   kind, items, tuple((int(seat), str(rule)) for seat, rule in data["rules"]))


SPOT_KINDS = ("settle", "pass", "final")  # the kinds of unit whose items are spots


@kept("seats")  # (a job asks at every layer)
def seats_layers(n: int, mode: str = "original", recycle: str = "before-draw", goal: int = GOAL, cap: int = CAP,
                 split: int = 1, rules: tuple[tuple[int, str], ...] = ()) -> tuple[tuple[SeatsUnit, ...], ...]:
    """The solve as layers of independent units (each layer needs every earlier one): tie-breaks by the number of
    seats (one round, whichever seats play it alike: `_round_layers`), the final round by mover from the last, the
    normal game by decreasing total; each layer's spots or score tuples in `split` units. A unit's values are the same
    bit for bit whatever unit they are solved in."""
    if n < 2:
        raise ValueError("a game has 2 players or more")
    game = Game(n, goal, cap)
    _rules(rules)
    levels = game.levels + kernel_for(mode, recycle).max_delta + 1
    finals, ties = _reachable(game, levels)

    def unit(kind: str, items: tuple) -> SeatsUnit:
        return SeatsUnit(n, mode, recycle, goal, cap, kind, items, rules)

    ruled = dict(rules)
    rounds: dict[tuple, list[tuple[int, ...]]] = {}  # one round up to its seats' names: what each seat plays
    for seats in sorted({t.seats for t in ties}, key=lambda s: (len(s), s)):
        rounds.setdefault(tuple(ruled.get(seat) for seat in seats), []).append(seats)
    layers = []
    for size in range(2, n + 1):  # (the rounds of as many seats alike, their layers side by side)
        steps = [_round_layers(_round(game, sets[0], levels), sets, split, unit)
                 for plays, sets in rounds.items() if len(plays) == size]
        layers += [[u for step in layer for u in step] for layer in zip(*steps)]
    for mover in range(n - 1, 0, -1):
        layers.append([unit("final", part) for part in _split([f for f in finals if f.mover == mover], split)])
    for total in range(n * (goal - 1), -1, -1):
        tuples = [s for s in itertools.product(range(goal), repeat=n) if sum(s) == total]
        layers.append([unit("normal", part) for part in _split(tuples, split)])
    return tuple(tuple(layer) for layer in layers if layer)


def _round_layers(round_: Round, sets: list[tuple[int, ...]], split: int,
                  unit: Callable[[str, tuple], SeatsUnit]) -> list[list[SeatsUnit]]:
    """The layers of a tie-break round (`_Solver.tiebreak`; `round_` that of `sets[0]`, which plays it as every set of
    `sets` does): its spots that cannot lead back to the start, mover by mover; then `PASSES` passes over the movers,
    each but the last ended by a restart; then its last unit, which ends the last pass and the round."""
    layers = [[unit("settle", part) for part in _split(list(spots), split)] for spots in round_.settled if spots]
    for k in range(PASSES):
        layers += [[unit("pass", part) for part in _split(list(spots), split)] for spots in round_.loops if spots]
        layers.append([unit("restart", (sets[0],))] if k < PASSES - 1 else [unit("tie", tuple(sets))])
    return layers


def _split(items: list, parts: int) -> list[tuple]:
    return [tuple(items[k::parts]) for k in range(min(parts, len(items)))]


def solve_unit(unit: SeatsUnit, known: dict[Spot, np.ndarray]) -> dict[Spot, np.ndarray]:
    """What `unit` solves (its spots' values, and a tie-break pass's `Back`s), from `known` (all that the earlier
    layers solved)."""
    game = Game(unit.n, unit.goal, unit.cap)
    solver = _Solver(kernel_for(unit.mode, unit.recycle), game, unit.rules)
    solver.values = dict(known)
    if unit.kind in ("settle", "final"):
        solver.settle(list(unit.items))
    elif unit.kind == "pass":
        solver.tie_pass(list(unit.items))
    elif unit.kind == "restart":
        solver.restart(Tie(unit.items[0], 0, 0, ()))
    elif unit.kind == "tie":
        first, *others = unit.items
        round_ = _round(game, first, solver.levels)
        solver.tiebreak(round_, PASSES - 1)
        for seats in others:
            solver.values.update(_renamed(round_.spots, solver.values, seats))
    else:
        solver.normal([tuple(Normal(s, m) for m in range(unit.n)) for s in unit.items])
    return {key: v for key, v in solver.values.items() if known.get(key) is not v}  # (what the unit wrote)


def _renamed(spots: list[Tie], values: dict[Spot, np.ndarray], seats: tuple[int, ...]) -> dict[Tie, np.ndarray]:
    """The values of the round of `seats` from those of a round of as many seats (`spots`, all of it, solved): the
    same round with its seats renamed, in order.

    A tie-break round's rules name no seat: its seats play in their order, each what it plays (optimal, or a rule),
    and a turn leads to a winner among them, to a smaller round of theirs, or on in the round. So renaming the ``i``-th
    seat of one round the ``i``-th of another, where each plays what its namesake plays, renames every spot and
    winner, and the renamed solve is the same arithmetic on the same numbers: its values are the first round's, bit
    for bit, moved to the new names (every other seat's 0)."""
    name = dict(zip(spots[0].seats, seats))
    old, new = list(name), list(name.values())
    out = {}
    for spot in spots:
        value = np.zeros_like(values[spot])
        value[new] = values[spot][old]
        out[Tie(seats, spot.i, spot.best, tuple(name[s] for s in spot.leaders))] = value
    return out


def _round(game: Game, seats: tuple[int, ...], levels: int) -> Round:
    """The spots of a tie-break round of `seats`, by role (`Round`)."""
    start = Tie(seats, 0, 0, ())
    found, frontier = {start: None}, [start]
    while frontier:
        for target in game.outcomes(frontier.pop(), levels):
            if isinstance(target, Tie) and target.seats == seats and target not in found:
                found[target] = None
                frontier.append(target)
    by_mover = sorted({s.i for s in found if s.i}, reverse=True)
    loops = {start}
    for i in by_mover:  # (a turn leads to the round's next mover, or ends the round)
        loops.update(s for s in found if s.i == i and any(t in loops for t in game.outcomes(s, levels)))
    return Round(start, *(tuple(tuple(s for s in found if s.i == i and (s in loops) == back) for i in by_mover)
                          for back in (True, False)))


def solve_seats(n: int, mode: str = "original", recycle: str = "before-draw", goal: int = GOAL,
                cap: int = CAP, rules: tuple[tuple[int, str], ...] = ()) -> SeatsSolution:
    """The `n`-player game solved: every reachable start of a turn's vector of win probabilities (`seats_layers`'
    units one after the other). The seats named in `rules` follow theirs (``((seat, "stop-at:N,S"), ...)``) and
    the others maximise against them: each value is then the policy evaluation of the rules and the best
    responses to them."""
    values: dict[Spot | Back, np.ndarray] = {}
    for layer in seats_layers(n, mode, recycle, goal, cap, rules=rules):
        for unit in layer:
            values.update(solve_unit(unit, values))
    return SeatsSolution(mode, recycle, Game(n, goal, cap), values_only(values), rules)
