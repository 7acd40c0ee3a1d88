"""analysis/simulate.py: Monte Carlo (physical dice) against the exact engine, within 4 sigma, in every mode and with
the School Bus (the simulator is written again from the rules' text).

Seeded, so the checks are repeatable; sample sizes give a standard error well below the effects
a wrong rule would cause (a wrong recycle variant, a missed self-loop, a wrong face table).
"""

import random

import pytest

from analysis import Position, odds
from analysis.simulate import Turn, play_turn, roll_once

from ..montecarlo import N, assert_next_roll_matches, assert_turn_matches, bus_turns, solved_policy, within_4_sigma
from .roots import BUS_ROOTS, ROOTS, bus

BSAM, SANTA, DTV = "big-summer-action-movie", "santa-claus-meets-the-zombies", "direct-to-video-sequel"

POSITIONS = [
    Position(),
    Position(footprints=["green", "red"], brains=["green"], shotguns=["red"]),
    Position(footprints=["red"], brains=["green"] * 6 + ["yellow"] * 4, shotguns=["red"]),
    Position(footprints=["red"], brains=["green"] * 6 + ["yellow"] * 4, shotguns=["red"], recycle="draw-then-recycle"),
    Position(brains=["green"] * 6 + ["yellow"] * 3 + ["red"] * 2, shotguns=["yellow", "red"], banked=11),
    Position(brains=["green"] * 6 + ["yellow"] * 3 + ["red"] * 2, shotguns=["yellow", "red"], banked=11,
             recycle="draw-then-recycle"),
    Position(footprints=["yellow"] * 3, shotguns=["green"]),
]


@pytest.mark.parametrize("position", POSITIONS, ids=range(len(POSITIONS)))
def test_next_roll(position):
    assert_next_roll_matches(position, seed=20101)


@pytest.mark.parametrize("objective", ["expected-brains", "reach:4", "rule:5,2"])
@pytest.mark.parametrize("position", [POSITIONS[1], POSITIONS[4], POSITIONS[5], POSITIONS[6]], ids=range(4))
def test_turn_score_distribution(position, objective):
    assert_turn_matches(position, objective, seed=1302, scores_to_check=(0, 1, 3, position.score + 2))


