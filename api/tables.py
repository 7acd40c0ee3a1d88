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
from typing import Any

from flask import Blueprint, Response, g, jsonify, request

from analysis import MODES, FieldError, Position, PositionError, Win, odds
from analysis.game import GameSolution, SeatsSolution
from analysis.game.advice import WinAdvice, game_around
from analysis.game.many import MEASURED, MeasuredError, reduced_table
from analysis.game.seats import Final, Normal, Spot, Tie
from analysis.game.units import job_seconds
from workers.shared import store
from workers.store import ENGINE_VERSION, Key, table_key
from workers.tables import (
    QUEUE_ERRORS,
    NotHere,
    TableJob,
    key_for_job,
    load,
    no_table_reason,
    status,
    stored,
    submit,
    units_per_layer,
)

from . import answers
from .cache import uncached
from .errors import ApiError

__all__ = ["bp", "table_url", "table_answer", "table_rows", "turn_name", "reduced_answer", "job_answer", "wants_win",
           "win_answer"]

bp = Blueprint("tables", __name__)
bp.record_once(lambda state: units_per_layer())  # a wrong ZOMBIE_ODDS_TABLE_UNITS stops the server as it starts

IMMUTABLE = "public, max-age=31536000, immutable"
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
    if job.detail is not None:
        out["detail"] = job.detail
    return out


def _identity(key: Key, goal: int, sha256: str) -> dict[str, Any]:
    """What names a served table and its version, for every player count."""
    return {"mode": key.mode, "variant": key.variant, "players": key.players, "engine": key.engine,
            "sha256": sha256, "url": table_url(key, sha256), "goal": goal}


def table_answer(key: Key, solution: GameSolution, sha256: str) -> dict[str, Any]:
    """The documented table (schema `Table`): ``[a][b]`` is the mover's score, then the other's."""
    return {
        **_identity(key, solution.goal, sha256),
        "cap": solution.cap,
        "cap_error": solution.cap_error,
        "p_first_player_wins": solution.p_first_player_wins,
        "win_probability": {"seat1": [list(row) for row in solution.seat1],
                            "seat2": [list(row) for row in solution.seat2]},
        "final": list(solution.final),
        "tiebreak": solution.tiebreak,
    }


def seats_answer(key: Key, solution: SeatsSolution, sha256: str) -> dict[str, Any]:
    """The documented exact table of more than two players (schema `SeatsTable`): every start of a turn with P(each
    seat wins), seats counted from 1 as the API counts them."""
    return {**_identity(key, solution.game.goal, sha256), "model": "exact", "cap": solution.game.cap,
            "cap_error": solution.cap_error, "p_seat_wins": list(solution.p_seat_wins),
            "turns": [_turn(spot, p.tolist()) for spot, p in solution.values.items()]}


def _turn(spot: Spot, p: list[float]) -> dict[str, Any]:
    """A start of a turn of `SeatsTable` (seats from 1)."""
    def seats(s: tuple[int, ...]) -> list[int]:
        return [q + 1 for q in s]

    if isinstance(spot, Normal):
        return {"phase": "normal", "scores": list(spot.scores), "mover": spot.mover + 1, "p": p}
    if isinstance(spot, Final):
        return {"phase": "final", "mover": spot.mover + 1, "leads": list(spot.leads), "leaders": seats(spot.leaders),
                "p": p}
    assert isinstance(spot, Tie)
    return {"phase": "tiebreak", "seats": seats(spot.seats), "mover": spot.seats[spot.i] + 1, "best": spot.best,
            "leaders": seats(spot.leaders), "p": p}


def seats_rows(table: dict[str, Any]) -> list[tuple[str, object]]:
    """The exact table of more than two players as `key,value` rows: the scalars, ``p_seat_wins.<seat>``, and every
    start of a turn's P(each seat wins) as ``<turn>.<seat>`` (`turn_name`)."""
    head = ("mode", "variant", "players", "engine", "sha256", "goal", "model", "cap", "cap_error")
    out: list[tuple[str, object]] = [(name, table[name]) for name in head]
    out += [(f"p_seat_wins.{q}", v) for q, v in enumerate(table["p_seat_wins"], start=1)]
    out += [(f"{turn_name(t)}.{q}", v) for t in table["turns"] for q, v in enumerate(t["p"], start=1)]
    return out


def turn_name(turn: dict[str, Any]) -> str:
    """A start of a turn of `SeatsTable` as one CSV key: its phase, then its fields in order (but ``p``), a list's
    items joined by ``-`` (``none`` for an empty one): ``normal.4-0-3.2`` (scores, mover), ``final.2.3-1.1``
    (mover, leads, leaders), ``tiebreak.1-3.3.2.1`` (seats, mover, best, leaders)."""
    def text(v: object) -> str:
        return ("-".join(map(str, v)) or "none") if isinstance(v, list) else str(v)

    return ".".join([turn["phase"], *(text(v) for name, v in turn.items() if name not in ("phase", "p"))])


