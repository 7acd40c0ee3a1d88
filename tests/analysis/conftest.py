"""Fixtures shared by the analysis test modules: the rooted tables of `roots.py`'s positions, the solved
two-player games (`tests.games.solved_game`: solved once per run, read from its store by every other process), and a
small game of three players."""

from __future__ import annotations

import pytest

from analysis.game import GameSolution, SeatsSolution, solve_seats
from analysis.table import bus_table_for, table_for

from ..games import solved_game
from .roots import BUS_ROOTS, ROOTS


@pytest.fixture(scope="module", params=list(ROOTS))
def rooted(request):
    p = ROOTS[request.param]
    return p, table_for(p.mode, p.recycle, p.state)


@pytest.fixture(scope="module", params=list(BUS_ROOTS))
def bus_rooted(request):
    """The table of the nodes each root reaches (`odds` uses the base game's whole table instead)."""
    p = BUS_ROOTS[request.param]
    return p, bus_table_for(p.mode, p.recycle, p.bus_state), p.bus_state


@pytest.fixture(scope="module")
def game() -> GameSolution:
    return solved_game("original", "before-draw")


@pytest.fixture(scope="module")
def neller_game() -> GameSolution:
    return solved_game("original", "draw-then-recycle")


DF = "big-summer-action-movie"  # tests/api/test_tables.py serves the same solution


@pytest.fixture(scope="module")
def df_game() -> GameSolution:
    return solved_game(DF)


@pytest.fixture(scope="session")
def three() -> SeatsSolution:
    """Three players to 5 brains, cap 14: every kind of start of a turn of exact play in seconds, not minutes
    (tests/analysis/game/test_seats.py, test_many.py)."""
    return solve_seats(3, goal=5, cap=14)
