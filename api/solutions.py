"""/v1/solutions: the stored turn solutions every odds answer is read from, and where each one's build stands."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify

from workers import solutions

from .cache import uncached
from .errors import ApiError

__all__ = ["bp", "solution_answer"]

bp = Blueprint("solutions", __name__)


def solution_answer(s: solutions.SolutionStatus) -> dict[str, Any]:
    """One solution (schema `SolutionJob`)."""
    meta = s.meta or {}
    return {
        "id": s.job,
        "mode": s.mode,
        "recycle": s.recycle,
        "school_bus": s.school_bus,
        "state": s.state,
        **({"sha256": s.sha256, "states": meta.get("states", meta.get("nodes")), "rolls": meta["rolls"],
            "top": meta["top"], "within": meta["within"]} if s.state == "built" else {}),
        **({"error": s.error} if s.error else {}),
    }


@bp.get("/v1/solutions")
@uncached
def get_solutions() -> Response:
    response = jsonify({"solutions": [solution_answer(solutions.status(*c)) for c in solutions.combinations()]})
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/v1/solutions/<id>")
@uncached
def get_solution(id: str) -> Response:
    for combination in solutions.combinations():
        if solutions.job_id(*combination) == id:
            response = jsonify(solution_answer(solutions.status(*combination)))
            response.headers["Cache-Control"] = "no-store"
            return response
    raise ApiError(404, f"no solution job {id}")
