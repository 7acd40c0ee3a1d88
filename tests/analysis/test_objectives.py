"""analysis/objectives.py: each objective's stop values, forced stops and levels, and its parsing."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.objectives import MAX_REACH, ExpectedBrains, FixedRule, Reach, parse_objective


def test_parse_objective_and_names_round_trip() -> None:
    assert parse_objective("expected-brains") == ExpectedBrains()
    assert parse_objective("reach:13") == Reach(13)
    assert parse_objective("rule:5,2") == FixedRule(5, 2)
    for objective in (ExpectedBrains(), Reach(1), Reach(MAX_REACH), FixedRule(100, 3)):
        assert parse_objective(objective.name) == objective
    for bad in ("reach:0", f"reach:{MAX_REACH + 1}", "rule:0,2", "rule:5,4", "max", "reach:x", ""):
        with pytest.raises(ValueError):
            parse_objective(bad)


def test_stop_values_are_integers_of_a_score_or_of_many() -> None:
    scores = np.arange(8)
    assert ExpectedBrains().stop_value(5) == 5 and FixedRule(4, 2).stop_value(5) == 5
    assert [Reach(3).stop_value(s) for s in range(5)] == [0, 0, 0, 1, 1]
    assert all(type(o.stop_value(4)) is int for o in (ExpectedBrains(), Reach(3), FixedRule(4, 2)))
    assert (Reach(3).stop_value(scores) == (scores >= 3)).all()


def test_only_a_fixed_rule_forces_and_never_chooses() -> None:
    assert not ExpectedBrains().forces and not Reach(5).forces and FixedRule(4, 2).forces
    assert not ExpectedBrains().forced(np.arange(20), 2).any() and not Reach(5).forced(5, np.arange(4)).any()
    rule = FixedRule(4, 2)
    assert not rule.chooses and ExpectedBrains().chooses and Reach(3).chooses
    forced = rule.forced(np.arange(6)[:, None], np.array([0, 1, 2])[None, :])
    assert forced.shape == (6, 3)
    assert (forced == ((np.arange(6)[:, None] >= 4) | (np.array([0, 1, 2])[None, :] >= 2))).all()


def test_levels_and_targets() -> None:
    """A target sets the levels solved (below it); expected brains leaves them to the table's bound."""
    assert ExpectedBrains().top is None and ExpectedBrains().above(7) == 0
    assert Reach(13).top == 12 and Reach(13).above(5) == 8
    assert FixedRule(6, 2).top == 5 and FixedRule(6, 2).above(2) == 4
    q, m = np.array([0.5, 0.25]), np.array([1.0, 2.0])
    assert (ExpectedBrains().roll_where_all_stop(q, m, 4) == (1 - q) * 4 + m).all()
    assert (Reach(13).roll_where_all_stop(q, m, 13) == 1 - q).all()


def test_win_is_answered_by_the_analysis_like_the_others() -> None:
    """`odds` with `Win` reads the decision from the game's table: P(win) of rolling and of stopping, the next roll
    exact, no score distribution."""
    from analysis import Position, Win, next_roll, odds
    from analysis.game.advice import check_scores, win_advice

    from ..games import solved_game

    table = solved_game("original")
    position = Position(footprints=("green",), brains=("green", "yellow"), shotguns=("red",))
    scores = check_scores([10, 12], 1)
    o = odds(position, Win(scores, table))
    advice = win_advice(table, position, scores)
    assert (o.decision.action, o.decision.roll, o.decision.stop) == (advice.action, advice.roll, advice.stop)
    assert o.decision.objective.name == "win" and o.win == advice and o.score_distribution is None
    assert o.next_roll == next_roll(position)
    assert 0 < advice.stop < 1 and advice.cost == abs(advice.roll - advice.stop)
