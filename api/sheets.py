"""/v1/bust.txt, /v1/advice.txt and /v1/win.txt: one answer as bare text, for a spreadsheet cell.

Short URLs for Excel's `WEBSERVICE` and Google Sheets' `IMPORTDATA`. They take the position as
`GET /v1/odds` does, parsed by the same code, and render the same answer (`api.odds.answer_for`), so no
form of an answer can disagree with another, nor accept a position that another refuses (the bust chance
needs no policy: `api.odds.bust_text` reads it from the next roll alone where one action rolls):

* bust.txt is `/v1/odds.txt?field=bust` (the next roll does not depend on the game's scores);
* advice.txt is `/v1/odds.txt?field=action`: with `scores` and `seat` the decision is by the
  probability of winning the game (`api.tables.win_answer`, as `/v1/odds` decides it);
* win.txt is the mover's probability of winning the game under optimal play from this position,
  ``max(P(win | roll), P(win | stop))`` mid-turn and ``P(win | roll)`` at the start of a turn (the first
  roll is compulsory), read from the same win answer: the value of its ``decision.action``. Where the
  mode's two-player table is not stored yet the answer is the 503 of `/v1/odds` (``Retry-After`` and the
  job computing it), never a number from another objective.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, g

from . import formats, tables
from .odds import answer_for, bust_text

__all__ = ["bp", "win_value"]

bp = Blueprint("sheets", __name__)


def _text(text: str) -> Response:
    return Response(text, mimetype="text/plain")


def win_value(result: dict[str, Any]) -> float:
    """P(the mover wins) under optimal play from a win answer's position: the value of the best action
    (either one on a tie; at the start of a turn the action is always ``roll``, which is compulsory)."""
    decision = result["decision"]
    return decision["stop" if decision["action"] == "stop" else "roll"]["value"]


@bp.get("/v1/bust.txt")
def bust() -> Response:
    return _text(bust_text(g.params, g.params["exact"]))


@bp.get("/v1/advice.txt")
def advice() -> Response:
    return _text(formats.one_value(answer_for(g.params, distribution=False), "action"))


@bp.get("/v1/win.txt")
def win() -> Response:
    return _text(repr(win_value(tables.win_answer(g.params))))
