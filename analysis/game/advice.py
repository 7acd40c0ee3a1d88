"""Should I roll? answered by the probability of winning the game, for a position in the middle of a turn.

A `Position` (the dice of this turn) plus the game situation (`GameScores`: both players' scores
before this turn and the mover's seat) is one point of the solved two-player game: the dice state
is an index of the mode's transition table (``table_for(mode, recycle).index``, as analysis.odds
uses it) and the turn total is the position's score (brains noted plus the brain pile), which is
what `GameSolution.decision` takes. `check_scores` refuses a game situation that cannot be the start
of a turn, naming each field at fault (`scores`, `seat`, `final_round`); `game_around` checks it around a position,
answered exactly or by the reduced model as the tables served allow (`GameScores.table_players`: the table that
decides).

Three players (of every mode) are answered exactly from their own table (`SeatsSolution`, seats.py): the scores,
read in seat order, name one start of a turn (`seats.spot_for`: the normal game, the final round or a tie-break
round), and the decision is that turn's, every player maximising its own chance of winning. `table_spot` is that
reading; `AskedPolicy` plays whole games (many.py's `play_rotated`) with every question put and read as a request's.

Other counts of three to eight players are answered by the reduced model of many.py ("duel the leader", as
`ReducedPolicy` plays): the mover at ``m`` against the best score ``L`` of the others, as seat 2 of
the duel if it closes the round (its seat is the last) or in the final round (it must beat ``L``),
as seat 1 otherwise, or opening a tie-break round when ``m = L`` at the goal or more. The decision and
the values of rolling and stopping are then that duel's (the probability of beating the leader, not
of winning the N-player game); the probability of winning from the start of the turn in the normal
game is `many.reduced_win_probability` (in the final round, the duel's value: the model ignores
the players still to come).

A turn total above the level from which every dice state stops for sure (`duel.certain_tops`) is
answered without a sweep: rolling once and then stopping is worth, as the sweep computes it (a roll
that leaves the dice as they were is rolled again, see kernel.py),
``S(0) + sum_d P_d(i) (S(T + d) - S(0)) / (1 - p_i)``. The sweep up to such a total would cost
hundreds of megabytes for a turn of a thousand brains; below it, levels stay under ``goal + cap``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..position import FieldError, Position, PositionError
from ..table import table_for
from .duel import GOAL, certain_tops, phase, stop_values
from .kernel import kernel_for
from .many import MEASURED, MeasuredError, reduced_win_probability
from .seats import Final, Game, Normal, SeatsSolution, Spot, Tie, spot_for
from .solution import GameDecision, GameSolution
from .units import exact_players

__all__ = ["AskedPolicy", "GameScores", "WinAdvice", "check_scores", "game_around", "reduced_model_error", "table_spot",
           "win_advice"]


@dataclass(frozen=True)
class GameScores:
    """The game before this turn: the mover's score, the other player's, the mover's seat (1 moves
    first in a round). ``phase`` is duel.phase's: ``normal``, ``beat`` or ``tiebreak``.

    With 3 to 8 `players`, ``other`` and ``seat`` are those of the reduced model's duel (``other``
    the best score of the others); `scores` and `player_seat` are the game's as given. Answered `exact`ly (a table of
    their own), ``phase`` is ``normal``, ``final`` (the final round) or ``tiebreak``."""

    mover: int
    other: int
    seat: int
    phase: str
    players: int = 2
    scores: tuple[int, ...] = ()
    player_seat: int = 0
    exact: bool = False

    @property
    def final_round(self) -> bool:
        """Someone has ended a turn at the goal or more (the final round, or a tie-break round)."""
        return self.phase != "normal"

    @property
    def table_players(self) -> int:
        """The players of the full-game table that decides: the game's own, answered exactly; else two (the reduced
        model's duel)."""
        return self.players if self.exact else 2


