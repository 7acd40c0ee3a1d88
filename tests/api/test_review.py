"""api/review.py: POST /v1/review: a game log reviewed with the stored two-player table or, without one, in expected
brains (JSON or CSV, no formula in a cell), Double Feature decisions priced within the API's bound, and logs refused
with a problem naming the turn and roll at fault, cheaply.

The games are played with physical dice and written down (tests/analysis/game_logs.py); the two-player table is solved
once per run (`tests.games.solved_game`) and stored in a temporary store.
"""

from __future__ import annotations

import copy
import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from analysis import odds
from analysis.game import GameSolution
from analysis.review import GameLog, review
from api.review import MAX_SOLVES, unpriced
from workers.shared import store
from workers.store import table_key

from ..analysis import game_logs
from ..analysis.game_logs import SPEC_LOG, die
from ..games import solved_game


@pytest.fixture(scope="module")
def solution() -> GameSolution:
    return solved_game("original")


@pytest.fixture(scope="module")
def table_dir(solution: GameSolution, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A store holding the two-player table, as the workers would leave it."""
    root = tmp_path_factory.mktemp("store")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOMBIE_ODDS_STORE", str(root))
        store().put(table_key("original", "before-draw", 2), solution.to_dict())
    return root


@pytest.fixture
def with_table(table_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(table_dir))


@pytest.fixture
def without_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))


optimal_game = pytest.fixture(scope="module", name="optimal_game")(game_logs.optimal_game)
timid_game = pytest.fixture(scope="module", name="timid_game")(game_logs.timid_game)


def test_the_api_reviews_with_the_stored_table(client: FlaskClient, with_table: None, timid_game: dict,
                                               solution: GameSolution) -> None:
    response = client.post("/v1/review", json=timid_game)
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["measure"] == "win-probability" and "reason" not in body
    assert body["table"]["key"] == table_key("original", "before-draw", 2).name
    assert body["finished"] and body["winner"] == "Ann"
    expected = review(GameLog.from_dict(timid_game), solution)
    assert [p["cost"] for p in body["players"]] == [t.cost for t in expected.totals]
    assert [d["cost"] for d in body["decisions"]] == [d.cost for d in expected.decisions]
    assert body["decisions"][0]["turn"] == 0 and body["decisions"][0]["player"] == "Ann"


def test_the_api_says_why_it_uses_expected_brains(client: FlaskClient, without_table: None, timid_game: dict) -> None:
    body = client.post("/v1/review", json=timid_game).get_json()
    assert body["measure"] == "expected-brains"
    assert body["reason"].startswith("no two-player table for original (before-draw) in the store yet")
    assert "table" not in body


def test_csv_has_one_row_per_decision(client: FlaskClient, without_table: None, timid_game: dict) -> None:
    as_json = client.post("/v1/review", json=timid_game).get_json()
    for response in (client.post("/v1/review?format=csv", json=timid_game),
                     client.post("/v1/review", json=timid_game, headers={"Accept": "text/csv"})):
        assert response.status_code == 200 and response.mimetype == "text/csv"
        rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
        assert len(rows) == len(as_json["decisions"])
        first, d = rows[0], as_json["decisions"][0]
        assert (first["turn"], first["player"], first["chosen"], first["best"]) == ("0", "Ann", d["chosen"], d["best"])
        assert float(first["cost"]) == d["cost"] and first["measure"] == "expected-brains"
    assert client.post("/v1/review?format=json", json=timid_game, headers={"Accept": "text/csv"}).is_json


def test_a_whole_game_fits_in_the_body_limit(client: FlaskClient, without_table: None, optimal_game: dict) -> None:
    """The review takes up to 256 KiB (the rest of the API 16 KiB); padded here with insignificant whitespace."""
    text = json.dumps(optimal_game)
    for size, status in ((200 * 1024, 200), (256 * 1024 + 1, 413)):
        body = text[:-1] + " " * (size - len(text)) + "}"
        assert len(body) == size
        assert client.post("/v1/review", data=body, content_type="application/json").status_code == status
    assert client.post("/v1/odds", data=" " * 17 * 1024 + "{}", content_type="application/json").status_code == 413


def short_game() -> dict:
    """Ann: red footprints, two green brains, then a red brain, a red shotgun and red footprints; stops."""
    return {"players": ["Ann", "Bob"], "turns": [
        {"player": "Ann", "rolls": [
            {"dice": [{"colour": "red", "face": "footprints"}, {"colour": "green", "face": "brain"},
                      {"colour": "green", "face": "brain"}]},
            {"dice": [{"colour": "red", "face": "brain"}, {"colour": "red", "face": "shotgun"},
                      {"colour": "red", "face": "footprints"}], "then": "stop"}]},
        {"player": "Bob", "rolls": [
            {"dice": [{"colour": "yellow", "face": "shotgun"}, {"colour": "red", "face": "shotgun"},
                      {"colour": "red", "face": "shotgun"}]}]}]}


def rejected(client: FlaskClient, log: dict) -> tuple[str, str]:
    response = client.post("/v1/review", json=log)
    assert response.status_code == 422 and response.mimetype == "application/problem+json"
    error = response.get_json()["errors"][0]
    return error["field"], error["reason"]


def test_a_short_valid_game(client: FlaskClient, without_table: None) -> None:
    body = client.post("/v1/review", json=short_game()).get_json()
    assert not body["finished"] and "winner" not in body
    assert [(p["score"], p["turns"], p["decisions"]) for p in body["players"]] == [(3, 1, 2), (0, 1, 0)]


def test_impossible_rolls_name_the_turn_and_roll(client: FlaskClient, without_table: None) -> None:
    red = {"colour": "red", "face": "brain"}
    log = short_game()
    log["turns"][0]["rolls"][1]["dice"].append(red)
    field, reason = rejected(client, log)
    assert field == "turns[0].rolls[1].dice" and reason.startswith("4 dice listed")
    log = short_game()
    del log["turns"][0]["rolls"][1]["dice"][0]
    field, reason = rejected(client, log)
    assert field == "turns[0].rolls[1].dice" and reason.startswith("2 dice listed")
    log = short_game()  # a red footprint die in hand, and three red dice more: the cup has two
    log["turns"][0]["rolls"][1]["dice"][1] = red
    log["turns"][0]["rolls"][1]["dice"][2] = red
    log["turns"][0]["rolls"][1]["dice"][0] = red
    log["turns"][0]["rolls"][0]["dice"][1] = red
    field, reason = rejected(client, log)
    assert field == "turns[0].rolls[1].dice" and "the cup holds" in reason and "red" in reason
    log = short_game()  # the red footprint die is not rerolled
    log["turns"][0]["rolls"][1]["dice"] = [{"colour": "green", "face": "brain"}] * 3
    field, reason = rejected(client, log)
    assert field == "turns[0].rolls[1].dice" and "lacks 1 red" in reason


def test_turns_out_of_order_or_after_the_end_are_refused(client: FlaskClient, without_table: None,
                                                         optimal_game: dict) -> None:
    log = short_game()
    log["turns"][1]["player"] = "Ann"
    assert rejected(client, log)[0] == "turns[1].player"
    log["turns"][1]["player"] = "Cy"
    assert rejected(client, log) == ("turns[1].player", "'Cy' is not a player: it is Bob's turn")
    log["turns"][1]["player"] = 2  # a seat number is fine
    assert client.post("/v1/review", json=log).status_code == 200
    late = copy.deepcopy(optimal_game)
    late["turns"].append(short_game()["turns"][0])
    field, reason = rejected(client, late)
    assert field == f"turns[{len(optimal_game['turns'])}]" and reason.startswith("the game is over")


def test_choices_must_agree_with_the_rolls(client: FlaskClient, without_table: None) -> None:
    log = short_game()
    del log["turns"][0]["rolls"][1]["then"]
    assert rejected(client, log)[0] == "turns[0].rolls[1].then"
    log["turns"][0]["rolls"][0]["then"] = "stop"
    assert rejected(client, log)[0] == "turns[0].rolls[1]"
    log = short_game()
    log["turns"][1]["rolls"][0]["then"] = "stop"  # a bust leaves no choice
    assert rejected(client, log)[0] == "turns[1].rolls[0].then"
    log = short_game()
    log["turns"][1]["rolls"].append(log["turns"][0]["rolls"][0])
    assert rejected(client, log)[0] == "turns[1].rolls[1]"


# -- Double Feature logs ---------------------------------------------------------------------------------------------
def test_double_feature_decisions_are_solved_near_a_bust_only(client: FlaskClient, without_table: None) -> None:
    """Expected brains per decision, solved over its own turn where the API's bound allows (the one decision
    one shotgun from a bust here: analysis.odds' values), the others unpriced with the reason."""
    r = review(GameLog.from_dict(SPEC_LOG), unpriced=unpriced, max_solves=MAX_SOLVES)
    assert r.measure == "expected-brains"
    assert [bool(d.unpriced) for d in r.decisions] == [True, True, False, True]
    assert all(d.unpriced.startswith("not solved: ") and d.cost is None and not d.mistake for d in r.decisions
               if d.unpriced)
    d = r.decisions[2]
    decision = odds(d.step.position, "expected-brains").decision
    assert (d.best, d.chosen, d.cost) == (decision.action, "stop", 0.0) == ("stop", "stop", 0.0)
    assert d.roll == pytest.approx(float(decision.roll), abs=1e-9) and d.stop == float(decision.stop)
    assert [(t.decisions, t.unpriced) for t in r.totals] == [(3, 2), (1, 1)]
    # at most max_solves tables: with none allowed every decision is unpriced, and says why
    bounded = review(GameLog.from_dict(SPEC_LOG), unpriced=unpriced, max_solves=0)
    assert "its limit" in bounded.decisions[2].unpriced and bounded.decisions[2].best is None
    # over HTTP: the same, documented fields; the CSV adds the expansion's columns
    body = client.post("/v1/review", json=SPEC_LOG).get_json()
    assert body["measure"] == "expected-brains" and "direct-to-video-sequel" in body["reason"]
    priced = body["decisions"][2]
    assert priced["best"] == "stop" and priced["values"]["roll"] == d.roll and priced["position"]["effects"] == [
        "helmet"]
    assert "unpriced" in body["decisions"][0] and "cost" not in body["decisions"][0]
    assert [p["unpriced"] for p in body["players"]] == [2, 1]
    rows = list(csv.DictReader(io.StringIO(client.post("/v1/review?format=csv", json=SPEC_LOG).get_data(as_text=True))))
    assert [row["unpriced"] == "" for row in rows] == [False, False, True, False]
    assert rows[2]["effects"] == "helmet" and rows[0]["double_brains"] == "hunk" and rows[0]["cost"] == ""


def test_an_impossible_double_feature_log_is_a_422(client: FlaskClient, without_table: None) -> None:
    log = copy.deepcopy(SPEC_LOG)
    log["turns"][1]["rolls"][0]["dice"][0]["face"] = "helmet"  # a green die has no helmet
    assert rejected(client, log) == ("turns[1].rolls[0].dice[0].face", "a green die has no 'helmet' face")
    log = copy.deepcopy(SPEC_LOG)
    log["turns"][0]["rolls"][2]["dice"][0] = die("santa", "brain")  # Santa is set aside by his helmet
    field, reason = rejected(client, log)
    assert field == "turns[0].rolls[2].dice" and "santa" in reason


# -- issue 27: a review CSV is no formula, and an invalid game log is refused cheaply --------------------------------
FORMULAS = ['=HYPERLINK("http://x.example","go")', "+1+1", "-2+3", "@SUM(A1:A2)", "\tTAB", "\rCR"]


@pytest.mark.parametrize("name", FORMULAS)
def test_a_player_name_that_looks_like_a_formula_is_written_as_text(client: FlaskClient, without_table: None,
                                                                    name: str) -> None:
    """Item 7: `=HYPERLINK(...)` as a player's name was written to the CSV as sent: a spreadsheet opening it runs
    it. A cell starting with `= + - @`, a tab or a carriage return gets a `'` first (OWASP's advice); JSON keeps
    the name."""
    log = short_game()
    log["players"][0] = log["turns"][0]["player"] = name
    response = client.post("/v1/review?format=csv", json=log)
    assert response.status_code == 200, response.get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True), newline="")))
    assert rows and {row["player"] for row in rows} == {"'" + name}
    assert client.post("/v1/review", json=log).get_json()["decisions"][0]["player"] == name


