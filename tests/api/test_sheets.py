"""api/sheets.py: /v1/bust.txt, /v1/advice.txt and /v1/win.txt, and the spreadsheet forms' promises: short, and
deaf to the cache-buster `_` (any other unknown parameter is refused); by probability of winning (`scores`) from a
stored table, or a 503 while it is computed.

Positions keep a shotgun set aside (or are the warmed start of a turn): their answers take
milliseconds. The base game's two-player table is solved once for the module (~10 s).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import redis
from flask.testing import FlaskClient

from analysis.game import GameSolution
from tests.conftest import queued_on
from tests.test_readme import formula_url, local, recipes
from workers.store import Store, table_key
from workers.tables import job_id

from ..games import solved_game

WORKED = {"footprints": "green,red", "brains": "green", "shotguns": "red"}
POSITIONS = [
    {},
    WORKED,
    {"footprints": "yellow", "brains": "green,green", "shotguns": "red,yellow"},
    {"brains": "green,green,green,green,green,green,yellow,yellow,yellow,yellow", "shotguns": "red"},
    {"footprints": "red,red", "brains": "green", "shotguns": "yellow", "objective": "reach:3"},
    {"footprints": "green,green,green", "banked": "11", "shotguns": "red"},
    {"footprints": "green", "brains": "yellow,green", "shotguns": "red", "recycle": "before-draw", "mode": "original"},
]
EXCEL_LIMIT = 32_767  # characters: Excel's cell, and so WEBSERVICE's answer
BUSTERS = {"_": "1712345678"}  # the one cache-buster (openapi.yaml's info)
NOT_BUSTERS = {"nocache": "", "refresh": "3"}  # unknown parameters like any other: a 422 naming them


def odds(client: FlaskClient, position: dict[str, str]) -> dict[str, Any]:
    response = client.get("/v1/odds", query_string=position)
    assert response.status_code == 200
    return response.get_json()


def text(client: FlaskClient, path: str, params: dict[str, str]) -> str:
    response = client.get(path, query_string=params)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/plain"
    body = response.get_data(as_text=True)
    assert body == body.strip(), "no whitespace, no trailing newline"
    return body


@pytest.mark.parametrize("position", POSITIONS, ids=urlencode)
def test_bust_and_advice_are_the_odds_answer(client: FlaskClient, position: dict[str, str]) -> None:
    answer = odds(client, position)
    without_objective = {k: v for k, v in position.items() if k != "objective"}
    bust = answer["next_roll"]["bust"]
    assert float(text(client, "/v1/bust.txt", without_objective)) == bust["value"]
    assert text(client, "/v1/bust.txt", {**without_objective, "exact": "true"}) == bust["exact"]
    assert text(client, "/v1/advice.txt", position) == answer["decision"]["action"]
    assert text(client, "/v1/odds.txt", {**position, "field": "action"}) == answer["decision"]["action"]


def test_the_worked_example(client: FlaskClient) -> None:
    assert text(client, "/v1/bust.txt", {**WORKED, "exact": "true"}) == "2/9"
    assert text(client, "/v1/advice.txt", WORKED) == "roll"
    assert text(client, "/v1/advice.txt", {**WORKED, "objective": "reach:1"}) == "stop"
    assert text(client, "/v1/bust.txt", {"exact": "true"}) == "94/3861"


@pytest.mark.parametrize("position", POSITIONS, ids=urlencode)
def test_spreadsheet_answers_fit_excel_and_ignore_cache_busters(client: FlaskClient, position: dict[str, str]) -> None:
    bust_params = {k: v for k, v in position.items() if k != "objective"}
    for path, params in [("/v1/odds", {**position, "format": "csv"}), ("/v1/odds.txt", {**position, "field": "roll"}),
                         ("/v1/odds.txt", {**position, "field": "stop", "exact": "true"}),
                         ("/v1/bust.txt", bust_params), ("/v1/advice.txt", position)]:
        plain = client.get(path, query_string=params)
        busted = client.get(path, query_string={**params, **BUSTERS})
        assert plain.status_code == busted.status_code == 200
        assert busted.data == plain.data
        assert len(plain.get_data(as_text=True)) < EXCEL_LIMIT, path
        refused = client.get(path, query_string={**params, **BUSTERS, **NOT_BUSTERS})
        assert refused.status_code == 422 and refused.mimetype == "application/problem+json", path
        reasons = {e["field"]: e["reason"] for e in refused.get_json()["errors"]}
        assert sorted(reasons) == sorted(NOT_BUSTERS), reasons
        assert all(reason.startswith(f"unknown parameter `{name}`") for name, reason in reasons.items()), reasons


@pytest.mark.parametrize("path", ["/v1/bust.txt", "/v1/advice.txt"])
def test_impossible_positions_are_problems_naming_the_field(client: FlaskClient, path: str) -> None:
    for params, field in [({"shotguns": "red,red,red"}, "shotguns"), ({"footprints": "green"}, "footprints"),
                          ({"footprints": "purple"}, "footprints[0]"), ({**WORKED, "banked": "5"}, "banked"),
                          ({"mode": "chess"}, "mode"), ({"brains": "green,", "shotguns": "red"}, "brains[1]")]:
        response = client.get(path, query_string=params)
        assert response.status_code == 422 and response.mimetype == "application/problem+json"
        assert field in [e["field"] for e in response.get_json()["errors"]], response.get_json()


def test_the_bust_chance_takes_no_objective(client: FlaskClient) -> None:
    """`objective` is not a parameter of /v1/bust.txt: like any unknown parameter it is refused, naming it."""
    response = client.get("/v1/bust.txt?objective=reach:3&exact=true")
    assert response.status_code == 422
    assert [e["field"] for e in response.get_json()["errors"]] == ["objective"]
    assert client.get("/v1/advice.txt?objective=nonsense").status_code == 422
    assert client.get("/v1/bust.txt?exact=maybe").status_code == 422


def test_cors_lets_pages_read_the_values(client: FlaskClient) -> None:
    for path in ("/v1/bust.txt", "/v1/advice.txt"):
        assert client.get(path, headers={"Origin": "https://rules.example"}).headers[
            "Access-Control-Allow-Origin"] == "*"


# -- by probability of winning: /v1/win.txt, and scores on /v1/advice.txt and /v1/odds.txt -------------

REDIS_URL = "redis://127.0.0.1:6379/12"  # this module's database (no worker listens there)
GAMES = [  # (position, scores, seat, final_round or None)
    (WORKED, "5,9", "2", None),
    (WORKED, "5,9", "1", None),
    ({"footprints": "green,red", "brains": "green", "shotguns": "red,yellow"}, "0,13", "2", "true"),
    ({"footprints": "yellow", "brains": "green,green", "shotguns": "red,yellow"}, "12,10", "1", None),
    ({}, "0,0", "1", None),
    ({}, "14,14", "2", None),  # a tie-break round
    (WORKED, "5,9,3,0,1", "2", None),  # five players: the reduced model, as /v1/odds decides by it
]


@pytest.fixture(scope="module")
def solution() -> GameSolution:
    return solved_game("original")


@pytest.fixture(scope="module")
def table_dir(solution: GameSolution, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding the base game's two-player table, as the workers leave it."""
    root = tmp_path_factory.mktemp("store")
    Store(root).put(table_key("original", "before-draw", 2), solution.to_dict())
    return root