@dataclass(frozen=True)
class WinAdvice:
    """The decision by probability of winning: each action's P(win), the best, and what the worse
    one gives up (``cost``; None at the start of a turn, where rolling is compulsory)."""

    scores: GameScores
    action: str  # "roll", "stop" or "tie"
    roll: float
    stop: float
    cost: float | None
    turn_start: float  # P(the mover wins) from the start of this turn
    model_error: MeasuredError | None = None  # 3 to 8 players: the reduced model's, measured against simulation
    p_seats: tuple[float, ...] = ()  # answered exactly: P(each seat wins) from the start of this turn, in seat order


def check_scores(scores: list[int], seat: int | None, final_round: bool | None = None,
                 goal: int = GOAL, exact: bool = False) -> GameScores:
    """The game situation named by the request's fields, or a PositionError naming each fault; `exact` for more
    than two players answered from their own table."""
    errors = []
    n = len(scores)
    if not 2 <= n <= 8:
        errors.append(FieldError("scores", f"{n} players: the game has 2 to 8 players (the mover's score first, "
                                           "then the others')"))
    if seat is None:
        errors.append(FieldError("seat", "required with scores: 1 if the player to move plays first in a round, "
                                         "2 if it plays second (up to the number of players)"))
    elif 2 <= n <= 8 and not 1 <= seat <= n:
        errors.append(FieldError("seat", f"seat {seat}: {n} players sit in seats 1 to {n}"))
    if errors:
        raise PositionError(errors)
    if exact and n > 2:
        spot = _spot(Game(n, goal), tuple(scores), seat)
        game = GameScores(scores[0], max(scores[1:]), seat, PHASES[type(spot)], n, tuple(scores), seat, True)
        _check_final_round(game, final_round, goal)
        return game
    if n == 2:
        mover, other = scores
        duel_seat = seat
    else:
        mover, other = scores[0], max(scores[1:])
        duel_seat = _duel_seat(goal, seat == n, mover, other)
    try:
        kind = phase(goal, duel_seat, mover, other)
    except ValueError:
        why = _over(goal, seat, mover, other) if n == 2 else _over_many(goal, mover, other)
        raise PositionError([FieldError("scores", why)]) from None
    game = GameScores(mover, other, duel_seat, kind, n, tuple(scores), seat)
    _check_final_round(game, final_round, goal)
    return game


def game_around(position: Position | None, scores: list[int], seat: int | None,
                final_round: bool | None = None) -> GameScores:
    """The game around `position` named by a request's fields (`check_scores`): more than two players answered
    exactly where the mode's table of that many is solved (`units.exact_players`), else by the reduced model where it
    was measured (`reduced_model_error`); a PositionError naming each fault. `position` None (itself at fault): the
    scores alone, as the reduced model reads them. The full-game tables are of games without the School Bus: a
    position with it is refused (naming ``school_bus``), not answered as if it had none."""
    if position is not None and position.school_bus:
        raise PositionError([FieldError("school_bus", "the full-game tables (scores and seat: the objective win) are "
                                                      "of games without the School Bus; ask without scores for the "
                                                      "turn's own odds")])
    n = len(scores)
    game = check_scores(scores, seat, final_round,
                        exact=position is not None and n > 2 and n in exact_players(position.mode))
    if position is not None:
        reduced_model_error(position, game)
    return game


def _check_final_round(game: GameScores, final_round: bool | None, goal: int) -> None:
    if final_round is not None and final_round != game.final_round:
        reason = (f"true, but nobody has {goal} brains: the final round starts when a player ends a turn with "
                  f"{goal} or more" if final_round else
                  f"false, but a player has {goal} brains or more: the final round is on")
        raise PositionError([FieldError("final_round", reason)])


PHASES = {Normal: "normal", Final: "final", Tie: "tiebreak"}


