"""The README is a user's guide whose every example is what the API answers.

Everything is read from the README itself, so an example cannot drift from the API without failing here:

* every `curl` command is asked of the test app (GET, or POST with its `-d` body); one followed by an output
  block (```json or ```text) must answer that output, which the README may cut short with `...` (`agrees`,
  `text_agrees`); one without must succeed;
* every spreadsheet formula is evaluated with the cells the README describes, and its answer compared with the
  values it says the formulas show;
* the HTML snippets load, the set-up commands are the two documented ones, the `zombie-odds` commands and
  options it names exist, and the configuration table lists exactly the settings the code reads.

Hosts (`127.0.0.1:8000`, `your-host:8000`) stand for wherever the service runs: paths and queries go to the
test app. Examples that need a full-game table are asked with the base game's table in the store; the `503`
example is asked while no solution is built.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient

from tests.conftest import builder_busy

# Modules that hold the background builder's lock (`builder_busy`) run in one process, one after the other.
pytestmark = pytest.mark.xdist_group("builder-busy")  # (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# The row the spreadsheet section describes: "With `green,red`, `green`, `red` and `1` in A2:D2 ... With `5,9` in
# E2 and `2` in F2" (test_the_spreadsheet_cells_are_the_readme_s checks the README says so).
CELLS = {"A2": "green,red", "B2": "green", "C2": "red", "D2": "1", "E2": "5,9", "F2": "2"}
SET_UP = ("python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/zombie-odds serve", "bash scripts/test")
ELIDED = "..."


def readme() -> str:
    return README.read_text(encoding="utf-8")


def recipes() -> str:
    """The user's guide (tests/api/test_sheets.py reads its spreadsheet formulas from here too)."""
    return readme()


def section(heading: str) -> str:
    """The text of one `## ` section, up to the next."""
    text = readme()
    start = text.index(f"\n## {heading}\n") + 1
    end = text.find("\n## ", start)
    return text[start:] if end < 0 else text[start:end]


def local(url: str) -> str:
    """A README URL as a path and query for the test app."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


# -- the guide's shape ------------------------------------------------------------------------------------------


def test_the_sections_are_there() -> None:
    headings = re.findall(r"^## (.+)$", readme(), re.M)
    assert headings == ["Set up", "What a server does at start", 'An app asking "should I roll?"', "A rules website",
                        "A spreadsheet", "Fetching odds tables", "Running workers and the scheduler", "Configuration"]


def test_it_is_a_guide_not_a_log() -> None:
    """Issue #26: at most ~250 lines, no dates, no timings of other days, nothing outside the repository."""
    text = readme()
    assert len(text.splitlines()) <= 255
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text), "no dates"
    assert "../shared" not in text and "RULES.md" not in text
    for link in re.findall(r"\]\(([^)#]+)\)", text):
        assert (ROOT / link).exists(), link
    assert "drop the `VALUE()`" not in text and "=VALUE(" not in text


def test_the_two_set_up_commands() -> None:
    """Exactly two commands, the documented ones; what they run is in the repository."""
    commands = tuple(line.strip() for line in section("Set up").splitlines() if line.startswith("    "))
    assert commands == SET_UP
    assert (ROOT / "scripts" / "test").is_file() and (ROOT / ".ci" / "run").is_file()
    assert "bash scripts/test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "`.venv/bin/zombie-odds`" in section("Set up")


