"""/healthz: liveness for load balancers and `zombie-odds serve` checks; touches nothing.

Under `zombie-odds serve` a health check is answered by the worker's main thread, not one of its request threads
(api.serving.Worker): in milliseconds even while every request thread of every worker computes. It has no deadline
(api.deadline) and no rate limit (api.limits).
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

__all__ = ["bp"]

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Response:
    return jsonify({"status": "ok"})
