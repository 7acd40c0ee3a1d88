"""Zombie Dice 2: Double Feature (RULES.md section 2): dice data, positions, every special rule alone,
the solvers over rooted tables, and the Monte Carlo simulator (written again from the rules' text)."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings

from analysis import MODES, Position, PositionError, next_roll, odds
from analysis.dice import BRAIN, DICE, DOUBLE_BRAIN, DOUBLE_SHOTGUN, ENERGY_DRINK, FOOTPRINTS, GIFT, HELMET, SHOTGUN
from analysis.exact import exact_turn, to_fraction
from analysis.objectives import ExpectedBrains
from analysis.policy import solve, stop_bound
from analysis.position import DiceState
from analysis.roll import _special_transitions, convert, recycled, rescue, set_aside, settle, transitions
from analysis.table import table_for

from .montecarlo import assert_next_roll_matches, assert_turn_matches
from .strategies import reachable_positions

BSAM, SANTA, DTV = "big-summer-action-movie", "santa-claus-meets-the-zombies", "direct-to-video-sequel"
OPTIMAL = ExpectedBrains()


# -- dice and modes ------------------------------------------------------------------------------
def test_special_dice_faces():
    hunk, hottie, santa = DICE["hunk"], DICE["hottie"], DICE["santa"]
    assert hunk.face_probabilities == {FOOTPRINTS: Fraction(2, 6), SHOTGUN: Fraction(2, 6),
                                       DOUBLE_SHOTGUN: Fraction(1, 6), DOUBLE_BRAIN: Fraction(1, 6)}
    assert hottie.face_probabilities == {FOOTPRINTS: Fraction(3, 6), SHOTGUN: Fraction(2, 6), BRAIN: Fraction(1, 6)}
    assert set(santa.faces) == {BRAIN, SHOTGUN, FOOTPRINTS, GIFT, ENERGY_DRINK, HELMET}
    assert santa.stays_out and not hunk.stays_out


@pytest.mark.parametrize(("mode", "cup"), [
    ("original", {"green": 6, "yellow": 4, "red": 3}),
    (BSAM, {"green": 6, "yellow": 2, "red": 3, "hunk": 1, "hottie": 1}),
    (SANTA, {"green": 5, "yellow": 4, "red": 3, "santa": 1}),
    (DTV, {"green": 5, "yellow": 2, "red": 3, "hunk": 1, "hottie": 1, "santa": 1}),
])
def test_mode_cups(mode, cup):
    assert dict(MODES[mode].cup) == cup and MODES[mode].total_dice == 13
    assert MODES[mode].plain == (mode == "original")
    assert Position(mode=mode).cup == cup


# -- positions -----------------------------------------------------------------------------------
def test_double_feature_position_fields():
    p = Position(mode=DTV, footprints=["hottie"], brains=["santa", "hunk", "green"], double_brains=["hunk", "santa"],
                 shotguns=["red"], effects=[], kept_out=[])
    assert p.score == 5 and not p.turn_start
    q = Position(mode=SANTA, footprints=["red"], brains=["yellow"], shotguns=["red", "red", "yellow"],
                 effects=["helmet"])
    assert q.cup == {"green": 5, "yellow": 2, "red": 0, "santa": 0}
    assert q.state.bust_at(q.game_mode) == 4
    r = Position(mode=BSAM, footprints=["green"], brains=["green"], shotguns=["hunk"], double_shotguns=["hunk"])
    assert r.state.shotgun_count == 2
    assert Position.from_state(p.game_mode, p.state) == p


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"mode": BSAM, "effects": ["helmet"]}, "effects[0]", "no die of mode big-summer-action-movie"),
        ({"mode": "original", "effects": ["energy-drink"]}, "effects[0]", "no die"),
        ({"mode": BSAM, "brains": ["hunk", "hunk", "green"]}, "brains", "2 hunk dice"),
        ({"mode": SANTA, "brains": ["santa", "green", "green"], "effects": ["helmet"]}, "brains", "2 santa dice"),
        ({"mode": SANTA, "brains": ["green"] * 3, "effects": ["helmet", "energy-drink"]}, "effects[1]",
         "cannot have put both"),
        ({"mode": BSAM, "brains": ["green"] * 3, "double_brains": ["hunk"]}, "double_brains", "brains lists 0"),
        ({"mode": BSAM, "brains": ["green"] * 3, "double_brains": ["green"]}, "double_brains", "no double-brain"),
        ({"mode": BSAM, "shotguns": ["hottie"], "brains": ["green"] * 2, "double_shotguns": ["hottie"]},
         "double_shotguns", "no double-shotgun"),
        ({"mode": BSAM, "shotguns": ["hunk", "red"], "double_shotguns": ["hunk"], "brains": ["green"]}, "shotguns",
         "already over"),
        ({"mode": SANTA, "shotguns": ["red"] * 3, "brains": ["green"]}, "shotguns", "already over"),
        ({"mode": SANTA, "shotguns": ["red", "red", "yellow", "yellow"], "effects": ["helmet"]}, "shotguns",
         "bust at 4"),
        ({"mode": SANTA, "kept_out": ["santa"], "brains": ["green"] * 3}, "kept_out", "banked is 0"),
        ({"mode": SANTA, "kept_out": ["green"], "brains": ["green"] * 3, "banked": 9}, "kept_out[0]",
         "only santa stays out"),
        ({"mode": SANTA, "footprints": ["green"], "brains": ["red", "red"], "effects": ["energy-drink"]},
         "footprints", "green footprints count as brains"),
        ({"mode": SANTA, "brains": ["green"] * 3, "banked": 3}, "banked", "at least 7"),
        ({"mode": BSAM, "brains": ["hunk"]}, "footprints", "only 1 dice out"),
    ],
)
def test_impossible_double_feature_positions(fields, field, words):
    with pytest.raises(PositionError) as info:
        Position(**fields)
    assert field in {e.field for e in info.value.errors}, info.value.errors
    assert any(words in e.reason for e in info.value.errors), info.value.errors


def test_a_rescue_can_leave_two_or_one_dice_out():
    Position(mode=BSAM, footprints=["green"], shotguns=["hottie"])  # Hunk rescued in the first roll
    Position(mode=DTV, shotguns=["santa"])  # Santa's shotgun rescued Hunk and Hottie in the same roll
    with pytest.raises(PositionError):
        Position(mode=BSAM, shotguns=["hottie"])


# -- the resolution steps, each alone --------------------------------------------------------------
def _roll(mode, **faces):
    """A roll as `roll.py`'s steps take it: per kind, ((face, count), ...)."""
    m = MODES[mode]
    return tuple(tuple(faces.get(d, ())) for d in m.die_names)