def test_optimal_turn_from_the_start():
    o = odds(Position())
    rng = random.Random(7)
    scores = [play_turn(Position(), solved_policy(Position(), "expected-brains"), rng) for _ in range(N // 2)]
    assert within_4_sigma(scores, float(o.decision.roll))
    assert within_4_sigma([float(s == 0) for s in scores], float(o.score_distribution[0]))


# -- Double Feature, written again from the rules --------------------------------------------------------------------
MC_POSITIONS = [
    Position(mode=BSAM),
    Position(mode=SANTA),
    Position(mode=DTV),
    Position(mode=DTV, recycle="draw-then-recycle"),
    Position(mode=BSAM, footprints=["hunk", "hottie", "red"]),
    Position(mode=BSAM, footprints=["hottie", "green"], brains=["hunk", "yellow"], double_brains=["hunk"],
             shotguns=["red"]),
    Position(mode=SANTA, footprints=["santa", "green", "green"]),
    Position(mode=SANTA, footprints=["santa", "red", "yellow"], shotguns=["red", "red"], brains=["green"]),
    Position(mode=SANTA, brains=["santa"] + ["green"] * 5 + ["yellow"] * 4, shotguns=["red"], double_brains=["santa"]),
    Position(mode=SANTA, brains=["santa"] + ["green"] * 5 + ["yellow"] * 4, shotguns=["red"],
             recycle="draw-then-recycle"),
    Position(mode=SANTA, footprints=["red"], brains=["green", "green"], effects=["energy-drink"]),
    Position(mode=DTV, footprints=["santa", "green"], brains=["hunk", "hottie"], double_brains=["hunk"],
             shotguns=["red"]),
    Position(mode=DTV, footprints=["hunk", "green", "green"], brains=["santa", "hottie"], double_brains=["santa"]),
    Position(mode=DTV, brains=["green"] * 5 + ["yellow"] * 2 + ["red", "santa"], shotguns=["hottie", "red"],
             kept_out=[], footprints=[]),
]


@pytest.mark.parametrize("position", MC_POSITIONS, ids=range(len(MC_POSITIONS)))
def test_double_feature_next_roll_against_physical_dice(position):
    assert_next_roll_matches(position, seed=20102)


@pytest.mark.parametrize("objective", ["expected-brains", "reach:6"])
@pytest.mark.parametrize("mode", list(ROOTS))
def test_double_feature_turn_score_distribution(mode, objective):
    position = ROOTS[mode]
    assert_turn_matches(position, objective, seed=1303, rooted=True,
                        scores_to_check=(0, position.score, position.score + 1, position.score + 2))


# -- School Bus, written again from the rules ------------------------------------------------------------------------
MC_ROLLS = [
    (bus(footprints=["green", "red"], brains=["yellow"]), "board"),
    (bus(footprints=["green", "red"], brains=["yellow"]), "roll"),
    (bus(footprints=["green"], brains=["yellow"], riding=True, bus_brains=2, bus_shotguns=1), "stay"),
    (bus(footprints=["green"], brains=["yellow"], riding=True, bus_brains=2, bus_shotguns=1), "get-off"),
    (bus(footprints=["red"], brains=["green"] * 6 + ["yellow"] * 4, shotguns=["red"], riding=True), "stay"),
    (bus(footprints=["red"], brains=["green"] * 6 + ["yellow"] * 3, shotguns=["red"], recycle="draw-then-recycle"),
     "board"),
    (bus(mode=BSAM, footprints=["hottie"], brains=["yellow", "hunk"], double_brains=["hunk"], shotguns=["red"],
         riding=True), "stay"),
    (bus(mode=BSAM, footprints=["green", "hottie"], brains=["yellow", "hunk"], double_brains=["hunk"],
         shotguns=["red"]), "board"),
    (bus(mode=SANTA, footprints=["santa", "green"], brains=["yellow"], shotguns=["red"]), "board"),
    (bus(mode=SANTA, footprints=["green"], brains=["red"], shotguns=["yellow"], effects=["helmet"], riding=True,
         bus_shotguns=2), "stay"),
    (bus(mode=DTV, footprints=["santa"], brains=["hunk", "hottie"], double_brains=["hunk"], shotguns=["red"],
         riding=True), "stay"),
    (bus(mode=DTV, footprints=["santa", "hottie"], brains=["hunk", "green"], double_brains=["hunk"], shotguns=["red"],
         bus_shotguns=1, riding=True), "get-off"),
]


@pytest.mark.parametrize(("position", "action"), MC_ROLLS, ids=range(len(MC_ROLLS)))
def test_bus_next_roll_against_physical_dice(position, action):
    assert_next_roll_matches(position, seed=3003, n=N // 2, action=action)


@pytest.mark.parametrize(("mode", "objective"), [(m, "expected-brains") for m in BUS_ROOTS] + [
    (BSAM, "rule:6,3"), (SANTA, "reach:7")])
def test_bus_turn_score_distribution(mode, objective):
    """Whole turns with the solved policy (boarding, staying, getting off, the brain given up) on physical
    dice, against the exact value and score distribution."""
    assert_turns_match(BUS_ROOTS[mode], objective)


def test_santa_three_shotguns_from_a_bust_against_physical_dice():
    """The earliest Santa bus position the API answers (room 2: a shotgun token taken, his helmet still possible;
    no rescue, so no cycle): riding, with stay and get-off to choose from."""
    assert_turns_match(bus(mode=SANTA, riding=True, bus_shotguns=1, footprints=["green"], brains=["green", "yellow"]),
                       "expected-brains")


def test_the_sequel_with_rescues_against_physical_dice():
    """The sequel with the bus two shotguns in (YIELD's rescues make cycles through lower scores), solved exactly
    without its score distribution: stopping is best, and turns that board and then follow its policy on physical
    dice average the exact value of boarding (the whole sequel bus turn in floats: tests/analysis/test_budgets.py)."""
    position = bus(mode=DTV, footprints=["green"], brains=["green", "green"], shotguns=["red", "red"])
    o = odds(position, distribution=False)
    assert o.score_distribution is None and o.decision.action == "stop" and o.decision.roll_action == "board"
    assert within_4_sigma(bus_turns(position, "expected-brains", 78, "board"), float(o.decision.roll))


def assert_turns_match(position: Position, objective: str) -> None:
    o = odds(position, objective)
    scores = bus_turns(position, objective, 77, o.decision.roll_action)
    if objective.startswith("reach:"):
        assert within_4_sigma([float(s >= 7) for s in scores], float(o.decision.roll))
    else:
        assert within_4_sigma(scores, float(o.decision.roll))
    if objective.startswith("rule:"):  # the rule stops at 6 brains (or a STOP ends the turn before)
        assert max(scores) >= 6 and o.decision.action != "stop"
    for k in (0, position.score, position.score + 1, position.score + 2, position.score + 3):
        assert within_4_sigma([float(s == k) for s in scores], float(o.score_distribution.get(k, 0))), k


def test_simulator_refuses_illegal_actions():
    turn = Turn.at(bus(footprints=["green"] * 3))
    with pytest.raises(ValueError):
        roll_once(turn, random.Random(1), "board")
    with pytest.raises(ValueError):
        roll_once(Turn.at(bus()), random.Random(1), "board")
