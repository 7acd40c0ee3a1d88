"""The /v1/odds answer of one position and objective, as the documented JSON: the position read from validated
request values (`position_from`), the answer computed for the request where no stored solution holds it (`compute`,
within the per-mode limits below), and rendered (`answer`), shared by every process through the store
(`shared_answer`). api/odds.py serves it; api/tables.py renders a win answer's position and next roll with it.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any

from flask import current_app

from analysis import EFFECTS, Objective, Odds, Position, PositionError, odds, parse_objective
from analysis.exact import fraction_text
from analysis.odds import NearTie, TurnStartTooLarge, within
from analysis.roll import legal_actions
from workers.store import CorruptEntry, Key, Store
from workers.tasks import store

from .errors import ApiError, FieldError

__all__ = ["answer", "answer_key", "approximate", "compute", "left_out", "position_from", "room", "shared_answer",
           "too_large", "only_rolling_action", "exact_json", "EXPANSION_FIELDS", "BUS_FIELDS", "POSITION_FIELDS"]

log = logging.getLogger(__name__)

# The Double Feature's position fields (lists of die or effect names), beside the base game's piles, and the
# School Bus's (a switch, token counts, the bus's phase).
EXPANSION_FIELDS = ("double_brains", "double_shotguns", "effects", "kept_out")
BUS_FIELDS = ("school_bus", "bus_brains", "bus_shotguns", "riding", "bus_out")
PILES = ("footprints", "brains", "shotguns", *EXPANSION_FIELDS)
COUNTS = ("banked", "bus_brains", "bus_shotguns")
POSITION_FIELDS = ("mode", "banked", "recycle", *PILES, *BUS_FIELDS)
# Modes answered only near the end of a turn: the most shotguns a position may be from a bust, less one (`room`).
# analysis solves a Double Feature position over the states its turn can reach from there; in the sequel, with one
# shotgun set aside and Santa in the cup (room 2) that is ~114,000 states (up to 16 s of CPU and 0.9 GB), with none
# (room 3) ~300,000 states whose exact values pass 5.7 GB: there the answer is the float solution of the whole turn
# (`approximate`, for objectives the stored solution does not hold). With the School Bus (phases and tokens besides the
# dice) every Double Feature mode is answered only nearer the end. With rescues (Big Summer, the sequel) YIELD makes
# cycles through lower scores, each a small linear system solved in residues: room 1 (seconds; the sequel's reach:12
# with two shotguns set aside 35 s); at room 2 Big Summer's bus table is the whole turn's, 50 s to exact values of
# 31,000-bit denominators and 99 s and 15 GB more for the distribution (the sequel's room 2: 1,043,126 nodes, 26 s for
# the table, 37 s for the policy, 19 s for exact values, 49 s and 9.4 GB more for the distribution). Santa has no
# rescue: room 2 (one shotgun set aside, his helmet still possible) takes 6-30 s of CPU and up to 2.1 GB; room 3 is his
# whole turn (6.6 million decision pairs to value).
MAX_ROOM = {"direct-to-video-sequel": 2}
BUS_MAX_ROOM = {"big-summer-action-movie": 1, "santa-claus-meets-the-zombies": 2, "direct-to-video-sequel": 1}
# One shotgun further from a bust than `BUS_MAX_ROOM`, the modes with rescues are answered with the bus without the
# turn's score distribution (`left_out`) and for the expected-brains objective only: the next roll, every action's
# exact value and the decision take ~50 s of CPU and 2.6 GB in Big Summer (its whole turn), ~80 s and 4.4 GB in the
# sequel; the distribution through YIELD's cycles 99 s and 15 GB more, 49 s and 9.4 GB.
BUS_VALUES_ROOM = {"big-summer-action-movie": 2, "direct-to-video-sequel": 2}
# Further from a bust (up to this room), a School Bus position is answered from the float solution of the bus table
# it reaches (`approximate`): Santa's whole bus turn, 676,271 nodes, 30-32 s of CPU and 2 GB (bench/bench_floats.py;
# its exact values need 8.2 million (node, score) pairs: unfinished after 12.5 minutes and 3.4 GB).
BUS_FLOAT_ROOM = {"santa-claus-meets-the-zombies": 3}
# A reach:K or rule:N,S target this far above the score is the most a request solves with the School Bus, and in
# the sequel more than `FAR_TARGET_ROOM` from a bust: its policy rolls on through many more (state, score) pairs,
# each an exact fraction. From the base game's bus turn start reach:20 takes 94 s of CPU and 2.9 GB, reach:40 over
# 7 minutes; in the sequel three shotguns from a bust (room 2), reach:20 45 s, reach:40 186 s; Santa with the bus
# three from a bust, reach:21 from a score of 1 170 s and 5.7 GB, reach:14 60 s and 2.5 GB.
MAX_TARGET = 20
FAR_TARGET_ROOM = {"direct-to-video-sequel": 1}


def position_from(values: Mapping[str, Any]) -> tuple[Position, str]:
    """The position and objective named by validated request values, or a 422 naming every fault."""
    fields = {k: values[k] for k in POSITION_FIELDS if k in values}
    for pile in PILES:
        if pile in fields:
            fields[pile] = tuple(fields[pile])
    for name in COUNTS:
        if isinstance(fields.get(name), float) and fields[name].is_integer():
            fields[name] = int(fields[name])  # JSON's 9.0 is the number 9 (the spec's integer type agrees)
    errors: list[FieldError] = []
    objective = values.get("objective", "expected-brains")
    try:
        objective = parse_objective(objective).name
    except ValueError as e:
        errors.append(FieldError("objective", str(e)))
    try:
        position = Position(**fields)
    except PositionError as e:
        errors = e.errors + errors
    if errors:
        raise ApiError(422, "impossible request: " + "; ".join(f"{e.field}: {e.reason}" for e in errors), errors)
    return position, objective


@lru_cache(maxsize=512)
def compute(position: Position, objective: str) -> Odds:
    """`analysis.odds`, memoised: exact score distributions near the start of a turn take seconds.

    A position too large to solve here (`too_large`) is a 422 naming why, never a 500; so is one whose answer
    would be in floats (`approximate`) where rolling and stopping are too nearly equal for floats to decide."""
    fault = too_large(position, parse_objective(objective))
    try:
        if fault is None:
            return odds(position, objective, distribution=left_out(position) is None,
                        exact=approximate(position) is None)
    except TurnStartTooLarge as e:
        fault = FieldError("mode", str(e))
    except NearTie as e:
        fault = FieldError("shotguns", f"{room(position) + 1} shotguns from a bust: {e}")
    hint = "; its next roll's bust chance alone: /v1/bust.txt" if only_rolling_action(position) else ""
    raise ApiError(422, f"position too large to solve: {fault.field}: {fault.reason}{hint}", [fault])


def room(position: Position) -> int:
    """Shotguns the turn can still take and go on: the bust threshold, raised by every effect a die still in
    play (not in the shotgun pile, not set aside) may yet put in force, less the shotguns set aside (and the
    bus's shotgun tokens), less one. Shotguns never come back, so the states a turn can reach from a
    position grow with its room."""
    mode, state = position.game_mode, position.state
    aside = state.aside or (0,) * len(mode.dice)
    possible = {f.effect for die, n, s, a in zip(mode.dice, mode.counts, state.shotguns, aside) if n > s + a
                for f in die.faces if f.effect in EFFECTS} - set(state.effects)
    taken = state.shotgun_count + position.bus_shotguns
    return state.bust_at(mode) + sum(EFFECTS[e].bust_bonus for e in possible) - taken - 1


def max_room(position: Position) -> int | None:
    """The most `room` at which the server answers a position of this kind in full (None: any)."""
    if position.school_bus and not position.game_mode.plain:
        return BUS_MAX_ROOM[position.mode]
    return MAX_ROOM.get(position.mode)


def approximate(position: Position) -> str | None:
    """Why the answer to this position has float values and no score distribution (None: it is exact): a
    mode answered exactly only near the end of a turn (`MAX_ROOM`), without the School Bus, further from a
    bust; with it, further than its exact values reach (`BUS_VALUES_ROOM`, `BUS_MAX_ROOM`) and up to
    `BUS_FLOAT_ROOM`. Its values are the float solution of the turn (`analysis.odds.odds(..., exact=False)`)."""
    mode, here = position.mode, room(position)
    where = "the start of a turn" if position.turn_start else f"{here + 1} shotguns from a bust"
    floats = ("so the values of its actions are floats, solved over the exact transition table and within 1e-9 "
              "(relative above 1) of the exact ones, the decision certain, and the exact score distribution is "
              "given from")
    if position.school_bus:
        exact_room = BUS_VALUES_ROOM.get(mode, BUS_MAX_ROOM.get(mode))
        if exact_room is None or not exact_room < here <= BUS_FLOAT_ROOM.get(mode, -1):
            return None
        return (f"{where} (counting shotgun tokens and a helmet Santa may still show), mode {mode} with the School "
                "Bus has most of its turn ahead: its whole bus turn, whose exact values need 8.2 million (node, "
                f"score) pairs (unfinished after 12.5 minutes); {floats} {BUS_MAX_ROOM[mode] + 1} shotguns from a "
                "bust")
    limit = MAX_ROOM.get(mode)
    if limit is None or here <= limit:
        return None
    return (f"{where} (counting a helmet Santa may still show), mode {mode} has most of its turn ahead: "
            "about 6 million (state, score) pairs up to its cap of 2,904 brains, whose exact fractions did not fit "
            f"in 21 GB; {floats} {limit + 1} shotguns from a bust")


def left_out(position: Position) -> str | None:
    """Why the answer to this position leaves out the turn's score distribution (None: it does not; a position
    `too_large` refuses is not answered at all)."""
    limit, floats = max_room(position), approximate(position)
    if not position.school_bus or floats is not None:
        return floats
    if limit is None or room(position) <= limit:
        return None
    return (f"{room(position) + 1} shotguns from a bust (counting shotgun tokens and a helmet Santa may still show), "
            f"mode {position.mode} with the School Bus has most of its turn ahead, where YIELD's rescues make "
            "cycles: the exact score distribution takes minutes and 9-15 GB there; it is given from one shotgun "
            "later")


def too_large(position: Position, objective: Objective | None = None) -> FieldError | None:
    """Why the server does not solve this valid position (with this objective) for one request (None: it does)."""
    if objective is not None and objective.kind != "expected-brains" and objective.target - position.score > MAX_TARGET:
        above = (f"a target at most {MAX_TARGET} brains above the turn's score ({position.score}) is solved for one "
                 f"request; {objective.name} is {objective.target - position.score} above it, whose exact values take "
                 "minutes")
        if position.school_bus:
            return FieldError("objective", f"with the School Bus {above}")
        limit = FAR_TARGET_ROOM.get(position.mode)
        if limit is not None and limit < room(position) <= max_room(position):
            return FieldError("objective", f"in mode {position.mode} {room(position) + 1} shotguns from a bust "
                                           f"(at most {limit + 1}: any target) {above}")
    limit = max_room(position)
    if limit is None or room(position) <= limit or approximate(position) is not None:  # further: in floats
        return None
    kind = f"mode {position.mode}{' with the School Bus' if position.school_bus else ''}"
    values = BUS_VALUES_ROOM.get(position.mode) if position.school_bus else None
    if values is not None and room(position) <= values:
        if objective is None or objective.kind == "expected-brains":
            return None
        return FieldError("objective", f"{room(position) + 1} shotguns from a bust {kind} is answered for the "
                                       f"objective expected-brains only, without the turn's score distribution; "
                                       f"{objective.name} from {limit + 1} shotguns from a bust")
    answered = (f"{kind} is answered at most {limit + 1} shotguns from a bust, counting shotgun tokens and a "
                "helmet Santa may still show")
    if values is not None:
        answered += f" ({values + 1} for expected-brains, without the turn's score distribution)"
    if position.turn_start:
        return FieldError("mode", f"the start of a turn in {kind}: its whole turn is too large to solve here; "
                                  f"{answered}")
    return FieldError("shotguns", f"{room(position) + 1} shotguns from a bust: too early in the turn, whose dice "
                                  f"states are too many to solve for one request; {answered}")


def exact_json(x: Fraction) -> dict[str, Any]:
    return {"exact": fraction_text(x), "value": float(x)}


def _value(x: Fraction | float, bound: float | None = None) -> dict[str, Any]:
    """An action's value: exact (schema `Exact`), or a float and its error bound (`Approximate`): `bound`, else
    the solver's `within`."""
    if isinstance(x, Fraction):
        return exact_json(x)
    return {"value": x, "within": within(x) if bound is None else bound}