def reduced_answer(key: Key, two: Key, solution: GameSolution, sha256: str, error: MeasuredError) -> dict[str, Any]:
    """The documented table of 3 to 8 players (schema `ReducedTable`): the reduced model of
    analysis/game/many.py over the stored two-player table `two` (whose sha256 versions it), with
    the model's measured error against simulation."""
    grids = reduced_table(solution, key.players)
    return {
        **_identity(key, solution.goal, sha256),
        "model": "duel-the-leader",
        "two_player_table": table_url(two, sha256),
        "win_probability": grids,
        "model_error": {"games": error.games, "seed": error.seed, "turns": error.turns,
                        "start_error": error.start_error, "standard_error": error.standard_error,
                        "bias": error.bias, "calibration_error": error.calibration_error},
    }


def reduced_rows(table: dict[str, Any]) -> list[tuple[str, object]]:
    """The reduced table as `key,value` rows (followed.<m>.<L>, last.<m>.<L>, model_error.<name>)."""
    head = ("mode", "variant", "players", "engine", "sha256", "goal", "model")
    out: list[tuple[str, object]] = [(name, table[name]) for name in head]
    out += [(f"model_error.{name}", v) for name, v in table["model_error"].items()]
    for name, grid in table["win_probability"].items():
        out += [(f"{name}.{m}.{b}", p) for m, row in enumerate(grid) for b, p in enumerate(row)]
    return out


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
def _check_mode(mode: str) -> None:
    """A 422 naming `mode` for a mode without a full-game table (openapi.yaml's `TableMode` lists those with one)."""
    reason = no_table_reason(mode)
    if reason is not None:
        raise ApiError(422, f"mode: {reason}", [FieldError("mode", reason)])


def _key(mode: str, variant: str, players: int | float) -> Key:
    _check_mode(mode)
    players = int(players)  # JSON's 2.0 is the number 2 (the spec's integer type agrees)
    reason = no_table_reason(mode, players)
    if reason is not None:
        raise ApiError(422, f"players: {reason}", [FieldError("players", reason)])
    return table_key(mode, variant, players)


def _reduced_error(mode: str, variant: str, players: int) -> MeasuredError:
    """The reduced model's measured error for this table, or the 422 that says why there is none."""
    error = MEASURED.get((mode, variant, players))
    if error is None:
        checked = sorted({(m, v) for m, v, _ in MEASURED})
        reason = (f"no {players}-player table for {mode}, {variant}: the reduced model of 3 to 8 players has not "
                  "been checked against simulation for it (bench/bench_many.py); checked: "
                  + ", ".join(f"{m} {v}" for m, v in checked))
        raise ApiError(422, f"players: {reason}", [FieldError("players", reason)])
    return error


def _queue_down(e: Exception) -> ApiError:
    return ApiError(503, f"the job queue cannot be reached ({type(e).__name__}); ask again later")


def _solution(key: Key, version: str | None) -> tuple[GameSolution | SeatsSolution, str]:
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


def _picture(key: Key, solution: GameSolution | SeatsSolution, sha256: str, fmt: str) -> bytes:
    """The heatmap, drawn once per table version and format (drawing takes about a second)."""
    from analysis.charts import seats_heatmap, win_heatmap  # matplotlib loads in about a second: when first drawn

    draw = seats_heatmap if isinstance(solution, SeatsSolution) else win_heatmap
    with _pictures_lock:
        if (key.name, sha256, fmt) not in _pictures:
            _pictures[(key.name, sha256, fmt)] = draw(solution, fmt)
        return _pictures[(key.name, sha256, fmt)]


# -- views ------------------------------------------------------------------------------------------
@bp.post("/v1/tables/<mode>/jobs")
def post_job(mode: str) -> Response:
    body = g.body or {}
    key = _key(mode, body.get("variant", "before-draw"), body.get("players", 2))
    try:
        job = submit(key.mode, key.variant, key.players, server=True)
    except QUEUE_ERRORS as e:
        raise _queue_down(e) from None
    except NotHere as e:
        raise ApiError(422, f"mode: {e}", [FieldError("mode", str(e))]) from None
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
        job = None if key is None else status(key)
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
        if key.kind != "table" or key.engine != ENGINE_VERSION or key.mode not in MODES:
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
    players, fmt = int(g.params["players"]), g.params["format"]
    if no_table_reason(mode, players) is None:  # solved exactly: two players, or more where analysis says so
        key = _key(mode, g.params["variant"], players)
        solution, sha256 = _solution(key, g.params.get("version"))
        if isinstance(solution, SeatsSolution):
            table, rows = seats_answer(key, solution, sha256), seats_rows
        else:
            table, rows = table_answer(key, solution, sha256), table_rows
        kind = fmt
    else:  # 3 to 8 (the spec's range): the reduced model over the two-player table
        _check_mode(mode)
        error = _reduced_error(mode, g.params["variant"], players)
        two = table_key(mode, g.params["variant"], 2)
        solution, sha256 = _solution(two, g.params.get("version"))
        table = reduced_answer(table_key(mode, two.variant, players), two, solution, sha256, error)
        rows, kind = reduced_rows, f"p{players}-{fmt}"
    response = Response(_csv(rows(table)), mimetype="text/csv") if fmt == "csv" else jsonify(table)
    return _conditional(response, sha256, kind, "version" in g.params)


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
    return any(name in values for name in WIN_FIELDS) or values.get("objective") == Win.name


