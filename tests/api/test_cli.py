"""api/cli.py: the `zombie-odds` command through click's CliRunner: `odds` says what the HTTP API answers and
refuses what it refuses, naming the option; `serve`, `solutions build`, `tables build` and `answers warm|prune`."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient

from api import cli, spec
from api.cli import main
from workers.store import Store, table_key

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
    assert "(first 5 of 19; --verbose: all)" in out and "      0     31.8698%" in out
    assert len(out.splitlines()) <= 30  # a short answer
    verbose = run("odds", *WORKED, "--verbose").output
    assert "(all)" in verbose and verbose.startswith(out.split("Final score")[0])
    assert len(verbose.splitlines()) == len(out.splitlines()) + 19 - 5  # every score


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
        (["--footprints", "green,purple", "--shotguns", "red"], ["--footprints (item 2): unknown die 'purple'"]),
        (["--shotguns", "red,red,red", "--footprints", "green"], ["--shotguns: 3 shotguns"]),
        (["--banked", "-1"], ["--banked: cannot be negative"]),
        ([*WORKED, "--objective", "reach:41"], ["--objective: reach:K needs 1 <= K <= 40"]),
        (["--banked", "-1", "--objective", "reach:50"],
         ["--banked: cannot be negative", "--objective: reach:K needs 1 <= K <= 40"]),
    ],
)
def test_impossible_positions_exit_2_naming_the_option(args: list[str], lines: list[str]) -> None:
    result = run("odds", *args)
    assert result.exit_code == 2
    assert result.output.splitlines() == [next(out for out in result.output.splitlines() if out.startswith(line))
                                          for line in lines], result.output


def test_usage_errors_exit_2() -> None:
    assert run("odds", "--banked", "many").exit_code == 2
    result = run("odds", "--school-bus", "--bus-shotguns", "two")
    assert result.exit_code == 2 and "'--bus-shotguns'" in result.output
    result = run("odds", "--mode", "nope")  # the modes and the recycling rules are choices, listed by --help
    assert result.exit_code == 2 and "'--mode': 'nope' is not one of 'original'," in result.output
    assert "--recycle [before-draw|draw-then-recycle]" in run("odds", "--help").output


def test_every_field_of_the_api_is_an_option() -> None:
    """Every field of POST /v1/odds but the game's (scores, seat, final_round: the `win` objective) is an option of
    `odds`, and nothing else is, so every field a 422 names is named by its option."""
    fields = set(spec.load()[1]["components"]["schemas"]["OddsRequest"]["properties"])
    options = {p.name for p in cli.odds_command.params} - {"as_json", "verbose"}
    assert options == fields - {"scores", "seat", "final_round"}
    assert {cli._option(f) for f in ("bus_brains", "kept_out[0]", "first_roll")} == {
        "--bus-brains", "--kept-out (item 1)", "first_roll"}


# Every objective the API's schema refuses, with the reason in words (never its regular expression), the same over
# HTTP (a 422 naming `objective`) and on the command line (`--objective: ...`, exit 2).
REACH = "reach:K needs 1 <= K <= 40"
RULE = "rule:N,S needs 1 <= N <= 100 and 1 <= S <= 3"
OTHER = ("is not an objective: expected-brains, reach:K (1 <= K <= 40), rule:N,S (1 <= N <= 100, 1 <= S <= 3), "
         "or win (with scores)")


@pytest.mark.parametrize(("objective", "reason"), [
    ("reach:50", REACH), ("reach:0", REACH), ("reach:1000", REACH), ("reach:", f"'reach:' {OTHER}"),
    ("rule:5,4", RULE), ("rule:0,1", RULE), ("rule:5,10", RULE), ("rule:1000,1", RULE), ("rule:5", f"'rule:5' {OTHER}"),
    ("stop-at:3", f"'stop-at:3' {OTHER}"),
])
def test_a_bad_objective_is_refused_in_words(client: FlaskClient, objective: str, reason: str) -> None:
    worked = {name.removeprefix("--"): value for name, value in zip(WORKED[::2], WORKED[1::2])}
    for response in (client.get("/v1/odds", query_string={**worked, "objective": objective}),
                     client.post("/v1/odds", json={"objective": objective})):
        assert response.status_code == 422
        assert response.get_json()["errors"] == [{"field": "objective", "reason": reason}]
    result = run("odds", *WORKED, "--objective", objective)
    assert result.exit_code == 2 and result.output == f"--objective: {reason}\n"


def test_the_objective_win_needs_the_scores_the_command_does_not_take() -> None:
    result = run("odds", *WORKED, "--objective", "win")
    assert result.exit_code == 2
    assert result.output.startswith("--objective: win needs the game's scores and seat, which this command does not")


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


def test_long_sections_are_behind_verbose(client: FlaskClient) -> None:
    """The School Bus example: by default one line each for the roll's outcomes and the tyre-tracks choices (how
    many, and --verbose), and the first scores; with --verbose every outcome, choice and score."""
    api = json.loads(run("odds", *RIDING, "--json").output)
    roll, give_up, scores = api["next_roll"]["outcomes"], api["decision"]["give_up"], api["turn"]["score_distribution"]
    assert len(roll) > cli.OUTCOME_LINES and len(give_up) > 1 and len(scores) > cli.SCORE_LINES
    short, verbose = run("odds", *RIDING).output.splitlines(), run("odds", *RIDING, "--verbose").output.splitlines()
    assert f"  {len(roll)} outcomes (brains, shotguns): --verbose lists each with its probability" in short
    chance = sum(g["probability"]["value"] for g in give_up)
    assert [line for line in short if "tyre tracks" in line] == [
        f"  tyre tracks ({chance:.4%} of the best roll, {len(give_up)} results): give up token ({len(give_up)}); "
        "--verbose lists each"]
    assert f"Final score if you roll now and play on optimally (first 5 of {len(scores)}; --verbose: all)" in short
    assert len(short) == 21 + cli.SCORE_LINES  # (87 lines before --verbose)
    assert len([line for line in verbose if line.startswith("  tyre tracks (")]) == len(give_up)
    assert len(verbose) == len(short) - 2 + 1 + len(roll) + len(give_up) + len(scores) - cli.SCORE_LINES


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--brains", "green,green,green", "--bus-brains", "2"], "--bus-brains: --bus-brains without --school-bus"),
        (["--brains", "green,green,green", "--riding"], "--riding: --riding without --school-bus"),
        (["--school-bus", "--brains", "green,green,green", "--riding", "--bus-out"],
         "--bus-out: --riding and --bus-out cannot"),
        (["--school-bus", "--bus-brains", "-1", "--brains", "green,green,green"], "--bus-brains: cannot be negative"),
        (["--school-bus", "--riding"], "--riding: nothing is rolled yet"),
        (["--effects", "helmet", "--brains", "green,green,green"], "--effects (item 1): no die of mode original shows"),
        (["--mode", "big-summer-action-movie", "--brains", "green", "--double-brains", "hunk",
          "--footprints", "red,red"], "--double-brains: 1 hunk dice show a double-brain but brains lists 0"),
        (["--mode", "santa-claus-meets-the-zombies", "--kept-out", "green", "--banked", "10",
          "--brains", "red,red,red"], "--kept-out (item 1): a recycling puts every green brain die back"),
    ],
)
def test_bad_expansion_and_bus_options_exit_2_naming_the_option(args: list[str], line: str) -> None:
    result = run("odds", *args)
    assert result.exit_code == 2
    assert any(out.startswith(line) for out in result.output.splitlines()), result.output


def test_odds_whose_solution_this_machine_cannot_build_exit_1_saying_what_it_needs() -> None:
    """Far from a bust the sequel with the bus is read from its stored solution, which the command builds first:
    not here (tests/conftest.py allows 4 GiB a build; it takes 11), so it says so instead of being killed."""
    result = run("odds", "--school-bus", "--mode", "direct-to-video-sequel", "--footprints", "green,red", "--brains",
                 "green", "--riding")
    assert result.exit_code == 1
    assert "Error: the build of mode direct-to-video-sequel with the School Bus takes up to 6.0 GiB" in result.output


SEQUEL = "direct-to-video-sequel"


def test_the_command_line_builds_the_sequel_bus_solution_only_where_it_fits() -> None:
    result = CliRunner().invoke(main, ["odds", "--mode", SEQUEL, "--school-bus"])
    assert result.exit_code == 1
    assert "the build of mode direct-to-video-sequel with the School Bus takes up to 6.0 GiB" in result.stderr


def test_serve_runs_gunicorn_on_a_warm_preloaded_app(warm: None, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[cli.Server] = []
    monkeypatch.setattr(cli.Server, "run", lambda self: started.append(self))
    result = run("serve", "--host", "0.0.0.0", "--port", "9000", "--workers", "3")
    assert result.exit_code == 0, result.output
    (server,) = started
    assert server.cfg.bind == ["0.0.0.0:9000"]
    assert server.cfg.workers == 3
    assert server.cfg.preload_app is True
    assert server.cfg.timeout == 50  # above the application's own deadline per request (20 s)
    assert isinstance(server.load(), Flask)


def test_serve_refuses_zero_workers() -> None:
    assert run("serve", "--workers", "0").exit_code == 2


def test_solutions_build_refuses_what_this_machine_cannot_hold(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A build that needs more memory than is available is not started; the command says so and fails."""
    from workers import solutions

    monkeypatch.setenv("ZOMBIE_ODDS_SOLUTIONS", str(tmp_path))
    monkeypatch.delenv("ZOMBIE_ODDS_BUILD_MEMORY")
    monkeypatch.setattr(solutions, "available_memory", lambda: 2**30)
    result = run("solutions", "build", "--quiet", "--mode", "direct-to-video-sequel", "--school-bus",
                 "--variant", "before-draw")
    assert result.exit_code == 1
    assert "not built: direct-to-video-sequel, School Bus, before-draw: the build of mode direct-to-video-sequel " \
           "with the School Bus takes up to 6.0 GiB" in result.output


