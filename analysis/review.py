"""Game review: replay a whole game log through the engine and price every roll/stop decision.

A log is what a scorekeeper writes down (`GameLog`): the mode and recycling variant, the players in
seat order, and for each turn the player and every roll, each die rolled with its colour and the face
it showed (the footprint dice rerolled plus the dice newly drawn). The choice after a roll is implicit
when another roll of the same turn follows, explicit otherwise (``then="stop"``); a bust ends the turn
by itself. Who is at the cup, the scores, running out of dice, the end of the game and tie-break
rounds all follow from RULES.md section 1 and are recomputed, never read from the log.

Every mode of RULES.md section 2 (Double Feature) is replayed too: a face is any face of the die
(``double-brain``, ``double-shotgun``, Santa's ``energy-drink`` and ``helmet``), written as the die
showed it. What the faces then do is the engine's own resolution (`analysis.roll`: `set_aside`,
`convert`, `rescue`, `settle`, and `recycled` when the cup runs out), so a rescue sends its die back
to the cup, Santa's drink turns green footprints into brains (a green footprint written as a brain
is the same result), the helmet raises the bust to 4 shotguns, Santa stays out at a recycling. The
position of each decision is the engine's `Position` of the dice state reached (double brains and
shotguns, effects, dice kept out). School Bus logs are not covered (a log has no bus field).

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
one chosen: 0 for the best (or for either side of a tie), never negative.

Expected brains in the base game come from its whole-turn table (seconds, once per process). In the
Double Feature modes the whole turn is 51,000 to 63,000 dice states (a minute of CPU and 2 GB) or does
not fit in memory (the sequel), so each decision is solved over the states its own turn can still
reach (`solve` rooted at its dice state, as `analysis.odds` answers a mid-turn position), reusing a
table already solved in this review when it reaches the decision. That costs seconds near a bust and
minutes far from it, so the caller bounds it: `unpriced(position)` says why a position is not solved
(None: solve it), and at most `max_solves` tables are solved per review. A decision left unpriced says
why (`DecisionReview.unpriced`) and counts in no cost; the rest of the review stands.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from operator import add, sub
from typing import TYPE_CHECKING, Any

from .dice import EFFECTS, MODES, Face, Mode
from .exact import ExactTurn, exact_turn
from .objectives import ExpectedBrains
from .policy import Solution, solve
from .position import RECYCLE_VARIANTS, DiceState, FieldError, Position, PositionError
from .roll import convert, draws, needs_recycling, recycled, rescue, set_aside, settle, transitions
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
    colour: str  # the die's name in the mode (green, yellow, red; hunk, hottie, santa)
    face: str  # the face it showed: brain, shotgun, footprints; double-brain, double-shotgun, energy-drink, helmet


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
    """Why the dice `drawn` (per kind) cannot be drawn from the cup of `state`, or None if they can.

    When the cup runs out, the brain dice go back into it, but for the dice that stay out (Santa)."""
    need = sum(drawn)
    cup = state.cup(mode)
    aside = [d for d, n, a in zip(mode.die_names, drawn, state.aside) if n and a]  # (none in the base game)
    why = f" ({', '.join(aside)} set aside for the rest of the turn)" if aside else ""
    if not needs_recycling(mode, state):
        if any(t == drawn for t, p in draws(cup, need) if p):
            return None
        return f"{_describe(mode, drawn)} drawn, but the cup holds {_describe(mode, cup)}{why}"
    back = tuple(0 if die.stays_out else b for die, b in zip(mode.dice, state.brains))
    if recycle == "before-draw":
        pool = tuple(map(add, cup, back))
        if any(t == drawn for t, p in draws(pool, need) if p):
            return None
        return (f"{_describe(mode, drawn)} drawn, but the cup ran out and holds {_describe(mode, pool)} once the "
                "brain dice are back in it")
    rest = tuple(map(sub, drawn, cup))
    if min(rest) >= 0 and any(t == rest for t, p in draws(back, need - sum(cup)) if p):
        return None
    return (f"{_describe(mode, drawn)} drawn, but the cup ran out: the last {_describe(mode, cup)} of the cup come "
            f"first (draw-then-recycle), then dice from the brain dice put back ({_describe(mode, back)})")


def _resolved(mode: Mode, state: DiceState, roll: LoggedRoll) -> tuple[bool, DiceState, int, int]:
    """A Double Feature roll from `state` resolved by the engine's steps (analysis.roll): (bust, the dice
    state after it, shotguns shown, brains noted by a recycling first). The state is returned on a bust too.

    The faces are grouped per kind as the engine's `Roll` (``((face, count), ...)`` per kind, the die's
    own `Face` objects), then: recycling if the cup ran out (`recycled`: Santa stays out), `set_aside`
    (drink, helmet), `convert` (green footprints under the drink), `rescue` (against the whole brain
    pile: only the rescued kinds change), `settle`. Bust: the pile's shotguns (a double counts 2) plus the
    roll's reach the threshold raised by the effects now in force."""
    pile, noted = (recycled(mode, state), state.pile_brains) if needs_recycling(mode, state) else (state, 0)
    faces: list[Counter[Face]] = [Counter() for _ in mode.dice]
    for die in roll.dice:
        k = mode.index(die.colour)
        faces[k][mode.dice[k].face(die.face)] += 1
    shown, aside, effects = set_aside(tuple(tuple(c.items()) for c in faces), pile.effects)
    shown, brains, doubles, _ = rescue(mode, convert(mode, shown, effects), pile.brains, pile.double_brains)
    hand, b, d, s, ds = settle(shown)
    shotguns = sum(s) + sum(ds)
    bust = pile.shotgun_count + shotguns >= mode.bust_at + sum(EFFECTS[e].bust_bonus for e in effects)
    after = DiceState(hand, tuple(map(add, brains, b)), tuple(map(add, pile.shotguns, s)),
                      tuple(map(add, doubles, d)), tuple(map(add, pile.double_shotguns, ds)),
                      tuple(map(add, pile.aside, aside)), effects)
    return bust, after, shotguns, noted


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
    if not mode.plain:
        bust, after, shotguns, noted = _resolved(mode, state, roll)
        if not any(t.probability > 0 and t.shotguns == shotguns and t.bust == bust and t.banked == noted
                   and (bust or t.state == after) for t in transitions(mode, state, recycle)):
            raise LogError([FieldError(_where(turn, k), "no legal roll from this position gives this result")])
        return bust, None if bust else after, noted
    out = needs_recycling(mode, state)
    noted = state.pile_brains if out else 0
    pile = tuple(0 for _ in state.brains) if out else state.brains
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
    if log.recycle not in RECYCLE_VARIANTS:
        raise LogError([FieldError("recycle", f"unknown variant {log.recycle!r}; known: "
                                   f"{', '.join(RECYCLE_VARIANTS)}")])
    n = len(log.players)
    scores, played = [0] * n, [0] * n
    order, at = list(range(n)), 0  # seats playing this round (all, or the tied leaders), next of them
    finished, winner, steps = False, None, []
    zero = tuple(0 for _ in mode.die_names)  # every die in the cup
    start = DiceState(zero, zero, zero) if mode.plain else DiceState(zero, zero, zero, zero, zero, zero, ())
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
                    raise LogError([FieldError(_where(t, k + 1), f"the turn busted at rolls[{k}] (its shotguns "
                                               "reached the bust): no roll follows")])
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
    """One decision: the position, the best action, each action's value under the measure, the cost.

    A decision the review did not solve (`unpriced` says why) has no best action and no values (None),
    costs nothing and is no mistake."""

    step: Step
    best: str | None  # "roll", "stop" or "tie"; None when unpriced
    roll: float | None  # value of rolling again (then playing optimally)
    stop: float | None  # value of stopping now
    unpriced: str = ""  # why the decision was not solved ("" when it was)

    @property
    def chosen(self) -> str:
        return self.step.then

    @property
    def cost(self) -> float | None:
        """Value of the best action minus the value of the choice (0 for the best, or either side of a tie);
        None when unpriced."""
        if self.best is None:
            return None
        if self.best in ("tie", self.chosen):
            return 0.0
        return (self.roll - self.stop) if self.best == "roll" else (self.stop - self.roll)

    @property
    def mistake(self) -> bool:
        return self.cost is not None and self.cost > MISTAKE_TOL


