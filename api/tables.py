"""/v1/tables and /v1/jobs: full-game win-probability tables, computed as jobs and served whole; and
the objective `win` of /v1/odds (`scores`), decided from the same tables.

The jobs are workers.tables' (one job per table, its id derived from the table's key; in this
process without `REDIS_URL`, on the workers with it); a table is served only once it is stored, and
then from the store's checksummed file, so never in part. Answers that change over time (a job, the
list) are `uncached` by api/cache.py; a table carries a strong ETag from its sha256, and its versioned
URL (`version` = the start of the sha256) never changes, so it is cached for a year.
"""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from flask import Blueprint, Response, g, jsonify, request

from analysis import Decision, FieldError, Odds, PositionError, next_roll, parse_objective
from analysis.game import GameSolution
from analysis.game.advice import check_scores, win_advice
from workers.store import ENGINE_VERSION, Key
from workers.tables import QUEUE_ERRORS, TableJob, key_for_job, load, status, stored, submit
from workers.tasks import store, table_key

from . import odds
from .cache import uncached
from .errors import ApiError

__all__ = ["bp", "TABLE_MODES", "table_url", "table_answer", "table_rows", "job_answer", "wants_win", "win_answer"]

bp = Blueprint("tables", __name__)

TABLE_MODES = ("original",)  # openapi.yaml's TableMode
IMMUTABLE = "public, max-age=31536000, immutable"
RETRY_AFTER = 10  # seconds: a base-game table takes about that long to compute
WIN_FIELDS = ("scores", "seat", "final_round")


# -- URLs and bodies --------------------------------------------------------------------------------
def table_url(key: Key, sha256: str) -> str:
    """The versioned (immutable) URL of a stored table."""
    return f"/v1/tables/{key.mode}?players={key.players}&variant={key.variant}&version={sha256[:12]}"


def job_url(job: TableJob) -> str:
    return f"/v1/jobs/{job.id}"


def job_answer(job: TableJob) -> dict[str, Any]:
    """The documented job (openapi.yaml, schema `TableJob`)."""
    out: dict[str, Any] = {"id": job.id, "url": job_url(job), "state": job.state, "mode": job.key.mode,
                           "variant": job.key.variant, "players": job.key.players,
                           "progress": {"done": job.done, "total": job.total}}
    if job.sha256 is not None:
        out.update(table=table_url(job.key, job.sha256), sha256=job.sha256,
                   p_first_player_wins=job.p_first_player_wins)
    if job.error is not None:
        out["error"] = job.error
    return out


def table_answer(key: Key, solution: GameSolution, sha256: str) -> dict[str, Any]:
    """The documented table (schema `Table`): ``[a][b]`` is the mover's score, then the other's."""
    return {
        "mode": key.mode,
        "variant": key.variant,
        "players": key.players,
        "engine": key.engine,
        "sha256": sha256,
        "url": table_url(key, sha256),
        "goal": solution.goal,
        "cap": solution.cap,
        "cap_error": solution.cap_error,
        "p_first_player_wins": solution.p_first_player_wins,
        "win_probability": {"seat1": [list(row) for row in solution.seat1],
                            "seat2": [list(row) for row in solution.seat2]},
        "final": list(solution.final),
        "tiebreak": solution.tiebreak,
    }


def table_rows(table: dict[str, Any]) -> list[tuple[str, object]]:
    """The table as `key,value` rows (seat1.<a>.<b>, seat2.<a>.<b>, final.<d>), for VLOOKUP."""
    head = ("mode", "variant", "players", "engine", "sha256", "goal", "cap", "cap_error", "p_first_player_wins",
            "tiebreak")
    out: list[tuple[str, object]] = [(name, table[name]) for name in head]
    for seat, grid in table["win_probability"].items():
        out += [(f"{seat}.{a}.{b}", p) for a, row in enumerate(grid) for b, p in enumerate(row)]
    out += [(f"final.{d}", p) for d, p in enumerate(table["final"])]
    return out


