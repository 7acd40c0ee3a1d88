"""workers/reports.py: scheduled reports built from analysis.report's content (checked here: exact turns, the bust
table, the game and rules sections, the policy summary, charts), rendered and stored once per period and inputs, the
most complete of a period the latest, a missing table started or said to be impossible; two real beats with a real
worker over a real Redis make one report per period."""

import json
import os
import subprocess
import sys
import time
from collections import Counter
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
import redis

from analysis import MODES, next_roll
from analysis.charts import roll_stop_regions
from analysis.exact import exact_turn, to_fraction
from analysis.objectives import ExpectedBrains
from analysis.policy import solve
from analysis.report import (
    build,
    bust_positions,
    decision_visits,
    hand_tests,
    optimal_decisions,
    region_grid,
    summarise_policy,
)
from workers import reports
from workers.store import Key, Store
from workers.tasks import table_key

from ..games import solved_game
from .reporting import GROUP, RULES, stored_content, stored_table

REDIS_URL = "redis://127.0.0.1:6379/14"
pytestmark = pytest.mark.xdist_group(GROUP)  # (tests/workers/reporting.py)


store_dir = pytest.fixture(scope="module", name="store_dir")(stored_table)
content = pytest.fixture(scope="module", name="content")(stored_content)


def section(content, name):
    return next(s for s in content["sections"] if s["id"] == name)


def table(content, name):
    return next(t for t in content["tables"] if t["name"] == name)


# -- content ---------------------------------------------------------------------------------------------
def test_the_turn_section_is_exact(content):
    turn = section(content, "turn")
    expected = turn["facts"][0]
    assert expected["value"] == 2.2591498606035167
    exact = exact_turn("original", "before-draw", ExpectedBrains())
    assert Fraction(expected["exact"]) == to_fraction(exact.roll(0, 0))
    rows = table(content, "score_distribution")["rows"]
    assert sum(Fraction(e) for _, e, _ in rows) == 1  # the whole distribution, exactly
    assert sum(Fraction(e) * k for k, e, _ in rows) == Fraction(expected["exact"])


def brute_force_bust(position) -> Fraction:
    """P(the next roll busts), counted die by die: every draw of the missing dice from the cup, every face."""
    shotgun = {"green": Fraction(1, 6), "yellow": Fraction(2, 6), "red": Fraction(3, 6)}
    cup = [die for die, n in position.cup.items() for _ in range(n)]
    need, room = 3 - len(position.footprints), 3 - len(position.shotguns)
    draws = list(combinations(range(len(cup)), need))
    total = Fraction(0)
    for draw in draws:
        dice = list(position.footprints) + [cup[i] for i in draw]
        shots = [Fraction(1)]  # distribution of the number of shotguns shown
        for die in dice:
            p = shotgun[die]
            shots = [a * (1 - p) + b * p for a, b in zip([*shots, 0], [0, *shots])]
        total += sum(shots[room:], Fraction(0))
    return total / len(draws)


def test_bust_table_entries_are_the_engines_odds(content):
    rows = table(content, "bust_odds")["rows"]
    positions = bust_positions("original")
    assert len(rows) == len(positions) == 20 * 3  # hands of 0-3 of 3 colours by 0-2 shotguns
    for (hand, shotguns, position), row in zip(positions, rows):
        assert len(position.shotguns) == shotguns and position.footprints == hand and not position.banked
        assert Fraction(row[4]) == next_roll(position).bust == brute_force_bust(position)
        assert row[5] == float(Fraction(row[4]))
    assert rows[0][:5] == ["none", 0, "none", "none", "94/3861"]  # the turn start (README's first example)


def test_the_game_and_rules_sections(content):
    game = solved_game("original")
    assert section(content, "game")["facts"][0]["value"] == game.p_first_player_wins
    rules = table(content, "rules")["rows"]
    assert rules[0][2:] == [game.p_first_player_wins, 1 - game.p_first_player_wins, 0.5]
    name, _, first, second, either = rules[1]
    assert name == "stop-at:3,3" and either == (first + second) / 2
    # the optimal player does better than any rule, in either seat
    assert 0 < first < game.p_first_player_wins and 0 < second < 1 - game.p_first_player_wins
    assert [s["status"] for s in content["sections"]] == ["ok"] * 5


