"""analysis/odds.py: the whole answer for a position (the decision with every action's value, the next roll, the turn's
score distribution) for each objective, in every mode and with the School Bus, the base game's bus turn from its start
included (tests/conftest.py names the group that solves it); a turn start too large to solve is refused."""

from fractions import Fraction

import pytest

from analysis import ExpectedBrains, Position, legal_actions, next_roll, odds
from analysis.policy import bus_solve

from ..montecarlo import bus_turns, within_4_sigma
from .roots import BUS_ROOTS, bus

pytestmark = pytest.mark.xdist_group("bus-turn-start")  # (tests/conftest.py)

ORIGINAL, BSAM, SANTA, DTV = "original", "big-summer-action-movie", "santa-claus-meets-the-zombies", \
    "direct-to-video-sequel"
OPTIMAL = ExpectedBrains()


def test_reach_values_fall_with_the_target():
    values = [odds(Position(), f"reach:{k}").decision.roll for k in range(1, 9)]
    assert all(a > b > 0 for a, b in zip(values, values[1:]))
    assert values[0] == 1 - odds(Position(), "reach:1").score_distribution[0]


def test_rule_decisions_follow_the_rule():
    p = Position(brains=["green"] * 5, footprints=["red"], shotguns=["yellow"])
    assert odds(p, "rule:5,3").decision.action == "stop"
    assert odds(p, "rule:6,3").decision.action == "roll"
    assert odds(p, "rule:6,1").decision.action == "stop"


def test_far_targets_are_tiny_but_positive():
    """Reaching 40 from 28 brains and two shotguns needs 12 more brains without one more shotgun."""
    p = Position(brains=["green"] * 6 + ["yellow"] * 2, shotguns=["red", "red"], footprints=["yellow"], banked=20)
    o = odds(p, "reach:40")
    assert o.decision.action == "roll" and 0 < o.decision.roll < Fraction(1, 1000)
    assert o.score_distribution[0] == 1 - o.decision.roll


# -- Double Feature --------------------------------------------------------------------------------------------------
def test_odds_of_each_mode_are_consistent(rooted):
    p, _ = rooted
    for objective in ("expected-brains", "reach:8", "rule:6,2"):
        o = odds(p, objective)
        assert sum(o.score_distribution.values()) == 1
        assert set(o.decision.actions) == {"roll", "stop"} and o.decision.actions["roll"] == o.decision.roll
        if objective == "reach:8":
            assert sum(v for k, v in o.score_distribution.items() if k >= 8) == o.decision.roll
        else:
            assert sum(k * v for k, v in o.score_distribution.items()) == o.decision.roll


def test_the_sequel_turn_start_is_refused_cleanly():
    from analysis.odds import TurnStartTooLarge

    with pytest.raises(TurnStartTooLarge):
        odds(Position(mode=DTV))
    assert next_roll(Position(mode=DTV)).bust > 0


# -- School Bus ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("mode", "objective"), [(ORIGINAL, "expected-brains"), (SANTA, "expected-brains"),
                                                 (BSAM, "expected-brains"), (BSAM, "reach:7"), (BSAM, "rule:6,3")])
def test_odds_are_consistent(mode, objective):
    p = BUS_ROOTS[mode]
    o = odds(p, objective)
    assert set(o.decision.actions) == set(legal_actions(p.game_mode, p.bus_state))
    assert o.decision.roll == o.decision.actions[o.decision.roll_action] == max(
        v for a, v in o.decision.actions.items() if a != "stop")
    assert sum(o.score_distribution.values()) == 1
    if objective.startswith("reach"):
        assert sum(v for k, v in o.score_distribution.items() if k >= 7) == o.decision.roll
    else:
        assert sum(k * v for k, v in o.score_distribution.items()) == o.decision.roll
    assert set(o.next_rolls) == set(o.decision.actions) - {"stop"}
    rule = objective.startswith("rule")  # (below 6 brains the rule rolls on, whatever stopping is worth)
    best = max(v for a, v in o.decision.actions.items() if not (rule and a == "stop"))
    assert o.decision.action == "tie" or o.decision.actions[o.decision.action] == best
    for g in o.give_up:
        assert g.choices[g.choice] == max(g.choices.values())


def test_the_whole_turn_from_its_start():
    """The base game's bus turn from its start, exactly (its score distribution flows as residues; ~40 s of
    CPU): the first roll is compulsory (boarding waits for the second), the value is the float solver's,
    and whole turns played on physical dice agree with the value and the distribution."""
    start = bus()
    o = odds(start)
    assert o.decision.action == "roll" and set(o.decision.actions) == {"roll"} and not o.give_up
    assert float(o.decision.roll) == pytest.approx(bus_solve(ORIGINAL, "before-draw", OPTIMAL).root_values[0],
                                                   abs=1e-12)
    assert sum(o.score_distribution.values()) == 1
    assert sum(k * v for k, v in o.score_distribution.items()) == o.decision.roll
    scores = bus_turns(start, "expected-brains", 78)
    assert within_4_sigma(scores, float(o.decision.roll))
    for k in (0, 1, 2, 3, 4, 6, 9):
        assert within_4_sigma([float(s == k) for s in scores], float(o.score_distribution.get(k, 0))), k
