"""Three to eight players: a reduced model, checked against whole games played with physical dice.

Exact play (seats.py) needs every player's score at the start of a turn (``13^N N`` normal-game turns, 6,591 for
three players, 114,244 for four) plus final rounds whose players react to every earlier total: minutes of CPU for
three players of the base game, far more for four players or the Double Feature's dice (bench/README.md). For any
number of players, a reduced model:

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

**The N-player table** (`reduced_win_probability`, `reduced_table`, served by api/tables.py): at the
start of the mover's turn in the normal game, from its score ``m``, the leader's ``L`` and whether it
closes the round. Each opponent is read through its two-player duel with the mover as a Luce
(Bradley-Terry) strength: duel value ``d`` = ``1 / (1 + r)``, ``r = (1 - d) / d`` the opponent's
odds against the mover; all at once ``p = 1 / (1 + sum of the opponents' r)``, exact for two players.
The duel is W1 against an opponent still to play this round, W2 against one who has played; the
mover's seat (if it does not close the round) is averaged over the seats, and the ``N - 2`` others
below the leader have independent scores uniform on ``0..L``, ``p`` averaged over them (formula in
`reduced_win_probability`). Nothing in it is fitted to simulation.

Checked against the same simulations at every turn start (`check_reduced_model`: mean bias and
calibration by bins of the estimate; `MEASURED`, from bench/bench_many.py, 4,000 games per N):
bias -0.010 (3 players), -0.019 (4), -0.022 (5), -0.025 (6), -0.026 (7), -0.026 (8); the largest
calibration error over bins of 100 turns or more 0.028, 0.031, 0.050, 0.051, 0.085, 0.088 (in the
[0.4, 0.5) bin of 8 players the mover wins 54% of the time, estimated 45%); draw-then-recycle:
bias within 0.001 of these, calibration error 0.027 to 0.097 (7 players). Big Summer and Santa
(both variants, the same runs with `--mode`): bias -0.008 (3 players) to -0.027 (8), calibration error
0.019 to 0.079. It still underrates the
mover a little, most with many players: in these games the others below the leader average 0.44 L
(3 players) to 0.34 L (8), lower than uniform on ``0..L``. The earlier table, every opponent given
the leader's side of the duel at the mover's seat (``d / (d + (N - 1) (1 - d))``), underrated the
mover far more: bias -0.077 to -0.101, calibration error 0.099 (3 players) to 0.339 (7). A rough
guide, reported with its error, not an exact value.

**Rotated games** (`play_rotated`): an exact table's decisions play too (seats.py's `SeatsPolicy`, or advice.py's
`AskedPolicy`, each question asked as /v1/odds asks it), the players changing seats game by game (game ``k``: player
``k mod n`` opens), their scores kept by player; each seat's wins against the table's P(seat wins), each player's
against the mean over the seats it sat in (`RotatedGames`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..simulate import roll_once
from .play import dice_state_index, fresh_turn, policy_table
from .solution import GameSolution

__all__ = ["ReducedPolicy", "play_many", "play_rotated", "RotatedGames", "Frequency", "estimate_reduced",
           "reduced_win_probability", "reduced_table", "check_reduced_model", "ModelCheck", "Calibration",
           "MeasuredError", "MEASURED"]


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


# on_turn(scores before the turn, the mover, the players of this round in the order they play, final round on?)
TurnHook = Callable[[list[int], int, list[int], bool], None]


def play_many(n: int, policy: ReducedPolicy, rng: random.Random, mode: str = "original",
              recycle: str = "before-draw", goal: int = 13, max_rounds: int = 10_000,
              on_turn: TurnHook | None = None, order: Sequence[int] | None = None,
              start: Sequence[int] | None = None, first: int = 0) -> int:
    """One game of `n` players with physical dice; returns the winner.

    The players are identities 0..n-1 seated in `order` (the first opens every round; by default identity ``k`` in
    seat ``k``): scores are kept by identity, and the policy and `on_turn` are given identities (the scores by
    identity, the mover, the round's players in the order they play). The game starts from every score 0, or from
    the scores `start` (by identity, all below the goal) with the player in seat `first` to move (those before it
    have played this round).

    RULES.md section 1: when a player ends a turn at the goal or more, the round is completed; the
    highest total wins; tied leaders alone play tie-break rounds (one turn each, same order) until
    the tie is broken. Scores accumulate through tie-breaks (only differences matter).
    """
    scores = [0] * n if start is None else list(start)
    players = list(range(n)) if order is None else list(order)
    if sorted(players) != list(range(n)):
        raise ValueError(f"order: the {n} identities 0..{n - 1}, each once")
    if len(scores) != n or not 0 <= min(scores) <= max(scores) < goal or not 0 <= first < n:
        raise ValueError(f"start: {n} scores below the goal ({goal}), and a first mover among the {n} seats")
    final = tiebreak = False
    for r in range(max_rounds):
        best: int | None = None  # a tie-break round's best turn total so far
        for p in players[first:] if r == 0 else players:
            if on_turn is not None:
                on_turn(scores, p, players, final)
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


@dataclass(frozen=True)
class Frequency:
    """How often one seat or one player won, against what the table expects (``standard_error``: of the frequency,
    for games that are independent)."""

    won: float
    expected: float
    standard_error: float

    @property
    def sigmas(self) -> float:
        """The frequency's distance from the expected value, in standard errors."""
        return (self.won - self.expected) / self.standard_error


@dataclass(frozen=True)
class RotatedGames:
    """Games whose players change seats (`play_rotated`): wins by seat and by identity, against ``p_seats`` (P(each
    seat wins), the table's)."""

    p_seats: tuple[float, ...]
    by_seat: tuple[int, ...]
    by_identity: tuple[int, ...]

    @property
    def games(self) -> int:
        return sum(self.by_seat)

    def sat(self, identity: int, seat: int) -> int:
        """In how many games `identity` sat in `seat`: games ``k`` with ``k + seat = identity`` (mod n)."""
        n = len(self.p_seats)
        return self.games // n + ((identity - seat) % n < self.games % n)

    @property
    def seats(self) -> tuple[Frequency, ...]:
        g = self.games
        return tuple(Frequency(w / g, p, math.sqrt(p * (1 - p) / g)) for w, p in zip(self.by_seat, self.p_seats))

    @property
    def identities(self) -> tuple[Frequency, ...]:
        """Each identity against the mean of the seats' values over the games it played (every seat as often, within
        one game), the variance of its wins the sum of each game's ``p (1 - p)``."""
        g, n = self.games, len(self.p_seats)
        out = []
        for i, w in enumerate(self.by_identity):
            sat = [self.sat(i, s) for s in range(n)]
            mean = sum(k * p for k, p in zip(sat, self.p_seats)) / g
            var = sum(k * p * (1 - p) for k, p in zip(sat, self.p_seats))
            out.append(Frequency(w / g, mean, math.sqrt(var) / g))
        return tuple(out)

    def largest(self) -> float:
        """The largest distance of any seat's or identity's frequency from its expected value, in standard errors."""
        return max(abs(f.sigmas) for f in self.seats + self.identities)


def play_rotated(n: int, policy: ReducedPolicy, games: int, rng: random.Random, p_seats: Sequence[float],
                 mode: str = "original", recycle: str = "before-draw", goal: int = 13,
                 on_turn: TurnHook | None = None) -> RotatedGames:
    """`games` games of `play_many` whose players change seats: game ``k`` seats identity ``(k + s) mod n`` in seat
    ``s`` (identity ``k mod n`` opens); each winner counted by identity and by the seat it sat in."""
    by_seat, by_identity = [0] * n, [0] * n
    for k in range(games):
        order = [(k + s) % n for s in range(n)]
        winner = play_many(n, policy, rng, mode, recycle, goal, on_turn=on_turn, order=order)
        by_identity[winner] += 1
        by_seat[order.index(winner)] += 1
    return RotatedGames(tuple(p_seats), tuple(by_seat), tuple(by_identity))


def estimate_reduced(solution: GameSolution, n: int) -> list[float]:
    """The model's estimate of each seat's probability to win at the start (see the module docstring)."""
    w = [solution.p_first_player_wins] * (n - 1) + [1 - solution.p_first_player_wins]
    return [x / sum(w) for x in w]


# the grid of `_mean_chance`: s from -38 to 4 by 0.2 (t = e^s from 3e-17 to 55)
_STEP = 0.2
_TIMES = np.exp(np.arange(-38.0, 4.0 + _STEP / 2, _STEP))


def _mean_chance(lead: float, odds: list[np.ndarray]) -> float:
    """``E[1 / (1 + lead + sum_k R_k)]`` for independent ``R_k``, each uniform over the values of
    ``odds[k]`` (all >= 0). By ``1 / (1 + x) = integral of exp(-t (1 + x)) dt over t >= 0`` the mean
    factorises: ``E = integral of exp(-t (1 + lead)) prod_k E[exp(-t R_k)] dt``. With ``t = e^s`` the
    integrand (times ``e^s``) is smooth and falls off doubly exponentially for large ``s`` and as
    ``e^s`` for small ``s``, so the trapezoid rule in ``s`` converges geometrically: step 0.2 over
    ``[-38, 4]`` leaves out less than ``e^-38`` on the left and ``55 e^-55`` on the right, and is
    within 1e-13 (relative) of summing over every combination of scores (tests/analysis/game/test_many.py)."""
    if not odds:  # two players: the duel's own value
        return float(1 / (1 + lead))
    f = _TIMES * np.exp(-_TIMES * (1 + lead))
    for r in odds:
        f *= np.exp(-np.outer(_TIMES, r)).mean(axis=1)
    return float(_STEP * f.sum())


def reduced_win_probability(solution: GameSolution, n: int, mover: int, leader: int, last: bool) -> float:
    """The reduced model's P(the mover wins), `n` players, at the start of its turn in the normal game.

    Each opponent ``j`` is read through its two-player duel with the mover (Bradley-Terry / Luce
    strengths): a duel value ``d_j`` gives ``j`` the odds ``r_j = (1 - d_j) / d_j`` against the mover,
    and with every opponent at once ``p = 1 / (1 + sum_j r_j)`` (for two players ``p = d``). The duel
    is ``W1[m, s_j]`` if ``j`` still plays after the mover this round, ``W2[m, s_j]`` if it has played.
    What the reduced state does not say is averaged out:

    * the seats: if the mover closes the round (`last`) everyone has played; otherwise ``a``, the
      number of players after it, is uniform on ``1..n-1`` (every seat but the last as likely), and
      the leader is one of them with probability ``a / (n - 1)``;
    * the ``n - 2`` others below the leader: their scores are unknown, independent and uniform on
      ``0..L`` (each given its odds at that score, W1 or W2 by its seat).

    So ``p = E[1 / (1 + r_leader + sum of the others' r)]`` over those seats and scores, the mean
    over the scores computed by `_mean_chance`.
    """
    if not 2 <= n <= 8:
        raise ValueError("2 to 8 players")
    w1 = np.array([solution.win_probability(1, mover, x) for x in range(leader + 1)])
    w2 = np.array([solution.win_probability(2, mover, x) for x in range(leader + 1)])
    if min(w1.min(), w2.min()) <= 0:  # an opponent who surely beats the mover (not reached below the goal)
        return 0.0
    odds1, odds2 = (1 - w1) / w1, (1 - w2) / w2
    if last:
        return _mean_chance(odds2[leader], [odds2] * (n - 2))
    p = 0.0
    for after in range(1, n):  # players after the mover this round
        for leader_after, weight in ((True, after / (n - 1)), (False, 1 - after / (n - 1))):
            others_after = after - leader_after
            if weight > 0 and 0 <= others_after <= n - 2:
                lead = (odds1 if leader_after else odds2)[leader]
                p += weight / (n - 1) * _mean_chance(lead, [odds1] * others_after + [odds2] * (n - 2 - others_after))
    return p


def reduced_table(solution: GameSolution, n: int) -> dict[str, list[list[float]]]:
    """`reduced_win_probability` for every pair of scores below the goal: ``[m][L]`` per `last`
    (``followed``: someone plays after the mover this round; ``last``: the mover closes it)."""
    g = solution.goal
    return {name: [[reduced_win_probability(solution, n, m, leader, last) for leader in range(g)] for m in range(g)]
            for name, last in (("followed", False), ("last", True))}


@dataclass(frozen=True)
class Calibration:
    """Turn starts whose estimate fell in ``[lo, hi)``: how many, their mean estimate, and how often the
    mover went on to win."""

    lo: float
    hi: float
    turns: int
    estimate: float
    frequency: float

    @property
    def standard_error(self) -> float:
        return math.sqrt(max(self.frequency * (1 - self.frequency), 1e-12) / self.turns)


@dataclass(frozen=True)
class ModelCheck:
    players: int
    games: int
    simulated: tuple[float, ...]  # frequency of wins per seat
    estimate: tuple[float, ...]
    standard_error: tuple[float, ...]
    turns: int = 0  # turn starts of the normal game seen (every player's, every game)
    bias: float = 0.0  # mean of (table estimate - 1 if that mover won else 0) over those turns
    calibration: tuple[Calibration, ...] = ()

    @property
    def errors(self) -> tuple[float, ...]:
        """Estimate minus simulated frequency, per seat."""
        return tuple(e - s for e, s in zip(self.estimate, self.simulated))

    def table_error(self, least: int = 100) -> float:
        """The largest |mean estimate - frequency| over calibration bins of at least `least` turns."""
        return max((abs(c.estimate - c.frequency) for c in self.calibration if c.turns >= least), default=0.0)


def check_reduced_model(solution: GameSolution, n: int, games: int, seed: int = 0, bins: int = 10) -> ModelCheck:
    """Play `games` games of `n` players, all following the reduced model; compare with its estimates.

    Per seat: the frequency of wins against `estimate_reduced`. Per turn start of the normal game
    (everyone below the goal): `reduced_win_probability` against whether that mover won the game,
    as a mean `bias` and in `bins` equal bins of the estimate (a calibration: within a bin the
    frequency of wins should be the mean estimate). Turns of one game are not independent, so a
    bin's standard error is a rough guide only.
    """
    if not 2 <= n <= 8:
        raise ValueError("2 to 8 players")
    policy = ReducedPolicy(solution)
    rng = random.Random(seed)
    wins = [0] * n
    estimates: list[float] = []
    outcomes: list[bool] = []
    cells: dict[tuple[int, int, bool], float] = {}

    seen: list[tuple[float, int]] = []  # this game's turn starts: (estimate, mover)

    def on_turn(scores: list[int], p: int, players: list[int], final: bool) -> None:
        if final:
            return
        cell = (scores[p], max(scores[q] for q in players if q != p), players[-1] == p)
        if cell not in cells:
            cells[cell] = reduced_win_probability(solution, n, *cell)
        seen.append((cells[cell], p))

    for _ in range(games):
        seen.clear()
        winner = play_many(n, policy, rng, solution.mode, solution.recycle, solution.goal, on_turn=on_turn)
        wins[winner] += 1
        estimates += [e for e, _ in seen]
        outcomes += [p == winner for _, p in seen]
    freq = tuple(w / games for w in wins)
    calibration = []
    for k in range(bins):
        lo, hi = k / bins, (k + 1) / bins
        picked = [(e, o) for e, o in zip(estimates, outcomes) if lo <= e < hi or (k == bins - 1 and e == 1.0)]
        if picked:
            calibration.append(Calibration(lo, hi, len(picked), sum(e for e, _ in picked) / len(picked),
                                           sum(o for _, o in picked) / len(picked)))
    bias = sum(e - o for e, o in zip(estimates, outcomes)) / max(len(estimates), 1)
    return ModelCheck(n, games, freq, tuple(estimate_reduced(solution, n)),
                      tuple(math.sqrt(f * (1 - f) / games) for f in freq), len(estimates), bias, tuple(calibration))


@dataclass(frozen=True)
class MeasuredError:
    """The reduced model against simulation, as `check_reduced_model` measured it (bench/bench_many.py):
    `start_error` is the largest per-seat error of `estimate_reduced` (`standard_error` the largest
    standard error of a seat's frequency), `bias` and `calibration_error` those of the table
    (`reduced_win_probability` at every turn start of the normal game, `turns` of them)."""

    games: int
    seed: int
    turns: int
    start_error: float
    standard_error: float
    bias: float
    calibration_error: float

    @classmethod
    def of(cls, check: ModelCheck, seed: int) -> MeasuredError:
        return cls(check.games, seed, check.turns, max(abs(e) for e in check.errors), max(check.standard_error),
                   check.bias, check.table_error())


# (mode, variant, players) -> the measurement, by `PYTHONPATH=. .venv/bin/python bench/bench_many.py --mode M
# --recycle R`
# (4,000 games per player count, seed = players). Only these are served as tables (api/tables.py): a
# mode whose model was never checked against simulation has no N-player table.
MEASURED: dict[tuple[str, str, int], MeasuredError] = {  # games, seed, turns, start, se, bias, calibration
    ("original", "before-draw", 3): MeasuredError(4000, 3, 48851, 0.020309018604271867, 0.0076484924985254455,
                                                  -0.010067653151355492, 0.027728654778988004),
    ("original", "before-draw", 4): MeasuredError(4000, 4, 58068, 0.022623323287902314, 0.007116616778708827,
                                                  -0.018508629227672505, 0.031053229336037935),
    ("original", "before-draw", 5): MeasuredError(4000, 5, 67881, 0.02386814343254412, 0.006699062434400802,
                                                  -0.02150064057542526, 0.05027056834577881),
    ("original", "before-draw", 6): MeasuredError(4000, 6, 75771, 0.02731192446297076, 0.006282669615696818,
                                                  -0.024693804790030166, 0.050971638870548897),
    ("original", "before-draw", 7): MeasuredError(4000, 7, 83387, 0.02116923396311643, 0.005811174580065548,
                                                  -0.025747859593481713, 0.08488332814282074),
    ("original", "before-draw", 8): MeasuredError(4000, 8, 92424, 0.019323221829617807, 0.005606776034406938,
                                                  -0.02639120787945183, 0.08774834232196022),
    ("original", "draw-then-recycle", 3): MeasuredError(4000, 3, 48874, 0.013913558060763831, 0.007610969673766938,
                                                        -0.010613211157100351, 0.026743435281921357),
    ("original", "draw-then-recycle", 4): MeasuredError(4000, 4, 58294, 0.021142479579543683, 0.0071070211762735026,
                                                        -0.017848837019823007, 0.03434617741879081),
    ("original", "draw-then-recycle", 5): MeasuredError(4000, 5, 67797, 0.021878406404047368, 0.00668912830643874,
                                                        -0.02167928727272667, 0.04576224517674132),
    ("original", "draw-then-recycle", 6): MeasuredError(4000, 6, 76197, 0.02481912184899629, 0.006261438283254097,
                                                        -0.024428846690657823, 0.06718211309985195),
    ("original", "draw-then-recycle", 7): MeasuredError(4000, 7, 83329, 0.023336091285858243, 0.0058437881014800665,
                                                        -0.026071314697567974, 0.09645017569692826),
    ("original", "draw-then-recycle", 8): MeasuredError(4000, 8, 92296, 0.02706912302574309, 0.005641917615048983,
                                                        -0.025641282630474063, 0.0778570003440045),
    ("big-summer-action-movie", "before-draw", 3): MeasuredError(
        4000, 3, 57172, 0.021942074519453847, 0.007654655446197431, -0.008338966280676626, 0.021105037073833932),
    ("big-summer-action-movie", "before-draw", 4): MeasuredError(
        4000, 4, 68697, 0.018960273022203267, 0.007189158504303546, -0.014505419256668858, 0.030518053854115323),
    ("big-summer-action-movie", "before-draw", 5): MeasuredError(
        4000, 5, 79592, 0.02757126624985662, 0.006522916333972098, -0.019251804356592996, 0.057738734507770006),
    ("big-summer-action-movie", "before-draw", 6): MeasuredError(
        4000, 6, 90189, 0.018304736095663326, 0.006221489974274652, -0.021829686057711344, 0.07794177133312119),
    ("big-summer-action-movie", "before-draw", 7): MeasuredError(
        4000, 7, 99789, 0.02019523848295629, 0.005946212029519298, -0.023050480190959618, 0.06906753823961331),
    ("big-summer-action-movie", "before-draw", 8): MeasuredError(
        4000, 8, 109451, 0.023707221492599614, 0.005610702663214296, -0.02323571076633232, 0.07849433357167435),
    ("big-summer-action-movie", "draw-then-recycle", 3): MeasuredError(
        4000, 3, 57151, 0.019704095022191448, 0.0076707072685639624, -0.008170622467968949, 0.02052855957161981),
    ("big-summer-action-movie", "draw-then-recycle", 4): MeasuredError(
        4000, 4, 68757, 0.021651540694099802, 0.007215988108014037, -0.01440729829160412, 0.03914321336340476),
    ("big-summer-action-movie", "draw-then-recycle", 5): MeasuredError(
        4000, 5, 79499, 0.02332574425701847, 0.00656312497024093, -0.01946647560006114, 0.05113383593183429),
    ("big-summer-action-movie", "draw-then-recycle", 6): MeasuredError(
        4000, 6, 90342, 0.02080787282660826, 0.006312665839405726, -0.021474239062399567, 0.07703671440513071),
    ("big-summer-action-movie", "draw-then-recycle", 7): MeasuredError(
        4000, 7, 99623, 0.024947557349682584, 0.005939276050159649, -0.023100283832842593, 0.06719759349350168),
    ("big-summer-action-movie", "draw-then-recycle", 8): MeasuredError(
        4000, 8, 109411, 0.021209005170615344, 0.005506778493366153, -0.023600433326350572, 0.060150787904613534),
    ("santa-claus-meets-the-zombies", "before-draw", 3): MeasuredError(
        4000, 3, 46499, 0.018514673918604563, 0.007671692080304058, -0.010973580487780485, 0.02257868123067408),
    ("santa-claus-meets-the-zombies", "before-draw", 4): MeasuredError(
        4000, 4, 55237, 0.01470701731467347, 0.007187348911455461, -0.01874088841877377, 0.0378457048638553),
    ("santa-claus-meets-the-zombies", "before-draw", 5): MeasuredError(
        4000, 5, 63618, 0.024507943821941214, 0.006769544620947557, -0.02251049917309602, 0.0538309340934115),
    ("santa-claus-meets-the-zombies", "before-draw", 6): MeasuredError(
        4000, 6, 71848, 0.02926536593556109, 0.006224587084698871, -0.02571608760419707, 0.06375629342317335),
    ("santa-claus-meets-the-zombies", "before-draw", 7): MeasuredError(
        4000, 7, 79607, 0.037273575755868496, 0.00608767196882355, -0.026112742609648847, 0.06504403404936882),
    ("santa-claus-meets-the-zombies", "before-draw", 8): MeasuredError(
        4000, 8, 86711, 0.02388275682906954, 0.005695709734089335, -0.026660985358947974, 0.06398652411125416),
    ("santa-claus-meets-the-zombies", "draw-then-recycle", 3): MeasuredError(
        4000, 3, 46530, 0.01056337698466181, 0.0076422509772971995, -0.01158394049565725, 0.019290300335572358),
    ("santa-claus-meets-the-zombies", "draw-then-recycle", 4): MeasuredError(
        4000, 4, 55467, 0.010235094852124399, 0.007154324522622664, -0.01939036212418556, 0.05059545424783407),
    ("santa-claus-meets-the-zombies", "draw-then-recycle", 5): MeasuredError(
        4000, 5, 63819, 0.025526183228754495, 0.006686636626511119, -0.02296681707964898, 0.0589348506629942),
    ("santa-claus-meets-the-zombies", "draw-then-recycle", 6): MeasuredError(
        4000, 6, 71811, 0.03149742757239224, 0.00619343276180504, -0.025597953085818494, 0.05611446342746068),
    ("santa-claus-meets-the-zombies", "draw-then-recycle", 7): MeasuredError(
        4000, 7, 79142, 0.03253304271324768, 0.006116973056586076, -0.025090675788773727, 0.07193310737263414),
    ("santa-claus-meets-the-zombies", "draw-then-recycle", 8): MeasuredError(
        4000, 8, 86886, 0.02264004417936842, 0.005722215480039178, -0.026759814745698142, 0.06978992375242532),
}