def answer(o: Odds) -> dict[str, Any]:
    """The documented JSON answer (openapi.yaml, schema `Odds`)."""
    p, roll, decision = o.position, o.next_roll, o.decision
    double_feature, bus = not p.game_mode.plain, p.school_bus  # the base game's answer is what it always was
    return {
        "position": {
            "mode": p.mode,
            "footprints": list(p.footprints),
            "brains": list(p.brains),
            "shotguns": list(p.shotguns),
            "banked": p.banked,
            **({k: list(getattr(p, k)) for k in EXPANSION_FIELDS} if double_feature else {}),
            **({**{k: getattr(p, k) for k in BUS_FIELDS}, "first_roll": p.first_roll} if bus else {}),
            "recycle": p.recycle,
            "score": p.score,
            "cup": p.cup,
        },
        "next_roll": {
            "bust": exact_json(roll.bust),
            "outcomes": [{"brains": b, "shotguns": s, **exact_json(q)} for b, s, q in roll.outcomes],
            "expected_brains": exact_json(roll.expected_brains),
            "recycles": roll.recycles,
        },
        "decision": {
            "action": decision.action,
            "objective": decision.objective.name,
            "roll": _value(decision.roll, decision.within),
            "stop": exact_json(decision.stop),
            **({"actions": _actions(o)} if double_feature or bus else {}),
            **({"give_up": _give_up(o)} if bus else {}),
        },
        **({"turn": _turn(o)} if o.score_distribution is not None else {"turn_left_out": left_out(p)}),
    }