def test_the_zombie_odds_commands_it_names_exist() -> None:
    """Every `zombie-odds ...` the README names is a command of the CLI, with the options it names."""
    from api.cli import main

    named = re.findall(r"zombie-odds((?: [a-z]+)+)((?: --?[a-z-]+(?: [A-Z]+)?)*)", readme())
    assert len(named) >= 5
    runner = CliRunner()
    for words, options in named:
        path = words.split()
        result = runner.invoke(main, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Usage: main " + " ".join(path) in result.output or path == [], (path, result.output)
        for option in re.findall(r"--[a-z-]+", options):
            assert option in result.output, (path, option)


def test_the_cli_example_runs() -> None:
    from api.cli import main

    command = re.search(r"`\.venv/bin/zombie-odds (odds [^`]+)`", section("Set up"))[1]
    result = CliRunner().invoke(main, shlex.split(command))
    assert result.exit_code == 0, result.output
    assert "ROLL" in result.output and "2/9" in result.output


# -- curl examples ----------------------------------------------------------------------------------------------


@dataclass
class Example:
    method: str
    url: str
    body: Any  # the `-d` JSON, or None
    kind: str | None  # "json" or "text": the output shown, if any
    shown: Any

    @property
    def path(self) -> str:
        return local(self.url)


def shown_json(block: str) -> Any:
    """A JSON block as the README shows it: numbers cut short with `...` (`1.88346821...`, `2.38...e-08`) are
    read as strings, which `agrees` compares with the number's text."""
    return json.loads(re.sub(r"(-?\d+\.\d+)\.\.\.((?:e[-+]?\d+)?)", r'"\1...\2"', block))


def examples() -> list[Example]:
    """Every `curl` command of the README (an indented code block may hold several, and continue a line with
    `\\`); an output block right after a code block belongs to its last command."""
    text = readme()
    blocks = re.finditer(r"((?:^ {4}[^\n]*\n)+)(?:\n```(json|text)\n(.*?)```)?", text, re.M | re.S)
    out = []
    for block in blocks:
        commands = [shlex.split(c) for c in re.sub(r"\\\n\s*", " ", block[1]).splitlines()
                    if c.strip().startswith("curl ")]
        for i, words in enumerate(commands):
            method, body = "GET", None
            if "-X" in words:
                method = words[words.index("-X") + 1]
            if "-d" in words:
                body = json.loads(words[words.index("-d") + 1])
            url = next(w for w in words if w.startswith("http://"))
            last = i == len(commands) - 1 and block[2]
            kind = block[2] if last else None
            shown = (shown_json(block[3]) if kind == "json" else block[3]) if last else None
            out.append(Example(method, url, body, kind, shown))
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


def text_agrees(shown: str, actual: str) -> bool:
    """A text block: the answer's lines, where a line `...` stands for any number of lines left out."""
    want, have = shown.splitlines(), actual.splitlines()  # (CSV rows end with CRLF)
    if ELIDED not in want:
        return want == have
    chunks, chunk = [], []
    for line in [*want, ELIDED]:
        if line == ELIDED:
            chunks.append(chunk)
            chunk = []
        else:
            chunk.append(line)
    at = 0
    for k, lines in enumerate(chunks):
        if not lines:
            continue
        if k == 0:
            if have[:len(lines)] != lines:
                return False
            at = len(lines)
            continue
        found = next((i for i in range(at, len(have) - len(lines) + 1) if have[i:i + len(lines)] == lines), None)
        if found is None:
            return False
        at = found + len(lines)
    return want[-1] == ELIDED or at == len(have)


def test_agrees() -> None:
    assert agrees({"exact": "1989...751/1015...000"}, {"exact": "19890751/101500000", "more": 1})
    assert not agrees({"exact": "1989...751/1015...000"}, {"exact": "19890752/101500000"})
    assert agrees("0.0413...", 0.04131054131054131) and not agrees("0.0414...", 0.04131054131054131)
    assert agrees(shown_json('{"w": 2.38...e-08}'), {"w": 2.3819246575130102e-08})
    assert not agrees(shown_json('{"w": 2.38...e-08}'), {"w": 2.3819246575130102e-07})
    assert agrees([{"a": 1}, ELIDED, {"a": 3}], [{"a": 1}, {"a": 2}, {"a": 3}])
    assert not agrees([{"a": 3}, ELIDED, {"a": 1}], [{"a": 1}, {"a": 2}, {"a": 3}])
    assert not agrees([1, 2], [1, 2, 3]) and not agrees(1, 1.0) and not agrees(True, 1)


def test_text_agrees() -> None:
    assert text_agrees("roll\n", "roll") and not text_agrees("roll\n", "stop")
    assert text_agrees("k,v\na,1\n...\n", "k,v\r\na,1\r\nb,2\r\n")
    assert text_agrees("a\nb\n...\nx\n...\n", "a\nb\nc\nx\ny\n")
    assert not text_agrees("a\n...\nx\n...\n", "b\na\nx\n") and not text_agrees("a\n...\nx\n", "a\nx\ny\n")
    assert not text_agrees("a\n...\nz\n...\n", "a\nb\nx\n")


def test_the_examples_are_there() -> None:
    """An example per user and per kind of answer: the base game, a Double Feature mode, the School Bus, an
    exact answer by POST, a 422 and a 503, text for bots and CSV for tables."""
    shown = [e for e in examples() if e.kind]
    assert len(shown) >= 9
    queries = " ".join(e.url for e in shown)
    for needle in ("/v1/advice.txt?", "/v1/odds?footprints", "mode=santa-claus-meets-the-zombies",
                   "mode=direct-to-video-sequel", "school_bus=true&riding=true", "shotgun=red", "/v1/tables/original?",
                   "/v1/solutions"):
        assert needle in queries, needle
    assert any(e.method == "POST" and e.body.get("exact") is True for e in shown if e.body)
    statuses = {e.shown.get("status") for e in shown if e.kind == "json" and isinstance(e.shown, dict)}
    assert {422, 503} <= statuses


@pytest.fixture(scope="module")
def table_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding the base game's two-player table, as the workers leave it (about 10 s to solve)."""
    from workers.store import Store
    from workers.tables import table_key

    from .games import solved_game

    root = tmp_path_factory.mktemp("store")
    Store(root).put(table_key("original", "before-draw", 2), solved_game("original").to_dict())
    return root


@pytest.fixture
def with_table(table_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(table_store))


@contextmanager
def no_solution_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A fresh server's first moments: no solution stored yet, the background builder at work on another (its lock
    held here, so that this test starts no build)."""
    with monkeypatch.context() as m:
        m.setenv("ZOMBIE_ODDS_SOLUTIONS", str(tmp_path / "solutions"))
        with builder_busy():
            yield


def ask(client: FlaskClient, example: Example) -> Any:
    if example.method == "POST":
        return client.post(example.path, json=example.body)
    assert example.method == "GET" and example.body is None
    return client.get(example.path)


def test_every_example_answers_what_it_shows(client: FlaskClient, with_table: None, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    checked = 0
    for example in examples():
        status = example.shown.get("status", 200) if example.kind == "json" else 200
        if status == 503:
            with no_solution_built(tmp_path, monkeypatch):
                response = ask(client, example)
            assert int(response.headers["Retry-After"]) > 0
        else:
            response = ask(client, example)
        where = (example.method, example.url, response.get_data(as_text=True)[:2000])
        if example.kind is None:  # a command shown without its output: it succeeds
            assert response.status_code in (200, 202), where
            continue
        assert response.status_code == status, where
        if example.kind == "json":
            assert agrees(example.shown, response.get_json()), (where, example.shown)
        else:
            assert text_agrees(example.shown, response.get_data(as_text=True)), (where, example.shown)
        checked += 1
    assert checked >= 9


# -- spreadsheet formulas ---------------------------------------------------------------------------------------

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


def formula_blocks() -> list[tuple[list[str], list[str]]]:
    """Each block of formulas with the values the README says they show (the next ```text block)."""
    found = re.findall(r"((?:^ {4}=[^\n]+\n)+)\n[^\n]+\n\n```text\n(.*?)```", readme(), re.M | re.S)
    return [([f.strip() for f in block.splitlines()], values.splitlines()) for block, values in found]


def test_the_spreadsheet_cells_are_the_readme_s() -> None:
    text = " ".join(section("A spreadsheet").split())
    assert "With `green,red`, `green`, `red` and `1` in A2:D2 they show:" in text
    assert "With `5,9` in E2 and `2` in F2 they show:" in text


def cell_value(client: FlaskClient, formula: str, cells: dict[str, str]) -> str:
    """What a formula shows, as text: the URL's answer, looked up in a CSV for VLOOKUP."""
    response = client.get(local(formula_url(formula, cells)))
    body = response.get_data(as_text=True)
    assert response.status_code == 200, (formula, body)
    assert len(body) < 32_767  # Excel's cell limit
    if lookup := re.match(r'=VLOOKUP\("([^"]+)"', formula):
        return dict(csv.reader(io.StringIO(body)))[lookup[1]]
    return body


def test_every_formula_shows_what_the_readme_says(client: FlaskClient, with_table: None) -> None:
    blocks = formula_blocks()
    every = [f for f in re.findall(r"^ {4}(=.+)$", readme(), re.M)]
    assert sorted(f for formulas, _ in blocks for f in formulas) == sorted(every), "a formula without its values"
    assert len(every) >= 8
    for formulas, values in blocks:
        assert len(formulas) == len(values), formulas
        for formula, value in zip(formulas, values):
            assert '_="&D2' in formula, f"{formula}: the cache-buster"
            shown = cell_value(client, formula, CELLS)
            if formula.startswith("=NUMBERVALUE("):
                assert float(shown) == float(value), formula
            else:
                assert shown == value, (formula, shown, value)
            assert cell_value(client, formula, {**CELLS, "D2": "2"}) == shown, "another D2 refetches the same"
    text = " ".join(every)
    for needle in ("IMPORTDATA(", "WEBSERVICE(", "ENCODEURL(", "/v1/bust.txt", "/v1/advice.txt", "/v1/win.txt",
                   "/v1/odds.txt?field=", "VLOOKUP("):
        assert needle in text, needle


# -- the rules website's snippet --------------------------------------------------------------------------------


def test_the_html_snippet_loads(client: FlaskClient) -> None:
    snippets = re.findall(r"```html\n(.*?)```", readme(), re.S)
    assert len(snippets) == 1
    assert snippets[0].startswith('<div data-zombie-odds></div>\n'
                                  '<script src="http://127.0.0.1:8000/embed/widget.js" async></script>\n')
    sources = re.findall(r'src="([^"]+)"', snippets[0])
    assert [local(s) for s in sources] == ["/embed/widget.js", "/embed/calculator"]
    for source, mimetype in zip(sources, ("text/javascript", "text/html")):
        response = client.get(local(source))
        assert response.status_code == 200 and response.mimetype == mimetype


# -- configuration ----------------------------------------------------------------------------------------------

# Flask settings the code sets for flask-limiter's own use, not for an operator.
INTERNAL = {"RATELIMIT_KEY_PREFIX", "RATELIMIT_IN_MEMORY_FALLBACK_ENABLED", "RATELIMIT_SWALLOW_ERRORS"}


def settings_in_code() -> set[str]:
    """Environment variables the code reads, and the Flask settings (read from `ZOMBIE_ODDS_<name>`)."""
    names = set()
    for package in ("api", "workers", "analysis"):
        for path in (ROOT / package).rglob("*.py"):
            code = path.read_text(encoding="utf-8")
            names |= set(re.findall(r"environ(?:\.get\(|\[)\"((?:ZOMBIE_ODDS_|REDIS_URL)\w*)\"", code))
            names |= set(re.findall(r"_listed\(\"(ZOMBIE_ODDS_\w+)\"", code))
            for key in re.findall(r"config(?:\[|\.get\(|\.setdefault\()\"([A-Z_]+)\"", code):
                if key not in INTERNAL | {"TESTING"}:
                    names.add(f"ZOMBIE_ODDS_{key}")
    return names | {"ZOMBIE_ODDS_MAX_CONTENT_LENGTH"}  # Flask's own, set by create_app


def test_the_configuration_table_is_what_the_code_reads() -> None:
    rows = re.findall(r"^\| `([A-Z_]+)` \|", section("Configuration"), re.M)
    assert len(rows) == len(set(rows))
    assert set(rows) == settings_in_code()
