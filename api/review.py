"""/v1/review: a whole game log in, every roll/stop decision priced out, as JSON or CSV.

The log was validated against openapi.yaml (`GameLog`) before the view runs; `analysis.review` then
replays it by the rules (an impossible roll is a 422 naming ``turns[i].rolls[j]...``) and prices each
decision. The measure is the mover's win probability when the store holds the two-player table of the
game's mode and variant (`table_key(mode, variant, 2)`, loaded by `workers.tables.load`: once per
table version, kept in this process), and the turn's expected brains otherwise, with the reason in the
answer: the review never guesses a win probability it has no table for.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from flask import Blueprint, Response, current_app, g, jsonify, request

from analysis.game import GameSolution
from analysis.review import GameLog, LogError, Review, review
from workers.tables import load
from workers.tasks import table_key

from .errors import ApiError

__all__ = ["bp", "answer", "csv_rows", "two_player_table", "MAX_LOG_BYTES"]

bp = Blueprint("review", __name__)

# A whole game log is longer than the 16 KiB the rest of the API accepts: about 400 bytes per turn
# written compactly, twice that indented, and a game of two players lasts 20 to 40 turns (more with
# more players). `REVIEW_MAX_CONTENT_LENGTH` in the app's config overrides it.
MAX_LOG_BYTES = 256 * 1024
CSV_COLUMNS = ("turn", "roll", "player", "scores", "turn_total", "footprints", "brains", "shotguns", "banked",
               "chosen", "best", "roll_value", "stop_value", "cost", "mistake", "measure")


@bp.url_value_preprocessor
def _allow_a_whole_game(endpoint: str | None, values: dict[str, Any] | None) -> None:
    """Raise the body limit for this blueprint only. URL value preprocessors run before every
    before_request hook, and the app's request validation (spec.py) is one that reads the body."""
    request.max_content_length = current_app.config.get("REVIEW_MAX_CONTENT_LENGTH", MAX_LOG_BYTES)


def two_player_table(mode: str, recycle: str) -> tuple[GameSolution | None, dict[str, str] | None, str]:
    """(solution, {key, sha256}, "") from the store (workers.tables' loader: parsed once per process and
    per version), or (None, None, why there is none)."""
    key = table_key(mode, recycle, 2)
    loaded = load(key)
    if loaded is None:
        return None, None, (f"no two-player table for {mode} ({recycle}) in the store yet; "
                            f"POST /v1/tables/{mode}/jobs computes it")
    solution, digest = loaded
    return solution, {"key": key.name, "sha256": digest}, ""


def answer(r: Review, table: dict[str, str] | None) -> dict[str, Any]:
    """The documented JSON answer (openapi.yaml, schema `Review`)."""
    log, played = r.replay.log, r.replay
    out: dict[str, Any] = {"mode": log.mode, "recycle": log.recycle, "measure": r.measure}
    if r.reason:
        out["reason"] = r.reason
    if table:
        out["table"] = table
    out["finished"] = played.finished
    if played.winner is not None:
        out["winner"] = log.players[played.winner]
    out["players"] = [{"name": t.name, "score": t.score, "turns": t.turns, "decisions": t.decisions,
                       "mistakes": t.mistakes, "cost": t.cost} for t in r.totals]
    out["decisions"] = [
        {
            "turn": d.step.turn,
            "roll": d.step.roll,
            "player": log.players[d.step.seat],
            "scores": list(d.step.scores),
            "position": {
                "footprints": list(d.step.position.footprints),
                "brains": list(d.step.position.brains),
                "shotguns": list(d.step.position.shotguns),
                "banked": d.step.position.banked,
                "score": d.step.position.score,
            },
            "chosen": d.chosen,
            "best": d.best,
            "values": {"roll": d.roll, "stop": d.stop},
            "cost": d.cost,
            "mistake": d.mistake,
        }
        for d in r.decisions
    ]
    return out


def csv_rows(result: dict[str, Any]) -> str:
    """One row per decision (`CSV_COLUMNS`, header first, CRLF), rendered from the JSON answer."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for d in result["decisions"]:
        p = d["position"]
        writer.writerow((d["turn"], d["roll"], d["player"], " ".join(map(str, d["scores"])), p["score"],
                         " ".join(p["footprints"]), " ".join(p["brains"]), " ".join(p["shotguns"]), p["banked"],
                         d["chosen"], d["best"], repr(d["values"]["roll"]), repr(d["values"]["stop"]),
                         repr(d["cost"]), "true" if d["mistake"] else "false", result["measure"]))
    return buffer.getvalue()


def _wants_csv() -> bool:
    if "format" in g.params:
        return g.params["format"] == "csv"
    return request.accept_mimetypes.best_match(["application/json", "text/csv"]) == "text/csv"


@bp.post("/v1/review")
def post_review() -> Response:
    try:
        log = GameLog.from_dict(g.body)
        solution, table, missing = (two_player_table(log.mode, log.recycle) if len(log.players) == 2
                                    else (None, None, ""))
        result = answer(review(log, solution, missing), table)
    except LogError as e:
        raise ApiError(422, "impossible game log: " + "; ".join(f"{x.field}: {x.reason}" for x in e.errors),
                       e.errors) from None
    if _wants_csv():
        return Response(csv_rows(result), mimetype="text/csv")
    return jsonify(result)