def test_set_aside_puts_the_effect_in_force():
    roll = _roll(SANTA, green=((FOOTPRINTS, 2),), santa=((HELMET, 1),))
    rest, aside, effects = set_aside(roll, ())
    assert aside == (0, 0, 0, 1) and effects == ("helmet",) and rest[3] == ()


def test_drink_converts_green_footprints_in_the_same_roll():
    roll = _roll(SANTA, green=((FOOTPRINTS, 1), (SHOTGUN, 1)), yellow=((FOOTPRINTS, 1),))
    converted = convert(MODES[SANTA], roll, ("energy-drink",))
    assert dict(converted[0]) == {BRAIN: 1, SHOTGUN: 1} and converted[1] == ((FOOTPRINTS, 1),)
    assert convert(MODES[SANTA], roll, ("helmet",)) == roll


@pytest.mark.parametrize(
    ("mode", "faces", "pile", "doubles", "left", "lost", "kept"),
    [
        # same roll: Hunk's double brain with Hottie's shotgun: Hunk back to the cup, no brain
        (BSAM, {"hunk": ((DOUBLE_BRAIN, 1),), "hottie": ((SHOTGUN, 1),)}, {}, {}, {}, 0, {"hottie": ((SHOTGUN, 1),)}),
        # same roll, swapped: a double shotgun on Hunk rescues Hottie's brain
        (BSAM, {"hunk": ((DOUBLE_SHOTGUN, 1),), "hottie": ((BRAIN, 1),)}, {}, {}, {}, 0,
         {"hunk": ((DOUBLE_SHOTGUN, 1),)}),
        # from the brain pile: Hunk's double brain taken back
        (BSAM, {"hottie": ((SHOTGUN, 1),)}, {"hunk": 1, "green": 2}, {"hunk": 1}, {"green": 2}, 2,
         {"hottie": ((SHOTGUN, 1),)}),
        # no shotgun on a special die: nothing happens
        (BSAM, {"red": ((SHOTGUN, 1),)}, {"hunk": 1}, {"hunk": 1}, {"hunk": 1}, 0, {"red": ((SHOTGUN, 1),)}),
        # one shotgun rescues several dice: Santa's shotgun frees Hunk (pile) and Hottie (pile)
        (DTV, {"santa": ((SHOTGUN, 1),)}, {"hunk": 1, "hottie": 1}, {"hunk": 1}, {}, 3, {"santa": ((SHOTGUN, 1),)}),
        # Santa's double brain is a gift: never rescued (Hottie still is)
        (DTV, {"hunk": ((SHOTGUN, 1),)}, {"santa": 1, "hottie": 1}, {"santa": 1}, {"santa": 1}, 1,
         {"hunk": ((SHOTGUN, 1),)}),
        # ... but Santa's single brain is Santa: rescued
        (DTV, {"hunk": ((SHOTGUN, 1),)}, {"santa": 1}, {}, {}, 1, {"hunk": ((SHOTGUN, 1),)}),
        # same roll in the sequel: Santa's shotgun, Hunk and Hottie brains: both back to the cup
        (DTV, {"santa": ((SHOTGUN, 1),), "hunk": ((DOUBLE_BRAIN, 1),), "hottie": ((BRAIN, 1),)}, {}, {}, {}, 0,
         {"santa": ((SHOTGUN, 1),)}),
        # same roll: Santa's gift stays even when Hunk shoots
        (DTV, {"santa": ((GIFT, 1),), "hunk": ((SHOTGUN, 1),)}, {}, {}, {}, 0,
         {"santa": ((GIFT, 1),), "hunk": ((SHOTGUN, 1),)}),
    ],
)
def test_rescue(mode, faces, pile, doubles, left, lost, kept):
    m = MODES[mode]
    counts = lambda d: tuple(d.get(k, 0) for k in m.die_names)  # noqa: E731
    roll, brains, dbl, taken = rescue(m, _roll(mode, **faces), counts(pile), counts(doubles))
    assert roll == _roll(mode, **kept)
    assert brains == counts(left) and taken == lost
    assert all(d <= b for d, b in zip(dbl, brains))


