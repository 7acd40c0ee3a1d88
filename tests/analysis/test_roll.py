"""analysis/roll.py: the exact next roll: anchors, hand computations, and properties against independent maths; the
Double Feature's special rules each alone (RULES.md section 2) and the School Bus's (section 3)."""

from fractions import Fraction

import pytest
import sympy
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy.stats import multivariate_hypergeom

from analysis import MODES, Position, PositionError, legal_actions, next_roll
from analysis.dice import BRAIN, DOUBLE_BRAIN, DOUBLE_SHOTGUN, FOOTPRINTS, GIFT, HELMET, SHOTGUN
from analysis.position import DiceState
from analysis.roll import _special_transitions, convert, draws, recycled, rescue, set_aside, settle, transitions
from analysis.table import table_for

from ..strategies import positions, reachable_positions
from .roots import ROOTS, bus

BSAM, SANTA, DTV = "big-summer-action-movie", "santa-claus-meets-the-zombies", "direct-to-video-sequel"


def test_three_shotguns_on_the_first_roll_is_94_over_3861():
    """ANCHORS.md: hand computation over the 286 draws."""
    assert next_roll(Position()).bust == Fraction(94, 3861)


def test_first_roll_stated_with_sympy():
    """The same number stated as the combinatorics it is: sum over draws of P(draw) * prod P(shotgun)."""
    g, y, r = 6, 4, 3
    shot = {"g": sympy.Rational(1, 6), "y": sympy.Rational(2, 6), "r": sympy.Rational(3, 6)}
    total = 0
    for a in range(4):
        for b in range(4 - a):
            c = 3 - a - b
            p_draw = sympy.binomial(g, a) * sympy.binomial(y, b) * sympy.binomial(r, c) / sympy.binomial(13, 3)
            total += p_draw * shot["g"] ** a * shot["y"] ** b * shot["r"] ** c
    assert Fraction(str(total)) == next_roll(Position()).bust
    brains = {"g": sympy.Rational(3, 6), "y": sympy.Rational(2, 6), "r": sympy.Rational(1, 6)}
    expected = sum(sympy.Rational(n, 13) * 3 * brains[k] for k, n in (("g", g), ("y", y), ("r", r)))
    assert Fraction(str(expected)) == next_roll(Position()).expected_brains


def test_recycle_variants_by_hand():
    """One red die left in the cup, two needed, ten brains (6 green, 4 yellow) set aside, one red shotgun.

    before-draw: the red and two dice from {6g, 4y, 1r} roll with the red in hand; with the hand red's
    shotgun chance 1/2 and the drawn pair's a, b, P(>= 2 shotguns) = (a + b) / 2, averaged over the 55
    pairs: 17/66. draw-then-recycle: both reds roll with one of the ten brain dice (shotgun 7/30):
    1/4 + 2 * (1/2 * 7/30 * 1/2) = 11/30.
    """
    fields = dict(footprints=["red"], brains=["green"] * 6 + ["yellow"] * 4, shotguns=["red"])
    before = next_roll(Position(**fields))
    after = next_roll(Position(**fields, recycle="draw-then-recycle"))
    assert before.recycles and after.recycles
    assert before.bust == Fraction(17, 66)
    assert after.bust == Fraction(11, 30)
    for t in before.transitions + after.transitions:
        assert t.banked == 10
        assert t.bust or sum(t.state.brains) == t.brains  # the pile now holds only this roll's brains


@settings(max_examples=200)
@given(positions())
def test_probabilities_sum_to_exactly_one(p):
    r = next_roll(p)
    assert sum(t.probability for t in r.transitions) == 1
    assert sum(q for _, _, q in r.outcomes) == 1
    assert r.expected_brains == sum(b * q for b, _, q in r.outcomes)
    assert 0 < r.bust < 1
    assert r.bust == sum(t.probability for t in r.transitions if t.bust)
    assert r.expected_brains == sum(t.probability * t.brains for t in r.transitions)


@settings(max_examples=200)
@given(positions())
def test_dice_are_conserved(p):
    mode = p.game_mode
    for t in next_roll(p).transitions:
        if t.bust:
            continue
        cup = t.state.cup(mode)
        assert all(c >= 0 for c in cup)
        assert sum(t.state.hand) + sum(t.state.brains) + sum(t.state.shotguns) + sum(cup) == mode.total_dice
        assert sum(t.state.hand) <= 3
        assert sum(t.state.shotguns) == len(p.shotguns) + t.shotguns
        assert t.brains + t.shotguns + sum(t.state.hand) == 3