def _spot(game: Game, scores: tuple[int, ...], seat: int) -> Spot:
    """The start of a turn named by `scores` (the mover's first, then the others' in the order they play after it)
    and the mover's `seat` (from 1), or a PositionError naming ``scores``."""
    n = game.n
    in_seats = tuple(scores[(q - seat + 1) % n] for q in range(n))
    try:
        return spot_for(game, in_seats, seat - 1)
    except ValueError as e:
        raise PositionError([FieldError("scores", f"{list(scores)} with the mover in seat {seat}: {e}")]) from None


def _duel_seat(goal: int, last: bool, mover: int, leader: int) -> int:
    """The reduced model's seat for the mover (module docstring): 1 opening a tie-break round or when
    someone plays after it in the normal game, 2 when it closes the round or must beat the leader."""
    if max(mover, leader) < goal:
        return 2 if last else 1
    return 1 if mover == leader else 2


def _over_many(goal: int, mover: int, leader: int) -> str:
    return (f"the player to move has {mover}, at {goal} or more and ahead of every other player ({leader}): its "
            "turn does not come again (the round it reached the goal in ends the game)")


def _over(goal: int, seat: int, mover: int, other: int) -> str:
    """Why seat `seat` at ``mover`` against ``other`` is no start of a turn."""
    if seat == 2:
        return f"seat 2 at {mover} against {other}: the game is over (seat 2 ended a round ahead, at {goal} or more)"
    if seat == 1 and other >= goal:
        return (f"seat 1 at {mover} against {other}: the game is over (seat 2 reached {goal}; a tie-break "
                "round starts from equal scores)")
    return (f"seat 1 at {mover} against {other}: seat 1 reached {goal}, so seat 2 plays the final turn, "
            "not seat 1")


def win_advice(solution: GameSolution | SeatsSolution, position: Position, scores: GameScores) -> WinAdvice:
    """The decision at `position` in the game `scores`, by probability of winning."""
    if (position.mode, position.recycle) != (solution.mode, solution.recycle):
        raise ValueError(f"the solution is for {solution.mode}, {solution.recycle}, not {position.mode}, "
                         f"{position.recycle}")
    table = table_for(position.mode, position.recycle)
    if position.state not in table.index:
        raise PositionError([FieldError("footprints", "no sequence of rolls leaves the dice like this in mode "
                                                      f"{position.mode}")])
    if isinstance(solution, SeatsSolution):
        return _seats_advice(solution, position, scores, table.index[position.state])
    model_error = reduced_model_error(position, scores)
    i, total = table.index[position.state], position.score
    game = (scores.seat, scores.mover, scores.other)
    top = int(certain_tops(kernel_for(solution.mode, solution.recycle), solution.values, *game).max())
    d = solution.decision(*game, i, total) if total <= top else _roll_once(solution, game, i, total)
    cost = None if position.turn_start else abs(d.p_win_roll - d.p_win_stop)
    if scores.players > 2 and scores.phase == "normal":
        start = reduced_win_probability(solution, scores.players, scores.mover, scores.other, scores.seat == 2)
    else:
        start = solution.win_probability(scores.seat, scores.mover, scores.other)
    return WinAdvice(scores, d.action, d.p_win_roll, d.p_win_stop, cost, start, model_error)


def table_spot(solution: SeatsSolution, scores: GameScores) -> Spot:
    """The start of a turn of `solution`'s table that `scores` (answered `exact`ly, `check_scores`) names: the scores
    read in seat order from the mover's seat (`seats.spot_for`); a PositionError naming ``scores`` where the table
    counts the mover out (beyond its cap) or no game of the table reaches it."""
    spot = _spot(solution.game, scores.scores, scores.player_seat)
    if spot not in solution.values:
        raise PositionError([FieldError("scores", f"{list(scores.scores)} with the mover in seat "
                                                  f"{scores.player_seat}: no game of the table reaches it")])
    return spot


