"""api/tables.py: /v1/tables, /v1/jobs and the objective `win` of /v1/odds: tables served whole, jobs followed
to the end.

The base game's table is solved once (`tests.games.solved_game`, shared with the other tests of the run) and
put in a temporary store directly; the job tests compute it again through the API, in-process (the
embedded default) and queued on a real Redis with no worker yet.
"""

from __future__ import annotations

import csv
import io
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import matplotlib.image
import pytest
import redis
from flask.testing import FlaskClient

from analysis import MODES, Position
from analysis.game import GameSolution, reduced_win_probability, units
from analysis.game.many import MEASURED
from analysis.game.seats import Normal, solve_seats
from analysis.table import table_for
from api import create_app, spec
from api import tables as api_tables
from tests.conftest import queued_on
from workers.celery_app import create, using
from workers.store import JobKey, Key, Store, table_key
from workers.tables import TableJob, job_id, join

from ..games import solved_game

KEY = table_key("original", "before-draw", 2)
JOB = f"/v1/jobs/{job_id(KEY)}"
REDIS_URL = "redis://127.0.0.1:6379/11"  # this module's own database (pytest-xdist runs modules side by side)
WORKED = "footprints=green,red&brains=green&shotguns=red"
SANTA = "santa-claus-meets-the-zombies"


@pytest.fixture(scope="module")
def solution() -> GameSolution:
    return solved_game("original")


@pytest.fixture(scope="module", autouse=True)
def stored(tmp_path_factory: pytest.TempPathFactory, solution: GameSolution) -> Iterator[str]:
    """A store holding the base game's table (ZOMBIE_ODDS_STORE, read by the API on every request)."""
    root = tmp_path_factory.mktemp("store")
    digest = Store(root).put(KEY, solution.to_dict())
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOMBIE_ODDS_STORE", str(root))
        yield digest


@pytest.fixture
def empty_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path / "store"))
    return tmp_path / "store"


def test_the_table_is_the_solution(client: FlaskClient, solution: GameSolution, stored: str) -> None:
    r = client.get("/v1/tables/original")
    assert r.status_code == 200 and r.headers["Cache-Control"] == "no-cache"
    table = r.get_json()
    assert table["sha256"] == stored and r.headers["ETag"] == f'"{stored}-json"'
    assert table["p_first_player_wins"] == solution.p_first_player_wins == solution.win_probability(1, 0, 0)
    for a, b in [(0, 0), (5, 9), (12, 3), (12, 12)]:
        assert table["win_probability"]["seat1"][a][b] == solution.win_probability(1, a, b)
        assert table["win_probability"]["seat2"][a][b] == solution.win_probability(2, a, b)
    assert table["final"][3] == solution.win_probability(2, 13, 16)
    assert table["tiebreak"] == solution.win_probability(1, 14, 14)
    assert (table["cap"], table["cap_error"], table["goal"]) == (solution.cap, solution.cap_error, 13)
    assert table["cap_error"] < 1e-9
    assert table["url"] == f"/v1/tables/original?players=2&variant=before-draw&version={stored[:12]}"


def test_the_table_as_csv(client: FlaskClient, solution: GameSolution, stored: str) -> None:
    r = client.get("/v1/tables/original?format=csv")
    assert r.status_code == 200 and r.mimetype == "text/csv" and r.headers["ETag"] == f'"{stored}-csv"'
    text = r.get_data(as_text=True)
    assert text.endswith("\r\n") and len(text) < 32_767  # one spreadsheet cell can take it whole
    rows = list(csv.reader(io.StringIO(text)))
    values = dict(rows[1:])
    assert rows[0] == ["key", "value"] and len(values) == len(rows) - 1 == 10 + 2 * 13 * 13 + solution.cap + 1
    assert float(values["seat1.5.9"]) == solution.win_probability(1, 5, 9)
    assert float(values["seat2.9.5"]) == solution.win_probability(2, 9, 5)
    assert float(values["p_first_player_wins"]) == solution.p_first_player_wins
    assert values["sha256"] == stored


@pytest.mark.parametrize("path", ["/v1/tables/original", "/v1/tables/original?format=csv",
                                  "/v1/tables/original/heatmap.png", "/v1/tables/original/heatmap.svg"])