@settings(max_examples=200, suppress_health_check=[HealthCheck.filter_too_much])  # many draws have 2 shotguns
@given(positions(), st.sampled_from(["green", "yellow", "red"]))
def test_bust_never_falls_when_a_shotgun_is_added(p, die):
    assume(p.cup[die] > 0 and len(p.shotguns) < 2)
    try:
        worse = Position(p.mode, p.footprints, p.brains, p.shotguns + (die,), p.banked, p.recycle)
    except PositionError:
        assume(False)
    assert next_roll(worse).bust >= next_roll(p).bust


@given(st.tuples(st.integers(0, 6), st.integers(0, 4), st.integers(0, 3)), st.integers(1, 3))
def test_draws_equal_scipy_multivariate_hypergeometric(cup, n):
    assume(sum(cup) >= n)
    for take, p in draws(cup, n):
        assert abs(float(p) - multivariate_hypergeom.pmf(x=list(take), m=list(cup), n=n)) < 1e-12
    assert sum(p for _, p in draws(cup, n)) == 1


def test_three_footprints_roll_the_same_dice():
    r = next_roll(Position(footprints=["green", "yellow", "red"]))
    assert not r.recycles
    # no draw: the outcome is the product of three independent dice
    assert r.bust == Fraction(1, 6) * Fraction(2, 6) * Fraction(3, 6)


# -- Double Feature: the resolution steps, each alone ----------------------------------------------------------------
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


# -- Double Feature: the exact next roll, rule by rule ---------------------------------------------------------------
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


@settings(max_examples=60, deadline=None)
@given(reachable_positions(table_for(ROOTS[DTV].mode, "before-draw", ROOTS[DTV].state), banked=9))
def test_every_reached_state_is_a_valid_position_with_a_distribution(p):
    r = next_roll(p)
    assert sum(t.probability for t in r.transitions) == 1
    assert r.expected_brains == sum(b * q for b, _, q in r.outcomes)
    assert Position.from_state(p.game_mode, p.state, p.banked, p.recycle) == p


# -- School Bus: the legal actions and each rule alone, exactly ------------------------------------------------------
@pytest.mark.parametrize(
    ("position", "actions"),
    [
        (bus(), ("roll",)),
        (bus(footprints=["green"], brains=["red", "red"]), ("stop", "roll", "board")),
        (bus(footprints=["green"] * 3), ("stop", "roll")),  # no new die needed: no boarding
        (bus(footprints=["green"], brains=["red", "red"], riding=True), ("stop", "stay", "get-off")),
        (bus(footprints=["green"], brains=["red", "red"], bus_out=True), ("stop", "roll")),
        (Position(footprints=["green"], brains=["red", "red"]), ("stop", "roll")),
    ],
)
def test_legal_actions(position, actions):
    state = position.bus_state if position.school_bus else position.state
    assert legal_actions(position.game_mode, state) == actions


def test_first_roll_is_the_same_with_or_without_the_bus():
    with_bus, without = next_roll(bus()), next_roll(Position())
    assert with_bus.bust == without.bust and with_bus.outcomes == without.outcomes
    with pytest.raises(ValueError):
        next_roll(bus(), "board")


