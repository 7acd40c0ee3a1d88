"""/healthz: liveness for load balancers and `zombie-odds serve` checks; touches nothing."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

__all__ = ["bp"]

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Response:
    return jsonify({"status": "ok"})