def test_an_ordinary_name_is_written_as_it_is(client: FlaskClient, without_table: None) -> None:
    log = short_game()
    log["players"][0] = log["turns"][0]["player"] = "Ann-Marie O'Neil (+1)"
    rows = list(csv.DictReader(io.StringIO(client.post("/v1/review?format=csv", json=log).get_data(as_text=True))))
    assert {row["player"] for row in rows} == {"Ann-Marie O'Neil (+1)"}


def test_an_invalid_game_log_of_256_kib_is_refused_in_a_few_kilobytes(client: FlaskClient, without_table: None) -> None:
    """Item 6: an invalid 256 KiB game log took 4.4 s to refuse, and the refusal listed every fault. Validation now
    stops at the first 100 faults; the problem lists 20 and counts the rest (`errors_omitted`: 80, it stopped)."""
    bad = {"player": 1, "rolls": [{"dice": [{"colour": "red", "face": "banana"}] * 3}]}
    log = {"players": 2, "turns": [dict(bad, player=k % 2 + 1) for k in range(1700)]}
    body = json.dumps(log)
    assert 240 * 1024 < len(body) <= 256 * 1024
    response = client.post("/v1/review", data=body, content_type="application/json")
    assert response.status_code == 422 and response.mimetype == "application/problem+json"
    problem = response.get_json()
    assert len(response.data) < 10_000, len(response.data)
    assert len(problem["errors"]) == 20 and problem["errors_omitted"] == 80
    assert problem["errors"][0]["field"] == "turns[0].rolls[0].dice[0].face"