@dataclass(frozen=True)
class PlayerTotal:
    name: str
    score: int
    turns: int
    decisions: int
    mistakes: int
    cost: float  # sum of the costs of the player's priced decisions
    unpriced: int = 0  # decisions not solved (see `review`)


@dataclass(frozen=True)
class Review:
    replay: Replay
    measure: str  # "win-probability" or "expected-brains"
    reason: str  # why expected brains are the measure ("" for win probability)
    decisions: tuple[DecisionReview, ...]
    totals: tuple[PlayerTotal, ...]


class _Rooted:
    """Expected brains of Double Feature decisions, each solved over the states its turn can still reach
    (``solve(mode, recycle, objective, root)``, as `analysis.odds` does mid-turn), a solved table reused for
    every later decision it reaches; at most `max_solves` tables, and none where `unpriced` objects."""

    def __init__(self, mode: str, recycle: str, unpriced: Callable[[Position], str | None] | None,
                 max_solves: int | None):
        self.mode, self.recycle, self.unpriced, self.max_solves = mode, recycle, unpriced, max_solves
        self.solved: list[tuple[Solution, ExactTurn]] = []

    def price(self, step: Step) -> DecisionReview:
        position = step.position
        state, total = position.state, position.score
        found = next(((v, e) for v, e in self.solved if state in v.table.index), None)
        if found is None:
            why = self.unpriced(position) if self.unpriced else None
            if why is None and self.max_solves is not None and len(self.solved) >= self.max_solves:
                why = (f"not solved: this review has already solved {self.max_solves} positions of mode {self.mode}, "
                       "its limit (review a shorter log for the rest)")
            if why:
                return DecisionReview(step, None, None, None, why)
            objective = ExpectedBrains()
            found = (solve(self.mode, self.recycle, objective, state), exact_turn(self.mode, self.recycle, objective,
                                                                                 state))
            self.solved.append(found)
        values, exact = found
        i = values.table.index[state]
        roll, stop = values.values_at(i, total)
        return DecisionReview(step, exact.decision(i, total), roll, stop)


