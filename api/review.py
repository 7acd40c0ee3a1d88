"""/v1/review: a whole game log in, every roll/stop decision priced out, as JSON or CSV.

The log was validated against openapi.yaml (`GameLog`) before the view runs; `analysis.review` then
replays it by the rules (an impossible roll is a 422 naming ``turns[i].rolls[j]...``) and prices each
decision. The measure is the mover's win probability when the store holds the two-player table of the
game's mode and variant (`table_key(mode, variant, 2)`, loaded by `workers.tables.load`: once per
table version, kept in this process; `analysis.game.units.no_table_reason` says which modes have none),
and the turn's expected brains otherwise, with the reason in the answer: the review never guesses a
win probability it has no table for.

Expected brains in a Double Feature mode are solved per decision over the states its turn can still
reach (analysis.review), which costs seconds near a bust and up to minutes far from it. A request must
not take minutes, so a decision is solved only where `/v1/odds` would answer it (`budgets.too_large`, which
follows any change of the API's rule) and at most `REVIEW_MAX_ROOM` shotguns from a bust less one
(`budgets.room`, counting a helmet Santa may still show), and at most `MAX_SOLVES` tables per review; any
other decision is answered unpriced, with the reason. Measured (CPU seconds of `solve` + `exact_turn`
rooted at one position, in a fresh process, on a loaded shared machine): one shotgun from a bust, 2 s
in Big Summer Action Movie (2,247 states), 5 s in the sequel (3,324); two from a bust, 5 s in Santa
Claus (4,153; a helmet may still come), but 28 s in Big Summer Action Movie (14,984) and 30 s in the
sequel (16,362).
"""

from __future__ import annotations

import csv
import io
from typing import Any

from flask import Blueprint, Response, current_app, g, jsonify, request

from analysis import MODES, Position, budgets
from analysis.game import GameSolution
from analysis.game.units import no_table_reason
from analysis.position import BASE_FIELDS, DOUBLE_FEATURE_FIELDS
from analysis.review import DecisionReview, GameLog, LogError, Review, review
from workers.store import table_key
from workers.tables import load

from .errors import MAX_ERRORS, ApiError
from .formats import cell

__all__ = ["bp", "answer", "csv_rows", "spreadsheet_safe", "two_player_table", "unpriced", "MAX_LOG_BYTES",
           "MAX_SOLVES"]

bp = Blueprint("review", __name__)

# A whole game log is longer than the 16 KiB the rest of the API accepts: about 400 bytes per turn
# written compactly, twice that indented, and a game of two players lasts 20 to 40 turns (more with
# more players). `REVIEW_MAX_CONTENT_LENGTH` in the app's config overrides it.
MAX_LOG_BYTES = 256 * 1024
# A decision's position (schema `ReviewPosition`) is a position's fields (analysis.position's) but the game's, which
# the log gives once (`GameLog`); a log has no School Bus.
GAME_FIELDS = ("mode", "recycle")
DECISION_FIELDS = tuple(f for f in BASE_FIELDS if f not in GAME_FIELDS)
CSV_COLUMNS = ("turn", "roll", "player", "scores", "turn_total", *DECISION_FIELDS, "chosen", "best", "roll_value",
               "stop_value", "cost", "mistake", "measure")
# Double Feature logs add the position's other piles and why a decision was not solved ("" if it was).
EXPANSION_COLUMNS = (*DOUBLE_FEATURE_FIELDS, "unpriced")
MAX_SOLVES = 12  # tables solved per review, at most: about a minute of CPU at the rates above


@bp.url_value_preprocessor
def _allow_a_whole_game(endpoint: str | None, values: dict[str, Any] | None) -> None:
    """Raise the body limit for this blueprint only. URL value preprocessors run before every
    before_request hook, and the app's request validation (spec.py) is one that reads the body."""
    request.max_content_length = current_app.config.get("REVIEW_MAX_CONTENT_LENGTH", MAX_LOG_BYTES)