@pytest.fixture(scope="module")
def summary():
    exact = exact_turn("original", "before-draw", ExpectedBrains())
    return summarise_policy(solve("original", "before-draw", ExpectedBrains()), exact), exact


def test_visits_add_up_to_the_exact_score_distribution(summary):
    """Every turn ends once: the visits to positions where the policy stops, per score, are the exact
    distribution of the final score (its 0 adds the busts)."""
    _, exact = summary
    solution = exact.solution
    ended = Counter()
    busts = 0.0

    def visit(score, layer, visits, rolled):
        nonlocal busts
        ended[score] += float(visits[~rolled].sum())
        busts += float((visits[rolled] * solution.table.bust_f[layer][rolled]).sum())

    decision_visits(solution, optimal_decisions(solution, exact), visit)
    dist = exact.score_distribution(0, 0)
    assert abs(ended[0] + busts - float(dist[0])) < 1e-12
    assert max(abs(ended[k] - float(p)) for k, p in dist.items() if k) < 1e-12


def test_policy_summary_agreement_recomputed_for_one_sentence(summary, content):
    """The sentence for 2 shotguns, checked position by position (not through the summary's grouped sums)."""
    s, exact = summary
    rows = table(content, "policy_summary")["rows"]
    assert [r[2] for r in rows] == [r.agreement for r in s.rules]
    assert all(0 <= r.agreement <= 1 for r in s.rules) and 0 <= s.agreement <= 1
    assert abs(sum(r.weight for r in s.rules) - 1) < 1e-12
    assert abs(s.agreement - sum(r.agreement * r.weight for r in s.rules)) < 1e-12
    assert s.summary_value <= s.optimal_value and abs(s.optimal_value - 2.2591498606035167) < 1e-12  # (floats)
    solution = exact.solution
    t = solution.table
    rolls = optimal_decisions(solution, exact)
    sentence = next(r for r in s.rules if r.shotguns == 2)
    tests = {h.text: h for h in hand_tests(MODES["original"])}
    agree = seen = 0.0

    def visit(score, layer, visits, rolled):
        nonlocal agree, seen
        for i, v, r in zip(layer.tolist(), visits.tolist(), rolled.tolist()):
            if t.shotguns[i] != 2 or i == t.start:
                continue
            threshold = sentence.threshold_for(t.states[i].hand, tests)
            says_roll = threshold is None or score < threshold
            seen += v
            agree += v * (says_roll == r)

    decision_visits(solution, rolls, visit)
    assert abs(agree / seen - sentence.agreement) < 1e-12
    assert sentence.text.startswith("With 2 shotguns: stop once you have")


def test_region_chart_as_png_and_svg(content):
    panels, rows, totals = region_grid(table(content, "roll_regions"))
    assert len(panels) == 3 and rows[0] == "none" and totals == list(range(21))
    assert all(np.nanmin(p) >= 0 and np.nanmax(p) <= 1 for _, p in panels)
    small = [(name, grid[:3, :6]) for name, grid in panels]
    png = roll_stop_regions(small, rows[:3], totals[:6], "png")
    svg = roll_stop_regions(small, rows[:3], totals[:6], "svg")
    assert png.startswith(b"\x89PNG") and b"<svg" in svg
    assert svg == roll_stop_regions(small, rows[:3], totals[:6], "svg")  # reproducible bytes


def test_a_mode_too_large_says_which_sections_are_missing_and_why():
    data = build("direct-to-video-sequel", game=None, game_missing="no table")
    status = {s["id"]: (s["status"], s["reason"]) for s in data["sections"]}
    assert status["bust"] == ("ok", "")
    assert status["turn"][0] == status["policy"][0] == "missing" and "exact fractions" in status["turn"][1]
    assert status["game"] == status["rules"] == ("missing", "no table")
    assert [t["name"] for t in data["tables"]] == ["bust_odds"]


# -- building and storing --------------------------------------------------------------------------------------