def _asked(name: str) -> bool:
    """Given by the client (not filled in from the spec's default)."""
    if request.method == "GET":
        return name in request.args
    return name in (request.get_json(silent=True) or {})


def _win_question(values: Mapping[str, Any]) -> tuple[Position, Win, str]:
    """The position and the objective win of a /v1/odds request that `wants_win` (its game checked around the
    position: `game.advice.game_around`), with the URL of the table that decides; a 422 naming every fault, and while
    that table is not stored, a 503 (its job started)."""
    position, errors = answers.read_position(values)
    if _asked("objective") and values["objective"] != Win.name:
        errors.append(FieldError("objective", f"{values['objective']!r}: with scores the decision is by the "
                                              "probability of winning; leave objective out, or ask win"))
    if "scores" not in values:
        errors.append(FieldError("scores", "required with objective win, seat or final_round (the mover's score, "
                                           "then the other player's)"))
    else:
        try:
            game = game_around(position, values["scores"], values.get("seat"), values.get("final_round"))
        except PositionError as e:
            errors += e.errors
    if errors:
        raise answers.impossible(errors, "request")
    key = table_key(position.mode, position.recycle, game.table_players)
    solution, sha256 = _solution_or_503(key)
    return position, Win(game, solution), table_url(key, sha256)


def win_answer(values: Mapping[str, Any]) -> dict[str, Any]:
    """The /v1/odds answer whose decision is by probability of winning the game (schema `Odds`).

    The position and its next roll are rendered by answers.answer, as in every answer; the decision
    comes from the stored table; `turn` (the score distribution of an expected-brains policy) is left
    out, and `game` says which table decided. A table not stored yet: 503, and its job is started.
    """
    position, objective, url = _win_question(values)
    try:
        o = odds(position, objective)
    except PositionError as e:
        raise answers.impossible(e.errors, "position") from None
    return {**answers.answer(o), "game": _game(o.win, url, objective.table.cap_error)}


def _game(advice: WinAdvice, url: str, cap_error: float) -> dict[str, Any]:
    """Which table decided, and the game around the turn (schema `Game`): its scores and phase, P(the mover wins)
    from the start of the turn; with more than two players, their own table's P(each seat wins) or the reduced
    model's duel and measured error."""
    game, model_error = advice.scores, advice.model_error
    out: dict[str, Any] = {"scores": list(game.scores), "seat": game.player_seat, "final_round": game.final_round,
                           "phase": game.phase, "win_probability": {"value": advice.turn_start}, "table": url,
                           "cap_error": cap_error}
    if game.exact:  # more than two players, from their own table (analysis/game/advice.py)
        out.update(players=game.players, model="exact", p_seats=list(advice.p_seats))
    if model_error is not None:  # 3 to 8 players: the reduced model's duel (analysis/game/advice.py)
        out.update(players=game.players, model="duel-the-leader",
                   duel={"scores": [game.mover, game.other], "seat": game.seat},
                   model_error={"games": model_error.games, "bias": model_error.bias,
                                "calibration_error": model_error.calibration_error})
    return out


def _solution_or_503(key: Key) -> tuple[GameSolution | SeatsSolution, str]:
    """The stored table; else its job is started (unless it runs) and the answer is a 503 naming it."""
    loaded = load(key)
    if loaded is not None:
        return loaded
    try:
        job = submit(key.mode, key.variant, key.players, server=True)
    except QUEUE_ERRORS as e:
        raise _queue_down(e) from None
    except NotHere as e:
        reason = f"the win-probability table of {key.mode}, {key.variant} is not stored, and {e}"
        raise ApiError(422, f"mode: {reason}", [FieldError("mode", reason)]) from None
    loaded = load(key) if job.state == "succeeded" else None
    if loaded is not None:
        return loaded
    left = 1 - job.done / job.total if job.total else 1  # (the share of its steps still to do)
    wait = max(5, round(job_seconds(key.mode, key.players) * left))
    raise ApiError(503, f"the win-probability table of {key.mode}, {key.variant} is being computed (job {job.state}, "
                        f"{job.done} of {job.total} steps done); ask again in {wait} s",
                   headers={"Retry-After": str(wait)}, extensions={"job": job_url(job)})
