"""/v1/bust.txt and /v1/advice.txt: one answer as bare text, for a spreadsheet cell.

Short URLs for Excel's `WEBSERVICE` and Google Sheets' `IMPORTDATA`, the same values as
`/v1/odds.txt?field=bust|action`: they take the position as `GET /v1/odds` does, parsed by the same
code, and render the same memoised answer (`api.odds`), so no form of an answer can disagree with
another, nor accept a position that another refuses.
"""

from __future__ import annotations

from flask import Blueprint, Response, g

from . import formats
from .odds import answer, compute, position_from

__all__ = ["bp"]

bp = Blueprint("sheets", __name__)


def _value(field: str, exact: bool = False) -> Response:
    text = formats.one_value(answer(compute(*position_from(g.params))), field, exact=exact)
    return Response(text, mimetype="text/plain")


@bp.get("/v1/bust.txt")
def bust() -> Response:
    return _value("bust", exact=g.params["exact"])


@bp.get("/v1/advice.txt")
def advice() -> Response:
    return _value("action")