def test_settle_counts_double_faces():
    hand, brains, dbl, shots, dshots = settle(_roll(BSAM, green=((FOOTPRINTS, 1),), hunk=((DOUBLE_SHOTGUN, 1),),
                                                    hottie=((BRAIN, 1),)))
    assert hand == (1, 0, 0, 0, 0) and brains == (0, 0, 0, 0, 1) and shots == dshots == (0, 0, 0, 1, 0)
    assert dbl == (0,) * 5


def test_recycling_keeps_santa_out():
    m = MODES[SANTA]
    state = Position(mode=SANTA, brains=["santa"] + ["green"] * 5 + ["yellow"] * 4, shotguns=["red"],
                     double_brains=["santa"]).state
    after = recycled(m, state)
    assert after.brains == (0, 0, 0, 0) and after.double_brains == (0, 0, 0, 0) and after.aside == (0, 0, 0, 1)
    assert after.cup(m) == (5, 4, 2, 0)


# -- the exact next roll, rule by rule --------------------------------------------------------------
def _p(roll, pred):
    return sum((t.probability for t in roll.transitions if pred(t)), Fraction(0))


def test_rescue_in_the_same_roll_exactly():
    """Hunk, Hottie and a red rolled: Hunk goes back to the cup iff his double brain meets Hottie's
    shotgun (1/6 * 2/6); Hottie goes back iff her brain meets Hunk's single shotgun and the red does not
    shoot (a double shotgun plus the red's would bust)."""
    r = next_roll(Position(mode=BSAM, footprints=["hunk", "hottie", "red"]))
    hunk = MODES[BSAM].index("hunk")
    gone = _p(r, lambda t: not t.bust and not (t.state.hand[hunk] or t.state.brains[hunk] or t.state.shotguns[hunk]))
    assert gone == Fraction(1, 18)
    assert _p(r, lambda t: t.rescued) == 0  # nothing was in the pile


def test_rescue_from_the_brain_pile_exactly():
    p = Position(mode=BSAM, footprints=["hottie", "green", "green"], brains=["hunk", "yellow"],
                 double_brains=["hunk"])
    r = next_roll(p)
    assert _p(r, lambda t: t.rescued == 2) == Fraction(2, 6)  # Hottie's shotgun
    assert all(t.brains < 0 or not t.rescued for t in r.transitions if t.rescued and not t.bust
               and sum(t.state.brains) == 1)


