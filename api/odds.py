"""/v1/odds: the exact odds of a position, as JSON (GET or POST), CSV, or one plain-text value.

The request was validated against openapi.yaml before the view runs (spec.py), so a view only
turns the validated values into a `Position` (the game's own checks: colours, reachability) and
the `Odds` into the documented answer. Every form of the answer is rendered from the one JSON
answer, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response, g, jsonify

from analysis import Position, PositionError
from analysis.odds import EXPECTED_BRAINS, stored_solution
from analysis.roll import next_roll
from analysis.stored import AnyStoredTurn
from workers import solutions
from workers.store import ENGINE_VERSION, Key
from workers.tables import QUEUE_ERRORS

from . import formats, tables
from .answers import (
    RETRY_AFTER,
    answer_job,
    computing,
    exact_json,
    from_solution,
    impossible,
    only_rolling_action,
    position_from,
    read_answer,
    shared_answer,
)
from .cache import uncached
from .errors import ApiError, FieldError

__all__ = ["bp", "answer_for", "bust_text", "stored_answer"]

bp = Blueprint("odds", __name__)


def answer_for(values: Mapping[str, Any], distribution: bool = True) -> dict[str, Any]:
    """The /v1/odds answer for these values: by probability of winning with `scores`, else by `objective`, from the
    mode's stored solution where one answers it (`analysis.odds.stored_solution`), else solved for the request.
    Not `distribution`: an answer read from a stored solution leaves out the turn's score distribution (for the
    answers that show one value: it is the one part that is not a lookup)."""
    if tables.wants_win(values):  # `scores`: the decision by probability of winning the game
        return tables.win_answer(values)
    position, objective = position_from(values)
    turn = solutions.load(position.mode, position.recycle, position.school_bus)  # (None: not built)
    try:
        solution = stored_solution(position, objective, bool(values.get("exact")), turn is not None)
    except PositionError as e:
        raise ApiError(422, "; ".join(f"{f.field}: {f.reason}" for f in e.errors), e.errors) from None
    if solution is None:
        return shared_answer(position, objective)
    return stored_answer(position, turn, distribution)


# Seconds a client is told to wait for a solution being built (the sequel's takes about half a minute).
SOLUTION_RETRY_AFTER = 15


def stored_answer(position: Position, turn: AnyStoredTurn | None, distribution: bool = True) -> dict[str, Any]:
    """The answer from `turn`, the stored solution of the position's mode, recycle variant and School Bus or not,
    with the turn's score distribution if `distribution`; while it is not built (None), a 503 naming the job that
    builds it (started here if nobody builds it)."""
    if turn is None:
        mode, recycle, bus = position.mode, position.recycle, position.school_bus
        try:
            job = solutions.submit(mode, recycle, bus)
        except QUEUE_ERRORS as e:
            raise ApiError(503, f"the job queue cannot be reached ({type(e).__name__}); ask again later",
                           headers={"Retry-After": str(SOLUTION_RETRY_AFTER)}) from None
        what = f"mode {mode}{' with the School Bus' if bus else ''} ({recycle})"
        failed = f"; its last build failed: {job.error}" if job.error else ""
        raise ApiError(503, f"the solution of {what} is not built yet (job {job.state}{failed}); ask again in "
                            f"{SOLUTION_RETRY_AFTER} s", headers={"Retry-After": str(SOLUTION_RETRY_AFTER)},
                       extensions={"job": f"/v1/solutions/{job.job}"})
    try:
        if not distribution:  # lookups alone: no job
            return from_solution(position, turn, distribution=False)
        return shared_answer(position, EXPECTED_BRAINS, turn)
    except PositionError as e:  # no turn of the mode reaches it: the solution has no such state
        raise impossible(e.errors, "position") from None


@bp.get("/v1/answers/<id>")
@uncached
def get_answer(id: str) -> Response:
    """The answer a job computed (the `job` of a 503 from /v1/odds): 200 once stored, 503 while it computes."""
    try:
        key = Key.parse(id)
    except ValueError:
        key = None
    if key is None or key.kind != "answer" or key.engine != ENGINE_VERSION:
        raise ApiError(404, f"no such answer: {id}")
    result = read_answer(key)
    if result is not None:
        return jsonify(result)
    if computing(key):
        raise ApiError(503, f"job {id} is computing this answer; ask again in {RETRY_AFTER} s",
                       headers={"Retry-After": str(RETRY_AFTER)}, extensions={"job": answer_job(key)})
    raise ApiError(404, f"no such answer: {id} (not stored, and no job computes it: ask the question again)")


@bp.get("/v1/odds")
def get_odds() -> Response:
    result = answer_for(g.params)
    if g.params["format"] == "csv":
        return Response(formats.csv_table(result), mimetype="text/csv")
    return jsonify(result)


@bp.post("/v1/odds")
def post_odds() -> Response:
    return jsonify(answer_for(g.body))


def bust_text(values: Mapping[str, Any], exact: bool) -> str:
    """`field=bust` as text: the next roll alone where one action rolls (it needs no policy: milliseconds in any
    position); with the School Bus's choice of rolling actions, the best one's, read from the answer."""
    position, objective = position_from(values)
    action = only_rolling_action(position)
    if action is None:
        return formats.one_value(answer_for(values, distribution=False), "bust", exact=exact)
    return formats.one_value({"next_roll": {"bust": exact_json(next_roll(position, action).bust)}}, "bust", exact=exact)


@bp.get("/v1/odds.txt")
def get_odds_value() -> Response:
    if g.params["exact"] and tables.wants_win(g.params):  # a win probability comes from a float table
        raise ApiError(422, "exact: no exact value with scores", [FieldError(
            "exact", "win probabilities come from the full-game table in floating point: drop exact or scores")])
    if g.params["field"] == "bust" and not tables.wants_win(g.params):
        return Response(bust_text(g.params, g.params["exact"]), mimetype="text/plain")
    field = g.params["field"]
    # the action and the value of stopping are the same in every answer: exact values are asked for the others only
    result = answer_for({**g.params, "exact": g.params["exact"] and field not in ("action", "stop")},
                        distribution=False)
    try:
        text = formats.one_value(result, field, exact=g.params["exact"])
    except formats.NotExact:
        why = result.get("turn_left_out", "it is read from the mode's stored solution")
        raise ApiError(422, f"exact: {field} is a float here", [FieldError(
            "exact", f"{field} is a float in this answer, not an exact fraction: {why}; drop exact")]) from None
    except KeyError:  # a School Bus action that is not legal here
        legal = ", ".join(a["action"] for a in result["decision"].get("actions", ())) or "roll, stop"
        raise ApiError(422, f"field: {field} is not a legal action here", [
            FieldError("field", f"{field} is not a legal action in this position; legal: {legal}")]) from None
    return Response(text, mimetype="text/plain")
