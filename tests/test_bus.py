"""Zombie Dice 3: School Bus (RULES.md section 3) with every mode: the bus die, positions, every special rule
alone, the bus tables and their solvers (exact values, loops, cycles), and the Monte Carlo simulator
(analysis/simulate.py, written again from the rules' text)."""

import gc
import random
from fractions import Fraction

import numpy as np
import pytest

from analysis import MODES, BusState, Position, PositionError, next_roll, odds, parse_objective, policy
from analysis.dice import BUS
from analysis.exact import exact_bus_turn, solve_exact, to_fraction
from analysis.kept import SIZES
from analysis.objectives import ExpectedBrains
from analysis.policy import bus_solve, bus_sweep, close_loops
from analysis.position import min_noted
from analysis.residues import Residues
from analysis.roll import NextRoll, TyreTracks, bus_results, legal_actions
from analysis.simulate import Turn, roll_once
from analysis.table import CHANCE, DECISION, BusTable, bus_table_for

from .montecarlo import N, assert_next_roll_matches, bus_turns, within_4_sigma

pytestmark = pytest.mark.xdist_group("bus-turn-start")  # (tests/conftest.py)

ORIGINAL, BSAM, SANTA, DTV = "original", "big-summer-action-movie", "santa-claus-meets-the-zombies", \
    "direct-to-video-sequel"
OPTIMAL = ExpectedBrains()


def bus(**fields) -> Position:
    return Position(school_bus=True, **fields)


def _p(roll, pred) -> Fraction:
    return sum((t.probability for t in roll.transitions if pred(t)), Fraction(0))


# -- the bus die and positions ---------------------------------------------------------------------------
def test_bus_die_faces():
    p = BUS.face_probabilities
    assert len(BUS.faces) == 12 and sum(p.values()) == 1
    assert sum(q for f, q in p.items() if f.brains and not f.shotguns) == Fraction(4, 12)
    assert sum(f.brains * q for f, q in p.items()) == Fraction(1 + 1 + 2 + 3 + 1 + 2, 12)
    assert sum(f.shotguns * q for f, q in p.items()) == Fraction(1 + 2 + 1 + 1, 12)
    assert {f.effect for f in BUS.faces if f.effect} == {"stop", "yield", "dead-end", "tyre-tracks"}
    assert "bus" not in MODES["original"].die_names  # it never goes into the cup


def test_bus_position_fields():
    p = bus(footprints=["green"], brains=["red"], shotguns=["yellow"], riding=True, bus_brains=3, bus_shotguns=1)
    assert p.score == 4 and not p.first_roll
    assert p.bus_state.phase == "riding" and p.bus_state.tokens == 1 and p.bus_state.shotgun_count == 2
    assert Position.from_bus_state(p.game_mode, p.bus_state, 0, p.recycle, 3) == p
    assert bus().first_roll and bus().bus_state.phase == "ready"
    out = bus(footprints=["green"], brains=["red"], shotguns=["yellow"], bus_out=True, bus_brains=2)
    assert out.bus_state.tokens == 0 and out.score == 3  # once out, tokens are only score
    with pytest.raises(ValueError):
        _ = Position().bus_state


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"bus_brains": 1}, "bus_brains", "without school_bus"),
        ({"bus_shotguns": 1, "brains": ["green"] * 3}, "bus_shotguns", "without school_bus"),
        ({"riding": True, "brains": ["green"] * 3}, "riding", "without school_bus"),
        ({"bus_out": True, "brains": ["green"] * 3}, "bus_out", "without school_bus"),
        ({"school_bus": "yes"}, "school_bus", "true or false"),
        ({"school_bus": True, "bus_brains": -1}, "bus_brains", "negative"),
        ({"school_bus": True, "bus_shotguns": 1.5}, "bus_shotguns", "whole number"),
        ({"school_bus": True, "riding": True}, "riding", "first roll"),
        ({"school_bus": True, "bus_brains": 2}, "bus_brains", "first roll"),
        ({"school_bus": True, "brains": ["green"] * 3, "bus_brains": 1}, "bus_brains", "not boarded"),
        ({"school_bus": True, "brains": ["green"] * 3, "riding": True, "bus_out": True}, "bus_out", "both"),
        ({"school_bus": True, "footprints": ["green"] * 3, "riding": True}, "footprints", "2 ordinary dice"),
        ({"school_bus": True, "brains": ["green"], "shotguns": ["red", "red"], "riding": True, "bus_shotguns": 1},
         "bus_shotguns", "already over"),
        ({"school_bus": True, "brains": ["green"], "riding": True, "banked": 4}, "banked", "at least"),
        ({"school_bus": True, "brains": ["green"]}, "footprints", "only 1 dice out"),  # not boarded yet
    ],
)
def test_impossible_bus_positions(fields, field, words):
    with pytest.raises(PositionError) as info:
        Position(**fields)
    assert field in {e.field for e in info.value.errors}, info.value.errors
    assert any(words in e.reason for e in info.value.errors), info.value.errors