def test_one_shotgun_rescues_several_dice_and_never_the_gift():
    p = Position(mode=DTV, footprints=["santa", "green", "green"], brains=["hunk", "hottie"], double_brains=["hunk"])
    assert _p(next_roll(p), lambda t: t.rescued == 3) == Fraction(1, 6)  # Santa's shotgun frees both
    q = Position(mode=DTV, footprints=["hunk", "green", "green"], brains=["santa", "hottie"], double_brains=["santa"])
    r = next_roll(q)
    santa = MODES[DTV].index("santa")
    assert _p(r, lambda t: t.rescued == 1) == Fraction(3, 6)  # Hunk's shotgun or double shotgun: Hottie only
    assert all(t.state.brains[santa] == 1 for t in r.transitions if not t.bust)


def test_drink_counts_green_footprints_in_the_same_roll():
    """Santa and two greens: E[brains] = 1/6 + 2/6 (Santa) + 2 * (5/6 * 3/6 + 1/6 * 5/6) = 29/18."""
    r = next_roll(Position(mode=SANTA, footprints=["santa", "green", "green"]))
    assert r.expected_brains == Fraction(29, 18)
    green = MODES[SANTA].index("green")
    assert all(t.state.hand[green] == 0 for t in r.transitions
               if not t.bust and "energy-drink" in t.state.effects)


def test_helmet_raises_the_bust_threshold_in_the_same_roll():
    """Two shotguns set aside; Santa, a red and a yellow rolled. Santa's shotgun busts (1/6); his helmet
    needs both others to shoot (1/6 * 1/2 * 1/3); otherwise any one shotgun busts (4/6 * 2/3): 23/36."""
    r = next_roll(Position(mode=SANTA, footprints=["santa", "red", "yellow"], shotguns=["red", "red"],
                           brains=["green"]))
    assert r.bust == Fraction(23, 36)


def test_santa_is_kept_out_at_recycling():
    p = Position(mode=SANTA, brains=["santa"] + ["green"] * 5 + ["yellow"] * 4, shotguns=["red"],
                 double_brains=["santa"])
    r = next_roll(p)
    assert r.recycles
    santa = MODES[SANTA].index("santa")
    for t in r.transitions:
        assert t.banked == 11
        if not t.bust:
            assert t.state.aside[santa] == 1 and not t.state.effects and t.state.brains[santa] == 0
            assert t.brains == t.state.pile_brains  # the pile now holds this roll's brains only
    rows = r.results()
    assert all(q is None or q.kept_out == ("santa",) for _, q in rows)


def test_general_path_reproduces_the_base_game():
    """roll.py's Double Feature path, run on the plain mode, gives the fast path's distribution exactly."""
    mode = MODES["original"]
    for p in (Position(), Position(footprints=["green", "red"], brains=["green"], shotguns=["red"]),
              Position(footprints=["red"], brains=["green"] * 6 + ["yellow"] * 4, shotguns=["red"]),
              Position(footprints=["red"], brains=["green"] * 6 + ["yellow"] * 4, shotguns=["red"],
                       recycle="draw-then-recycle")):
        z = (0, 0, 0)
        full = DiceState(*p.state[:3], z, z, z, ())
        den, banked, results = _special_transitions(mode, full, p.recycle)
        slow = {(Fraction(w, den), b, s, bust, banked, after and after[:3])
                for (b, s, bust, after, _), w in results.items()}
        fast = {(t.probability, t.brains, t.shotguns, t.bust, t.banked, t.state and t.state[:3])
                for t in transitions(mode, p.state, p.recycle)}
        assert slow == fast


@pytest.mark.parametrize("mode", [BSAM, SANTA, DTV])
@pytest.mark.parametrize("recycle", ["before-draw", "draw-then-recycle"])
def test_first_roll_is_a_distribution(mode, recycle):
    r = next_roll(Position(mode=mode, recycle=recycle))
    assert sum(t.probability for t in r.transitions) == 1 and 0 < r.bust < 1
    for t in r.transitions:
        if not t.bust:
            s = t.state
            assert all(c >= 0 for c in s.cup(MODES[mode]))
            Position.from_state(MODES[mode], s, 0, recycle)  # every result is a valid position


# -- rooted tables, the sweep order, the cap --------------------------------------------------------
ROOTS = {
    BSAM: Position(mode=BSAM, footprints=["hottie"], brains=["hunk", "green"], double_brains=["hunk"],
                   shotguns=["red"]),
    SANTA: Position(mode=SANTA, footprints=["santa", "green"], brains=["yellow"], shotguns=["red"]),
    DTV: Position(mode=DTV, footprints=["hottie"], brains=["santa", "yellow"], shotguns=["red", "red"]),
}


@pytest.fixture(scope="module", params=list(ROOTS))
def rooted(request):
    p = ROOTS[request.param]
    return p, table_for(p.mode, p.recycle, p.state)