def two_player_table(mode: str, recycle: str) -> tuple[GameSolution | None, dict[str, str] | None, str]:
    """(solution, {key, sha256}, "") from the store (workers.tables' loader: parsed once per process and
    per version), or (None, None, why there is none)."""
    why = no_table_reason(mode)
    if why is not None:
        return None, None, why
    key = table_key(mode, recycle, 2)
    loaded = load(key)
    if loaded is None:
        return None, None, (f"no two-player table for {mode} ({recycle}) in the store yet; "
                            f"POST /v1/tables/{mode}/jobs computes it")
    solution, digest = loaded
    return solution, {"key": key.name, "sha256": digest}, ""


def unpriced(position: Position) -> str | None:
    """Why the review does not solve this Double Feature decision in expected brains (None: it does)."""
    fault = budgets.too_large(position)
    if fault is not None:
        return f"not solved: {fault.reason}"
    limit = budgets.REVIEW_MAX_ROOM.get(position.mode)
    if limit is not None and budgets.room(position) > limit:
        return (f"not solved: {budgets.room(position) + 1} shotguns from a bust (counting a helmet Santa may still "
                f"show); the review solves mode {position.mode} in expected brains at most {limit + 1} from a "
                "bust, where its turn is small (seconds)")
    return None


def _position(p: Position) -> dict[str, Any]:
    """`p` as schema `ReviewPosition`: its `DECISION_FIELDS`, the Double Feature's in its modes, and its score."""
    names = DECISION_FIELDS + (() if MODES[p.mode].plain else DOUBLE_FEATURE_FIELDS)
    values = {k: getattr(p, k) for k in names}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()} | {"score": p.score}


def _decision(d: DecisionReview, players: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"turn": d.step.turn, "roll": d.step.roll, "player": players[d.step.seat],
                           "scores": list(d.step.scores), "position": _position(d.step.position), "chosen": d.chosen}
    if d.unpriced:
        out["unpriced"] = d.unpriced
    else:
        out.update(best=d.best, values={"roll": d.roll, "stop": d.stop}, cost=d.cost)
    out["mistake"] = d.mistake
    return out


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
                       "mistakes": t.mistakes, "cost": t.cost, "unpriced": t.unpriced} for t in r.totals]
    out["decisions"] = [_decision(d, log.players) for d in r.decisions]
    return out


# A cell a spreadsheet would read as a formula (OWASP, "CSV Injection"): `=`, `+`, `-`, `@`, a tab or a carriage
# return first. Text a client sent (a player's name) is written with a `'` before it, which spreadsheets show as text.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """`text` as a CSV cell no spreadsheet runs: `'=HYPERLINK(...)` for `=HYPERLINK(...)`, the rest unchanged."""
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_rows(result: dict[str, Any]) -> str:
    """One row per decision (`CSV_COLUMNS`, and `EXPANSION_COLUMNS` for a Double Feature log; header first,
    CRLF), rendered from the JSON answer. An unpriced decision has empty value cells. A player's name is the
    one cell of text a client wrote: `spreadsheet_safe`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    expansion = not MODES[result["mode"]].plain
    writer.writerow(CSV_COLUMNS + (EXPANSION_COLUMNS if expansion else ()))
    for d in result["decisions"]:
        p = d["position"]
        values = d.get("values")
        row = [d["turn"], d["roll"], spreadsheet_safe(d["player"]), " ".join(map(str, d["scores"])), p["score"],
               *(cell(p[k]) for k in DECISION_FIELDS), d["chosen"], d.get("best", ""),
               repr(values["roll"]) if values else "", repr(values["stop"]) if values else "",
               repr(d["cost"]) if "cost" in d else "", "true" if d["mistake"] else "false", result["measure"]]
        if expansion:
            row += [cell(p[k]) for k in DOUBLE_FEATURE_FIELDS] + [d.get("unpriced", "")]
        writer.writerow(row)
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
        result = answer(review(log, solution, missing, unpriced, MAX_SOLVES), table)
    except LogError as e:
        faults = "; ".join(f"{x.field}: {x.reason}" for x in e.errors[:MAX_ERRORS])
        raise ApiError(422, f"impossible game log: {faults}", e.errors) from None
    if _wants_csv():
        return Response(csv_rows(result), mimetype="text/csv")
    return jsonify(result)
