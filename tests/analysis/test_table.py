"""analysis/table.py: the transition table: every dice state, every roll, a valid sweep order; rooted tables of the
Double Feature (rescues lower the score), the School Bus tables (decision and chance nodes, loops and cycles), and
which tables are kept."""

import gc
from fractions import Fraction

import numpy as np
import pytest

from analysis import BusState, Position, next_roll, odds
from analysis.kept import SIZES
from analysis.position import min_noted
from analysis.roll import NextRoll, TyreTracks, bus_results, legal_actions, transitions
from analysis.table import CHANCE, BusTable, bus_table_for, table_for

from .roots import ROOTS, bus

ORIGINAL, BSAM = "original", "big-summer-action-movie"


@pytest.fixture(scope="module")
def table():
    return table_for("original")


def test_state_count_matches_neller(table):
    """ANCHORS.md: 10,820 dice states in Neller's solver, which also counts the 54 piles of one or two
    dice out of the cup that no roll produces (9 single dice + 45 pairs over 9 pile/colour slots)."""
    assert len(table) == 10_766 == 10_820 - 54


def test_rows_are_probability_distributions(table):
    for i in range(0, len(table), 97):
        total = sum(p for _, _, p in table.edges[i]) + table.bust[i] + table.self_loop[i]
        assert total == 1


def test_self_loop_is_three_footprints_again(table):
    """Every die has two footprint faces of six, so three footprint dice come back with (1/3)**3."""
    for i, state in enumerate(table.states):
        assert table.self_loop[i] == (Fraction(1, 27) if sum(state.hand) == 3 else 0)


def test_sweep_order_is_valid(table):
    """Every roll leads to an earlier block, or shows brains, or leads to an earlier layer."""
    place = {}
    for b, block in enumerate(table.blocks):
        for k, layer in enumerate(block):
            for i in layer:
                place[int(i)] = (b, k)
    assert len(place) == len(table)
    for i, row in enumerate(table.edges):
        for d, j, _ in row:
            (bi, ki), (bj, kj) = place[i], place[j]
            assert bj < bi or (bj == bi and (d > 0 or kj < ki)), (table.states[i], table.states[j])


def test_float_matrices_match_exact_edges(table):
    dense = {d: m.toarray() for d, m in table.matrices.items()}
    for i in range(0, len(table), 211):
        for d, j, p in table.edges[i]:
            assert dense[d][i, j] == float(p)
    assert np.allclose(sum(m.sum(axis=1).A1 for m in table.matrices.values()) + table.bust_f + table.self_loop_f, 1)


def test_draw_then_recycle_differs_only_where_the_cup_runs_out():
    before, after = table_for("original"), table_for("original", "draw-then-recycle")
    assert before.states == after.states
    mode = before.mode
    for i, state in enumerate(before.states):
        if sum(state.cup(mode)) >= 3 - sum(state.hand):
            assert transitions(mode, state, "before-draw") == transitions(mode, state, "draw-then-recycle")
            assert before.edges[i] == after.edges[i]


def test_rooted_tables_are_kept_for_the_last_positions_only():
    """A table built for one position (a Double Feature position's turn) is cached, but only for the last
    `kept.SIZES["rooted"]` positions: a server answering many positions must not keep every table it built (one
    shotgun into a direct-to-video-sequel turn, ~0.7 GB each); the whole-turn table is kept for good."""
    from analysis import Position
    from analysis.kept import SIZES

    roots = [Position(mode="big-summer-action-movie", footprints=("green",), brains=(brain,),
                      double_brains=(brain,) if brain == "hunk" else (),  # Hunk's only brain face is a double
                      shotguns=("red", "red")).state for brain in ("green", "yellow", "red", "hunk")]
    assert len(roots) > SIZES["rooted"]
    first = table_for("big-summer-action-movie", "before-draw", roots[0])
    assert table_for("big-summer-action-movie", "before-draw", roots[0]) is first
    for root in roots[1:]:
        table_for("big-summer-action-movie", "before-draw", root)
    again = table_for("big-summer-action-movie", "before-draw", roots[0])
    assert again is not first and again.states == first.states
    assert table_for("original") is table_for("original", "before-draw")


