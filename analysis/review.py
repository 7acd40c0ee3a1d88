"""Game review: replay a whole game log through the engine and price every roll/stop decision.

A log is what a scorekeeper writes down (`GameLog`): the mode and recycling variant, the players in
seat order, and for each turn the player and every roll, each die rolled with its colour and the face
it showed (the footprint dice rerolled plus the dice newly drawn). The choice after a roll is implicit
when another roll of the same turn follows, explicit otherwise (``then="stop"``); a bust ends the turn
by itself. Who is at the cup, the scores, running out of dice, the end of the game and tie-break
rounds all follow from RULES.md section 1 and are recomputed, never read from the log.

`replay` checks every roll against the engine rather than against a second copy of the rules: the dice
drawn must be a draw of positive probability under `analysis.roll.draws` (from the cup, or from the cup
refilled with the brain dice as the recycling variant says, `needs_recycling`), and the result must be
one of `analysis.roll.transitions` from the dice state before it. The first roll that no legal play can
produce stops the replay with a `LogError` naming its field (``turns[3].rolls[1].dice``) and why.

`review` then prices each decision (every roll but the first of a turn is preceded by one, and every
turn that does not bust ends with one). With a two-player `GameSolution` of the same mode and variant
the measure is the mover's probability of winning (`GameSolution.decision`); otherwise (no table, or
more than two players, which no table covers) it is the turn's expected brains, the engine's
``expected-brains`` objective (`analysis.policy.solve` for the values, `analysis.exact` for the action,
as `analysis.odds` does). The cost of a choice is the value of the best action minus the value of the
one chosen: 0 for the best (or for either side of a tie), never negative. The Double Feature modes are
refused: their rolls (rescues, Santa) and their tables are not wired into the review yet.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from operator import add, sub
from typing import TYPE_CHECKING, Any

from .dice import MODES, Mode
from .exact import exact_turn
from .policy import Objective, solve
from .position import RECYCLE_VARIANTS, DiceState, FieldError, Position, PositionError
from .roll import draws, needs_recycling, transitions
from .table import table_for

if TYPE_CHECKING:
    from .game import GameSolution

__all__ = ["GOAL", "MISTAKE_TOL", "RolledDie", "LoggedRoll", "LoggedTurn", "GameLog", "LogError", "Step",
           "Replay", "DecisionReview", "PlayerTotal", "Review", "replay", "review"]

GOAL = 13  # RULES.md "End of the game": a turn ending at 13 or more brains makes it the last round
MAX_PLAYERS = 8
# A choice costing less than this is not counted as a mistake: the win probabilities of a GameSolution
# carry float errors of about 1e-12, and the expected-brains values of the float solver below 1e-12 too.
MISTAKE_TOL = 1e-9
WIN_PROBABILITY, EXPECTED_BRAINS = "win-probability", "expected-brains"


class LogError(PositionError):
    """An impossible game log; `errors` names the field at fault (``turns[i].rolls[j]...``) and why."""


@dataclass(frozen=True)
class RolledDie:
    colour: str  # the die's name in the mode (green, yellow, red)
    face: str  # brain, shotgun or footprints


@dataclass(frozen=True)
class LoggedRoll:
    dice: tuple[RolledDie, ...]
    then: str | None = None  # "roll" or "stop" after this roll; None: implicit (or the turn busted)


@dataclass(frozen=True)
class LoggedTurn:
    player: str | int  # a player's name, or a seat number from 1
    rolls: tuple[LoggedRoll, ...]


@dataclass(frozen=True)
class GameLog:
    mode: str
    recycle: str
    players: tuple[str, ...]  # names in seat order (seat 1 plays first)
    turns: tuple[LoggedTurn, ...]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameLog:
        """The log from its JSON form (openapi.yaml, `GameLog`): ``players`` is a list of names or a count
        (the players are then called ``player 1``, ``player 2``, ...)."""
        players = _whole(data.get("players", 2))
        if isinstance(players, int) and not isinstance(players, bool):
            if not 2 <= players <= MAX_PLAYERS:
                raise LogError([FieldError("players", f"{players} players; the game has 2 to {MAX_PLAYERS}")])
            names = tuple(f"player {k}" for k in range(1, players + 1))
        else:
            names = tuple(players)
            errors = [FieldError(f"players[{k}]", f"{name!r} is already the name of players[{names.index(name)}]")
                      for k, name in enumerate(names) if names.index(name) != k]
            if not 2 <= len(names) <= MAX_PLAYERS:
                errors.append(FieldError("players", f"{len(names)} players; the game has 2 to {MAX_PLAYERS}"))
            if errors:
                raise LogError(errors)
        turns = tuple(
            LoggedTurn(_whole(turn["player"]), tuple(
                LoggedRoll(tuple(RolledDie(d["colour"], d["face"]) for d in roll["dice"]), roll.get("then"))
                for roll in turn["rolls"]))
            for turn in data.get("turns", ()))
        return cls(data.get("mode", "original"), data.get("recycle", "before-draw"), names, turns)


def _whole(value: Any) -> Any:
    """JSON's 2.0 is the number 2 (JSON Schema's integer type agrees)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


