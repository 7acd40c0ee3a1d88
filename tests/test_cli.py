"""The `zombie-odds` command through click's CliRunner: the same answers as the HTTP API."""

from __future__ import annotations

import json
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


def test_serve_runs_gunicorn_on_a_warm_preloaded_app(warm: None, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[cli.Server] = []
    monkeypatch.setattr(cli.Server, "run", lambda self: started.append(self))
    result = run("serve", "--host", "0.0.0.0", "--port", "9000", "--workers", "3")
    assert result.exit_code == 0, result.output
    (server,) = started
    assert server.cfg.bind == ["0.0.0.0:9000"]
    assert server.cfg.workers == 3
    assert server.cfg.preload_app is True
    assert server.cfg.timeout == 300
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


def test_tables_build_refuses_more_players() -> None:
    result = run("tables", "build", "--players", "3")
    assert result.exit_code == 2 and "only two-player tables" in result.output