def test_a_bus_roll_can_leave_one_die_out():
    bus(brains=["green"], riding=True)  # stayed on the bus, one brain, one footprint... then tyre tracks
    bus(footprints=["red"], bus_out=True, bus_brains=2)
    bus(mode=SANTA, footprints=["green"], brains=["red"], shotguns=["yellow"], effects=["energy-drink"], riding=True)


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


# -- each rule alone, exactly ------------------------------------------------------------------------------
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


# -- tables, loops and cycles ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def original_table():
    return bus_table_for(ORIGINAL, "before-draw", None)


ROOTS = {
    ORIGINAL: bus(footprints=["green"], brains=["yellow", "red"], shotguns=["red", "yellow"]),
    BSAM: bus(mode=BSAM, footprints=["hottie"], brains=["hunk", "green", "green"], double_brains=["hunk"],
              shotguns=["red", "red"], riding=True),
    SANTA: bus(mode=SANTA, footprints=["green"], brains=["yellow", "green"], shotguns=["red", "red"]),
    DTV: bus(mode=DTV, footprints=["hottie"], brains=["hunk", "yellow"], double_brains=["hunk"],
             shotguns=["santa", "red"], riding=True),  # (Santa shot: the sequel's table from here is small)
}


@pytest.fixture(scope="module", params=list(ROOTS))
def rooted(request):
    """The table of the nodes each root reaches (`odds` uses the base game's whole table instead)."""
    p = ROOTS[request.param]
    return p, bus_table_for(p.mode, p.recycle, p.bus_state), p.bus_state


