"""The README's recipes work as written: every URL, the Python snippet, the HTML snippets, the formulas.

The URLs and formulas are read from the README itself (its "Recipes" section), so a recipe cannot
drift from the API without failing here. Their host (`127.0.0.1:8000`, `your-host:8000`) stands
for wherever the service runs: paths and queries go to the test app, or to a real server for the
Python snippet.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.exceptions import HTTPException

README = Path(__file__).resolve().parent.parent / "README.md"
CELLS = {"A2": "green,red", "B2": "green", "C2": "red", "D2": "7"}  # the row the spreadsheet recipe describes
WORKED = "/v1/odds?footprints=green,red&brains=green&shotguns=red"
NOT_COMPUTED_HERE = "/v1/tables/"  # full-game tables: a job of ~10 s, tested in their own module


def recipes() -> str:
    """The "Recipes" section, up to the next section (other sections have their own tests)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Recipes\n") + 1:]
    end = section.find("\n## ")
    return section if end < 0 else section[:end]


def local(url: str) -> str:
    """A README URL as a path and query for the test app."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def routed(app: Flask, url: str, method: str = "GET") -> bool:
    """Is there a route for this URL and method (without calling it)?"""
    with contextlib.suppress(HTTPException):
        app.url_map.bind("localhost").match(urlsplit(url).path, method=method)
        return True
    return False


def test_the_recipes_section_is_there() -> None:
    section = recipes()
    for heading in ('### An app asking "should I roll?"', "### Embedding the calculator in a web page",
                    "### A spreadsheet", "### Fetching a table"):
        assert heading in section


def test_every_curl_url_answers(client: FlaskClient, app: Flask) -> None:
    urls = re.findall(r"curl (-X POST )?'?(http://127\.0\.0\.1:8000/[^' ]+)", recipes())
    assert len(urls) >= 4
    for post, url in urls:
        if NOT_COMPUTED_HERE in url:
            assert routed(app, url, "POST" if post else "GET"), url
            continue
        assert not post
        response = client.get(local(url))
        assert response.status_code == 200, (url, response.get_data(as_text=True))


def test_the_python_snippet_runs(server_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("requests")
    code = re.search(r"```python\n(.*?)```", recipes(), re.S)[1]
    assert 'API = "http://127.0.0.1:8000"' in code
    exec(code.replace("http://127.0.0.1:8000", server_url), {})  # the README's own snippet
    assert capsys.readouterr().out == "roll 2/9\n"


def test_the_html_snippets_load(client: FlaskClient) -> None:
    snippets = re.findall(r"```html\n(.*?)```", recipes(), re.S)
    assert snippets[0] == ('<div data-zombie-odds></div>\n'
                           '<script src="http://127.0.0.1:8000/embed/widget.js" async></script>\n')
    sources = [src for snippet in snippets for src in re.findall(r'src="([^"]+)"', snippet)]
    assert [local(s) for s in sources] == ["/embed/widget.js", "/embed/calculator"]
    for source, mimetype in zip(sources, ("text/javascript", "text/html")):
        response = client.get(local(source))
        assert response.status_code == 200 and response.mimetype == mimetype


# -- spreadsheet formulas -------------------------------------------------------------------------

TOKEN = re.compile(r'"([^"]*)"|ENCODEURL\(([A-Z][0-9])\)|([A-Z][0-9])')


def formula_url(formula: str, cells: dict[str, str]) -> str:
    """The URL a formula fetches: the `&`-concatenation inside IMPORTDATA( or WEBSERVICE(, evaluated."""
    position = re.search(r"(?:IMPORTDATA|WEBSERVICE)\(", formula).end()
    parts = []
    while match := TOKEN.match(formula, position):
        literal, encoded, cell = match.groups()
        parts.append(literal if literal is not None else quote(cells[encoded], safe="") if encoded else cells[cell])
        position = match.end()
        if not formula.startswith("&", position):
            break
        position += 1
    assert formula[position] in ",)", f"cannot read {formula!r} at {position}"
    return "".join(parts)


def test_formula_reader() -> None:
    formula = '=NUMBERVALUE(WEBSERVICE("http://h/v1/bust.txt?footprints="&ENCODEURL(A2)&"&x="&B2), ".")'
    assert formula_url(formula, {"A2": "green,red", "B2": "y"}) == "http://h/v1/bust.txt?footprints=green%2Cred&x=y"


def test_every_spreadsheet_formula_answers_what_the_api_says(client: FlaskClient, app: Flask) -> None:
    # (formulas with `scores` need a stored full-game table: tests/test_sheets.py checks them against one)
    formulas = [f for f in re.findall(r"^ {4}(=.+)$", recipes(), re.M) if "scores=" not in f]
    assert len(formulas) >= 6
    answer = client.get(WORKED).get_json()
    expected = {"bust": answer["next_roll"]["bust"]["value"], "action": answer["decision"]["action"],
                "roll": answer["decision"]["roll"]["value"]}
    checked = set()
    for formula in formulas:
        url = formula_url(formula, CELLS)
        if NOT_COMPUTED_HERE in url:
            assert routed(app, url), url
            continue
        for busted in (url, url + "&_=" + CELLS["D2"]):  # the cache-buster the README suggests
            response = client.get(local(busted))
            assert response.status_code == 200, (formula, response.get_data(as_text=True))
            body = response.get_data(as_text=True)
            assert len(body) < 32_767
            if lookup := re.match(r'=VLOOKUP\("([^"]+)"', formula):
                value = dict(csv.reader(io.StringIO(body)))[lookup[1]]
                assert float(value) == expected[lookup[1]]
                checked.add("csv")
            elif "/v1/bust.txt" in url:
                assert float(body) == expected["bust"]
                checked.add("bust")
            else:
                assert "/v1/advice.txt" in url and body == expected["action"]
                checked.add("advice")
    assert checked == {"csv", "bust", "advice"}
    assert any("ENCODEURL" in f for f in formulas) and any("IMPORTDATA" in f for f in formulas)


# -- worked examples ("Asking it": a position, its curl URL and the answer it shows) ------------------------

ELIDED = "..."


def worked_examples() -> list[tuple[str, Any]]:
    """Each `curl` URL of the "Asking it" section followed by a JSON answer, with that answer: the README cuts
    long values short with `...` (in a string, a number or a list), so numbers cut short become strings."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Asking it\n"):text.index("\n## Design\n")]
    out = []
    for url, body in re.findall(r"curl '(http://127\.0\.0\.1:8000/[^']+)'\n\n```json\n(.*?)```", section, re.S):
        out.append((url, json.loads(re.sub(r"(-?\d+\.\d+)\.\.\.", r'"\1..."', body))))
    return out


