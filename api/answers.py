"""The /v1/odds answer of one position and objective, as the documented JSON: the position and the objective read
from validated request values (`position_from`: the objective parsed once, and passed on as its type), the answer
read from the mode's stored solution (`from_solution`) or computed where none holds it (`compute`, within the per-mode
limits of analysis/budgets.py), and rendered (`answer`), shared by every process through the store (`shared_answer`).
api/odds.py serves it; api/tables.py serves the objective win with it.

No request computes for long: an answer is computed by a job (workers/jobs.py's `submit`, by the answer's key: a
thread of the server, `JOBS` of them computing at a time), which the request waits for up to `ANSWER_WAIT` seconds
(half its deadline at most), and what the job raised is raised to the request; past them the answer is a 503 with
`Retry-After` naming the job, ``/v1/answers/{id}``, while the job goes on and stores the answer, which the question
asked again (or the job's URL) then reads. (An answer read from a stored solution takes milliseconds, but its score
distribution is a flow over the rest of the turn: seconds early in the longest turns.) The job holds the answer's
lock in the store while it computes, so that every process asked the same question computes it once; a process that
dies mid-job leaves nothing half stored, and the question asked again starts it again.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import TimeoutError as StillComputing
from fractions import Fraction
from functools import lru_cache, partial
from typing import Any

from flask import current_app

from analysis import ExpectedBrains, Objective, Odds, Position, PositionError, Win, odds, parse_objective
from analysis.budgets import approximate, left_out, room, too_large
from analysis.exact import fraction_text
from analysis.odds import NearTie, TurnStartTooLarge, answer_from, within
from analysis.position import COUNTS, DOUBLE_FEATURE_FIELDS, PILES, POSITION_FIELDS, SCHOOL_BUS_FIELDS
from analysis.roll import legal_actions
from analysis.stored import AnyStoredTurn
from workers import jobs
from workers.shared import store
from workers.store import CorruptEntry, Key, Store

from .errors import ApiError, FieldError
from .memory import give_back

__all__ = ["answer", "answer_key", "answer_job", "compute", "from_solution", "computing", "position_from",
           "read_position", "impossible", "read_answer", "shared_answer", "only_rolling_action", "exact_json", "JOBS",
           "RETRY_AFTER"]

log = logging.getLogger(__name__)


def position_from(values: Mapping[str, Any]) -> tuple[Position, Objective]:
    """The position and objective named by validated request values, or a 422 naming every fault."""
    position, errors = read_position(values)
    objective = None
    try:
        objective = parse_objective(values.get("objective", ExpectedBrains.name))
    except ValueError as e:
        errors.append(FieldError("objective", str(e)))
    if errors:
        raise impossible(errors, "request")
    return position, objective


def read_position(values: Mapping[str, Any]) -> tuple[Position | None, list[FieldError]]:
    """The position named by validated request values, or None and its faults."""
    fields = {k: values[k] for k in POSITION_FIELDS if k in values}
    for pile in (*PILES, "effects"):  # (lists of names: effects too)
        if pile in fields:
            fields[pile] = tuple(fields[pile])
    for name in COUNTS:
        if isinstance(fields.get(name), float) and fields[name].is_integer():
            fields[name] = int(fields[name])  # JSON's 9.0 is the number 9 (the spec's integer type agrees)
    try:
        return Position(**fields), []
    except PositionError as e:
        return None, list(e.errors)


def impossible(errors: list[FieldError], what: str) -> ApiError:
    """The 422 naming every fault of an impossible `what` (the request, or the position as the analysis found it)."""
    return ApiError(422, f"impossible {what}: " + "; ".join(f"{e.field}: {e.reason}" for e in errors), errors)


@lru_cache(maxsize=512)
def compute(position: Position, objective: Objective) -> Odds:
    """`analysis.odds`, memoised: exact score distributions near the start of a turn take seconds.

    A position too large to solve here (`too_large`) is a 422 naming why, never a 500; so is one whose answer
    would be in floats (`approximate`) where rolling and stopping are too nearly equal for floats to decide."""
    fault = too_large(position, objective)
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
            **({k: list(getattr(p, k)) for k in DOUBLE_FEATURE_FIELDS} if double_feature else {}),
            **({**{k: getattr(p, k) for k in SCHOOL_BUS_FIELDS}, "first_roll": p.first_roll} if bus else {}),
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
        "decision": _win_decision(o) if isinstance(decision.objective, Win) else {
            "action": decision.action,
            "objective": decision.objective.name,
            "roll": _value(decision.roll, decision.within),
            "stop": exact_json(decision.stop),
            **({"actions": _actions(o)} if double_feature or bus else {}),
            **({"give_up": _give_up(o)} if bus else {}),
        },
        **({"turn": _turn(o)} if o.score_distribution is not None else
           {"turn_left_out": why} if o.win is None and (why := left_out(p)) else {}),
    }


def _win_decision(o: Odds) -> dict[str, Any]:
    """The decision by probability of winning (schema `Decision` with objective ``win``): P(win) if the player
    rolls and if it stops, and what the worse action gives up."""
    win = o.win
    return {"action": win.action, "objective": o.decision.objective.name, "roll": {"value": win.roll},
            "stop": {"value": win.stop}, **({"cost": {"value": win.cost}} if win.cost is not None else {})}


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


def answer_key(position: Position, objective: Objective, stored: bool = False) -> Key:
    """The store's name for the answer to (`position`, `objective`), `stored`: read from the mode's stored solution
    (floats), not solved for the question: a digest of them (a frozen value's repr names every field; the objective
    by its name), under the engine's version like a table."""
    digest = hashlib.sha256(repr((position, objective.name, *(("stored solution",) if stored else ()))).encode())
    return Key("answer", position.mode, position.recycle, 1, tag=digest.hexdigest()[:40])