def _turn(o: Odds) -> dict[str, Any]:
    """The turn's final score distribution (schema `Turn`): exact, or floats each within `within`."""
    if o.distribution_within is None:
        return {"score_distribution": [{"score": k, **exact_json(q)} for k, q in sorted(o.score_distribution.items())]}
    return {"score_distribution": [{"score": k, "value": q} for k, q in sorted(o.score_distribution.items())],
            "within": o.distribution_within}


def _actions(o: Odds) -> list[dict[str, Any]]:
    """Every legal action with its value (schema `ActionValue`) and, for an action that rolls, its roll."""
    rolls = {a: {"bust": exact_json(r.bust), "expected_brains": exact_json(r.expected_brains)}
             for a, r in o.next_rolls.items()}
    return [{"action": action, "value": _value(value, o.decision.within),
             **({"next_roll": rolls[action]} if action in rolls else {})}
            for action, value in o.decision.actions.items()]


def _give_up(o: Odds) -> list[dict[str, Any]]:
    """Tyre tracks on the best rolling action's roll (schema `GiveUp`): per result that shows them, its
    probability, what it leaves, the brain the policy gives up and the exact value of every choice."""
    return [{"brains": g.brains, "shotguns": g.shotguns, "probability": exact_json(g.probability),
             "footprints": list(g.footprints), "brain_pile": list(g.pile), "choice": g.choice,
             "choices": [{"give_up": name, "value": _value(v)} for name, v in g.choices.items()]}
            for g in o.give_up]


