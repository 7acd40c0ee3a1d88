"""analysis/report.py: a scheduled report's content as plain data: the common positions of the bust table, a report
whose sections cannot be computed saying why, the visits of the forward pass against the solver's value and the exact
distribution, the hand tests of the policy summary, and the roll/stop regions as chart panels."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis import MODES, Position, next_roll, odds
from analysis.objectives import ExpectedBrains
from analysis.policy import solve
from analysis.report import build, bust_positions, decision_visits, hand_tests, optimal_decisions, region_grid


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
