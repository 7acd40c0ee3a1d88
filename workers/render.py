"""A report rendered for people and spreadsheets: its HTML page, its CSV and its charts, from its content.

`workers.reports.make` renders a report once, when it is made, and stores what this module gives (the page, a CSV
per table, every chart in PNG and SVG); `api/reports.py` serves them (`all_csv`: every table in one CSV, `chart`:
one chart's bytes).
"""

from __future__ import annotations

import base64
import csv
import io
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from analysis.game import GameSolution
from analysis.report import region_grid

__all__ = ["table_csv", "all_csv", "draw_charts", "chart", "html", "CHART_FORMATS"]

HTML_ROWS = 30  # longer tables show their first rows on the page (every row is in the CSV)
LONG_EXACT = 40  # exact fractions longer than this are left to the CSV and the JSON
CHART_FORMATS = ("png", "svg")
PERCENT = {"bust", "probability", "agreement", "share_of_decisions", "roll_share", "visit_share", "p_win_first",
           "p_win_second", "p_win_either"}


def table_csv(table: dict[str, Any]) -> str:
    """One table as CSV: a header row, then the rows (floats as repr: exact round trip; CRLF line ends)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(table["columns"])
    writer.writerows([_csv_cell(v) for v in row] for row in table["rows"])
    return buffer.getvalue()


def _csv_cell(v: Any) -> Any:
    if isinstance(v, float):
        return repr(v)
    return "" if v is None else v


def all_csv(doc: dict[str, Any]) -> str:
    """Every table of a report in one CSV: per table, a row ``table,<name>,<title>``, its header and rows,
    then an empty row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    for t in doc["content"]["tables"]:
        writer.writerow(["table", t["name"], t["title"]])
        out.write(doc["csv"][t["name"]])
        writer.writerow([])
    return out.getvalue()


@cache
def _templates() -> Environment:
    return Environment(loader=PackageLoader("workers", "templates"), autoescape=select_autoescape(["html"]),
                       trim_blocks=True, lstrip_blocks=True)


def _percent(v: float) -> str:
    if v == 0 or v >= 1e-4:
        return f"{100 * v:.2f}%"
    return f"{100 * v:.2g}%"  # 0.0076%, 6.8e-07%


def _long_exact(v: Any) -> bool:
    return isinstance(v, str) and "/" in v and len(v) > LONG_EXACT


def _cell(column: str, v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return _percent(v) if column in PERCENT or column.startswith("vs_") else f"{v:.6g}"
    return str(v)


def _fact_text(fact: dict[str, Any]) -> str:
    return _percent(fact["value"]) if fact["kind"] == "probability" else f"{fact['value']:.10g}"


def _view_table(t: dict[str, Any], charted: bool) -> dict[str, Any]:
    """A table as the page shows it: cells as text; a pivot (if any) shown first and the rows folded, as
    are the rows of a table drawn as a chart."""
    # a column of long exact fractions (or of none) is left to the CSV; text columns are aligned left
    shown = [k for k, c in enumerate(t["columns"])
             if not any(_long_exact(r[k]) for r in t["rows"]) and any(r[k] is not None for r in t["rows"])]
    columns = [t["columns"][k] for k in shown]
    rows = [[_cell(t["columns"][k], row[k]) for k in shown] for row in t["rows"][:HTML_ROWS]]
    text_columns = {t["columns"][k] for k in shown if any(isinstance(r[k], str) and "/" not in r[k]
                                                            for r in t["rows"])}
    view = {"name": t["name"], "title": t["title"], "note": t["note"], "columns": columns, "rows": rows,
            "count": len(t["rows"]), "more": len(t["rows"]) > HTML_ROWS, "collapsed": charted or t.get("fold"),
            "text_columns": text_columns, "pivot": None}
    if pivot := t.get("pivot"):
        r, c, v = (columns.index(pivot[x]) for x in ("row", "column", "value"))
        heads = list(dict.fromkeys(row[c] for row in t["rows"]))
        cells: dict[Any, dict[Any, str]] = {}
        for row in t["rows"]:
            cells.setdefault(row[r], {})[row[c]] = _cell(pivot["value"], row[v])
        view["pivot"] = {"columns": [f"{pivot['row']} \\ {pivot['column']}", *heads],
                         "rows": [[name, *(by.get(h, "") for h in heads)] for name, by in cells.items()]}
    return view


def _draw(spec: dict[str, Any], tables_: dict[str, dict[str, Any]], game: GameSolution | None, mode: str,
          fmt: str) -> bytes | None:
    from analysis import charts  # matplotlib: only where reports are drawn

    if spec["name"] == "win_heatmap":
        return None if game is None else charts.win_heatmap(game, fmt)
    if spec["name"] == "roll_stop_regions":
        panels, rows, totals = region_grid(tables_[spec["table"]])
        return charts.roll_stop_regions(panels, rows, totals, fmt, f"Roll/stop regions of one turn ({mode})")
    raise ValueError(f"unknown chart {spec['name']!r}")


def draw_charts(doc: dict[str, Any], game: GameSolution | None) -> dict[str, dict[str, str]]:
    """Every chart of the report, drawn once when it is made: name -> title and the PNG and SVG bytes (base64),
    served as files by ``GET /v1/reports/{id}/charts/{name}.png|svg`` and put in the page as the SVG."""
    content = doc["content"]
    by_name = {t["name"]: t for t in content["tables"]}
    out = {}
    for section in content["sections"]:
        for spec in section["charts"]:
            drawn = {fmt: _draw(spec, by_name, game, doc["mode"], fmt) for fmt in CHART_FORMATS}
            if all(drawn.values()):
                out[spec["name"]] = {"title": spec["title"],
                                     **{fmt: base64.b64encode(b).decode() for fmt, b in drawn.items()}}
    return out


def chart(doc: dict[str, Any], name: str, fmt: str) -> bytes | None:
    """One stored chart's bytes (None: the report has no such chart, or was stored before charts were kept)."""
    drawn = doc.get("charts", {}).get(name)
    return base64.b64decode(drawn[fmt]) if drawn is not None and fmt in drawn else None


def html(doc: dict[str, Any]) -> str:
    """The report as one self-contained HTML page (no request leaves it: CSS inline, charts as data URIs)."""
    content = doc["content"]
    by_name = {t["name"]: t for t in content["tables"]}
    drawn = doc.get("charts", {})
    sections = []
    for s in content["sections"]:
        charts_ = [{"title": drawn[spec["name"]]["title"], "name": spec["name"],
                    "uri": "data:image/svg+xml;base64," + drawn[spec["name"]]["svg"]}
                   for spec in s["charts"] if spec["name"] in drawn]
        sections.append({**s, "facts": [{**f, "text": _fact_text(f)} for f in s["facts"]], "charts": charts_,
                         "tables": [_view_table(by_name[name], any(c["table"] == name for c in s["charts"]))
                                    for name in s["tables"]]})
    return _templates().get_template("report.html").render(
        title=f"Zombie Dice report: {content['title']}", id=doc["id"], mode=doc["mode"], variant=doc["variant"],
        period=doc["period"], created=doc["created"], engine=doc["engine"], table_sha=doc["table"].get("sha256"),
        notes=doc["notes"], sections=sections)