@dataclass(frozen=True)
class Step:
    """One roll of the log, replayed: where it happened, what it did, and the choice after it."""

    turn: int  # index in the log's turns
    roll: int  # index in the turn's rolls
    seat: int  # 0-based
    scores: tuple[int, ...]  # every player's score at the start of this turn
    position: Position | None  # the position after the roll; None on a bust
    then: str | None  # "roll" or "stop" (the decision); None after a bust

    @property
    def path(self) -> str:
        return f"turns[{self.turn}].rolls[{self.roll}]"


@dataclass(frozen=True)
class Replay:
    log: GameLog
    steps: tuple[Step, ...]
    scores: tuple[int, ...]  # after the last turn of the log
    turns: tuple[int, ...]  # turns played, per seat
    finished: bool
    winner: int | None  # seat (0-based) once the game is over


def _where(turn: int, roll: int, tail: str = "") -> str:
    return f"turns[{turn}].rolls[{roll}]{tail}"


def _counts(mode: Mode, colours: list[str]) -> tuple[int, ...]:
    c = Counter(colours)
    return tuple(c[d] for d in mode.die_names)


def _describe(mode: Mode, counts: tuple[int, ...]) -> str:
    return ", ".join(f"{n} {d}" for d, n in zip(mode.die_names, counts) if n) or "no die"


def _check_draw(mode: Mode, state: DiceState, recycle: str, drawn: tuple[int, ...]) -> str | None:
    """Why the dice `drawn` (per kind) cannot be drawn from the cup of `state`, or None if they can."""
    need = sum(drawn)
    cup = state.cup(mode)
    if not needs_recycling(mode, state):
        if any(t == drawn for t, p in draws(cup, need) if p):
            return None
        return f"{_describe(mode, drawn)} drawn, but the cup holds {_describe(mode, cup)}"
    if recycle == "before-draw":
        pool = tuple(map(add, cup, state.brains))
        if any(t == drawn for t, p in draws(pool, need) if p):
            return None
        return (f"{_describe(mode, drawn)} drawn, but the cup ran out and holds {_describe(mode, pool)} once the "
                "brain dice are back in it")
    rest = tuple(map(sub, drawn, cup))
    if min(rest) >= 0 and any(t == rest for t, p in draws(state.brains, need - sum(cup)) if p):
        return None
    return (f"{_describe(mode, drawn)} drawn, but the cup ran out: the last {_describe(mode, cup)} of the cup come "
            f"first (draw-then-recycle), then dice from the brain dice put back ({_describe(mode, state.brains)})")


