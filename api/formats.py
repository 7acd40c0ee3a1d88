"""Spreadsheet forms of an answer: a CSV table and single plain-text values.

Both are rendered from the JSON answer (odds.answer), never from the engine, so every form says
the same thing. They are made for Google Sheets' IMPORTDATA and Excel's WEBSERVICE, whose results
are capped at 32,767 characters: so the CSV carries floats only (exact fractions can run to
hundreds of digits each), and `key,value` rows, so that `VLOOKUP("bust", IMPORTDATA(url), 2, FALSE)`
finds any value by a stable key whatever the length of the distributions.
"""

from __future__ import annotations

import csv
import io
from typing import Any

__all__ = ["csv_table", "one_value", "rows"]


def rows(answer: dict[str, Any]) -> list[tuple[str, object]]:
    """(key, value) pairs: the position, the next roll, the decision, the outcomes, the distribution."""
    position, roll, decision = answer["position"], answer["next_roll"], answer["decision"]
    out: list[tuple[str, object]] = [
        ("mode", position["mode"]),
        ("footprints", " ".join(position["footprints"])),
        ("brains", " ".join(position["brains"])),
        ("shotguns", " ".join(position["shotguns"])),
        ("banked", position["banked"]),
        ("recycle", position["recycle"]),
        ("score", position["score"]),
        *((f"cup.{die}", n) for die, n in position["cup"].items()),
        ("bust", roll["bust"]["value"]),
        ("expected_brains", roll["expected_brains"]["value"]),
        ("recycles", "true" if roll["recycles"] else "false"),
        ("objective", decision["objective"]),
        ("action", decision["action"]),
        ("roll", decision["roll"]["value"]),
        ("stop", decision["stop"]["value"]),
    ]
    out += [(f"outcome.b{o['brains']}.s{o['shotguns']}", o["value"]) for o in roll["outcomes"]]
    out += [(f"score_distribution.{s['score']}", s["value"]) for s in answer["turn"]["score_distribution"]]
    return out


def csv_table(answer: dict[str, Any]) -> str:
    """A two-column CSV, `key,value`, with a header row (RFC 4180 line ends)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(("key", "value"))
    writer.writerows((key, repr(v) if isinstance(v, float) else v) for key, v in rows(answer))
    return buffer.getvalue()


def one_value(answer: dict[str, Any], field: str, exact: bool = False) -> str:
    """`bust`, `roll`, `stop` (a float, or `p/q` when `exact`) or `action`, as bare text."""
    if field == "action":
        return answer["decision"]["action"]
    value = answer["next_roll"]["bust"] if field == "bust" else answer["decision"][field]
    return value["exact"] if exact else repr(value["value"])
