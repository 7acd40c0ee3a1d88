"""workers/render.py: a report rendered for people and spreadsheets: each table as CSV (floats that read back
exactly) and all of them in one, a stored chart's bytes, and the self-contained HTML page (escaped, long tables cut
to their first rows, long exact fractions and empty columns left to the CSV, probabilities as percentages, a pivot
shown first)."""

from __future__ import annotations

import base64
import csv
import io
import re
from typing import Any

import pytest

from analysis.report import build
from workers import render

TABLE = {"name": "odds", "title": "Some odds", "note": "A note.", "columns": ["hand", "bust", "exact", "value", "none"],
         "rows": [["green, red", 0.1 + 0.2, "1/3", 1234.56789, None], ["red", 7.6e-5, "2/7", 2.0, None]]}


def page(**doc: Any) -> str:
    base = {"id": "original--before-draw--p2--v1--20200101-030000-0123456789ab", "mode": "original",
            "variant": "before-draw", "period": "2020-01-01T03:00:00Z", "created": "2020-01-01T03:00:05+00:00",
            "engine": "1", "table": {}, "notes": [], "charts": {}}
    return render.html({**base, **doc})


def content(*tables: dict[str, Any], charts: tuple[dict[str, str], ...] = ()) -> dict[str, Any]:
    section = {"id": "bust", "title": "Bust odds", "status": "ok", "reason": "", "facts": [], "text": ["Text."],
               "tables": [t["name"] for t in tables], "charts": list(charts)}
    return {"title": "A report", "sections": [section], "tables": list(tables)}


def test_a_table_as_csv_reads_back_exactly() -> None:
    text = render.table_csv(TABLE)
    assert text.endswith("\r\n") and text.count("\r\n") == 3
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == TABLE["columns"]
    assert rows[1] == ["green, red", "0.30000000000000004", "1/3", "1234.56789", ""]
    assert [float(r[1]) for r in rows[1:]] == [0.1 + 0.2, 7.6e-5]


def test_every_table_in_one_csv() -> None:
    other = {**TABLE, "name": "more", "title": "More, quoted"}
    doc = {"content": content(TABLE, other), "csv": {t["name"]: render.table_csv(t) for t in (TABLE, other)}}
    blocks = render.all_csv(doc).split("\r\n\r\n")
    assert blocks[-1] == "" and len(blocks) == 3
    for block, t in zip(blocks, (TABLE, other)):
        rows = list(csv.reader(io.StringIO(block)))
        assert rows[0] == ["table", t["name"], t["title"]]
        assert rows[1:] == list(csv.reader(io.StringIO(doc["csv"][t["name"]])))


def test_a_stored_charts_bytes() -> None:
    png, svg = b"\x89PNG\r\n\x1a\n...", b"<svg/>"
    doc = {"charts": {"win_heatmap": {"title": "P(win)", "png": base64.b64encode(png).decode(),
                                      "svg": base64.b64encode(svg).decode()}}}
    assert render.chart(doc, "win_heatmap", "png") == png and render.chart(doc, "win_heatmap", "svg") == svg
    assert render.chart(doc, "roll_stop_regions", "png") is None and render.chart(doc, "win_heatmap", "gif") is None
    assert render.chart({}, "win_heatmap", "png") is None  # (stored before charts were kept)


def test_a_chart_without_its_table_is_not_drawn_and_an_unknown_one_is_a_bug() -> None:
    heatmap = {"name": "win_heatmap", "title": "P(win)", "table": "p_win"}
    doc = {"mode": "original", "content": content(TABLE, charts=(heatmap,))}
    assert render.draw_charts(doc, None) == {}  # no two-player table: no heatmap
    doc = {"mode": "original", "content": content(TABLE, charts=({"name": "pie", "title": "?", "table": "odds"},))}
    with pytest.raises(ValueError, match="unknown chart 'pie'"):
        render.draw_charts(doc, None)


def test_cells_as_the_page_shows_them() -> None:
    """Probabilities as percentages (two decimals, or two significant digits below 0.01%), other floats to six
    digits; a column of long exact fractions, or of nothing, is left to the CSV; text is escaped."""
    long = {**TABLE, "rows": [[*row[:2], "1" * 30 + "/" + "7" * 30, *row[3:]] for row in TABLE["rows"]]}
    html = page(content=content(long), notes=["<script>alert(1)</script>"])
    head = re.search(r"<thead><tr>(.*?)</tr></thead>", html)[1]
    assert re.findall(r"<th[^>]*>(.*?)</th>", head) == ["hand", "bust", "value"]
    assert "<td>30.00%</td>" in html and "<td>0.0076%</td>" in html and "<td>1234.57</td>" in html
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    shown = page(content=content(TABLE))
    assert re.findall(r"<th[^>]*>(.*?)</th>", re.search(r"<thead><tr>(.*?)</tr></thead>", shown)[1]) == [
        "hand", "bust", "exact", "value"]


def test_a_real_reports_page_is_self_contained_its_long_table_cut_its_pivot_first() -> None:
    """The sequel's report without its heavy sections (seconds to build): four sections missing, said why; the bust
    table's 57 rows shown by footprints and shotguns first, then its first 30 rows, all of them in the CSV."""
    data = build("direct-to-video-sequel", game=None, game_missing="no table")
    [bust] = data["tables"]
    html = page(content=data, mode="direct-to-video-sequel", notes=["No two-player table yet."])
    assert not re.search(r"<(script|link|iframe|img)\b", html) and not re.search(r"(src|href)=\"(https?:)?//", html)
    assert html.count("<strong>Missing.</strong>") == 4 and "No table." in html
    assert f"Every row ({len(bust['rows'])}): the first {render.HTML_ROWS} here, all in the CSV" in html
    pivot = html.index("footprints \\ shotguns")
    assert pivot < html.index("<th class=\"text\">footprints</th>")
    hands = len({row[0] for row in bust["rows"]})
    assert html.count("<tr>") == 1 + hands + 1 + render.HTML_ROWS  # the pivot's head and hands, the table's head, rows
    first = bust["rows"][0]
    assert f"<td>{100 * first[5]:.2f}%</td>" in html and f"<td>{first[4]}</td>" in html