def test_a_known_etag_is_answered_304(client: FlaskClient, path: str) -> None:
    first = client.get(path)
    again = client.get(path, headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.get_data() == b""
    assert again.headers["ETag"] == first.headers["ETag"]
    assert client.get(path, headers={"If-None-Match": '"something-else"'}).status_code == 200


def test_the_versioned_url_is_immutable(client: FlaskClient, stored: str) -> None:
    url = client.get("/v1/tables/original").get_json()["url"]
    r = client.get(url)
    assert r.status_code == 200 and r.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert client.get(f"/v1/tables/original?version={stored}").status_code == 200  # the whole sha256 too
    png = client.get(f"/v1/tables/original/heatmap.png?version={stored[:12]}")
    assert png.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    gone = client.get("/v1/tables/original?version=0123456789ab")
    assert gone.status_code == 404 and gone.mimetype == "application/problem+json"
    assert gone.get_json()["current"] == url


def test_heatmaps_are_pictures(client: FlaskClient, stored: str) -> None:
    png = client.get("/v1/tables/original/heatmap.png")
    assert png.status_code == 200 and png.mimetype == "image/png" and png.headers["ETag"] == f'"{stored}-png"'
    pixels = matplotlib.image.imread(io.BytesIO(png.get_data()), format="png")
    assert pixels.shape[0] >= 500 and pixels.shape[1] >= 1000
    svg = client.get("/v1/tables/original/heatmap.svg")
    assert svg.status_code == 200 and svg.mimetype == "image/svg+xml"
    root = ET.fromstring(svg.get_data())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    text = svg.get_data(as_text=True)
    assert "Opponent's score" in text and "Seat 2 to move" in text and "P(the player to move wins)" in text


def test_a_table_not_computed_is_a_404_that_says_how_to_compute_it(client: FlaskClient) -> None:
    for path in ("/v1/tables/original?variant=draw-then-recycle",
                 "/v1/tables/original/heatmap.svg?variant=draw-then-recycle"):
        r = client.get(path)
        assert r.status_code == 404 and r.mimetype == "application/problem+json"
        assert r.get_json()["compute"] == {"method": "POST", "href": "/v1/tables/original/jobs",
                                           "body": {"players": 2, "variant": "draw-then-recycle"}}
    r = client.get("/v1/tables/direct-to-video-sequel?players=3&variant=draw-then-recycle")  # every mode: 3 players
    assert r.status_code == 404 and r.get_json()["compute"] == {
        "method": "POST", "href": "/v1/tables/direct-to-video-sequel/jobs",
        "body": {"players": 3, "variant": "draw-then-recycle"}}


@pytest.mark.parametrize("path", ["/v1/tables/original/heatmap.png?players=8",
                                  "/v1/tables/original/heatmap.svg?players=5",
                                  "/v1/tables/direct-to-video-sequel?players=4&variant=draw-then-recycle",
                                  "/v1/tables/direct-to-video-sequel?players=5"])
def test_more_players_have_no_job_nor_picture_nor_unchecked_table(client: FlaskClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 422 and r.get_json()["errors"][0]["field"] == "players", r.get_json()
    r = client.post("/v1/tables/original/jobs", json={"players": 5})
    assert r.status_code == 422 and r.get_json()["errors"][0]["field"] == "players"


@pytest.mark.parametrize("players", [5, 8])
def test_more_players_are_the_reduced_model_over_the_two_player_table(client: FlaskClient, solution: GameSolution,
                                                                      stored: str, players: int) -> None:
    r = client.get(f"/v1/tables/original?players={players}")
    assert r.status_code == 200 and r.headers["ETag"] == f'"{stored}-p{players}-json"'
    table = r.get_json()
    assert (table["players"], table["model"], table["sha256"]) == (players, "duel-the-leader", stored)
    assert table["two_player_table"] == client.get("/v1/tables/original").get_json()["url"]
    for m, leader in [(0, 0), (5, 9), (12, 3)]:
        for grid, last in (("followed", False), ("last", True)):
            assert table["win_probability"][grid][m][leader] == reduced_win_probability(solution, players, m, leader,
                                                                                         last)
    # at 0-0, followed: a of the N - 1 others play after the mover (a uniform on 1..N-1), with the Luce odds
    # r = (1 - d) / d of the duel at 0-0 as seat 1 (W1, they play after) or seat 2 (W2, they have played)
    r1, r2 = ((1 - d) / d for d in (solution.win_probability(1, 0, 0), solution.win_probability(2, 0, 0)))
    assert table["win_probability"]["followed"][0][0] == pytest.approx(
        sum(1 / (1 + a * r1 + (players - 1 - a) * r2) for a in range(1, players)) / (players - 1))
    measured = MEASURED[("original", "before-draw", players)]
    assert table["model_error"] == {"games": measured.games, "seed": measured.seed, "turns": measured.turns,
                                    "start_error": measured.start_error, "standard_error": measured.standard_error,
                                    "bias": measured.bias, "calibration_error": measured.calibration_error}
    assert client.get(table["url"]).headers["Cache-Control"] == "public, max-age=31536000, immutable"
    rows = dict(list(csv.reader(io.StringIO(client.get(f"/v1/tables/original?players={players}&format=csv")
                                            .get_data(as_text=True))))[1:])
    assert float(rows["last.5.9"]) == table["win_probability"]["last"][5][9]
    assert float(rows["model_error.bias"]) == measured.bias and rows["players"] == str(players)


def test_an_unknown_mode_has_no_table(client: FlaskClient) -> None:
    for r in (client.get("/v1/tables/no-such-mode"), client.post("/v1/tables/no-such-mode/jobs", json={})):
        assert r.status_code in (404, 422) and r.mimetype == "application/problem+json"


def test_the_list_of_tables(client: FlaskClient, stored: str) -> None:
    r = client.get("/v1/tables")
    assert r.status_code == 200 and r.headers["Cache-Control"] == "no-store"
    [table] = r.get_json()["tables"]
    assert (table["mode"], table["variant"], table["players"], table["sha256"]) == ("original", "before-draw", 2,
                                                                                     stored)
    assert client.get(table["url"]).status_code == 200


def test_a_stored_table_is_not_computed_again(client: FlaskClient, stored: str) -> None:
    r = client.post("/v1/tables/original/jobs", json={})
    assert r.status_code == 200
    job = r.get_json()
    assert job["state"] == "succeeded" and job["sha256"] == stored and job["url"] == JOB
    assert client.get(job["table"]).status_code == 200
    assert client.get(JOB).get_json() == job


@pytest.mark.parametrize("job", ["nope", "table-original-before-draw-p3-v1", "table-original-before-draw-p2-v0",
                                 "..", "Table-original", "a%2F..%2Fb", "x" * 200])
def test_unknown_jobs_are_404(client: FlaskClient, job: str) -> None:
    r = client.get(f"/v1/jobs/{job}")
    assert r.status_code == 404 and r.mimetype == "application/problem+json"


def test_jobs_and_lists_are_never_cached(stored: str) -> None:
    app = create_app({"TESTING": True, "RESPONSE_CACHE_SIZE": 64})
    client = app.test_client()
    for path in (JOB, "/v1/tables", "/v1/tables/original", "/v1/tables/original/heatmap.svg"):
        assert client.get(path).status_code == 200
    assert client.get("/v1/modes").status_code == 200
    assert [key[0] for key in app.extensions["response_cache"]] == ["/v1/modes"]


def test_the_table_modes_are_the_spec_s() -> None:
    assert list(MODES) == spec.load()[1]["components"]["schemas"]["TableMode"]["enum"]


# -- jobs -----------------------------------------------------------------------------------------
def test_a_job_in_process_from_start_to_end(client: FlaskClient, empty_store: Path, solution: GameSolution) -> None:
    """The embedded default: the job runs in a thread of the server; asking again joins it; progress
    is reported; /v1/odds with scores answers 503 until the table is stored, then from it."""
    first = client.post("/v1/tables/original/jobs", json={"variant": "before-draw"})
    assert first.status_code == 202 and first.headers["Location"] == JOB
    odds = client.get(f"/v1/odds?{WORKED}&scores=5,9&seat=2")
    again = client.post("/v1/tables/original/jobs", json={})
    assert again.status_code in (200, 202) and again.get_json()["id"] == first.get_json()["id"]
    if client.get(JOB).get_json()["state"] != "succeeded":  # so it was not stored when odds were asked
        assert odds.status_code == 503 and int(odds.headers["Retry-After"]) > 0
        assert odds.get_json()["job"] == JOB
    progress, deadline = [], time.time() + 600
    while (job := client.get(JOB).get_json())["state"] in ("queued", "running") and time.time() < deadline:
        progress.append(job["progress"]["done"])
        time.sleep(0.2)
    assert job["state"] == "succeeded", job
    join(KEY)  # the job's thread writes its last record after the table: let it end within this test
    assert progress == sorted(progress) and job["progress"]["done"] == job["progress"]["total"] == 27
    assert Store(empty_store).writes(KEY) == 1  # one computation, however often it was asked for
    table = client.get(job["table"]).get_json()
    assert table["win_probability"]["seat1"] == [list(row) for row in solution.seat1]  # bit for bit
    assert client.get(f"/v1/odds?{WORKED}&scores=5,9&seat=2").status_code == 200
    for path in ("/v1/odds", "/v1/advice.txt"):  # the table has no School Bus: refused, not answered without it
        bus = client.get(f"{path}?{WORKED}&school_bus=true&scores=5,9&seat=2")
        assert bus.status_code == 422 and [e["field"] for e in bus.get_json()["errors"]] == ["school_bus"], bus.data


def built_by_its_job(client: FlaskClient, key: Key) -> dict:
    """The table `key` asked for (a 202 naming its job), its job followed to its end: the job's last status."""
    first = client.post(f"/v1/tables/{key.mode}/jobs", json={"players": key.players})
    assert first.status_code == 202 and first.headers["Location"] == f"/v1/jobs/{job_id(key)}"
    deadline = time.time() + 300
    while (job := client.get(first.headers["Location"]).get_json())["state"] in ("queued", "running") \
            and time.time() < deadline:
        time.sleep(0.2)
    join(key)
    return job


def test_three_players_are_solved_exactly_by_a_job(client: FlaskClient, empty_store: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The three-player table of the base game is a job of its own (embedded here), served whole as JSON and CSV:
    P(each seat wins) from the start and at every start of a turn. A small game (5 brains to win, cap 14) stands
    for the real one, which takes minutes (tests/analysis/game/test_units.py: its units are the solve's bit for bit)."""
    monkeypatch.setattr(units, "GOAL", 5)
    monkeypatch.setattr(units, "CAP", 14)
    monkeypatch.setenv("ZOMBIE_ODDS_EMBEDDED_TABLES", "original,original:3")
    key = table_key("original", "before-draw", 3)
    job = built_by_its_job(client, key)
    total = len(units.layers("original", "before-draw", 3)) + 1
    assert job["state"] == "succeeded" and job["progress"] == {"done": total, "total": total}, job
    r = client.get("/v1/tables/original?players=3")
    assert r.status_code == 200 and r.headers["ETag"] == f'"{job["sha256"]}-json"'
    table, expected = r.get_json(), solve_seats(3, goal=5, cap=14)
    assert (table["players"], table["model"], table["goal"], table["cap"]) == (3, "exact", 5, 14)
    assert table["p_seat_wins"] == list(expected.p_seat_wins) and job["p_first_player_wins"] == expected.p_seat_wins[0]
    assert table["cap_error"] == expected.cap_error
    turns = table["turns"]
    assert len(turns) == len(expected.values) and {t["phase"] for t in turns} == {"normal", "final", "tiebreak"}
    assert all(abs(sum(t["p"]) - 1) < 1e-12 for t in turns)
    start = next(t for t in turns if t.get("scores") == [0, 0, 0] and t["mover"] == 1)
    assert start["p"] == table["p_seat_wins"]
    late = next(t for t in turns if t.get("scores") == [4, 0, 3] and t["mover"] == 2)
    assert late["p"] == expected.values[Normal((4, 0, 3), 1)].tolist()
    tie = next(t for t in turns if t["phase"] == "tiebreak" and t["seats"] == [1, 3] and t["mover"] == 3)
    assert tie["best"] >= 0 and set(tie["leaders"]) <= {1}
    rows = dict(list(csv.reader(io.StringIO(client.get("/v1/tables/original?players=3&format=csv")
                                            .get_data(as_text=True))))[1:])
    assert float(rows["p_seat_wins.2"]) == table["p_seat_wins"][1] and float(rows["normal.4-0-3.2.3"]) == late["p"][2]
    assert float(rows[f"tiebreak.1-3.3.{tie['best']}.{'-'.join(map(str, tie['leaders'])) or 'none'}.1"]) == tie["p"][0]
    final = next(t for t in turns if t["phase"] == "final")  # every start of a turn, each seat's chance a row
    assert float(rows[f"final.{final['mover']}.{'-'.join(map(str, final['leads']))}."
                      f"{'-'.join(map(str, final['leaders']))}.2"]) == final["p"][1]
    assert len(rows) == 9 + 3 + 3 * len(turns)
    assert client.get(table["url"]).headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert {(t["players"], t["mode"]) for t in client.get("/v1/tables").get_json()["tables"]} == {(3, "original")}
    svg = client.get("/v1/tables/original/heatmap.svg?players=3")
    assert svg.status_code == 200 and svg.headers["ETag"] == f'"{job["sha256"]}-svg"'
    text = svg.get_data(as_text=True)
    assert all(f"Seat {q} to move" in text for q in (1, 2, 3)) and "Best score of the others" in text
    assert client.post("/v1/tables/original/jobs", json={"players": 3}).status_code == 200  # stored: not again
    assert Store(empty_store).writes(key) == 1
    # /v1/odds with three scores (the mover's, then those of the seats after it) decides from this table
    answer = client.get(f"/v1/odds?{WORKED}&scores=2,3,1&seat=2").get_json()
    position = Position(footprints=("green", "red"), brains=("green",), shotguns=("red",))
    spot = Normal((1, 2, 3), 1)
    d = expected.decision(spot, table_for("original", "before-draw").index[position.state], position.score)
    assert answer["decision"]["action"] == d.action
    assert answer["decision"]["roll"]["value"] == pytest.approx(d.p_win_roll, abs=1e-15)
    assert answer["decision"]["stop"]["value"] == pytest.approx(d.p_win_stop, abs=1e-15)
    game = answer["game"]
    assert (game["model"], game["players"], game["phase"], game["seat"]) == ("exact", 3, "normal", 2)
    assert game["p_seats"] == expected.values[spot].tolist() and game["win_probability"]["value"] == game["p_seats"][1]
    start = client.get("/v1/odds?scores=0,0,0&seat=1").get_json()
    assert start["decision"]["roll"]["value"] == pytest.approx(table["p_seat_wins"][0], abs=1e-15)
    assert start["game"]["phase"] == "normal"
    bad = client.get("/v1/odds?scores=2,3,1&seat=4")
    assert bad.status_code == 422 and bad.get_json()["errors"][0]["field"] == "seat"


def test_four_players_of_the_base_game_are_solved_exactly_by_a_job(client: FlaskClient, empty_store: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Four players of the base game are a job like three players' (a small game, 3 brains to win, cap 9, stands for
    the real one, half an hour of CPU), served whole and by /v1/odds with four scores; its heatmap has a panel per
    seat."""
    monkeypatch.setattr(units, "GOAL", 3)
    monkeypatch.setattr(units, "CAP", 9)
    monkeypatch.setenv("ZOMBIE_ODDS_EMBEDDED_TABLES", "original:4")
    job = built_by_its_job(client, table_key("original", "before-draw", 4))
    assert job["state"] == "succeeded", job
    table, expected = client.get("/v1/tables/original?players=4").get_json(), solve_seats(4, goal=3, cap=9)
    assert (table["players"], table["model"], table["goal"], table["cap"]) == (4, "exact", 3, 9)
    assert table["p_seat_wins"] == list(expected.p_seat_wins)
    # seat 3 to move with 2 brains, then seats 4, 1 and 2 with 1, 0 and 1
    answer = client.get(f"/v1/odds?{WORKED}&scores=2,1,0,1&seat=3").get_json()
    position = Position(footprints=("green", "red"), brains=("green",), shotguns=("red",))
    spot = Normal((0, 1, 2, 1), 2)
    d = expected.decision(spot, table_for("original", "before-draw").index[position.state], position.score)
    assert answer["decision"]["action"] == d.action
    assert answer["decision"]["roll"]["value"] == pytest.approx(d.p_win_roll, abs=1e-15)
    game = answer["game"]
    assert (game["model"], game["players"], game["seat"]) == ("exact", 4, 3)
    assert game["p_seats"] == expected.values[spot].tolist()
    svg = client.get("/v1/tables/original/heatmap.svg?players=4")
    assert svg.status_code == 200 and "Seat 4 to move" in svg.get_data(as_text=True)


@pytest.fixture
def queued_on_redis(empty_store: Path) -> Iterator[redis.Redis]:
    """Jobs go to a real Redis where no worker listens yet: they stay queued."""
    with queued_on(REDIS_URL) as queue:
        yield queue


def test_odds_with_scores_wait_for_the_table_with_503(client: FlaskClient, queued_on_redis: redis.Redis) -> None:
    r = client.post("/v1/odds", json={"footprints": ["green", "red"], "scores": [5, 9], "seat": 1,
                                      "shotguns": ["red"], "brains": ["green"]})
    assert r.status_code == 503 and r.mimetype == "application/problem+json"
    assert r.headers["Retry-After"] == str(units.job_seconds("original", 2)) and r.get_json()["job"] == JOB  # none done
    queued = queued_on_redis.llen("celery")
    assert queued >= 1  # the job was started: its first layer waits for a worker
    assert client.get(f"/v1/odds?{WORKED}&scores=5,9&seat=1").status_code == 503
    assert client.post("/v1/tables/original/jobs", json={}).status_code == 202
    assert queued_on_redis.llen("celery") == queued  # ... and not started again
    job = client.get(JOB).get_json()
    assert job["state"] == "queued" and job["progress"] == {"done": 0, "total": 27}
    assert client.get("/v1/tables/original").get_json()["job"] == JOB  # the 404 names the running job


@pytest.mark.parametrize("santa", ["santa-claus-meets-the-zombies", "direct-to-video-sequel"])
def test_a_double_feature_job_is_queued_and_odds_wait_for_it(client: FlaskClient, queued_on_redis: redis.Redis,
                                                              santa: str) -> None:
    job = f"/v1/jobs/table-{santa}-draw-then-recycle-p2-v1"
    r = client.post(f"/v1/tables/{santa}/jobs", json={"variant": "draw-then-recycle"})
    assert r.status_code == 202 and r.headers["Location"] == job
    assert r.get_json()["mode"] == santa and r.get_json()["progress"] == {"done": 0, "total": 27}
    assert client.get(job).get_json()["state"] == "queued"
    odds = client.post("/v1/odds", json={"mode": santa, "recycle": "draw-then-recycle", "scores": [3, 4], "seat": 2})
    assert odds.status_code == 503 and odds.get_json()["job"] == job
    assert int(odds.headers["Retry-After"]) == units.job_seconds(santa, 2) > units.job_seconds("original", 2)


def test_a_client_waiting_for_a_table_is_told_what_its_job_has_left(client: FlaskClient, empty_store: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Retry-After is the job's measured time on one core times the share of its steps left (at least 5 s)."""
    santa = units.job_seconds(SANTA, 3)
    for mode, done, wait in ((SANTA, 0, santa), (SANTA, 30, round(santa * 15 / 45)), ("original", 44, 5)):
        key = table_key(mode, "before-draw", 3)
        job = TableJob(job_id(key), key, "running", done, 45)
        monkeypatch.setattr(api_tables, "submit", lambda *args, job=job, **kwargs: job)
        r = client.post("/v1/odds", json={"mode": mode, "scores": [3, 4, 5], "seat": 2})
        assert r.status_code == 503 and r.headers["Retry-After"] == str(wait), (done, r.headers["Retry-After"])
        assert f"{done} of 45 steps done" in r.get_json()["detail"]


def test_a_server_without_redis_leaves_double_feature_tables_to_workers(client: FlaskClient, empty_store: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Embedded, only ZOMBIE_ODDS_EMBEDDED_TABLES (the base game) is computed in the server's process: a
    Double Feature job is a 422 naming `mode` that says where it is computed, and nothing is started."""
    monkeypatch.delenv("ZOMBIE_ODDS_EMBEDDED_TABLES", raising=False)
    for r in (client.post("/v1/tables/big-summer-action-movie/jobs", json={}),
              client.post("/v1/odds", json={"mode": "big-summer-action-movie", "scores": [3, 4], "seat": 1}),
              client.post("/v1/tables/direct-to-video-sequel/jobs", json={})):
        assert r.status_code == 422 and r.mimetype == "application/problem+json", r.get_json()
        [error] = r.get_json()["errors"]
        assert error["field"] == "mode" and "Celery workers" in error["reason"]
    assert client.get("/v1/jobs/table-big-summer-action-movie-before-draw-p2-v1").status_code == 404
    assert list(empty_store.glob("job--*")) == []


# -- /v1/odds with scores -------------------------------------------------------------------------
GAMES = [(1, 0, 0), (2, 5, 9), (1, 12, 3), (2, 10, 14), (1, 14, 14), (2, 13, 15), (2, 11, 2)]


@pytest.mark.parametrize("seat, mover, other", GAMES)
def test_win_decisions_are_the_solution_s(client: FlaskClient, solution: GameSolution, seat: int, mover: int,
                                          other: int) -> None:
    table = table_for("original")
    for fields in ({"footprints": ["green", "red"], "brains": ["green"], "shotguns": ["red"]},
                   {"footprints": ["yellow"], "brains": ["green", "green"], "shotguns": ["red", "red"]},
                   {}):
        body = {**fields, "scores": [mover, other], "seat": seat}
        r = client.post("/v1/odds", json=body)
        assert r.status_code == 200, r.get_json()
        answer = r.get_json()
        position = Position(**{k: tuple(v) for k, v in fields.items()})
        expected = solution.decision(seat, mover, other, table.index[position.state], position.score)
        decision = answer["decision"]
        assert decision["objective"] == "win" and decision["action"] == expected.action
        assert decision["roll"]["value"] == pytest.approx(expected.p_win_roll, abs=1e-12)
        assert decision["stop"]["value"] == pytest.approx(expected.p_win_stop, abs=1e-12)
        if position.turn_start:
            assert "cost" not in decision and decision["action"] == "roll"
        else:
            assert decision["cost"]["value"] == pytest.approx(abs(expected.p_win_roll - expected.p_win_stop))
        game = answer["game"]
        assert game["win_probability"]["value"] == solution.win_probability(seat, mover, other)
        assert game["final_round"] == (max(mover, other) >= 13) and "turn" not in answer


def test_win_by_query_and_csv(client: FlaskClient) -> None:
    by_post = client.post("/v1/odds", json={"footprints": ["green", "red"], "brains": ["green"],
                                            "shotguns": ["red"], "scores": [5, 9], "seat": 2, "objective": "win",
                                            "final_round": False}).get_json()
    assert client.get(f"/v1/odds?{WORKED}&scores=5,9&seat=2").get_json() == by_post
    rows = dict(csv.reader(io.StringIO(client.get(f"/v1/odds?{WORKED}&scores=5,9&seat=2&format=csv").get_data(
        as_text=True))))
    assert rows["objective"] == "win" and float(rows["cost"]) == by_post["decision"]["cost"]["value"]
    assert not any(key.startswith("score_distribution") for key in rows)
    two_shotguns = "footprints=yellow&brains=green,green&shotguns=red,red"
    plain = client.get(f"/v1/odds?{two_shotguns}").get_json()
    win = client.get(f"/v1/odds?{two_shotguns}&scores=5,9&seat=2").get_json()
    assert (win["position"], win["next_roll"]) == (plain["position"], plain["next_roll"])


def test_a_huge_turn_is_answered_without_a_huge_sweep(client: FlaskClient) -> None:
    r = client.get("/v1/odds?footprints=green&brains=green&shotguns=red&banked=900&scores=0,0&seat=1")
    assert r.status_code == 200
    assert r.get_json()["decision"]["action"] == "stop" and r.get_json()["decision"]["stop"]["value"] == 1.0


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"scores": [3, 4]}, ["seat"]),
        ({"seat": 1}, ["scores"]),
        ({"objective": "win"}, ["scores"]),
        ({"scores": [3, 4], "seat": 1, "final_round": True}, ["final_round"]),
        ({"scores": [4, 13], "seat": 2, "final_round": False}, ["final_round"]),
        ({"scores": [15, 9], "seat": 1}, ["scores"]),
        ({"scores": [13, 9], "seat": 2}, ["scores"]),
        ({"scores": [3, 13], "seat": 1}, ["scores"]),
        ({"scores": [15, 9, 3], "seat": 1}, ["scores"]),
        ({"scores": [3, 4, 5], "seat": 4}, ["seat"]),
        ({"scores": [3, 4, 5, 6], "seat": 1, "mode": "direct-to-video-sequel"}, ["scores"]),  # model not checked there
        ({"scores": [3, 4, 5], "seat": 1, "mode": "direct-to-video-sequel"}, ["mode"]),  # computed on workers only
        ({"scores": [3, 4], "seat": 3}, ["seat"]),
        ({"scores": [3, 4], "seat": 1, "objective": "reach:3"}, ["objective"]),
        ({"scores": [3, 4], "seat": 1, "shotguns": ["red", "red", "red"]}, ["shotguns"]),
    ],
)
def test_impossible_games_are_422_naming_the_field(client: FlaskClient, body: dict, fields: list[str]) -> None:
    r = client.post("/v1/odds", json=body)
    assert r.status_code == 422, r.get_json()
    assert [e["field"] for e in r.get_json()["errors"]] == fields


@pytest.mark.parametrize("scores, seat, duel, phase", [([5, 9, 3, 0, 1], 1, ((5, 9), 1), "normal"),
                                                      ([5, 2, 9, 7, 1], 5, ((5, 9), 2), "normal"),
                                                      ([10, 3, 2, 1, 14], 2, ((10, 14), 2), "beat"),
                                                      ([14, 14, 9, 14, 2], 3, ((14, 14), 1), "tiebreak")])
def test_more_players_decide_by_the_duel_with_the_leader(client: FlaskClient, solution: GameSolution, scores: list[int],
                                                         seat: int, duel: tuple, phase: str) -> None:
    fields = {"footprints": ["green", "red"], "brains": ["green"], "shotguns": ["red"]}
    r = client.post("/v1/odds", json={**fields, "scores": scores, "seat": seat})
    assert r.status_code == 200, r.get_json()
    answer = r.get_json()
    (mover, leader), duel_seat = duel
    index = table_for("original").index[Position(**{k: tuple(v) for k, v in fields.items()}).state]
    expected = solution.decision(duel_seat, mover, leader, index, 1)
    assert answer["decision"]["action"] == expected.action
    assert answer["decision"]["roll"]["value"] == pytest.approx(expected.p_win_roll, abs=1e-12)
    game = answer["game"]
    assert (game["scores"], game["seat"], game["players"], game["model"]) == (scores, seat, len(scores),
                                                                              "duel-the-leader")
    assert game["duel"] == {"scores": [mover, leader], "seat": duel_seat} and game["phase"] == phase
    start = (reduced_win_probability(solution, len(scores), mover, leader, duel_seat == 2) if phase == "normal" else
             solution.win_probability(duel_seat, mover, leader))
    assert game["win_probability"]["value"] == start
    assert game["model_error"]["bias"] == MEASURED[("original", "before-draw", len(scores))].bias


def test_a_tiebreak_and_a_final_turn(client: FlaskClient, solution: GameSolution) -> None:
    tiebreak = client.get("/v1/odds?scores=14,14&seat=1").get_json()["game"]
    assert tiebreak["phase"] == "tiebreak" and tiebreak["final_round"] is True
    assert tiebreak["win_probability"]["value"] == solution.tiebreak
    final = client.get("/v1/odds?scores=12,15&seat=2&final_round=true").get_json()["game"]
    assert final["phase"] == "beat" and final["win_probability"]["value"] == solution.final[3]


def test_a_job_whose_queue_is_down_says_why(client: FlaskClient, empty_store: Path) -> None:
    """A running job (its durable record) while Redis cannot be reached: the job is still answered, with
    `detail` saying that the queue is down and that the job resumes from its last layer."""
    record = {"id": job_id(KEY), "mode": "original", "variant": "before-draw", "players": 2, "split": 2,
              "state": "running", "run": "r1", "done": 3, "total": 27, "known": {}, "updated": time.time()}
    Store(empty_store).put(JobKey(record["id"]), record)
    with using(create("redis://127.0.0.1:1/15")):  # nothing listens on port 1
        r = client.get(JOB)
    assert r.status_code == 200, r.get_json()
    job = r.get_json()
    assert job["state"] == "running" and job["progress"] == {"done": 3, "total": 27}
    assert "unavailable" in job["detail"] and "resumes from its last finished layer (3 of 26)" in job["detail"]
    assert "detail" not in client.get(JOB).get_json()  # embedded again: nobody runs it, so it failed


# -- a Double Feature table (solved once: about 2 GiB and a minute or two of CPU) ------------------
DF = "big-summer-action-movie"


@pytest.fixture(scope="module")
def df_solution() -> GameSolution:
    return solved_game(DF)  # shared with tests/analysis/game/test_solution.py


@pytest.fixture
def df_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, df_solution: GameSolution) -> str:
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path / "store"))
    return Store(tmp_path / "store").put(table_key(DF, "before-draw", 2), df_solution.to_dict())


def test_a_double_feature_table_is_served_and_decides(client: FlaskClient, df_solution: GameSolution,
                                                      df_stored: str) -> None:
    table = client.get(f"/v1/tables/{DF}").get_json()
    assert table["mode"] == DF and table["sha256"] == df_stored
    assert table["win_probability"]["seat1"] == [list(row) for row in df_solution.seat1]
    assert table["p_first_player_wins"] == df_solution.p_first_player_wins and table["cap_error"] < 1e-9
    rows = dict(list(csv.reader(io.StringIO(client.get(f"/v1/tables/{DF}?format=csv").get_data(as_text=True))))[1:])
    assert float(rows["seat2.9.5"]) == df_solution.win_probability(2, 9, 5)
    svg = client.get(f"/v1/tables/{DF}/heatmap.svg")
    assert svg.status_code == 200 and svg.mimetype == "image/svg+xml"
    [listed] = client.get("/v1/tables").get_json()["tables"]
    assert listed["mode"] == DF
    fields = {"footprints": ["green", "red"], "brains": ["green"], "shotguns": ["red"]}
    position = Position(mode=DF, **{k: tuple(v) for k, v in fields.items()})
    index = table_for(DF).index[position.state]
    for seat, mover, other in [(1, 0, 0), (2, 5, 9), (2, 10, 14)]:
        r = client.post("/v1/odds", json={"mode": DF, **fields, "scores": [mover, other], "seat": seat})
        assert r.status_code == 200, r.get_json()
        expected = df_solution.decision(seat, mover, other, index, position.score)
        decision = r.get_json()["decision"]
        assert decision["action"] == expected.action
        assert decision["roll"]["value"] == pytest.approx(expected.p_win_roll, abs=1e-12)
        assert decision["stop"]["value"] == pytest.approx(expected.p_win_stop, abs=1e-15)


def test_a_wrong_number_of_units_a_layer_stops_the_server_as_it_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ZOMBIE_ODDS_TABLE_UNITS` is read when the application is made, not first by a request (a 500 there)."""
    monkeypatch.setenv("ZOMBIE_ODDS_TABLE_UNITS", "none")
    with pytest.raises(ValueError, match="ZOMBIE_ODDS_TABLE_UNITS"):
        create_app({"TESTING": True})
    monkeypatch.setenv("ZOMBIE_ODDS_TABLE_UNITS", "3")
    assert create_app({"TESTING": True})