def test_sweep_order_is_valid_with_rescues(rooted):
    _, table = rooted
    place = {int(i): (b, k) for b, block in enumerate(table.blocks) for k, layer in enumerate(block) for i in layer}
    assert len(place) == len(table)
    for i, row in enumerate(table.edges):
        total = sum(p for _, _, p in row) + table.bust[i] + table.self_loop[i]
        assert total == 1
        for d, j, _ in row:
            (bi, ki), (bj, kj) = place[i], place[j]
            assert bj < bi or (bj == bi and (d > 0 or kj < ki)), (table.states[i], table.states[j])
            if d < 0:  # a score-lowering roll (a rescue) always reaches a later block: more shotguns
                assert table.shotguns[j] > table.shotguns[i]


def test_rescue_modes_have_negative_deltas():
    p = ROOTS[BSAM]
    assert table_for(p.mode, p.recycle, p.state).min_delta == -2


def test_exact_values_satisfy_bellman(rooted):
    p, table = rooted
    exact = exact_turn(p.mode, p.recycle, OPTIMAL, p.state)
    for i in range(0, len(table), max(1, len(table) // 25)):
        score = table.states[i].pile_brains + 3
        roll = to_fraction(exact.roll(i, score))
        expected = Fraction(0)
        for d, j, q in table.edges[i]:
            expected += q * max(to_fraction(exact.roll(j, score + d)), Fraction(score + d))
        here = roll if exact.decision(i, score) == "roll" else max(roll, Fraction(score))
        expected += table.self_loop[i] * here
        assert roll == expected
        sol = exact.solution
        assert abs(sol.values_at(i, score)[0] - float(roll)) <= 1e-12 * max(1, score)


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


@settings(max_examples=60, deadline=None)
@given(reachable_positions(table_for(ROOTS[DTV].mode, "before-draw", ROOTS[DTV].state), banked=9))
def test_every_reached_state_is_a_valid_position_with_a_distribution(p):
    r = next_roll(p)
    assert sum(t.probability for t in r.transitions) == 1
    assert r.expected_brains == sum(b * q for b, _, q in r.outcomes)
    assert Position.from_state(p.game_mode, p.state, p.banked, p.recycle) == p


def test_no_cap_needed_where_every_state_can_bust():
    """The block induction (policy.py) bounds the rolling levels without any cap in the rescue mode."""
    p = ROOTS[BSAM]
    table = table_for(p.mode, p.recycle, p.state)
    bound, unbounded = stop_bound(table)
    assert not unbounded and solve(p.mode, p.recycle, OPTIMAL, p.state).top == int(bound)
    assert not solve(p.mode, p.recycle, OPTIMAL, p.state).capped


def test_cap_with_the_helmet_is_below_1e_12():
    """With Santa's helmet and no shotgun yet a roll cannot bust (q = 0): the solver caps the turn
    CAP_MARGIN brains above the block bound. A cap twice as far changes no value up to the bound by
    1e-12 or more."""
    p = Position(mode=SANTA, footprints=["red", "red"], brains=["yellow"], effects=["helmet"])
    table = table_for(p.mode, p.recycle, p.state)
    bound, unbounded = stop_bound(table)
    assert unbounded
    near, far = solve(p.mode, p.recycle, OPTIMAL, p.state), solve(p.mode, p.recycle, OPTIMAL, p.state, 120)
    assert near.capped and far.top == near.top + 60
    levels = int(bound) + 1
    assert np.abs(near.value[:levels] - far.value[:levels]).max() < 1e-12
    assert np.abs(near.roll[:levels] - far.roll[:levels]).max() < 1e-12


# -- Monte Carlo, written again from the rules ---------------------------------------------------------



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
def test_next_roll_against_physical_dice(position):
    assert_next_roll_matches(position, seed=20102)


@pytest.mark.parametrize("objective", ["expected-brains", "reach:6"])
@pytest.mark.parametrize("mode", list(ROOTS))
def test_turn_score_distribution(mode, objective):
    position = ROOTS[mode]
    assert_turn_matches(position, objective, seed=1303, rooted=True,
                        scores_to_check=(0, position.score, position.score + 1, position.score + 2))


def test_the_sequel_turn_start_is_refused_cleanly():
    from analysis.odds import TurnStartTooLarge

    with pytest.raises(TurnStartTooLarge):
        odds(Position(mode=DTV))
    assert next_roll(Position(mode=DTV)).bust > 0
