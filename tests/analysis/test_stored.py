"""analysis/stored.py: which stored solutions there are (every mode, variant and School Bus or not, a mode added to
the modes included), the memory a build takes, and a solution built and read back from its arrays, whichever kind of
turn it is, answering as the solvers do."""

from __future__ import annotations

import json

import pytest

from analysis import MODES, ExpectedBrains, Mode, Position, answer_from, odds
from analysis.bus_solutions import StoredBusTurn
from analysis.policy import bus_solve
from analysis.position import RECYCLE_VARIANTS
from analysis.solutions import StoredTurn
from analysis.stored import build, build_memory, combinations, open_turn
from workers import solutions


def test_every_combination_is_stored_once_the_base_game_first_the_bus_after_every_mode() -> None:
    stored = combinations()
    assert len(stored) == len(set(stored)) == len(MODES) * len(RECYCLE_VARIANTS) * 2
    assert set(stored) == {(m, r, b) for m in MODES for r in RECYCLE_VARIANTS for b in (False, True)}
    assert stored[0] == ("original", "before-draw", False)
    first_bus = [b for _, _, b in stored].index(True)
    assert not any(b for _, _, b in stored[:first_bus]) and all(b for _, _, b in stored[first_bus:])


def test_a_mode_added_to_the_modes_is_stored_like_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(MODES, "mini", Mode("mini", "Zombie Dice for the impatient", (("green", 3), ("red", 2))))
    assert {("mini", r, b) for r in RECYCLE_VARIANTS for b in (False, True)} <= set(combinations())


def test_the_memory_of_a_build_is_its_measured_bound() -> None:
    assert build_memory("direct-to-video-sequel", True) == 6 * 2**30  # the largest: the sequel's bus turn
    assert {build_memory(m, b) for m, _, b in combinations() if (m, b) != ("direct-to-video-sequel", True)} == {
        5 * 2**29}


def test_a_plain_turn_built_and_read_back_answers_within_its_bound() -> None:
    meta, arrays = build("original", "before-draw", False)
    assert json.loads(json.dumps(meta)) == meta and not meta.get("school_bus")
    turn = open_turn(meta, arrays)
    assert isinstance(turn, StoredTurn) and turn.index(Position().state) == 0
    assert abs(turn.roll(0, 0) - 2.2591498606035167) <= turn.within  # the optimal turn's value (policy.py's test)
    position = Position(footprints=("green",), brains=("green", "yellow"), shotguns=("red",))
    floats, exact = answer_from(position, turn), odds(position)
    assert floats.decision.action in (exact.decision.action, "tie")
    assert abs(floats.decision.roll - float(exact.decision.roll)) <= turn.within


def test_a_bus_turn_is_read_back_as_one() -> None:
    """The run's stored School Bus solution of the base game (tests/conftest.py builds it), read again from its
    arrays: the same answers, its turn start the float solver's value."""
    stored = solutions.load("original", "before-draw", True)
    turn = open_turn(stored.meta, stored.arrays)
    assert isinstance(turn, StoredBusTurn)
    assert turn.action_values(0, 0) == stored.action_values(0, 0) and set(turn.action_values(0, 0)) == {"roll"}
    start = bus_solve("original", "before-draw", ExpectedBrains()).root_values[0]
    assert abs(turn.action_values(0, 0)["roll"] - start) <= turn.within