def test_table_rows_are_the_rolls(rooted):
    """The table's search (compact keys) gives every chance node exactly `bus_results`' distribution."""
    _, table, _ = rooted
    chance = np.flatnonzero(table.kind == CHANCE)
    for c in chance[:: max(1, len(chance) // 60)].tolist():
        den = table.denominator[c]
        rows = {(d, table.keys[j]): Fraction(w, den) for d, j, w in table.edges[c]}
        rows.update({(0, table.keys[h]): Fraction(w, den) for h, w in table.loops[c]})
        assert sum(rows.values()) + Fraction(table.bust[c], den) == 1
        expect: dict = {}
        den, results = bus_results(table.mode, *table.roll_of(c), table.recycle)
        for brains, _, busted, after, *_, ways in results:
            if busted:
                continue
            if after is None:
                after = ("stopped",)
            elif isinstance(after, TyreTracks) and len(choices := after.choices(table.mode)) == 1:
                after = choices[0][1]
            expect[(brains, after)] = expect.get((brains, after), 0) + Fraction(ways, den)
        assert rows == expect


def test_the_index_finds_every_node_and_nothing_else(rooted):
    """`BusTable.index` finds a node by its dice's code and its kind: every key at its number, the stopped node
    among them, and no other key (another kind of node with the same dice, a phase or tokens it does not have)."""
    _, table, root = rooted
    assert [table.index[k] for k in table.keys] == list(range(len(table)))
    assert table.index[root] == 0 and table.index[("stopped",)] in range(len(table))
    for key in (root._replace(phase="out", tokens=1), root._replace(tokens=2), root._replace(phase="flying"),
                TyreTracks(root.dice, 0, root.shotguns + 5), ("roll", root.dice, "riding", 0), ("bus", "dice", 0, 0),
                root.dice, (), "stopped", ("stopped", 1)):
        assert key not in table.index


def test_sweep_order(rooted):
    _, table, _ = rooted
    block_of, place = table.block_of, {}
    for b, block in enumerate(table.blocks):
        for k, layer in enumerate(block):
            for i in layer.tolist():
                place[i] = (b, k)
    for i in range(len(table)):
        for _, c in table.actions[i]:
            assert place[c] < place[i] or block_of[c] < block_of[i]
        for d, j, _ in table.edges[i]:
            if block_of[j] == block_of[i] and d <= 0:
                assert d < 0 or place[j][1] < place[i][1], (table.keys[i], table.keys[j])
                if d < 0:
                    assert table.cyclic[block_of[i]] and j in set(table.back_nodes.tolist())


def test_the_wavefront_solves_what_a_node_reads_before_it(original_table, rooted):
    """`BusTable.offsets`: block b solves level T at step ``T - offsets[b]`` (blocks in order within a step), so every
    node of an earlier block that a roll reads at ``T + delta`` is solved first; and no block runs further behind
    than that asks."""
    for table in (original_table, rooted[1]):
        offsets, block_of = table.offsets, table.block_of
        assert (np.diff(offsets) >= 0).all() and offsets[0] == 0
        need = np.zeros(len(offsets), dtype=int)
        for i in np.flatnonzero(table.kind == CHANCE).tolist():
            for d, j, _ in table.edges[i]:
                a, b = block_of[i], block_of[j]
                if 0 <= b < a:  # read at T + d: solved at step T + d - offsets[b], not after T - offsets[a]
                    assert offsets[a] >= offsets[b] - d
                    need[a] = max(need[a], offsets[b] - d)
        assert all(offsets[a] == max(offsets[a - 1], need[a]) for a in range(1, len(offsets)))


def test_only_rescues_with_yield_make_cycles(original_table, rooted):
    assert not any(original_table.cyclic)
    p, table, _ = rooted
    assert any(table.cyclic) == bool(p.game_mode.rescues)


def test_every_reached_node_is_a_valid_position(rooted):
    """Every decision node a root reaches is a position `Position` accepts (the validation is no stricter
    than the rules), and every legal action's next roll is a distribution."""
    _, table, _ = rooted
    mode = table.mode
    states = [k for k in table.keys if isinstance(k, BusState)]
    for state in states[:: max(1, len(states) // 150)]:
        santa_kept = state.dice.aside and sum(state.dice.aside) > len(state.dice.effects)
        q = Position.from_bus_state(mode, state, min_noted(mode) if santa_kept else 0, table.recycle)
        for action in legal_actions(mode, state):
            if action != "stop":
                r = next_roll(q, action)
                assert sum(t.probability for t in r.transitions) == 1
                assert_summary_is_the_transitions(r)


def assert_summary_is_the_transitions(r: NextRoll) -> None:
    """The next roll's outcomes, bust and expected brains (summed from integer weights) are its transitions'."""
    joint: dict[tuple[int, int], Fraction] = {}
    for t in r.transitions:
        joint[(t.brains, t.shotguns)] = joint.get((t.brains, t.shotguns), Fraction(0)) + t.probability
    assert r.outcomes == tuple((b, s, q) for (b, s), q in sorted(joint.items()))
    assert r.bust == sum((t.probability for t in r.transitions if t.bust), Fraction(0))
    assert r.expected_brains == sum((t.probability * t.brains for t in r.transitions), Fraction(0))


def test_close_loops_is_the_fixed_point():
    rng = np.random.default_rng(3)
    r = rng.uniform(0, 5, 50)
    q = rng.uniform(0, 0.2, (50, 4))
    c = rng.uniform(0, 8, (50, 4))
    c[::7, 1] = -np.inf  # must roll again
    x = close_loops(r, q, c)
    assert np.allclose(x, r + (q * np.maximum(c, x[:, None])).sum(axis=1), atol=1e-12)


def test_passes_read_the_blocks_before_the_first_cycle_from_the_first(rooted):
    """Only blocks from the first cyclic one on move between passes: a pass that reads the others from the first
    pass (`Settled`) gives the same values, candidates and passes as passes that sweep every block."""
    p, table, root = rooted
    objective = ExpectedBrains()
    whole = bus_solve(p.mode, p.recycle, objective, root)
    stop = np.arange(whole.top + 1 + table.max_delta, dtype=float)
    back = np.repeat(stop[:, None], table.back_nodes.size, axis=1)
    settled = None
    for _ in range(whole.passes):
        full = bus_sweep(table, objective, whole.top, stop, back)
        fast = bus_sweep(table, objective, whole.top, stop, back, None, settled)
        assert np.array_equal(full[3], fast[3]) and np.array_equal(full[4], fast[4])
        assert all(np.array_equal(a, b) for a, b in zip(full[0] + full[1] + full[2], fast[0] + fast[1] + fast[2]))
        back, settled = fast[4], fast[5]
    assert (settled is None) == (not any(table.cyclic))


def test_a_raised_pass_that_comes_out_higher_certifies_nothing(rooted, monkeypatch):
    """The solver reads the values raised by the gap once what is left to climb looks smaller (a guess): tried
    after every pass, the raised passes that come out higher are not taken, the passes go on, and the solution is
    the same within the certified errors."""
    p, table, root = rooted
    if not any(table.cyclic):
        pytest.skip("no rescues: one pass is the solution")
    solve = policy._bus_solve  # (not the kept one: `bus_solve` keeps the last rooted turn)
    usual = solve(p.mode, p.recycle, OPTIMAL, root, policy.CAP_MARGIN)
    monkeypatch.setattr(policy, "_close_enough", lambda changes, gap: True)
    eager = solve(p.mode, p.recycle, OPTIMAL, root, policy.CAP_MARGIN)
    assert eager.passes > usual.passes > 2
    assert 0 < eager.cycle_error < 1e-9 and 0 < usual.cycle_error < 1e-9
    error = eager.cycle_error + usual.cycle_error
    assert np.allclose(eager.root_values, usual.root_values, rtol=0, atol=error)
    for a, b in zip(eager.candidate_values, usual.candidate_values):
        assert a.shape == b.shape and np.allclose(a, b, rtol=0, atol=error)


def test_solve_exact():
    from gmpy2 import mpq

    x = solve_exact({"a": {"b": mpq(1, 2)}, "b": {"a": mpq(1, 3)}}, {"a": mpq(1), "b": mpq(2)})
    assert x == {"a": mpq(12, 5), "b": mpq(14, 5)}


def test_exact_values_satisfy_bellman(rooted):
    """Every chance node's exact value is the sum of its results' values (loops included), every decision's
    the best of its options (stop and every legal action, each computed exactly)."""
    p, table, root = rooted
    exact = exact_bus_turn(p.mode, p.recycle, OPTIMAL, root)
    start, score = table.index[p.bus_state], p.score
    exact.action_values(start, score)
    pairs = [(i, s) for (i, s) in list(exact._values) if table.kind[i] == CHANCE][:: 7][:40]
    assert pairs
    for c, s in pairs:
        total = Fraction(0)
        den = table.denominator[c]
        for d, j, w in table.edges[c]:
            total += Fraction(w, den) * to_fraction(exact.value(j, s + d))
        for h, w in table.loops[c]:
            total += Fraction(w, den) * to_fraction(exact.value(h, s))
        assert to_fraction(exact.value(c, s)) == total
    decisions = [(j, s + d) for c, s in pairs[:8] for d, j, _ in table.edges[c] if table.kind[j] == DECISION]
    for j, s in decisions[:12]:
        assert exact.value(j, s) == max(exact.action_values(j, s).values())


@pytest.mark.parametrize(("mode", "objective"), [(ORIGINAL, "expected-brains"), (SANTA, "expected-brains"),
                                                 (BSAM, "expected-brains"), (BSAM, "reach:7"), (BSAM, "rule:6,3")])
def test_odds_are_consistent(mode, objective):
    p = ROOTS[mode]
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


@pytest.mark.parametrize("objective", ["expected-brains", "reach:8"])
def test_residues_give_the_rationals_distribution(objective):
    """The score distribution flowed as residues and recovered (acyclic tables) is the one flowed in exact
    rationals, fraction for fraction, from a riding position and from one before boarding."""
    exact = exact_bus_turn(ORIGINAL, "before-draw", parse_objective(objective))
    table = exact.table
    for p in (bus(footprints=["green"], brains=["green", "yellow"], shotguns=["red"]),
              bus(footprints=["red"], brains=["green", "yellow"], shotguns=["yellow"], riding=True, bus_brains=1)):
        i = table.index[p.bus_state]
        for action, c in table.actions[i]:
            flowed = exact._forward(c, p.score)
            assert flowed == exact._flow_rationals(c, p.score), action
            assert sum(flowed.values()) == 1


def test_a_cyclic_distribution_in_residues_is_the_rationals_one(monkeypatch):
    """Big Summer with the bus: YIELD's rescues make cycles through lower scores. The flow in residues, each
    strongly connected set of (node, score) pairs solved as a system modulo every prime, gives the distribution
    of the flow in exact rationals fraction for fraction."""
    p = bus(mode=BSAM, footprints=["hunk", "hottie"], brains=["green", "yellow"], shotguns=["red"])
    table = bus_table_for(BSAM, "before-draw", p.bus_state)
    exact = exact_bus_turn(BSAM, "before-draw", OPTIMAL, p.bus_state)
    sizes, solve = [], Residues.solve
    monkeypatch.setattr(Residues, "solve", lambda field, a, b: sizes.append(len(b)) or solve(field, a, b))
    c = dict(table.actions[table.index[p.bus_state]])["board"]
    flowed = exact._forward(c, p.score)
    assert max(sizes) > 1  # cycles of several pairs were solved in residues
    assert flowed == exact._flow_rationals(c, p.score)
    assert sum(flowed.values()) == 1


def test_only_the_last_rooted_bus_tables_are_kept():
    """A server answers position after position: a rooted bus table, with its solution and exact values (up to
    4.4 GB in a Double Feature mode), is kept for the last `kept.SIZES["bus rooted"]` positions only
    (were all kept, memory would grow by 0.4 GB with each Big Summer position one shotgun in)."""
    positions = [bus(mode=BSAM, footprints=["green"], brains=brains, shotguns=["red", "red"])
                 for brains in (["green"], ["yellow"], ["green", "green"], ["green", "yellow"])]
    for p in positions:
        odds(p)
    roots = {p.bus_state for p in positions}
    gc.collect()
    assert sum(isinstance(o, BusTable) and o.root in roots for o in gc.get_objects()) <= SIZES["bus rooted"]


def test_the_bus_is_worth_something_from_the_turn_start():
    """Every bus decision is optional, so the bus cannot lower the optimal turn's expected score (2.2591 without
    it); it adds about a quarter of a brain."""
    value = bus_solve(ORIGINAL, "before-draw", OPTIMAL).root_values[0]
    assert 2.4 < value < 2.6


# -- Monte Carlo, written again from the rules ---------------------------------------------------------------
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
def test_next_roll_against_physical_dice(position, action):
    assert_next_roll_matches(position, seed=3003, n=N // 2, action=action)


@pytest.mark.parametrize(("mode", "objective"), [(m, "expected-brains") for m in ROOTS] + [
    (BSAM, "rule:6,3"), (SANTA, "reach:7")])
def test_turn_score_distribution(mode, objective):
    """Whole turns with the solved policy (boarding, staying, getting off, the brain given up) on physical
    dice, against the exact value and score distribution."""
    assert_turns_match(ROOTS[mode], objective)


def test_santa_three_shotguns_from_a_bust_against_physical_dice():
    """The earliest Santa bus position the API answers (room 2: a shotgun token taken, his helmet still possible;
    no rescue, so no cycle): riding, with stay and get-off to choose from."""
    assert_turns_match(bus(mode=SANTA, riding=True, bus_shotguns=1, footprints=["green"], brains=["green", "yellow"]),
                       "expected-brains")


def test_the_sequel_with_rescues_against_physical_dice():
    """The sequel with the bus two shotguns in (YIELD's rescues make cycles through lower scores), solved exactly
    without its score distribution: stopping is best, and turns that board and then follow its policy on physical
    dice average the exact value of boarding (the whole sequel bus turn in floats: tests/test_approximate.py)."""
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
