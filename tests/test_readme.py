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
import re
from pathlib import Path
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
    formulas = re.findall(r"^ {4}(=.+)$", recipes(), re.M)
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
