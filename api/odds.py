"""/v1/odds: the exact odds of a position, as JSON (GET or POST), CSV, or one plain-text value.

The request was validated against openapi.yaml before the view runs (spec.py), so a view only
turns the validated values into a `Position` (the game's own checks: colours, reachability) and
the `Odds` into the documented answer. Every form of the answer is rendered from the one JSON
answer, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any

from flask import Blueprint, Response, g, jsonify

from analysis import Odds, Position, PositionError, odds, parse_objective

from . import formats
from .errors import ApiError, FieldError

__all__ = ["bp", "answer", "compute", "position_from"]

bp = Blueprint("odds", __name__)

POSITION_FIELDS = ("mode", "footprints", "brains", "shotguns", "banked", "recycle")


def position_from(values: Mapping[str, Any]) -> tuple[Position, str]:
    """The position and objective named by validated request values, or a 422 naming every fault."""
    fields = {k: values[k] for k in POSITION_FIELDS if k in values}
    for pile in ("footprints", "brains", "shotguns"):
        if pile in fields:
            fields[pile] = tuple(fields[pile])
    banked = fields.get("banked")
    if isinstance(banked, float) and banked.is_integer():
        fields["banked"] = int(banked)  # JSON's 9.0 is the number 9 (the spec's integer type agrees)
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
    """`analysis.odds`, memoised: exact score distributions near the start of a turn take seconds."""
    return odds(position, objective)


def _exact(x: Fraction) -> dict[str, Any]:
    return {"exact": f"{x.numerator}/{x.denominator}", "value": float(x)}


def answer(o: Odds) -> dict[str, Any]:
    """The documented JSON answer (openapi.yaml, schema `Odds`)."""
    p, roll, decision = o.position, o.next_roll, o.decision
    return {
        "position": {
            "mode": p.mode,
            "footprints": list(p.footprints),
            "brains": list(p.brains),
            "shotguns": list(p.shotguns),
            "banked": p.banked,
            "recycle": p.recycle,
            "score": p.score,
            "cup": p.cup,
        },
        "next_roll": {
            "bust": _exact(roll.bust),
            "outcomes": [{"brains": b, "shotguns": s, **_exact(q)} for b, s, q in roll.outcomes],
            "expected_brains": _exact(roll.expected_brains),
            "recycles": roll.recycles,
        },
        "decision": {
            "action": decision.action,
            "objective": decision.objective.name,
            "roll": _exact(decision.roll),
            "stop": _exact(decision.stop),
        },
        "turn": {
            "score_distribution": [{"score": k, **_exact(q)} for k, q in sorted(o.score_distribution.items())],
        },
    }


def _answer_for(values: Mapping[str, Any]) -> dict[str, Any]:
    return answer(compute(*position_from(values)))


@bp.get("/v1/odds")
def get_odds() -> Response:
    result = _answer_for(g.params)
    if g.params["format"] == "csv":
        return Response(formats.csv_table(result), mimetype="text/csv")
    return jsonify(result)


@bp.post("/v1/odds")
def post_odds() -> Response:
    return jsonify(_answer_for(g.body))


@bp.get("/v1/odds.txt")
def get_odds_value() -> Response:
    text = formats.one_value(_answer_for(g.params), g.params["field"], exact=g.params["exact"])
    return Response(text, mimetype="text/plain")