@pytest.fixture
def with_table(table_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(table_dir))


def game(position: dict[str, str], scores: str, seat: str, final_round: str | None) -> dict[str, str]:
    return {**position, "scores": scores, "seat": seat, **({"final_round": final_round} if final_round else {})}


@pytest.mark.parametrize("case", GAMES, ids=lambda c: urlencode(game(*c)))
def test_win_and_advice_are_the_odds_answer_with_scores(client: FlaskClient, with_table: None, solution: GameSolution,
                                                       case: tuple) -> None:
    params = game(*case)
    answer = odds(client, params)
    decision = answer["decision"]
    assert decision["objective"] == "win"
    win = float(text(client, "/v1/win.txt", params))
    turn_start = not case[0]
    best = decision["roll"]["value"] if turn_start else max(decision["roll"]["value"], decision["stop"]["value"])
    assert win == best
    if turn_start:  # from the start of a turn: the table's own P(win) of this game situation
        assert win == pytest.approx(answer["game"]["win_probability"]["value"], abs=1e-12)
        assert win == pytest.approx(solution.win_probability(int(case[2]), *map(int, case[1].split(","))), abs=1e-12)
    assert text(client, "/v1/advice.txt", params) == decision["action"]
    assert text(client, "/v1/odds.txt", {**params, "field": "action"}) == decision["action"]
    for field in ("roll", "stop"):
        assert float(text(client, "/v1/odds.txt", {**params, "field": field})) == decision[field]["value"]
    assert float(text(client, "/v1/odds.txt", {**params, "field": "bust"})) == answer["next_roll"]["bust"]["value"]
    refused = client.get("/v1/odds.txt", query_string={**params, "field": "roll", "exact": "true"})
    assert refused.status_code == 422 and refused.json["errors"][0]["field"] == "exact"