def _seats_advice(solution: SeatsSolution, position: Position, scores: GameScores, i: int) -> WinAdvice:
    """The decision from the exact table of more than two players (module docstring)."""
    spot = table_spot(solution, scores)
    d = solution.decision(spot, i, position.score)
    cost = None if position.turn_start else abs(d.p_win_roll - d.p_win_stop)
    p_seats = tuple(float(v) for v in solution.values[spot])
    return WinAdvice(scores, d.action, d.p_win_roll, d.p_win_stop, cost, p_seats[scores.player_seat - 1],
                     p_seats=p_seats)


class AskedPolicy:
    """A table's decisions asked as /v1/odds asks them, for whole games of `many.play_many` (its ``policy`` and
    ``on_turn``; the players seated in any order). At each start of a turn the mover's question is put as a request
    puts it (`question`: ``scores``, the mover's first, then the others' in the order they play after it; ``seat``,
    from 1; ``final_round``), read as the API reads it (`check_scores`, `table_spot`), and the turn is played by the
    table's decisions at the start of a turn it names (`SeatsSolution.rolls`). Each question's answer is kept (a game
    asks few distinct ones). A question the API refuses (the table counts the mover out: a lead or a tie-break total
    beyond its cap) is counted in `refused`, and its turn rolls until it busts, as the table takes it to."""

    def __init__(self, solution: SeatsSolution):
        self.solution, self.n = solution, solution.game.n
        self.seating = tuple(range(self.n))  # the players in seat order
        self.spots: dict[tuple[tuple[int, ...], int, bool], Spot | None] = {}
        self.spot: Spot | None = None
        self.refused = 0

    def question(self, scores: list[int], mover: int) -> tuple[list[int], int]:
        """The request's ``scores`` and ``seat`` for `mover`, from the scores by player and the seating."""
        seat = self.seating.index(mover)
        return [scores[self.seating[(seat + k) % self.n]] for k in range(self.n)], seat + 1

    def on_turn(self, scores: list[int], mover: int, players: list[int], final: bool) -> None:
        if len(players) == self.n:  # the normal game, the final round: everyone plays, in seat order
            self.seating = tuple(players)
        asked, seat = self.question(scores, mover)
        key = (tuple(asked), seat, final)
        if key not in self.spots:
            self.spots[key] = self._read(asked, seat, final)
        self.spot = self.spots[key]
        self.refused += self.spot is None

    def _read(self, scores: list[int], seat: int, final_round: bool) -> Spot | None:
        try:
            game = check_scores(scores, seat, final_round, self.solution.game.goal, exact=True)
            return table_spot(self.solution, game)
        except PositionError:
            return None

    def rolls(self, scores: list[int], mover: int, players: list[int], final: bool, state: int, total: int) -> bool:
        return self.spot is None or self.solution.rolls(self.spot, state, total)

    def beat(self, best: int, state: int, total: int) -> bool:
        return self.spot is None or self.solution.rolls(self.spot, state, total)


def reduced_model_error(position: Position, scores: GameScores) -> MeasuredError | None:
    """The reduced model's error measured against simulation, for a game of 3 to 8 players (None for two); a
    PositionError naming ``scores`` where it was not measured (the model is not served there)."""
    if scores.players == 2 or scores.exact:
        return None
    error = MEASURED.get((position.mode, position.recycle, scores.players))
    if error is None:
        raise PositionError([FieldError("scores", f"{scores.players} players in {position.mode}, {position.recycle}: "
                                                  "the reduced model of 3 to 8 players has not been checked against "
                                                  "simulation there (bench/bench_many.py)")])
    return error


def _roll_once(solution: GameSolution, game: tuple[int, int, int], i: int, total: int) -> GameDecision:
    """The decision above every state's certain-stop level: roll once, then stop (module docstring)."""
    table = table_for(solution.mode, solution.recycle)
    stop = stop_values(solution.values, *game, total + table.max_delta + 1)
    gain = sum(float(m[i].sum()) * (stop[total + d] - stop[0]) for d, m in table.matrices.items() if m.nnz)
    roll = float(stop[0] + gain / (1 - table.self_loop_f[i]))
    here = float(stop[total])
    return GameDecision.of(roll, here)
