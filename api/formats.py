"""Spreadsheet forms of an answer: a CSV table and single plain-text values.

Both are rendered from the JSON answer (answers.answer), never from the engine, so every form says
the same thing. They are made for Google Sheets' IMPORTDATA and Excel's WEBSERVICE, whose results
are capped at 32,767 characters: so the CSV carries floats only (exact fractions can run to
hundreds of digits each), and `key,value` rows, so that `VLOOKUP("bust", IMPORTDATA(url), 2, FALSE)`
finds any value by a stable key whatever the length of the distributions.
"""

from __future__ import annotations

import csv
import io
from typing import Any

__all__ = ["NotExact", "cell", "csv_table", "one_value", "rows"]


def cell(value: object) -> object:
    """A list of names as one cell (names separated by spaces), a boolean as `true` / `false`."""
    if isinstance(value, list):
        return " ".join(value)
    return ("true" if value else "false") if isinstance(value, bool) else value


def rows(answer: dict[str, Any]) -> list[tuple[str, object]]:
    """(key, value) pairs: the position, the next roll, the decision, the outcomes, the distribution."""
    position, roll, decision = answer["position"], answer["next_roll"], answer["decision"]
    out: list[tuple[str, object]] = [
        # the position as the answer has it (api/answers.py: every field of analysis.position's that applies, in the
        # order of the spec's `Position`), the cup a row per die
        *((k, cell(v)) for k, v in position.items() if k != "cup"),
        *((f"cup.{die}", n) for die, n in position["cup"].items()),
        ("bust", roll["bust"]["value"]),
        ("expected_brains", roll["expected_brains"]["value"]),
        ("recycles", "true" if roll["recycles"] else "false"),
        ("objective", decision["objective"]),
        ("action", decision["action"]),
        ("roll", decision["roll"]["value"]),
        ("stop", decision["stop"]["value"]),
    ]
    for a in decision.get("actions", ()):  # expansions only: each legal action's value and its roll
        out.append((f"actions.{a['action']}", a["value"]["value"]))
        out += [(f"actions.{a['action']}.{k}", v["value"]) for k, v in a.get("next_roll", {}).items()]
    for k, g in enumerate(decision.get("give_up", ()), 1):  # School Bus: tyre tracks, the brain given up
        out += [(f"give_up.{k}.probability", g["probability"]["value"]), (f"give_up.{k}.brains", g["brains"]),
                (f"give_up.{k}.shotguns", g["shotguns"]), (f"give_up.{k}.choice", g["choice"])]
        out += [(f"give_up.{k}.{c['give_up']}", c["value"]["value"]) for c in g["choices"]]
    out += [(f"outcome.b{o['brains']}.s{o['shotguns']}", o["value"]) for o in roll["outcomes"]]
    if "cost" in decision:  # the objective win (`scores`), whose answer has no turn distribution
        out.append(("cost", decision["cost"]["value"]))
    distribution = answer.get("turn", {}).get("score_distribution", [])
    out += [(f"score_distribution.{s['score']}", s["value"]) for s in distribution]
    return out


def csv_table(answer: dict[str, Any]) -> str:
    """A two-column CSV, `key,value`, with a header row (RFC 4180 line ends)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(("key", "value"))
    writer.writerows((key, repr(v) if isinstance(v, float) else v) for key, v in rows(answer))
    return buffer.getvalue()


class NotExact(ValueError):
    """`one_value(..., exact=True)` of a value the answer has as a float only (schema `Approximate`)."""


def one_value(answer: dict[str, Any], field: str, exact: bool = False) -> str:
    """`bust`, `roll`, `stop` (a float, or `p/q` when `exact`: `NotExact` where the answer has a float only) or
    `action`, as bare text; with the School Bus, `board`, `stay` or `get-off`: that action's value (KeyError where
    it is not legal)."""
    if field == "action":
        return answer["decision"]["action"]
    if field in ("bust", "roll", "stop"):
        value = answer["next_roll"]["bust"] if field == "bust" else answer["decision"][field]
    else:
        value = {a["action"]: a["value"] for a in answer["decision"].get("actions", ())}[field]
    if exact and "exact" not in value:
        raise NotExact(field)
    return value["exact"] if exact else repr(value["value"])
