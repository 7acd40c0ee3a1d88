"""The `zombie-odds` command through click's CliRunner: the same answers as the HTTP API."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient

from api import cli
from workers.store import Store
from workers.tasks import table_key

WORKED = ["--footprints", "green,red", "--brains", "green", "--shotguns", "red"]


def run(*args: str) -> Any:
    return CliRunner().invoke(cli.main, list(args))


def test_odds_reads_like_an_answer(warm: None) -> None:
    result = run("odds", *WORKED)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "bust             22.2222%  (2/9)" in out
    assert "Decision (expected-brains): ROLL" in out
    assert "  roll  1.883468" in out and "  stop  1.000000  (1/1)" in out
    assert "       1         1     24.0741%  13/54" in out  # one row of the outcomes table
    assert "first 10 of" in out and "      0     31.8698%" in out


def test_odds_json_is_the_api_answer(warm: None, client: FlaskClient) -> None:
    result = run("odds", *WORKED, "--objective", "reach:3", "--json")
    assert result.exit_code == 0, result.output
    api = client.get("/v1/odds?footprints=green,red&brains=green&shotguns=red&objective=reach:3").get_json()
    assert json.loads(result.output) == api


def test_the_start_of_a_turn(warm: None) -> None:
    result = run("odds", "--json")
    assert json.loads(result.output)["next_roll"]["bust"]["exact"] == "94/3861"


@pytest.mark.parametrize(
    ("args", "lines"),
    [
        (["--footprints", "green,purple", "--shotguns", "red"], ["footprints[1]: unknown die 'purple'"]),
        (["--shotguns", "red,red,red", "--footprints", "green"], ["shotguns: 3 shotguns"]),
        (["--banked", "-1"], ["banked: cannot be negative"]),
        ([*WORKED, "--objective", "reach:41"], ["objective: reach:K needs 1 <= K <= 40"]),
        (["--mode", "nope"], ["mode: unknown mode 'nope'"]),
    ],
)
def test_impossible_positions_exit_2_naming_the_field(args: list[str], lines: list[str]) -> None:
    result = run("odds", *args)
    assert result.exit_code == 2
    for line in lines:
        assert any(out.startswith(line) for out in result.output.splitlines()), result.output


def test_usage_errors_exit_2() -> None:
    assert run("odds", "--banked", "many").exit_code == 2
    result = run("odds", "--school-bus", "--bus-shotguns", "two")
    assert result.exit_code == 2 and "'--bus-shotguns'" in result.output


# Big Summer Action Movie with the School Bus, riding, near the end of the turn (the spec's `school-bus-riding`
# example): small enough to solve in a test, and every Double Feature and School Bus option but --kept-out.
RIDING = ["--mode", "big-summer-action-movie", "--school-bus", "--riding", "--footprints", "hottie", "--brains",
          "hunk,green,green", "--double-brains", "hunk", "--shotguns", "red,red", "--bus-brains", "1"]


def test_expansion_and_bus_options_are_the_api_fields(client: FlaskClient) -> None:
    result = run("odds", *RIDING, "--json")
    assert result.exit_code == 0, result.output
    api = client.get("/v1/odds", query_string={
        "mode": "big-summer-action-movie", "school_bus": "true", "riding": "true", "footprints": "hottie",
        "brains": "hunk,green,green", "double_brains": "hunk", "shotguns": "red,red", "bus_brains": "1"}).get_json()
    assert json.loads(result.output) == api
    assert api["position"]["bus_brains"] == 1 and api["position"]["first_roll"] is False
    text = run("odds", *RIDING).output
    assert "School Bus" in text and "double brains hunk" in text
    assert "bus         riding; tokens: 1 brain(s), 0 shotgun(s)" in text
    for a in api["decision"]["actions"]:  # stop, stay, get-off, each with its value
        assert f"  {a['action']:<8} {a['value']['value']:.6f}" in text
    kept = run("odds", "--mode", "santa-claus-meets-the-zombies", "--footprints", "green,red", "--brains", "yellow",
               "--shotguns", "red,red", "--kept-out", "santa", "--banked", "10", "--json")
    assert kept.exit_code == 0, kept.output
    assert json.loads(kept.output)["position"]["kept_out"] == ["santa"]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--brains", "green,green,green", "--bus-brains", "2"], "bus_brains: bus_brains without school_bus"),
        (["--brains", "green,green,green", "--riding"], "riding: riding without school_bus"),
        (["--school-bus", "--brains", "green,green,green", "--riding", "--bus-out"], "bus_out: riding and bus_out"),
        (["--school-bus", "--bus-brains", "-1", "--brains", "green,green,green"], "bus_brains: cannot be negative"),
        (["--school-bus", "--riding"], "riding: nothing is rolled yet"),
        (["--effects", "helmet", "--brains", "green,green,green"], "effects[0]: no die of mode original shows"),
        (["--mode", "big-summer-action-movie", "--brains", "green", "--double-brains", "hunk",
          "--footprints", "red,red"], "double_brains: 1 hunk dice show a double-brain but brains lists 0"),
        (["--mode", "santa-claus-meets-the-zombies", "--kept-out", "green", "--banked", "10",
          "--brains", "red,red,red"], "kept_out[0]: a recycling puts every green brain die back"),
        (["--school-bus", "--mode", "direct-to-video-sequel", "--footprints", "green,red", "--brains", "green",
          "--riding"], "shotguns: 4 shotguns from a bust"),
    ],
)
def test_bad_expansion_and_bus_options_exit_2_naming_the_field(args: list[str], line: str) -> None:
    result = run("odds", *args)
    assert result.exit_code == 2
    assert any(out.startswith(line) for out in result.output.splitlines()), result.output


def test_serve_runs_gunicorn_on_a_warm_preloaded_app(warm: None, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[cli.Server] = []
    monkeypatch.setattr(cli.Server, "run", lambda self: started.append(self))
    result = run("serve", "--host", "0.0.0.0", "--port", "9000", "--workers", "3")
    assert result.exit_code == 0, result.output
    (server,) = started
    assert server.cfg.bind == ["0.0.0.0:9000"]
    assert server.cfg.workers == 3
    assert server.cfg.preload_app is True
    assert server.cfg.timeout == 900  # Santa's turn start takes 4 to 12 minutes the first time
    assert isinstance(server.load(), Flask)


def test_serve_refuses_zero_workers() -> None:
    assert run("serve", "--workers", "0").exit_code == 2


def test_tables_build_computes_once_and_says_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process (no REDIS_URL): the job runs in a thread of the command, followed by a progress bar."""
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    key = table_key("original", "before-draw", 2)
    result = run("tables", "build", "--mode", "original")
    assert result.exit_code == 0, result.output
    data, digest = Store(tmp_path).get(key)
    assert f"stored {key.name} in {tmp_path} (sha256 {digest})" in result.output
    assert f"P(first player wins) = {data['p_first_player_wins']:.6f}" in result.output
    assert "original, before-draw, 2 players" in result.output  # the progress bar's label
    again = run("tables", "build", "--variant", "before-draw")
    assert again.exit_code == 0 and f"(sha256 {digest})" in again.output
    assert Store(tmp_path).writes(key) == 1  # a stored table is not computed again


