"""analysis/game/units.py: any table's solve as plain-data units; which tables are computed exactly.

More than two players are checked on a small game (5 brains to win, cap 14: `GOAL` and `CAP` of the module set for
the test), whose units go through JSON as a job's messages and durable record do."""

from __future__ import annotations

import json

import pytest

from analysis import MODES
from analysis.game import units
from analysis.game.seats import Normal, decode, solve_seats, spot_dict


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(units, "GOAL", 5)
    monkeypatch.setattr(units, "CAP", 14)


def through_json(value: dict) -> dict:
    return json.loads(json.dumps(value))


def test_three_players_in_units_are_the_solve_bit_for_bit(small: None) -> None:
    known, results = units.Known(3), []
    for layer in units.layers("original", "before-draw", 3, split=2):
        solved = [through_json(units.solve(through_json(unit), known)) for unit in reversed(layer)]
        for result in solved:
            known.add(result)
        results += solved
    solution = units.assemble("original", "before-draw", known)
    expected = solve_seats(3, goal=5, cap=14)
    assert solution.values.keys() == expected.values.keys()
    assert all((solution.values[s] == v).all() for s, v in expected.values.items())
    assert solution.to_dict() == through_json(expected.to_dict())
    assert units.solution_from(through_json(solution.to_dict())).to_dict() == solution.to_dict()
    assert 0 < solution.cap_error < 0.01 and solution.p_first_player_wins == solution.p_seat_wins[0]
    assert sum(solution.p_seat_wins) == pytest.approx(1, abs=1e-12)
    spots = [spot for result in results for spot in result["spots"]]  # (a tie-break round's passes give some again)
    assert len(decode({"spots": spots})) == len(solution.values) < len(spots)
    start = next(k for k, spot in enumerate(spots) if spot.items() >= spot_dict(Normal((0, 0, 0), 0)).items())
    final = next(k for k, spot in enumerate(spots) if "leads" in spot)
    for lost in (final, start):  # a unit's values lost (the game's start's among them): no table
        partial = units.Known(3)
        partial.add({"spots": spots[:lost] + spots[lost + 1:]})
        with pytest.raises(ValueError, match="missing"):
            units.assemble("original", "before-draw", partial)


def test_two_players_in_units_are_solution_py_s(small: None) -> None:
    """Two players go through solution.py's units (whatever `GOAL` says: the two-player table is always to 13)."""
    layers = units.layers("original", "before-draw", 2, split=2)
    assert len(layers) == 26 and {unit["players"] for layer in layers for unit in layer} == {2}


@pytest.mark.parametrize(("mode", "players", "computed"), [
    ("original", 2, True), ("direct-to-video-sequel", 2, True), ("original", 3, True),
    ("original", 4, True), ("original", 5, False), ("santa-claus-meets-the-zombies", 3, True),
    ("direct-to-video-sequel", 4, False), ("checkers", 2, False), ("checkers", 3, False)])
def test_which_tables_are_computed(mode: str, players: int, computed: bool) -> None:
    reason = units.no_table_reason(mode, players)
    assert (reason is None) == computed, reason
    if not computed:
        assert (mode in reason) and (str(players) in reason or "no such mode" in reason)


def test_a_table_job_takes_its_measured_time_and_a_mode_not_measured_the_longest() -> None:
    """What a client waiting for a table is told (api/tables.py scales it by the job's steps left)."""
    assert units.job_seconds("original", 2) < units.job_seconds("santa-claus-meets-the-zombies", 2)
    assert units.job_seconds("original", 3) < units.job_seconds("big-summer-action-movie", 3)
    assert units.job_seconds("checkers", 3) == max(units.JOB_SECONDS[3].values())
    assert all(mode in units.JOB_SECONDS[p] for mode in MODES for p in units.exact_players(mode))