def review(log: GameLog, solution: GameSolution | None = None, missing: str = "",
           unpriced: Callable[[Position], str | None] | None = None, max_solves: int | None = None) -> Review:
    """Replay `log` and price every decision.

    `solution` is a two-player `analysis.game.GameSolution` (or None); `missing` says why there is none,
    for the answer's ``reason``. Win probability is the measure when the solution applies (two players,
    same mode and variant), expected brains otherwise, with the reason. In the Double Feature modes,
    expected brains are solved per decision: `unpriced(position)` says why a position is not to be solved
    (None: solve it) and `max_solves` bounds the tables solved (None: no bound; see the module docstring)."""
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
    plain = MODES[log.mode].plain
    if measure == WIN_PROBABILITY or plain:  # the whole turn's table, as the solutions number its states
        index = table_for(log.mode, log.recycle).index
    if measure == EXPECTED_BRAINS and plain:
        objective = ExpectedBrains()
        values, exact = solve(log.mode, log.recycle, objective), exact_turn(log.mode, log.recycle, objective)
    rooted = _Rooted(log.mode, log.recycle, unpriced, max_solves)
    decisions = []
    for step in played.steps:
        if step.then is None:
            continue
        if measure == EXPECTED_BRAINS and not plain:
            decisions.append(rooted.price(step))
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
                                  sum(d.mistake for d in mine), sum((d.cost for d in mine if d.cost is not None), 0.0),
                                  sum(d.cost is None for d in mine)))
    return Review(played, measure, reason, tuple(decisions), tuple(totals))
