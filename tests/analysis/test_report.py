"""analysis/report.py: a scheduled report's content as plain data: the common positions of the bust table, a report
whose sections cannot be computed saying why, the visits of the forward pass against the solver's value and the exact
distribution, the hand tests of the policy summary, and the roll/stop regions as chart panels; the base game's
content (exact turns, the bust table, the game and rules sections, the policy summary, charts) and the expansions'
turn sections."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest

from analysis import MODES, Position, next_roll, odds
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

from ..games import solved_game
from ..workers.reporting import GROUP, RULES, base_game_content

pytestmark = pytest.mark.xdist_group(GROUP)  # the base game's content, built once with the report modules'


@pytest.fixture(scope="module")
def content(warm: None) -> dict:
    return base_game_content()


def test_the_bust_table_covers_every_hand_by_zero_to_two_shotguns() -> None:
    """Hands of 0-3 footprint dice of the base colours (a Double Feature mode has two yellow dice), each with 0-2
    shotguns set aside, reddest first, and green brains enough for the first roll's dice to be out of the cup."""
    rows = bust_positions("original")
    assert len(rows) == (1 + 3 + 6 + 10) * 3 and len({(h, k) for h, k, _ in rows}) == len(rows)
    positions = {(hand, k): p for hand, k, p in rows}
    assert positions[((), 0)] == Position()
    assert positions[(("green",), 1)] == Position(footprints=("green",), brains=("green",), shotguns=("red",))
    assert positions[(("red", "red", "red"), 2)].shotguns == ("yellow", "yellow")
    assert all(p.footprints == hand and len(p.shotguns) == k and not p.banked for hand, k, p in rows)
    assert all(p.turn_start or len(p.footprints) + len(p.brains) + len(p.shotguns) >= 3 for p in positions.values())
    assert len(bust_positions("big-summer-action-movie")) == 19 * 3  # no hand of three yellow dice
    assert all(p.recycle == "draw-then-recycle" for _, _, p in bust_positions("original", "draw-then-recycle"))


def test_a_report_without_its_solves_says_why_and_keeps_the_bust_odds() -> None:
    report = build("original", solve_missing="the worker's memory budget")
    sections = {s["id"]: s for s in report["sections"]}
    assert [s["id"] for s in report["sections"]] == ["turn", "bust", "policy", "game", "rules"]
    assert {k: s["status"] for k, s in sections.items()} == {"turn": "missing", "bust": "ok", "policy": "missing",
                                                             "game": "missing", "rules": "missing"}
    assert sections["turn"]["reason"] == sections["policy"]["reason"] == "the worker's memory budget"
    assert "two-player table" in sections["game"]["reason"]
    (bust,) = report["tables"]
    assert bust["name"] == "bust_odds" and len(bust["rows"]) == 60 and bust["pivot"]["value"] == "bust"
    assert bust["rows"][0] == ["none", 0, "none", "none", "94/3861", 94 / 3861]  # ANCHORS.md
    for (_, _, position), row in zip(bust_positions("original"), bust["rows"]):
        assert row[-1] == float(next_roll(position).bust)
    assert report["rules"] and report["format"] == "zombie-odds/report/1" and report["title"] == MODES["original"].title


def test_a_report_refuses_an_unknown_mode_or_rule_before_any_work() -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        build("chess")
    with pytest.raises(ValueError):
        build("original", rules=("stop-at:3", "hold:20"))


def test_the_visits_of_the_optimal_policy_end_every_turn_once() -> None:
    """The forward pass of the optimal turn: the mass that stops plus the mass that busts is one turn, the scores it
    stops with average the solver's value of the turn (2.2591...), and the mass that busts is the exact P(score 0)."""
    solution = solve("original", "before-draw", ExpectedBrains())
    rolls = optimal_decisions(solution, None)
    assert rolls[:, solution.table.start].all()  # the first roll is compulsory
    stopped, busted, scored = [], [], []
    bust = solution.table.bust_f

    def visit(score: int, layer: np.ndarray, visits: np.ndarray, rolled: np.ndarray) -> None:
        stopped.append(visits[~rolled].sum())
        busted.append((visits[rolled] * bust[layer[rolled]]).sum())
        scored.append(score * visits[~rolled].sum())

    decision_visits(solution, rolls, visit)
    assert math.fsum(stopped) + math.fsum(busted) == pytest.approx(1, abs=1e-12)
    assert math.fsum(scored) == pytest.approx(2.2591498606035167, abs=1e-12)
    assert math.fsum(busted) == pytest.approx(float(odds(Position()).score_distribution[0]), abs=1e-12)


def test_hand_tests_are_what_a_player_sees_at_a_glance() -> None:
    tests = {t.text: t.test for t in hand_tests(MODES["original"])}
    assert len(tests) == 1 + 2 * 3 + 1
    assert tests["no footprint in hand"]((0, 0, 0)) and not tests["no footprint in hand"]((0, 1, 0))
    assert tests["a red footprint in hand"]((0, 0, 1)) and not tests["2+ red footprints in hand"]((1, 0, 1))
    assert tests["2+ yellow footprints in hand"]((0, 2, 1))
    only_green = tests["only green footprints in hand"]
    assert only_green((2, 0, 0)) and not only_green((1, 1, 0)) and not only_green((0, 0, 0))


def test_the_regions_become_panels_of_the_most_visited_hands() -> None:
    columns = ["shotguns", "footprints", "turn_total", "roll_share", "visit_share"]
    rows = [[0, "none", 0, 1.0, 0.30], [0, "green", 3, 0.5, 0.10], [0, "red", 1, 0.25, 0.05],
            [1, "green", 2, 0.0, 0.15], [1, "yellow", 4, 0.75, 0.01]]
    panels, hands, totals = region_grid({"columns": columns, "rows": rows}, max_rows=3)
    assert hands == ["none", "green", "red"]  # by visits over every number of shotguns; "yellow" left out
    assert totals == list(range(21)) and [title for title, _ in panels] == ["0 shotguns", "1 shotgun"]
    zero, one = panels[0][1], panels[1][1]
    assert zero.shape == one.shape == (3, 21)
    assert (zero[0, 0], zero[1, 3], zero[2, 1], one[1, 2]) == (1.0, 0.5, 0.25, 0.0)
    assert np.isnan(zero).sum() == 3 * 21 - 3 and np.isnan(one).sum() == 3 * 21 - 1


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


# -- every mode: exact turns, a memory budget, charts as files ------------------------------------------------
SANTA = "santa-claus-meets-the-zombies"


@pytest.mark.parametrize("mode", [SANTA, "big-summer-action-movie"])
def test_an_expansion_turn_section_is_exact(mode):
    """The turn section of an expansion, in exact fractions, on a small table: the turns from a position with
    two shotguns and most dice in the brain pile (a whole turn takes seconds to minutes: these are its pieces)."""
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
    game = replace(solved_game("original"), mode=SANTA)
    data = build(SANTA, game=game, rules=RULES, solve_missing="over budget")
    status = {s["id"]: (s["status"], s["reason"]) for s in data["sections"]}
    assert status == {"turn": ("missing", "over budget"), "bust": ("ok", ""), "policy": ("missing", "over budget"),
                      "game": ("ok", ""), "rules": ("missing", "over budget")}
    assert [t["name"] for t in data["tables"]] == ["bust_odds", "p_win"]
    assert section(data, "game")["facts"][0]["value"] == game.p_first_player_wins