def test_a_report_is_made_once_per_period_and_inputs(store_dir, content):
    period = "20200101-030000"
    first = reports.build_report.apply(("original", "before-draw", period)).get()
    second = reports.build_report.apply(("original", "before-draw", period)).get()
    assert first == {"id": first["id"], "made": True} and second == {"id": first["id"], "made": False}
    assert Store(store_dir).writes(reports.key_of(first["id"])) == 1
    assert reports.load(first["id"])["period"] == "2020-01-01T03:00:00Z"


# -- two beats, one worker, real Redis ---------------------------------------------------------------------------
def test_two_beats_make_one_report_per_period(store_dir, content, tmp_path):
    client = redis.Redis.from_url(REDIS_URL)
    client.ping()  # scripts/test starts Redis on loopback when it is not running
    client.flushdb()
    env = {**os.environ, "REDIS_URL": REDIS_URL, "ZOMBIE_ODDS_STORE": str(store_dir),
           "ZOMBIE_ODDS_REPORT_SCHEDULE": "3", "ZOMBIE_ODDS_REPORT_MODES": "original",
           "ZOMBIE_ODDS_REPORT_RULES": " ".join(RULES)}
    celery = [sys.executable, "-m", "celery", "-A", "workers"]
    before = {r["id"] for r in reports.reports("original")}
    procs = [subprocess.Popen([*celery, "worker", "--concurrency", "1", "--loglevel", "WARNING", "--without-gossip",
                               "--without-mingle", "--without-heartbeat"], env=env)]
    procs += [subprocess.Popen([*celery, "beat", "--loglevel", "WARNING", "-s", str(tmp_path / f"beat{n}"),
                                "--pidfile", str(tmp_path / f"beat{n}.pid")], env=env) for n in (1, 2)]
    try:
        deadline = time.time() + 150  # it ends as soon as three periods have their report
        while time.time() < deadline:
            assert all(p.poll() is None for p in procs), "a celery process died"
            made = [r for r in reports.reports("original") if r["id"] not in before]
            if len({r["period"] for r in made}) >= 3:
                break
            time.sleep(0.5)
    finally:
        for p in procs[1:]:
            p.terminate()
        for p in procs[1:]:
            p.wait(timeout=30)
        time.sleep(2)  # a build already taken finishes
        procs[0].terminate()
        procs[0].wait(timeout=60)
    made = [r for r in reports.reports("original") if r["id"] not in before]
    per_period = Counter(r["period"] for r in made)
    assert len(per_period) >= 3 and set(per_period.values()) == {1}, per_period
    store = Store(store_dir)
    assert all(store.writes(reports.key_of(r["id"])) == 1 for r in made)
    runs = Counter()  # the beats' runs per period: both beats fired, the duplicates made nothing
    for name in client.scan_iter("celery-task-meta-*"):
        meta = json.loads(client.get(name))
        if meta.get("name") == "workers.reports.scheduled_reports" and meta["status"] == "SUCCESS":
            runs[meta["result"]["period"]] += 1
    assert max(runs.values()) >= 2, runs
    client.flushdb()


def test_keys_of_reports_are_validated():
    assert reports.key_of("original--before-draw--p2--v1--20261129-030000-959562a34aaf") == Key(
        "report", "original", "before-draw", 2, "1", "20261129-030000-959562a34aaf")
    for bad in ("", "..", "original", "original--before-draw--p2--v1", "a--b--p2--v1--x--y", "../../etc--a--p2--v1--t"):
        assert reports.key_of(bad) is None


# -- every mode: exact turns, a memory budget, charts as files ------------------------------------------------
SANTA = "santa-claus-meets-the-zombies"