def agrees(shown: Any, actual: Any) -> bool:
    """Does the README's (maybe shortened) value say what the answer says? A string with `...` matches a value
    (an exact fraction, or a number's text) that starts and ends with its pieces, in order; a list with `...`
    lists some of the answer's items, in order; a dict names some of the answer's keys."""
    if isinstance(shown, str) and ELIDED in shown and not isinstance(actual, bool):
        text, pieces = str(actual), shown.split(ELIDED)
        if not (text.startswith(pieces[0]) and text.endswith(pieces[-1])):
            return False
        at = len(pieces[0])
        for piece in pieces[1:-1]:
            at = text.find(piece, at)
            if at < 0:
                return False
            at += len(piece)
        return len(text) >= len(pieces[0]) + len(pieces[-1])
    if isinstance(shown, dict):
        return isinstance(actual, dict) and all(k in actual and agrees(v, actual[k]) for k, v in shown.items())
    if isinstance(shown, list) and ELIDED in shown:
        rest = iter(actual)
        return isinstance(actual, list) and all(any(agrees(item, a) for a in rest) for item in shown
                                                if item != ELIDED)
    if isinstance(shown, list):
        return isinstance(actual, list) and len(shown) == len(actual) and all(map(agrees, shown, actual))
    return shown == actual and type(shown) is type(actual)


def test_agrees() -> None:
    assert agrees({"exact": "1989...751/1015...000"}, {"exact": "19890751/101500000", "more": 1})
    assert not agrees({"exact": "1989...751/1015...000"}, {"exact": "19890752/101500000"})
    assert agrees("0.0413...", 0.04131054131054131) and not agrees("0.0414...", 0.04131054131054131)
    assert agrees([{"a": 1}, ELIDED, {"a": 3}], [{"a": 1}, {"a": 2}, {"a": 3}])
    assert not agrees([{"a": 3}, ELIDED, {"a": 1}], [{"a": 1}, {"a": 2}, {"a": 3}])
    assert not agrees([1, 2], [1, 2, 3]) and not agrees(1, 1.0) and not agrees(True, 1)


def test_the_worked_examples_are_there() -> None:
    """Issue #3: a Double Feature mode's first roll of a turn and a mid-turn School Bus position, beside the base
    game's position."""
    positions = [answer["position"] for _, answer in worked_examples()]
    assert [p["mode"] for p in positions] == ["original", "big-summer-action-movie", "original"]
    assert positions[1]["footprints"] == positions[1]["brains"] == positions[1]["shotguns"] == []
    assert positions[2]["school_bus"] is True and positions[2]["first_roll"] is False


def test_the_worked_examples_are_the_answers(client: FlaskClient) -> None:
    """Each worked example is what the API answers. The first roll of a Big Summer Action Movie turn is checked
    without its decision and turn (they are the whole turn's exact solve: about a minute of CPU and 2.4 GB), its
    position and next roll being those of analysis; the others are asked of the API."""
    from analysis import Position, next_roll

    checked = 0
    for url, shown in worked_examples():
        query = dict(q.split("=", 1) for q in urlsplit(url).query.split("&"))
        if query.get("mode") == "big-summer-action-movie" and set(query) == {"mode"}:
            roll = next_roll(Position(mode=query["mode"]))
            assert shown["next_roll"]["recycles"] is False
            assert shown["next_roll"]["bust"] == {"exact": f"{roll.bust.numerator}/{roll.bust.denominator}",
                                                  "value": float(roll.bust)}
            assert shown["next_roll"]["expected_brains"]["value"] == float(roll.expected_brains)
            outcomes = [{"brains": b, "shotguns": s, "exact": f"{p.numerator}/{p.denominator}", "value": float(p)}
                        for b, s, p in roll.outcomes]
            assert agrees(shown["next_roll"]["outcomes"], outcomes)
            assert shown["position"]["cup"] == roll.position.cup
            assert shown["decision"]["actions"][0]["next_roll"]["bust"] == shown["next_roll"]["bust"]
            continue
        response = client.get(local(url))
        assert response.status_code == 200, (url, response.get_data(as_text=True))
        assert agrees(shown, response.get_json()), (url, shown, response.get_json())
        checked += 1
    assert checked == 2
