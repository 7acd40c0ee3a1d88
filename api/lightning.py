"""/v1/lightning: exact odds for Lightning Dice goal cards (RULES.md section 4), from analysis.lightning.

- `GET /v1/lightning/cards`: the built-in example deck (`DECK`), every card with its expected throws.
- `POST /v1/lightning/cards/analyze`: a card's optimal keep policy, expected throws, the distribution
  of the number of throws and P(matched within k throws); with `players` the race, with `number` the
  chance of passing through six of that number (a Bonus or a Thunder) on the way.
- `GET /v1/lightning/advice` (JSON or CSV) and `GET /v1/lightning/advice.txt` (one value): which
  dice to keep from six showing, and the expected throws left.

As for /v1/odds, the request was validated against openapi.yaml before a view runs (spec.py); a
view only parses the card (the pattern language cannot be written in JSON Schema, so a bad card is
refused here, with the parser's reason) and renders the analysis. The analysis layer caches every
result per canonical card text, so the views keep no cache of their own.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

from flask import Blueprint, Response, g, jsonify

from analysis.lightning import CARD_GRAMMAR, DECK, Card, CardError, advice, analyze, bonus_chase, parse_card, race

from .errors import ApiError, FieldError

__all__ = ["bp", "analysis_answer", "advice_answer", "advice_rows"]

bp = Blueprint("lightning", __name__)


def exact(x: Fraction) -> dict[str, Any]:
    """`{exact: "p/q", value}` as everywhere in the API.

    A race's fractions can run past Python's 4,300-digit limit on int-to-str conversion (a
    six-player race on `faces:1,1,2,3,5,6` has ~4,900 digits); Decimal writes any int exactly."""
    return {"exact": f"{Decimal(x.numerator)}/{Decimal(x.denominator)}", "value": float(x)}


def _card(text: str, field: str = "card") -> Card:
    try:
        return parse_card(text)
    except CardError as e:
        reason = e.reason + (f" (at {e.fragment!r})" if e.fragment else "")
        raise ApiError(422, f"invalid card: {reason}", [FieldError(field, reason)]) from None


def _whole(value: Any) -> Any:
    """JSON's 4.0 is the number 4 (the spec's integer type agrees); analysis insists on an int."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


# -- the deck -------------------------------------------------------------------------------------


@bp.get("/v1/lightning/cards")
def get_cards() -> Response:
    cards = [{"name": name, "card": card.text, "expected_throws": exact(analyze(card).expected_throws)}
             for name, card in DECK.items()]
    return jsonify({"grammar": CARD_GRAMMAR, "cards": cards})


# -- analysis -------------------------------------------------------------------------------------


def analysis_answer(card: Card, players: int | None = None, number: int | None = None) -> dict[str, Any]:
    """The documented answer (openapi.yaml, schema `LightningAnalysis`)."""
    a = analyze(card)
    within = list(a.within)
    before = [Fraction(0), *within[:-1]]
    out: dict[str, Any] = {
        "card": card.text,
        "expected_throws": exact(a.expected_throws),
        "variance": exact(a.variance),
        "distribution": [{"throws": k, **exact(w - b)} for k, (w, b) in enumerate(zip(within, before), 1)],
        "beyond": exact(1 - within[-1]),
        "within": [{"throws": k, **exact(w)} for k, w in enumerate(within, 1)],
        "policy": {
            "summary": a.policy_summary,
            "keeps_used": a.keeps_used,
            "typical_keeps": [{"roll": list(roll), "keep": list(keep)} for roll, keep in a.typical_keeps],
            "verified_optimal": a.verified_optimal,
        },
    }
    if players is not None:
        r = race(card, players)
        out["race"] = {
            "players": r.players,
            "sole_winner": exact(r.sole_winner[0]),
            "tie": exact(r.tie),
            "expected_throws": exact(r.expected_throws),
            "exact": r.exact,
            "error_bound": exact(r.error_bound),
        }
    if number is not None:
        b = bonus_chase(card, number)
        out["bonus_chase"] = {
            "number": b.number,
            "p_pass": exact(b.p_pass),
            "expected_passes": exact(b.expected_passes),
            "also_matches": b.also_matches,
        }
    return out


@bp.post("/v1/lightning/cards/analyze")
def post_analyze() -> Response:
    body = g.body
    card = _card(body["card"])
    return jsonify(analysis_answer(card, _whole(body.get("players")), _whole(body.get("number"))))


# -- advice ---------------------------------------------------------------------------------------


def advice_answer(values: Mapping[str, Any]) -> dict[str, Any]:
    """The documented answer (openapi.yaml, schema `LightningAdvice`) for validated query values."""
    card = _card(values["card"])
    try:
        a = advice(card, [_whole(d) for d in values["dice"]])
    except ValueError as e:  # the spec checked six dice 1..6 already: a second line of defence
        raise ApiError(422, f"invalid dice: {e}", [FieldError("dice", str(e))]) from None
    return {
        "card": card.text,
        "dice": list(a.dice),
        "matched": a.matched,
        "keep": list(a.keep),
        "reroll": list(a.reroll),
        "expected_throws_left": exact(a.expected_throws_left),
        "equally_good": [list(keep) for keep in a.equally_good],
    }


def _spaced(dice: Iterable[int]) -> str:
    """Dice as text, separated by spaces; `none` for no dice (an empty text body is not a value)."""
    return " ".join(map(str, dice)) or "none"


def advice_rows(answer: dict[str, Any]) -> list[tuple[str, object]]:
    """(key, value) pairs for the CSV: dice separated by spaces, the value as a float."""
    return [
        ("card", answer["card"]),
        ("dice", _spaced(answer["dice"])),
        ("matched", "true" if answer["matched"] else "false"),
        ("keep", _spaced(answer["keep"])),
        ("reroll", _spaced(answer["reroll"])),
        ("expected_throws_left", repr(answer["expected_throws_left"]["value"])),
        *((f"equally_good.{i}", _spaced(keep)) for i, keep in enumerate(answer["equally_good"], 1)),
    ]


def _csv(rows: list[tuple[str, object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(("key", "value"))
    writer.writerows(rows)
    return buffer.getvalue()


@bp.get("/v1/lightning/advice")
def get_advice() -> Response:
    answer = advice_answer(g.params)
    if g.params["format"] == "csv":
        return Response(_csv(advice_rows(answer)), mimetype="text/csv")
    return jsonify(answer)


@bp.get("/v1/lightning/advice.txt")
def get_advice_value() -> Response:
    answer, field = advice_answer(g.params), g.params["field"]
    if field == "expected_throws_left":
        value = answer[field]
        text = value["exact"] if g.params["exact"] else repr(value["value"])
    else:
        text = _spaced(answer[field])
    return Response(text, mimetype="text/plain")