@pytest.mark.parametrize("mode", ["original", "direct-to-video-sequel"])
def test_a_state_code_reads_back_to_its_state(mode):
    """`_Codes.state` (one code, no arrays: the School Bus search decodes dice one at a time) and `_Codes.states`
    (arrays) both give back the state that was coded, effects included."""
    from analysis import Position
    from analysis.table import _codes

    root = Position(mode=mode, footprints=("green",), brains=("green", "yellow"), shotguns=("red", "red")).state
    table = table_for(mode, "before-draw", None if mode == "original" else root)
    states, codes = table.states, _codes(table.mode)
    numbers = np.array([codes.code(s) for s in states], dtype=np.int64)
    assert len(set(numbers.tolist())) == len(states)
    assert codes.states(numbers) == list(states)
    assert [codes.state(c) for c in numbers.tolist()] == list(states)
    assert any(s.effects for s in states) == (mode != "original")


def test_the_index_finds_every_state_and_nothing_else(table):
    """`Table.index` finds a state by its code: every state at its number, and no other key, not even a state
    outside the codes' range whose code is a table state's (7 green brains code as 1 yellow)."""
    from analysis.position import DiceState

    assert all(table.index[s] == i for i, s in enumerate(table.states))
    assert len(table.index) == len(table) and list(table.index) == list(table.states)
    real = next(s for s in table.states if s.brains[1] >= 1)
    alias = real._replace(brains=(real.brains[0] + 7, real.brains[1] - 1, real.brains[2]))
    unreachable = DiceState((0, 0, 0), (0, 1, 0), (0, 0, 0))
    for key in (alias, unreachable, real._replace(effects=("no-such-effect",)), (0, 0, 0), "state"):
        assert key not in table.index
        with pytest.raises(KeyError):
            table.index[key]
    assert table.index.get(alias) is None


# -- positions whose next roll recycles the cup, and positions after it -----------------------------------
# Two shotguns and nine or ten brains: the cup holds two dice and the next roll recycles (Santa in the pile stays
# out; Hunk shows only a double brain).
RECYCLING = {
    "original": {"brains": ["green"] * 6 + ["yellow"] * 4},
    "big-summer-action-movie": {"brains": ["green"] * 6 + ["yellow"] * 2 + ["hunk"], "double_brains": ["hunk"]},
    "santa-claus-meets-the-zombies": {"brains": ["green"] * 5 + ["yellow"] * 3 + ["santa"]},
    "direct-to-video-sequel": {"brains": ["green"] * 5 + ["yellow"] * 2 + ["hunk", "santa"],
                               "double_brains": ["hunk"]},
}


def _around_a_recycling(mode: str, recycle: str) -> list:
    """A position whose next roll recycles, and three after that roll (the brains noted): one with no dice in hand,
    two with footprints."""
    from analysis import Position
    from analysis.roll import next_roll

    p = Position(mode=mode, shotguns=["red", "red"], recycle=recycle, **RECYCLING[mode])
    roll = next_roll(p)
    assert roll.recycles
    after = [q for _, q in roll.results() if q is not None]
    assert after and all(q.banked >= 9 for q in after)
    held = [q for q in after if q.footprints]
    return [p, next(q for q in after if not q.footprints), held[0], held[-1]]