def test_answers_warm_stores_the_turn_start_the_api_serves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          client: FlaskClient) -> None:
    """Each turn start's answer is stored as the API gives it; a stored one is not computed again; one the
    server refuses is skipped, saying why."""
    from analysis import Position
    from api.odds import answer_key

    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    result = run("answers", "warm", "--mode", "original", "--no-school-bus")
    assert result.exit_code == 0, result.output
    key = answer_key(Position(), "expected-brains")
    assert Store(tmp_path).get(key)[0] == client.get("/v1/odds").get_json()
    assert "original, before-draw: stored in " in result.output
    refused = run("answers", "warm", "--mode", "direct-to-video-sequel", "--school-bus")
    assert refused.exit_code == 0, refused.output
    assert "direct-to-video-sequel, before-draw, School Bus: skipped (mode: the start of a turn in mode " \
           "direct-to-video-sequel with the School Bus" in refused.output
    again = run("answers", "warm", "--mode", "original", "--no-school-bus", "--variant", "draw-then-recycle",
                "--variant", "before-draw")
    assert again.exit_code == 0, again.output
    assert "original, before-draw: already stored" in again.output and Store(tmp_path).writes(key) == 1
    assert "original, draw-then-recycle: stored in " in again.output


def test_answers_prune_removes_old_and_other_engines_answers_only(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Answers of another engine version always go; with --older-than, those written that long ago; a recent
    answer of this engine and every table stay; --dry-run removes nothing."""
    import os

    from workers.store import ENGINE_VERSION, Key

    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    shelf = Store(tmp_path)
    fresh, old, stale = (Key("answer", "original", "before-draw", 1, engine=e, tag=t)
                         for e, t in ((ENGINE_VERSION, "a1"), (ENGINE_VERSION, "b2"), ("old", "c3")))
    table = Key("table", "original", "before-draw", 2)
    for key in (fresh, old, stale, table):
        shelf.put(key, {"x": 1})
    week_ago = time.time() - 7 * 86400
    for key in (old, table):
        os.utime(tmp_path / f"{key.name}.json", (week_ago, week_ago))
    shown = run("answers", "prune", "--older-than", "3", "--dry-run")
    assert shown.exit_code == 0 and shown.output.startswith("would remove 2 answers")
    assert all(key in shelf for key in (fresh, old, stale, table))
    assert run("answers", "prune").output.startswith("removed 1 answers")
    assert stale not in shelf and old in shelf
    assert run("answers", "prune", "--older-than", "3").output.startswith("removed 1 answers")
    assert fresh in shelf and old not in shelf and table in shelf


def test_tables_build_refuses_more_players() -> None:
    result = run("tables", "build", "--players", "3")
    assert result.exit_code == 2 and "only two-player tables" in result.output