def answer_key(position: Position, objective: str) -> Key:
    """The store's name for the answer to (`position`, `objective`): a digest of both (a frozen value's repr
    names every field), under the engine's version like a table."""
    digest = hashlib.sha256(repr((position, objective)).encode()).hexdigest()[:40]
    return Key("answer", position.mode, position.recycle, 1, tag=digest)


def shared_answer(position: Position, objective: str) -> dict[str, Any]:
    """The answer, from the store if another worker (or this server before a restart) computed it; computed
    here otherwise, and stored when it took `SHARE_ANSWERS_AFTER` seconds or more.

    Why: `compute`'s cache is one process's, and gunicorn runs several; a School Bus position takes half a
    minute or more, and each worker would solve it again. Cheap answers are not stored (every position
    would be a file). A stored answer that fails its checksum is moved aside and computed again. Two workers
    asked for one answer at once compute it once: the second waits on the answer's lock (`Store.lock`), then
    reads it (or, for an answer quicker than the threshold, computes it in turn)."""
    after = current_app.config["SHARE_ANSWERS_AFTER"]
    if after is None:
        return answer(compute(position, objective))
    shelf, key = store(), answer_key(position, objective)
    stored = _stored(shelf, key)
    if stored is not None:
        return stored
    with shelf.lock(key):  # a worker computing this answer now: wait for it, then read what it stored
        stored = _stored(shelf, key)
        if stored is not None:
            return stored
        start = time.perf_counter()
        result = answer(compute(position, objective))
        if time.perf_counter() - start >= after:
            shelf.put(key, result)
    return result


def _stored(shelf: Store, key: Key) -> dict[str, Any] | None:
    try:
        entry = shelf.get(key)
    except CorruptEntry as e:
        log.warning("%s", e)
        return None
    return None if entry is None else entry[0]


def only_rolling_action(position: Position) -> str | None:
    state = position.bus_state if position.school_bus else position.state
    rolling = [a for a in legal_actions(position.game_mode, state) if a != "stop"]
    return rolling[0] if len(rolling) == 1 else None