def _rolls(table, rows: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The rolls of states `rows` of `table`, each as (state's code, delta, target's code, ways * scale), sorted:
    two tables' rows compare with each other's denominators as `scale`."""
    counts = np.diff(table.edge_ptr)[rows]
    owner = np.repeat(np.arange(len(rows)), counts)
    k = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(table.edge_ptr[rows],
                                                                                               counts)
    out = np.stack([table.codes[rows][owner], table.edge_delta[k], table.codes[table.edge_to[k]],
                    table.edge_ways[k] * scale[owner]], axis=1)
    return out[np.lexsort(out.T[::-1])]


@pytest.fixture(scope="module")
def release_whole_tables():
    """The sequel's whole turn (~1 GB per recycle variant) is not kept for the other modules of this process."""
    yield
    from analysis import table

    table._whole_table.cache_clear()


@pytest.mark.parametrize("mode", list(RECYCLING))
@pytest.mark.parametrize("recycle", ["before-draw", "draw-then-recycle"])
def test_positions_around_a_recycling_are_in_the_whole_turn(mode, recycle, release_whole_tables):
    """A position whose next roll recycles the cup, and positions after it: the next roll is a distribution, the
    position's state is one of the whole turn's, and its rooted table builds (it crashed in Double Feature modes
    when the root recycles: no state of the search's first batch drew from the cup alone) with every state in the
    whole turn, each rolling as there."""
    from analysis.roll import next_roll

    whole = table_for(mode, recycle)
    number = dict(zip(whole.codes.tolist(), range(len(whole))))
    for p in _around_a_recycling(mode, recycle):
        assert sum(t.probability for t in next_roll(p).transitions) == 1
        assert p.state in whole.index
        rooted = table_for(mode, recycle, p.state)
        assert rooted.states[0] == p.state
        assert set(rooted.codes.tolist()) <= number.keys()
        mine, theirs = np.arange(len(rooted)), np.array([number[c] for c in rooted.codes.tolist()])
        den, whole_den = rooted.denominator, whole.denominator[theirs]
        assert np.array_equal(_rolls(rooted, mine, whole_den), _rolls(whole, theirs, den))
        for ways in ("bust_ways", "loop_ways"):
            assert np.array_equal(getattr(rooted, ways) * whole_den, getattr(whole, ways)[theirs] * den)


# -- Double Feature: rooted tables and the sweep order ---------------------------------------------------------------
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


# -- School Bus: tables, loops and cycles ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def original_table():
    return bus_table_for(ORIGINAL, "before-draw", None)


def test_table_rows_are_the_rolls(bus_rooted):
    """The table's search (compact keys) gives every chance node exactly `bus_results`' distribution."""
    _, table, _ = bus_rooted
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


def test_the_index_finds_every_node_and_nothing_else(bus_rooted):
    """`BusTable.index` finds a node by its dice's code and its kind: every key at its number, the stopped node
    among them, and no other key (another kind of node with the same dice, a phase or tokens it does not have)."""
    _, table, root = bus_rooted
    assert [table.index[k] for k in table.keys] == list(range(len(table)))
    assert table.index[root] == 0 and table.index[("stopped",)] in range(len(table))
    for key in (root._replace(phase="out", tokens=1), root._replace(tokens=2), root._replace(phase="flying"),
                TyreTracks(root.dice, 0, root.shotguns + 5), ("roll", root.dice, "riding", 0), ("bus", "dice", 0, 0),
                root.dice, (), "stopped", ("stopped", 1)):
        assert key not in table.index


def test_sweep_order(bus_rooted):
    _, table, _ = bus_rooted
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


def test_the_wavefront_solves_what_a_node_reads_before_it(original_table, bus_rooted):
    """`BusTable.offsets`: block b solves level T at step ``T - offsets[b]`` (blocks in order within a step), so every
    node of an earlier block that a roll reads at ``T + delta`` is solved first; and no block runs further behind
    than that asks."""
    for table in (original_table, bus_rooted[1]):
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


def test_only_rescues_with_yield_make_cycles(original_table, bus_rooted):
    assert not any(original_table.cyclic)
    p, table, _ = bus_rooted
    assert any(table.cyclic) == bool(p.game_mode.rescues)


def test_every_reached_node_is_a_valid_position(bus_rooted):
    """Every decision node a root reaches is a position `Position` accepts (the validation is no stricter
    than the rules), and every legal action's next roll is a distribution."""
    _, table, _ = bus_rooted
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