@pytest.mark.parametrize("mode", [SANTA, "big-summer-action-movie"])
def test_an_expansion_turn_section_is_exact(mode):
    """The turn section of an expansion, in exact fractions, on a small table: the turns from a position with
    two shotguns and most dice in the brain pile (a whole turn takes seconds to minutes: these are its pieces)."""
    from analysis.position import Position
    from analysis.report import _turn_section

    effects = ["helmet"] if mode == SANTA else []
    position = Position(mode=mode, brains=["green"] * 3 + ["yellow"], effects=effects, shotguns=["red", "red"],
                        footprints=["yellow"])
    exact = exact_turn(mode, "before-draw", ExpectedBrains(), position.state)
    assert not exact.solution.capped
    section_, (distribution,) = _turn_section(exact.solution, exact)
    value = Fraction(section_["facts"][0]["exact"])
    assert value == to_fraction(exact.roll(0, 0))  # sum k P(k) is the value of rolling
    assert all("exact" in fact for fact in section_["facts"])
    rows = distribution["rows"]
    assert sum(Fraction(e) for _, e, _ in rows) == 1 and all(p == float(Fraction(e)) for _, e, p in rows)
    assert abs(value - Fraction(float(exact.solution.roll[0, 0]))) < Fraction(1, 10**12)
    zero = next(f for f in section_["facts"] if f["label"] == "P(the turn scores 0)")
    assert Fraction(zero["exact"]) == Fraction(rows[0][1]) and rows[0][0] == 0


def test_a_mode_outside_the_budget_shows_what_is_cheap_and_says_why_the_rest_is_missing():
    """A stored two-player table is shown (its P(win) and heatmap), the sections that need the whole-turn
    table are listed as missing with the reason given. The table here is the base game's relabelled: this
    checks where sections go, not a Santa number."""
    from dataclasses import replace

    game = replace(solved_game("original"), mode=SANTA)
    data = build(SANTA, game=game, rules=RULES, solve_missing="over budget")
    status = {s["id"]: (s["status"], s["reason"]) for s in data["sections"]}
    assert status == {"turn": ("missing", "over budget"), "bust": ("ok", ""), "policy": ("missing", "over budget"),
                      "game": ("ok", ""), "rules": ("missing", "over budget")}
    assert [t["name"] for t in data["tables"]] == ["bust_odds", "p_win"]
    assert section(data, "game")["facts"][0]["value"] == game.p_first_player_wins


def test_the_latest_report_of_a_period_is_the_most_complete(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    where = Store(tmp_path)

    def put(period, solve, created, ok):
        inputs = reports.Inputs("original", "before-draw", period, None, RULES, solve=solve)
        sections = [{"status": "ok"}] * ok + [{"status": "missing"}] * (5 - ok)
        where.put(inputs.key, {"id": inputs.id, "created": created, "content": {"sections": sections}})
        return inputs.id

    put("20200101-030000", True, "2020-01-01T03:00:00+00:00", 5)  # an older period, however complete
    whole = put("20200102-030000", True, "2020-01-02T03:00:00+00:00", 5)
    light = put("20200102-030000", False, "2020-01-02T03:05:00+00:00", 1)  # made later, by a smaller worker
    assert whole != light
    assert reports.latest("original")["id"] == whole


def test_a_missing_table_is_started_or_said_to_be_impossible(monkeypatch):
    """What the game sections and the notes say when the two-player table is missing: its job was started,
    or the engine cannot compute that table (workers/tables.py refuses it), or this server does not try."""
    monkeypatch.setenv("ZOMBIE_ODDS_REPORT_SOLVE_MODES", f"original,{SANTA}")
    inputs = reports.Inputs(SANTA, "before-draw", "20200101-030000", None, RULES)

    def impossible(mode, variant):
        raise ValueError(f"no full-game table for {mode}: too large")

    monkeypatch.setattr(reports.tables, "submit", impossible)
    note, reason = reports._missing_table(inputs)
    assert reason == f"the two-player table of mode {SANTA} (before-draw) cannot be computed: no full-game table " \
                     f"for {SANTA}: too large"
    assert note.startswith("No two-player table") and "too large" in note
    started = reports.tables.TableJob("table-job", table_key(SANTA, "before-draw", 2), "queued", 0, 9)
    monkeypatch.setattr(reports.tables, "submit", lambda mode, variant: started)
    note, reason = reports._missing_table(inputs)
    assert "job table-job computes it (state: queued)" in note and "each report starts its job" in reason
    light = reports.Inputs(SANTA, "before-draw", "20200101-030000", None, RULES, solve=False)
    assert light.id != inputs.id and light.data_key != inputs.data_key
    monkeypatch.setattr(reports.tables, "submit", impossible)  # not called: this server does not solve it
    note, reason = reports._missing_table(light)
    assert "no job was started" in note and "ZOMBIE_ODDS_REPORT_SOLVE_MODES" in reason