def _roll(mode: Mode, recycle: str, state: DiceState, roll: LoggedRoll, turn: int, k: int,
          ) -> tuple[bool, DiceState | None, int]:
    """Replay one roll from `state`: (bust, the dice state after it or None, brains noted by a recycling)."""
    errors = []
    for j, die in enumerate(roll.dice):
        if die.colour not in mode.die_names:
            errors.append(FieldError(_where(turn, k, f".dice[{j}].colour"), f"no {die.colour!r} die in mode "
                                     f"{mode.name}; known: {', '.join(mode.die_names)}"))
        elif mode.dice[mode.index(die.colour)].face(die.face) is None:
            errors.append(FieldError(_where(turn, k, f".dice[{j}].face"), f"a {die.colour} die has no "
                                     f"{die.face!r} face"))
    if errors:
        raise LogError(errors)
    where = _where(turn, k, ".dice")
    if len(roll.dice) != mode.dice_per_roll:
        raise LogError([FieldError(where, f"{len(roll.dice)} dice listed, but every roll is {mode.dice_per_roll} "
                                   f"dice: the {sum(state.hand)} footprint dice in hand rerolled plus "
                                   f"{mode.dice_per_roll - sum(state.hand)} drawn")])
    rolled = _counts(mode, [d.colour for d in roll.dice])
    drawn = tuple(map(sub, rolled, state.hand))
    if min(drawn) < 0:
        missing = tuple(max(0, -n) for n in drawn)
        raise LogError([FieldError(where, f"the footprint dice in hand ({_describe(mode, state.hand)}) are all "
                                   f"rerolled, but this roll lacks {_describe(mode, missing)}")])
    reason = _check_draw(mode, state, recycle, drawn)
    if reason:
        raise LogError([FieldError(where, reason)])
    recycled = needs_recycling(mode, state)
    noted = state.pile_brains if recycled else 0
    pile = tuple(0 for _ in state.brains) if recycled else state.brains
    hand = _counts(mode, [d.colour for d in roll.dice if d.face == "footprints"])
    brains = _counts(mode, [d.colour for d in roll.dice if d.face == "brain"])
    shotguns = _counts(mode, [d.colour for d in roll.dice if d.face == "shotgun"])
    after = DiceState(hand, tuple(map(add, pile, brains)), tuple(map(add, state.shotguns, shotguns)))
    bust = sum(after.shotguns) >= state.bust_at(mode)
    shown = (sum(brains), sum(shotguns))
    # The engine's own transitions are the authority: the result must be one of them.
    if not any(t.probability > 0 and (t.brains, t.shotguns) == shown and t.bust == bust and t.banked == noted
               and (bust or t.state == after) for t in transitions(mode, state, recycle)):
        raise LogError([FieldError(_where(turn, k), "no legal roll from this position gives this result")])
    return bust, None if bust else after, noted


def _seat_of(log: GameLog, player: str | int) -> int | None:
    if isinstance(player, int) and not isinstance(player, bool):
        return player - 1 if 1 <= player <= len(log.players) else None
    return log.players.index(player) if player in log.players else None


def replay(log: GameLog) -> Replay:
    """Replay `log` by the rules; a `LogError` names the first field no legal game can produce."""
    if log.mode not in MODES:
        raise LogError([FieldError("mode", f"unknown mode {log.mode!r}; known: {', '.join(MODES)}")])
    mode = MODES[log.mode]
    if not mode.plain:
        raise LogError([FieldError("mode", f"the game review covers the base game (original) only; mode {log.mode} "
                                   "(Double Feature: rescues, Santa) is not supported yet")])
    if log.recycle not in RECYCLE_VARIANTS:
        raise LogError([FieldError("recycle", f"unknown variant {log.recycle!r}; known: "
                                   f"{', '.join(RECYCLE_VARIANTS)}")])
    n = len(log.players)
    scores, played = [0] * n, [0] * n
    order, at = list(range(n)), 0  # seats playing this round (all, or the tied leaders), next of them
    finished, winner, steps = False, None, []
    start = DiceState(*(tuple(0 for _ in mode.die_names),) * 3)  # every die in the cup
    for t, turn in enumerate(log.turns):
        if finished:
            raise LogError([FieldError(f"turns[{t}]", f"the game is over: {log.players[winner]} won "
                                       f"{scores[winner]} to {max(s for k, s in enumerate(scores) if k != winner)} "
                                       f"after turns[{t - 1}]")])
        seat = order[at]
        if _seat_of(log, turn.player) != seat:
            who = "is not a player" if _seat_of(log, turn.player) is None else "plays out of turn"
            raise LogError([FieldError(f"turns[{t}].player", f"{turn.player!r} {who}: it is "
                                       f"{log.players[seat]}'s turn")])
        if not turn.rolls:
            raise LogError([FieldError(f"turns[{t}].rolls", "the first roll of a turn is compulsory: a turn has "
                                       "at least one roll")])
        state, banked, total = start, 0, 0
        for k, roll in enumerate(turn.rolls):
            bust, state, noted = _roll(mode, log.recycle, state, roll, t, k)
            banked += noted
            last = k == len(turn.rolls) - 1
            if bust:
                if not last:
                    raise LogError([FieldError(_where(t, k + 1), f"the turn busted at rolls[{k}] (3 shotguns): no "
                                               "roll follows")])
                if roll.then is not None:
                    raise LogError([FieldError(_where(t, k, ".then"), f"{roll.then!r}, but this roll busts: the "
                                               "turn is over, there is no choice")])
                steps.append(Step(t, k, seat, tuple(scores), None, None))
                total = 0
                break
            if roll.then not in (None, "roll", "stop"):
                raise LogError([FieldError(_where(t, k, ".then"), f"{roll.then!r} is not a choice: roll or stop")])
            then = roll.then or ("roll" if not last else None)
            if then is None:
                raise LogError([FieldError(_where(t, k, ".then"), "the turn ends here without a bust: write "
                                           "\"then\": \"stop\"")])
            if then == "stop" and not last:
                raise LogError([FieldError(_where(t, k + 1), f"the player stopped after rolls[{k}]: no roll "
                                           "follows")])
            if then == "roll" and last:
                raise LogError([FieldError(_where(t, k, ".then"), "\"roll\", but no roll follows in this turn")])
            try:
                position = Position.from_state(mode, state, banked, log.recycle)
            except PositionError as e:  # only absurd logs get here (over MAX_BANKED brains noted in a turn)
                raise LogError([FieldError(_where(t, k), e.errors[0].reason)]) from None
            steps.append(Step(t, k, seat, tuple(scores), position, then))
            total = position.score
        scores[seat] += total
        played[seat] += 1
        at += 1
        if at == len(order):  # the round is complete
            at = 0
            if max(scores) >= GOAL:
                best = max(scores[s] for s in order)
                order = [s for s in order if scores[s] == best]
                if len(order) == 1:
                    finished, winner = True, order[0]
    return Replay(log, tuple(steps), tuple(scores), tuple(played), finished, winner)