@lru_cache(maxsize=4096)
def from_solution(position: Position, turn: AnyStoredTurn, distribution: bool = True) -> dict[str, Any]:
    """The answer read from `turn`, the mode's stored solution (`analysis.odds.answer_from`), with the turn's score
    distribution if `distribution`."""
    return answer(answer_from(position, turn, distribution=distribution))


def shared_answer(position: Position, objective: Objective, turn: AnyStoredTurn | None = None) -> dict[str, Any]:
    """The answer: read from `turn`, the mode's stored solution, if given (lookups, and a flow for the score
    distribution: milliseconds mostly, seconds early in a long turn), else solved for the question (`compute`).
    From the store if another worker (or this server before a restart) computed it; else computed by a job (module
    docstring), stored when it took `SHARE_ANSWERS_AFTER` seconds or more (cheap answers are not stored: every
    position would be a file). Past `ANSWER_WAIT` seconds: a 503 naming the job. With `SHARE_ANSWERS_AFTER` None
    (tests, the CLI) the answer is computed here and not stored; with `ANSWER_WAIT` None, computed here and stored.

    Why: `compute`'s cache is one process's, and gunicorn runs several; a School Bus position takes half a minute
    or more, and each worker would solve it again. A stored answer that fails its checksum is moved aside and
    computed again."""
    work = partial(from_solution, position, turn) if turn is not None else partial(_computed, position, objective)
    after, wait = current_app.config["SHARE_ANSWERS_AFTER"], current_app.config["ANSWER_WAIT"]
    if after is None:
        return work()
    shelf, key = store(), answer_key(position, objective, stored=turn is not None)
    stored = _stored(shelf, key)
    if stored is not None:
        return stored
    if wait is None:
        return _compute_and_store(shelf, key, work, after)
    deadline = current_app.config.get("REQUEST_DEADLINE")
    if deadline:  # (a request waiting past its deadline would be stopped there, its job unnamed)
        wait = min(wait, deadline / 2)
    # (stored if it takes `wait` seconds or more: a 503 told the client to ask again)
    job = jobs.submit(key.name, partial(_job, shelf, key, work, min(after, wait)), _at_once)
    try:
        return job.result(timeout=wait)
    except StillComputing:
        raise ApiError(503, f"this answer takes more than {wait:g} s to compute: job {key.name} computes it; ask "
                            f"again in {RETRY_AFTER} s", headers={"Retry-After": str(RETRY_AFTER)},
                       extensions={"job": answer_job(key)}) from None


def _computed(position: Position, objective: Objective) -> dict[str, Any]:
    return answer(compute(position, objective))


RETRY_AFTER = 10  # seconds a client is told to wait for an answer a job computes
JOBS = 2  # answer jobs computing at once in a process (a solve can take gigabytes); more wait their turn
_at_once = threading.BoundedSemaphore(JOBS)


def answer_job(key: Key) -> str:
    """The URL of the job computing the answer `key` (and, once it is stored, serving it)."""
    return f"/v1/answers/{key.name}"


def _job(shelf: Store, key: Key, work: Callable[[], dict[str, Any]], after: float) -> dict[str, Any]:
    """An answer job's work: the answer (`_compute_and_store`), then what its flow freed goes back to the system
    (api/memory.py) before the job ends."""
    try:
        return _compute_and_store(shelf, key, work, after)
    finally:
        give_back()


def computing(key: Key) -> bool:
    """Whether a job of any process sharing the store computes the answer `key`: this process runs it (it may wait
    for its turn), or some process holds the answer's lock."""
    return jobs.runs_here(key.name) or store().busy(key)


def _compute_and_store(shelf: Store, key: Key, work: Callable[[], dict[str, Any]], after: float) -> dict[str, Any]:
    """The answer `key`, computed by `work` once by every process: a process computing it now is waited for (the
    answer's lock), then read; stored when it took `after` seconds or more."""
    with shelf.lock(key):
        stored = _stored(shelf, key)
        if stored is not None:
            return stored
        start = time.perf_counter()
        result = work()
        if time.perf_counter() - start >= after:
            shelf.put(key, result)
    return result


def read_answer(key: Key) -> dict[str, Any] | None:
    """The answer `key` as stored, or None (not stored, or found corrupt: moved aside)."""
    return _stored(store(), key)


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