# Each special rule alone: a position, an action, which results of its next roll to add up, and their exact
# probability worked out by hand (RED2: two red footprint dice rolled with the bus, two shotguns set aside).
RED2 = bus(footprints=["red", "red"], brains=["green"], shotguns=["yellow", "yellow"])
HUNK = MODES[BSAM].index("hunk")
RULES = [
    # STOP (1/12) ends the turn and scores if neither red shoots (1/4) ...
    ("stop", RED2, "board", lambda t: t.stopped and not t.bust, Fraction(1, 12) * Fraction(1, 4)),
    # ... but with 3 shotguns it is a bust like any other roll
    ("stop with 3 shotguns", RED2, "board", lambda t: t.bus == "stop" and t.bust, Fraction(1, 12) * Fraction(3, 4)),
    # YIELD: a red shotgun is footprints, so no bust, and both reds are in hand unless one shows a brain
    ("yield: no bust", RED2, "board", lambda t: t.bus == "yield" and t.bust, Fraction(0)),
    ("yield: red shotgun to footprints", RED2, "board",
     lambda t: t.bus == "yield" and t.state.dice.hand == (0, 0, 2), Fraction(1, 12) * Fraction(5, 6) ** 2),
    # DEAD END: every footprint a brain (the hand is empty after it); a bust if both reds shoot
    ("dead end", RED2, "board", lambda t: t.bus == "dead-end" and not t.bust and not any(t.state.dice.hand),
     Fraction(1, 12) * Fraction(1, 2) ** 2),  # (neither red shoots)
    # shotgun tokens count toward the bust: the bus's 2 shotguns (1/12) bust RED2 whatever the reds show
    ("2 shotgun tokens bust", RED2, "board", lambda t: t.bus == "2-shotguns" and t.bust, Fraction(1, 12)),
    # tyre tracks when the only brain is Hunk's double: no red brain and not both reds shooting (25/36 - 1/4)
    ("tyre tracks, only a double brain", bus(mode=BSAM, footprints=["red", "red"], brains=["hunk"],
                                             double_brains=["hunk"], shotguns=["yellow"]), "board",
     lambda t: [g for g, _ in t.choices] == ["double:hunk"], Fraction(1, 12) * (Fraction(25, 36) - Fraction(1, 4))),
    # the rescue stands, then YIELD: Hottie's shotgun (2/6) frees Hunk and joins the hand
    ("rescue then yield", bus(mode=BSAM, footprints=["hottie", "green"], brains=["hunk", "yellow"],
                              double_brains=["hunk"], shotguns=["red"]), "board",
     lambda t: t.bus == "yield" and t.rescued == 2 and t.state.dice.brains[HUNK] == 0,
     Fraction(1, 12) * Fraction(2, 6)),
    # the energy drink first, then YIELD: a green is in hand only if it shot (its footprints are brains)
    ("drink then yield", bus(mode=SANTA, footprints=["green", "green"], brains=["red"], shotguns=["yellow"],
                             effects=["energy-drink"]), "board",
     lambda t: t.bus == "yield" and t.state.dice.hand[0] == 2, Fraction(1, 12) * Fraction(1, 6) ** 2),
    # staying: the two reds go back into the cup, both are drawn again (1 in C(10, 2)) and end in hand: both
    # footprints with a token face that does not bust (7 of 12), or YIELD (a red shotgun is footprints too)
    ("stay: the hand goes back", bus(footprints=["red", "red"], brains=["green", "yellow"], shotguns=["red"],
                                     riding=True), "stay",
     lambda t: t.state is not None and t.state.dice.hand == (0, 0, 2),
     Fraction(1, 45) * (Fraction(2, 6) ** 2 * Fraction(7, 12) + Fraction(5, 6) ** 2 * Fraction(1, 12))),
    # getting off: the reds are kept, one die is drawn; the bus is out whatever happens
    ("get off: the hand is kept", bus(footprints=["red", "red"], brains=["green", "yellow"], shotguns=["red"],
                                      riding=True), "get-off", lambda t: t.state is not None and t.state.phase != "out",
     Fraction(0)),
]


@pytest.mark.parametrize(("position", "action", "which", "probability"), [r[1:] for r in RULES],
                         ids=[r[0] for r in RULES])
def test_bus_rule(position, action, which, probability):
    assert _p(next_roll(position, action), which) == probability


def test_boarding_with_two_footprints_draws_nothing():
    """Two reds in hand and the bus: no die is drawn. E[brains] = 2 * 1/6 (reds) + 10/12 (bus) + 1/12 * 2 * 2/6
    (DEAD END: red footprints) - 1/12 * 3/4 (tyre tracks take a brain unless both reds shoot, a bust)."""
    r = next_roll(bus(footprints=["red", "red"], brains=["green"], shotguns=["yellow"]), "board")
    assert not r.recycles
    assert r.expected_brains == Fraction(167, 144)
    assert all(t.state.dice.cup(MODES["original"]) == (5, 3, 1) for t in r.transitions if t.state)


def test_stop_ends_the_turn_and_yield_leaves_the_piles():
    r = next_roll(RED2, "board")
    assert all(t.state is None and not t.shotguns for t in r.transitions if t.stopped)
    assert all(q is None for (_, q), t in zip(r.results(), r.transitions) if t.bus == "stop")
    yielded = [t for t in r.transitions if t.bus == "yield"]
    assert all(t.shotguns == 0 and t.state.dice.shotguns == (0, 2, 0) for t in yielded)
    dead = [t for t in r.transitions if t.bus == "dead-end"]
    assert sum(t.probability * t.brains for t in dead) * 12 == 1  # each red a brain unless it shoots: 2 * 3/6


def test_tyre_tracks_with_only_a_double_brain_die():
    """Hunk's double brain is the turn's only brain: tyre tracks send him back into the cup and leave one
    brain token. Two reds roll with the bus; no red brain and not both shooting (a bust): 25/36 - 1/4."""
    p = bus(mode=BSAM, footprints=["red", "red"], brains=["hunk"], double_brains=["hunk"], shotguns=["yellow"])
    r = next_roll(p, "board")
    alone = [(t, q) for t, (_, q) in zip(r.transitions, r.results()) if [g for g, _ in t.choices] == ["double:hunk"]]
    assert sum(t.probability for t, _ in alone) == Fraction(1, 12) * (Fraction(25, 36) - Fraction(1, 4))
    for t, (after,) in alone:
        assert t.brains == -1 and after.bus_brains == 1 and after.cup["hunk"] == 1
        assert after.bus_out and not after.riding and after.score == p.score - 1
    both = {tuple(g for g, _ in t.choices) for t in r.transitions if t.choices}
    assert ("red", "double:hunk") in both  # a red brain as well: the player chooses