@dataclass(frozen=True)
class DecisionReview:
    """One decision: the position, the best action, each action's value under the measure, the cost."""

    step: Step
    best: str  # "roll", "stop" or "tie"
    roll: float  # value of rolling again (then playing optimally)
    stop: float  # value of stopping now

    @property
    def chosen(self) -> str:
        return self.step.then

    @property
    def cost(self) -> float:
        """Value of the best action minus the value of the choice (0 for the best, or either side of a tie)."""
        if self.best in ("tie", self.chosen):
            return 0.0
        return (self.roll - self.stop) if self.best == "roll" else (self.stop - self.roll)

    @property
    def mistake(self) -> bool:
        return self.cost > MISTAKE_TOL


@dataclass(frozen=True)
class PlayerTotal:
    name: str
    score: int
    turns: int
    decisions: int
    mistakes: int
    cost: float  # sum of the costs of the player's decisions


@dataclass(frozen=True)
class Review:
    replay: Replay
    measure: str  # "win-probability" or "expected-brains"
    reason: str  # why expected brains are the measure ("" for win probability)
    decisions: tuple[DecisionReview, ...]
    totals: tuple[PlayerTotal, ...]


def review(log: GameLog, solution: GameSolution | None = None, missing: str = "") -> Review:
    """Replay `log` and price every decision.

    `solution` is a two-player `analysis.game.GameSolution` (or None); `missing` says why there is none,
    for the answer's ``reason``. Win probability is the measure when the solution applies (two players,
    same mode and variant), expected brains otherwise, with the reason."""
    played = replay(log)
    n = len(log.players)
    if n != 2:
        reason = f"{n} players: win-probability tables are solved for two players only"
    elif solution is None:
        reason = missing or "no two-player table was given"
    elif (solution.mode, solution.recycle) != (log.mode, log.recycle):
        reason = (f"the two-player table is for {solution.mode} ({solution.recycle}), the game is {log.mode} "
                  f"({log.recycle})")
    else:
        reason = ""
    measure = EXPECTED_BRAINS if reason else WIN_PROBABILITY
    if measure == EXPECTED_BRAINS:
        objective = Objective()
        values, exact = solve(log.mode, log.recycle, objective), exact_turn(log.mode, log.recycle, objective)
    index = table_for(log.mode, log.recycle).index  # dice state -> its index, as the solutions number them
    decisions = []
    for step in played.steps:
        if step.then is None:
            continue
        i, total = index[step.position.state], step.position.score
        if measure == WIN_PROBABILITY:
            mover, other = step.scores[step.seat], step.scores[1 - step.seat]
            d = solution.decision(step.seat + 1, mover, other, i, total)
            decisions.append(DecisionReview(step, d.action, d.p_win_roll, d.p_win_stop))
        else:
            roll, stop = values.values_at(i, total)
            decisions.append(DecisionReview(step, exact.decision(i, total), roll, stop))
    totals = []
    for seat, name in enumerate(log.players):
        mine = [d for d in decisions if d.step.seat == seat]
        totals.append(PlayerTotal(name, played.scores[seat], played.turns[seat], len(mine),
                                  sum(d.mistake for d in mine), sum(d.cost for d in mine)))
    return Review(played, measure, reason, tuple(decisions), tuple(totals))
