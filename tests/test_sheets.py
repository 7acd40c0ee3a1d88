"""/v1/bust.txt and /v1/advice.txt, and the spreadsheet forms' promises: short, and deaf to cache-busters.

Positions keep a shotgun set aside (or are the warmed start of a turn): their answers take
milliseconds.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from flask.testing import FlaskClient

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
BUSTERS = {"_": "1712345678", "nocache": "", "refresh": "3"}


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


@pytest.mark.parametrize("path", ["/v1/bust.txt", "/v1/advice.txt"])
def test_impossible_positions_are_problems_naming_the_field(client: FlaskClient, path: str) -> None:
    for params, field in [({"shotguns": "red,red,red"}, "shotguns"), ({"footprints": "green"}, "footprints"),
                          ({"footprints": "purple"}, "footprints[0]"), ({**WORKED, "banked": "5"}, "banked"),
                          ({"mode": "chess"}, "mode"), ({"brains": "green,", "shotguns": "red"}, "brains[1]")]:
        response = client.get(path, query_string=params)
        assert response.status_code == 422 and response.mimetype == "application/problem+json"
        assert field in [e["field"] for e in response.get_json()["errors"]], response.get_json()


def test_the_bust_chance_takes_no_objective(client: FlaskClient) -> None:
    """`objective` is not a parameter of /v1/bust.txt: like any unknown parameter it is ignored."""
    assert text(client, "/v1/bust.txt", {"objective": "nonsense", "exact": "true"}) == "94/3861"
    assert client.get("/v1/advice.txt?objective=nonsense").status_code == 422
    assert client.get("/v1/bust.txt?exact=maybe").status_code == 422


def test_cors_lets_pages_read_the_values(client: FlaskClient) -> None:
    for path in ("/v1/bust.txt", "/v1/advice.txt"):
        assert client.get(path, headers={"Origin": "https://rules.example"}).headers[
            "Access-Control-Allow-Origin"] == "*"
