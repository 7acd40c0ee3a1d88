"""zombie-odds over HTTP: a Flask application, one blueprint per resource, openapi.yaml as the contract.

    flask --app api run                      # development
    zombie-odds serve                        # production (gunicorn)

Configuration comes from `create_app(config)` or from the environment with the `ZOMBIE_ODDS_`
prefix (`ZOMBIE_ODDS_VALIDATE_RESPONSES=true`, values parsed as JSON).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask, Response, request

from . import (
    cache,
    deadline,
    docs,
    embed,
    errors,
    health,
    landing,
    lightning,
    limits,
    modes,
    odds,
    reports,
    review,
    security,
    sheets,
    solutions,
    spec,
    tables,
)

__all__ = ["create_app"]

CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Content-Type",
    "Access-Control-Max-Age": "86400",
}


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the application. `config` overrides the environment, which overrides the defaults."""
    app = Flask(__name__, static_folder=None)  # no /static route: every route is in openapi.yaml
    app.config.from_mapping(MAX_CONTENT_LENGTH=16 * 1024)
    app.config.from_prefixed_env("ZOMBIE_ODDS")
    app.config.from_mapping(config or {})
    # Checking responses against the spec costs latency, so it is on in tests and off in production.
    app.config.setdefault("VALIDATE_RESPONSES", app.testing)
    # An odds answer that took this many seconds is stored for every worker (api.answers.shared_answer); off under
    # TESTING, where a test that wants it sets it and its own store.
    app.config.setdefault("SHARE_ANSWERS_AFTER", None if app.testing else 1.0)
    # ... and a request waits this many seconds for an answer being computed, then is answered 503 naming its job
    # (api.answers): well within the request's deadline (api.deadline)
    app.config.setdefault("ANSWER_WAIT", None if app.testing else 8.0)
    app.json.sort_keys = False  # keep answers in the order the spec documents them

    errors.register(app)
    deadline.install(app)  # every request is stopped at its deadline: a 503 problem (api.deadline)
    limits.install(app)  # first: every request counts, answers from the cache too
    app.before_request(spec.check_query)  # before the cache: its key leaves unknown parameters out
    cache.install(app)  # before the spec: a cached answer skips validation it already passed
    spec.install(app)
    security.install(app)  # after the cache: a cached page keeps its headers
    app.after_request(_cors)
    for module in (odds, sheets, lightning, modes, health, docs, embed, review, tables, reports, solutions, landing):
        app.register_blueprint(module.bp)
    return app


def _cors(response: Response) -> Response:
    """Let any web page call /v1/* (rules websites): simple requests and preflights alike."""
    if request.path.startswith("/v1/"):
        response.headers.update(CORS_HEADERS)
    return response