def test_tyre_tracks_choices():
    """A token, a single-brain die or a double-brain die (plus a token): the player chooses; noted brains
    are never lost."""
    p = bus(mode=BSAM, footprints=["green"], brains=["hunk", "yellow"], double_brains=["hunk"], shotguns=["red"],
            riding=True, bus_brains=2)
    r = next_roll(p, "stay")
    choices = {g for t in r.transitions for g, _ in t.choices}
    assert {"token", "yellow", "double:hunk"} <= choices
    q = bus(brains=["green"] * 6 + ["yellow"] * 4, shotguns=["red", "red"], riding=True)
    # the cup runs out: the ten brains are noted, then nothing is left to lose unless this roll shows a brain
    r = next_roll(q, "stay")
    assert r.recycles
    lone = [t for t in r.transitions if t.choices and t.choices[0][0] == "nothing"]
    assert lone and all(t.brains == 0 and t.banked == 10 for t in lone)


def test_stay_or_get_off():
    """Staying: the footprint dice go back into the cup and 2 dice are drawn for the bus; getting off is an
    ordinary roll with the footprint dice kept, and the bus is out for the turn."""
    riding = bus(footprints=["red", "red"], brains=["green", "yellow"], shotguns=["red"], riding=True, bus_brains=1)
    off = next_roll(riding, "get-off")
    plain = next_roll(Position(footprints=["red", "red"], brains=["green", "yellow"], shotguns=["red"]))
    assert off.outcomes == plain.outcomes and off.bust == plain.bust
    assert all(q is None or (q.bus_out and q.bus_brains == 1) for _, q in off.results())
    stay = next_roll(riding, "stay")
    ready = next_roll(bus(brains=["green", "yellow"], shotguns=["red"], riding=True, bus_brains=1), "stay")
    assert stay.outcomes == ready.outcomes  # the hand went back into the cup: it rolls like no hand at all
    assert _p(stay, lambda t: t.state is not None and t.state.dice.hand[2] == 2) > 0  # a red drawn again


def test_rescue_then_yield():
    """Hunk's double brain in the pile, Hottie rolled: her shotgun rescues Hunk (Double Feature first), then
    YIELD turns the shotgun into footprints: Hunk back into the cup, Hottie in hand, two brains lost."""
    p = bus(mode=BSAM, footprints=["hottie", "green"], brains=["hunk", "yellow"], double_brains=["hunk"],
            shotguns=["red"])
    r = next_roll(p, "board")
    hunk, hottie = MODES[BSAM].index("hunk"), MODES[BSAM].index("hottie")
    rescued = [t for t in r.transitions if t.bus == "yield" and t.rescued == 2]
    assert sum(t.probability for t in rescued) == Fraction(1, 12) * Fraction(2, 6)
    for t in rescued:
        d = t.state.dice
        assert d.brains[hunk] == 0 and d.hand[hottie] == 1 and not d.shotguns[hottie] and t.shotguns == 0


def test_dead_end_after_a_rescue_and_the_drink_before_yield():
    p = bus(mode=BSAM, footprints=["hunk", "hottie"], brains=["green", "yellow"], shotguns=["red"])
    dead = [t for t in next_roll(p, "board").transitions if t.bus == "dead-end" and not t.bust]
    hunk = MODES[BSAM].index("hunk")
    # Hunk's double brain rescued by Hottie's shotgun in the same roll goes back into the cup (DEAD END comes
    # after): never in the pile with Hottie in the shotgun pile; Hunk's footprints, not rescued, become a
    # single brain
    assert not any(t.state.dice.double_brains[hunk] and t.state.dice.shotguns[hunk + 1] for t in dead)
    single = [t for t in dead if t.state.dice.brains[hunk] and t.state.dice.shotguns[hunk + 1]]
    assert sum(t.probability for t in single) == Fraction(1, 12) * Fraction(2, 6) * Fraction(2, 6)
    assert all(not t.state.dice.double_brains[hunk] for t in single)
    drink = bus(mode=SANTA, footprints=["green", "green"], brains=["red"], shotguns=["yellow"],
                effects=["energy-drink"])
    yielded = [t for t in next_roll(drink, "board").transitions if t.bus == "yield"]
    # the drink turned green footprints into brains first; YIELD then turns a green shotgun into footprints
    assert _p(next_roll(drink, "board"), lambda t: t.bus == "yield" and t.state.dice.hand[0] == 2) == \
        Fraction(1, 12) * Fraction(1, 36)
    assert yielded