def _csv(rows: list[tuple[str, object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(("key", "value"))
    writer.writerows((key, repr(v) if isinstance(v, float) else v) for key, v in rows)
    return buffer.getvalue()


# -- finding a table --------------------------------------------------------------------------------
def _key(mode: str, variant: str, players: int | float) -> Key:
    players = int(players)  # JSON's 2.0 is the number 2 (the spec's integer type agrees)
    if players != 2:
        raise ApiError(422, f"players: {players} players have no table", [FieldError(
            "players", "only two-player tables are computed: 3 to 8 players are played by a reduced model "
                       "built on the two-player table, which has no table of its own")])
    return table_key(mode, variant, players)


def _queue_down(e: Exception) -> ApiError:
    return ApiError(503, f"the job queue cannot be reached ({type(e).__name__}); ask again later")


def _solution(key: Key, version: str | None) -> tuple[GameSolution, str]:
    """The stored table (and its sha256), or the 404 that says how to get it."""
    loaded = load(key)
    if loaded is None:
        compute = {"method": "POST", "href": f"/v1/tables/{key.mode}/jobs",
                   "body": {"players": key.players, "variant": key.variant}}
        extensions: dict[str, object] = {"compute": compute}
        try:
            job = status(key)
        except QUEUE_ERRORS:
            job = None
        if job is not None and job.active:
            extensions["job"] = job_url(job)
        raise ApiError(404, f"the table {key.mode}, {key.variant}, {key.players} players is not computed yet: "
                            f"POST {{\"players\": {key.players}, \"variant\": \"{key.variant}\"}} to {compute['href']}",
                       extensions=extensions)
    solution, sha256 = loaded
    if version is not None and not sha256.startswith(version):
        raise ApiError(404, f"version {version} of this table is not stored; the stored version is {sha256[:12]}",
                       extensions={"current": table_url(key, sha256)})
    return solution, sha256


def _conditional(response: Response, sha256: str, kind: str, versioned: bool) -> Response:
    """A strong ETag per representation; a year of caching on the versioned URL; 304 when current."""
    response.set_etag(f"{sha256}-{kind}")
    response.headers["Cache-Control"] = IMMUTABLE if versioned else "no-cache"
    return response.make_conditional(request)


_pictures: dict[tuple[str, str, str], bytes] = {}
_pictures_lock = threading.Lock()


def _picture(key: Key, solution: GameSolution, sha256: str, fmt: str) -> bytes:
    """The heatmap, drawn once per table version and format (drawing takes about a second)."""
    from analysis.charts import win_heatmap  # matplotlib loads in about a second: only when first drawn

    with _pictures_lock:
        if (key.name, sha256, fmt) not in _pictures:
            _pictures[(key.name, sha256, fmt)] = win_heatmap(solution, fmt)
        return _pictures[(key.name, sha256, fmt)]


# -- views ------------------------------------------------------------------------------------------
@bp.post("/v1/tables/<mode>/jobs")
def post_job(mode: str) -> Response:
    body = g.body or {}
    key = _key(mode, body.get("variant", "before-draw"), body.get("players", 2))
    try:
        job = submit(key.mode, key.variant, key.players)
    except QUEUE_ERRORS as e:
        raise _queue_down(e) from None
    response = jsonify(job_answer(job))
    if job.state != "succeeded":
        response.status_code = 202
        response.headers["Location"] = job_url(job)
    return response


@bp.get("/v1/jobs/<id>")
@uncached
def get_job(id: str) -> Response:
    key = key_for_job(id)
    try:
        job = None if key is None or key.mode not in TABLE_MODES else status(key)
    except QUEUE_ERRORS as e:
        raise _queue_down(e) from None
    if job is None:
        raise ApiError(404, f"no such job: {id}")
    response = jsonify(job_answer(job))
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/v1/tables")
@uncached
def get_tables() -> Response:
    found = []
    stored_keys = store().keys()
    for key in stored_keys:
        if key.kind != "table" or key.engine != ENGINE_VERSION or key.mode not in TABLE_MODES:
            continue
        entry = stored(key)
        if entry is not None:
            data, sha256 = entry
            found.append({"mode": key.mode, "variant": key.variant, "players": key.players, "engine": key.engine,
                          "sha256": sha256, "url": table_url(key, sha256),
                          "p_first_player_wins": data["p_first_player_wins"]})
    response = jsonify({"tables": found})
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/v1/tables/<mode>")
@uncached
def get_table(mode: str) -> Response:
    key = _key(mode, g.params["variant"], g.params["players"])
    solution, sha256 = _solution(key, g.params.get("version"))
    table = table_answer(key, solution, sha256)
    csv_table = g.params["format"] == "csv"
    response = Response(_csv(table_rows(table)), mimetype="text/csv") if csv_table else jsonify(table)
    return _conditional(response, sha256, g.params["format"], "version" in g.params)


def _heatmap(mode: str, fmt: str, mimetype: str) -> Response:
    key = _key(mode, g.params["variant"], g.params["players"])
    solution, sha256 = _solution(key, g.params.get("version"))
    response = Response(_picture(key, solution, sha256, fmt), mimetype=mimetype)
    return _conditional(response, sha256, fmt, "version" in g.params)


@bp.get("/v1/tables/<mode>/heatmap.png")
@uncached
def get_heatmap_png(mode: str) -> Response:
    return _heatmap(mode, "png", "image/png")


@bp.get("/v1/tables/<mode>/heatmap.svg")
@uncached
def get_heatmap_svg(mode: str) -> Response:
    return _heatmap(mode, "svg", "image/svg+xml")


# -- /v1/odds with scores: the objective `win` ---------------------------------------------------------
def wants_win(values: Mapping[str, Any]) -> bool:
    """Does this /v1/odds request ask for the decision by probability of winning?"""
    return any(name in values for name in WIN_FIELDS) or values.get("objective") == "win"


def _asked(name: str) -> bool:
    """Given by the client (not filled in from the spec's default)."""
    if request.method == "GET":
        return name in request.args
    return name in (request.get_json(silent=True) or {})


def win_answer(values: Mapping[str, Any]) -> dict[str, Any]:
    """The /v1/odds answer whose decision is by probability of winning the game (schema `Odds`).

    The position and its next roll are rendered by odds.answer, as in every answer; the decision
    comes from the stored table; `turn` (the score distribution of an expected-brains policy) is left
    out, and `game` says which table decided. A table not stored yet: 503, and its job is started.
    """
    errors: list[FieldError] = []
    if _asked("objective") and values.get("objective") != "win":
        errors.append(FieldError("objective", f"{values['objective']!r}: with scores the decision is by the "
                                              "probability of winning; leave objective out, or ask win"))
    position = None
    try:
        position = odds.position_from({**values, "objective": "expected-brains"})[0]
    except ApiError as e:
        errors = e.errors + errors
    if position is not None and position.mode not in TABLE_MODES:
        errors.append(FieldError("mode", f"no win-probability table for mode {position.mode}; "
                                         f"tables exist for: {', '.join(TABLE_MODES)}"))
    if "scores" not in values:
        errors.append(FieldError("scores", "required with objective win, seat or final_round (the mover's score, "
                                           "then the other player's)"))
    else:
        try:
            game = check_scores(values["scores"], values.get("seat"), values.get("final_round"))
        except PositionError as e:
            errors += e.errors
    if errors or position is None:
        raise ApiError(422, "impossible request: " + "; ".join(f"{e.field}: {e.reason}" for e in errors), errors)

    key = table_key(position.mode, position.recycle, 2)
    solution, sha256 = _solution_or_503(key)
    try:
        advice = win_advice(solution, position, game)
    except PositionError as e:
        raise ApiError(422, "impossible position: " + "; ".join(f"{x.field}: {x.reason}" for x in e.errors),
                       e.errors) from None
    # odds.answer renders the position and its next roll; its decision and turn are replaced below
    placeholder = Decision("roll", parse_objective("expected-brains"), Fraction(0), Fraction(0))
    result = odds.answer(Odds(position, next_roll(position), placeholder, {}))
    result["decision"] = {"action": advice.action, "objective": "win", "roll": {"value": advice.roll},
                          "stop": {"value": advice.stop}}
    if advice.cost is not None:
        result["decision"]["cost"] = {"value": advice.cost}
    del result["turn"]
    result["game"] = {"scores": [game.mover, game.other], "seat": game.seat, "final_round": game.final_round,
                      "phase": game.phase, "win_probability": {"value": advice.turn_start},
                      "table": table_url(key, sha256), "cap_error": solution.cap_error}
    return result


def _solution_or_503(key: Key) -> tuple[GameSolution, str]:
    """The stored table; else its job is started (unless it runs) and the answer is a 503 naming it."""
    loaded = load(key)
    if loaded is not None:
        return loaded
    try:
        job = submit(key.mode, key.variant, key.players)
    except QUEUE_ERRORS as e:
        raise _queue_down(e) from None
    loaded = load(key) if job.state == "succeeded" else None
    if loaded is not None:
        return loaded
    raise ApiError(503, f"the win-probability table of {key.mode}, {key.variant} is being computed (job {job.state}, "
                        f"{job.done} of {job.total} steps done); ask again in {RETRY_AFTER} s",
                   headers={"Retry-After": str(RETRY_AFTER)}, extensions={"job": job_url(job)})