def test_solutions_build_runs_builds_side_by_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With several jobs each build runs in a process of its own, and the command reports every one."""
    monkeypatch.setenv("ZOMBIE_ODDS_SOLUTIONS", str(tmp_path))
    result = run("solutions", "build", "--jobs", "2", "--mode", "original", "--no-school-bus")
    assert result.exit_code == 0, result.output
    assert "original, before-draw: built (10,766 states" in result.output
    assert "original, draw-then-recycle: built (10,766 states" in result.output
    assert len(list(tmp_path.glob("solution--original--*"))) == 2


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
    """A turn start read from a stored solution needs no warming (every mode's, with the School Bus or not)."""
    from analysis import ExpectedBrains, Position
    from api.answers import answer_key

    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    result = run("answers", "warm", "--mode", "original", "--no-school-bus")
    assert result.exit_code == 0, result.output
    key = answer_key(Position(), ExpectedBrains())
    assert "original, before-draw: read from its stored solution" in result.output and key not in Store(tmp_path)
    sequel = run("answers", "warm", "--mode", "direct-to-video-sequel", "--school-bus")
    assert sequel.exit_code == 0, sequel.output
    assert "direct-to-video-sequel, before-draw, School Bus: read from its stored solution" in sequel.output


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


def test_tables_build_offers_the_tables_computed() -> None:
    """Two or three players in every mode, four in the base game: another count is refused saying which are
    computed."""
    assert re.search(r"--players INTEGER RANGE +Players: 2 or 3 in every mode, 4 in original",
                     run("tables", "build", "--help").output)
    result = run("tables", "build", "--players", "4", "--mode", "santa-claus-meets-the-zombies")
    assert result.exit_code == 2 and "4 players of santa-claus-meets-the-zombies have no exact table" in result.output
    result = run("tables", "build", "--players", "5")
    assert result.exit_code == 2 and "5 players of original have no exact table" in result.output