def test_advice_by_win_probability_is_not_by_expected_brains(client: FlaskClient, with_table: None) -> None:
    """Two shotguns and one brain: stop for brains; but 13 brains behind in the final round, only rolling can win."""
    position = {"footprints": "green,red", "brains": "green", "shotguns": "red,yellow"}
    assert text(client, "/v1/advice.txt", position) == "stop"
    assert text(client, "/v1/advice.txt", {**position, "scores": "0,13", "seat": "2"}) == "roll"
    assert float(text(client, "/v1/win.txt", {**position, "scores": "0,13", "seat": "2"})) < 0.01
    assert float(text(client, "/v1/win.txt", {**position, "scores": "12,0", "seat": "2"})) > 0.9


def test_win_answers_fit_excel_and_ignore_cache_busters(client: FlaskClient, with_table: None) -> None:
    params = game(*GAMES[0])
    for path, extra in [("/v1/win.txt", {}), ("/v1/advice.txt", {}), ("/v1/odds.txt", {"field": "stop"}),
                        ("/v1/odds", {"format": "csv"})]:
        plain = client.get(path, query_string={**params, **extra})
        busted = client.get(path, query_string={**params, **extra, **BUSTERS})
        assert plain.status_code == busted.status_code == 200
        assert busted.data == plain.data and len(plain.get_data(as_text=True)) < EXCEL_LIMIT


@pytest.mark.parametrize(("params", "field"), [
    ({"scores": "5,9"}, "seat"),
    ({"seat": "1"}, "scores"),
    ({"scores": "5,9", "seat": "3"}, "seat"),
    ({"scores": "15,9", "seat": "1"}, "scores"),
    ({"scores": "3,4", "seat": "1", "final_round": "true"}, "final_round"),
    ({"scores": "3,4", "seat": "1", "shotguns": "red,red,red"}, "shotguns"),
    ({"scores": "3,4", "seat": "1", "mode": "direct-to-video-sequel", **WORKED}, "mode"),
])
def test_impossible_games_are_problems_naming_the_field(client: FlaskClient, with_table: None,
                                                         params: dict[str, str], field: str) -> None:
    paths = ["/v1/win.txt", "/v1/advice.txt"] if "scores" in params else ["/v1/win.txt"]
    for path in paths:
        response = client.get(path, query_string=params)
        assert response.status_code == 422 and response.mimetype == "application/problem+json", path
        assert field in [e["field"] for e in response.get_json()["errors"]], (path, response.get_json())


@pytest.fixture
def queued_on_redis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[redis.Redis]:
    """No table in the store, and jobs go to a real Redis where no worker listens: they stay queued."""
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path / "store"))
    with queued_on(REDIS_URL) as queue:
        yield queue


def test_without_the_table_the_answer_is_a_503_never_a_guess(client: FlaskClient,
                                                             queued_on_redis: redis.Redis) -> None:
    params = game(*GAMES[0])
    job = f"/v1/jobs/{job_id(table_key('original', 'before-draw', 2))}"
    for path, extra in [("/v1/win.txt", {}), ("/v1/advice.txt", {}), ("/v1/odds.txt", {"field": "action"})]:
        response = client.get(path, query_string={**params, **extra, **BUSTERS})
        assert response.status_code == 503 and response.mimetype == "application/problem+json", path
        assert int(response.headers["Retry-After"]) > 0 and response.get_json()["job"] == job
    assert queued_on_redis.llen("celery") >= 1  # the job computing the table was started (once)
    assert text(client, "/v1/advice.txt", WORKED) == "roll"  # without scores: no table needed


def test_the_readme_s_formulas_by_probability_of_winning(client: FlaskClient, with_table: None) -> None:
    """The README's spreadsheet recipe with `scores` (read from the README; tests/test_readme.py checks the others)."""
    formulas = [f for f in re.findall(r"^ {4}(=.+)$", recipes(), re.M) if "scores=" in f]
    assert any("IMPORTDATA" in f and "/v1/win.txt" in f for f in formulas)
    assert any("WEBSERVICE" in f and "ENCODEURL" in f and "/v1/win.txt" in f for f in formulas)
    cells = {"A2": "green,red", "B2": "green", "C2": "red", "D2": "7", "E2": "5,9", "F2": "2"}
    params = {"footprints": "green,red", "brains": "green", "shotguns": "red", "scores": "5,9", "seat": "2"}
    decision = odds(client, params)["decision"]
    for formula in formulas:
        url = formula_url(formula, cells)
        for busted in (url, url + "&_=" + cells["D2"]):
            response = client.get(local(busted))
            assert response.status_code == 200 and response.mimetype == "text/plain", response.get_data(as_text=True)
            body = response.get_data(as_text=True)
            if "/v1/win.txt" in url:
                assert float(body) == max(decision["roll"]["value"], decision["stop"]["value"])
            else:
                assert "/v1/advice.txt" in url and body == decision["action"]
