"""analysis/position.py: validation names the field and the reason; reachable positions are accepted, in every mode and
with the School Bus."""

import pytest
from hypothesis import given

from analysis import Position, PositionError
from analysis.position import MAX_BANKED, POSITION_FIELDS, SCHOOL_BUS_FIELDS, banked_reachable
from analysis.roll import needs_recycling
from analysis.table import table_for

from ..strategies import positions
from .roots import bus


def test_cup_is_derived_and_piles_are_normalised():
    p = Position(footprints=["red", "green"], brains=["green"], shotguns=["red"])
    assert p.footprints == ("green", "red")
    assert p.cup == {"green": 4, "yellow": 4, "red": 1}
    assert p.score == 1 and not p.turn_start
    assert Position().turn_start and Position().cup == {"green": 6, "yellow": 4, "red": 3}


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"mode": "chess"}, "mode", "unknown mode"),
        ({"recycle": "never"}, "recycle", "unknown variant"),
        ({"footprints": ["blue", "green", "green"]}, "footprints[0]", "unknown die"),
        ({"footprints": "green"}, "footprints", "list of die names"),
        ({"brains": ["red"] * 4}, "brains", "4 red dice"),
        ({"brains": ["red", "red"], "shotguns": ["red", "red"]}, "shotguns", "4 red dice"),
        ({"shotguns": ["red", "red", "green"]}, "shotguns", "already over"),
        ({"footprints": ["green"] * 4}, "footprints", "4 footprint dice"),
        ({"brains": ["green"]}, "footprints", "only 1 dice out"),
        ({"banked": -1}, "banked", "negative"),
        ({"banked": MAX_BANKED + 1}, "banked", "absurd"),
        ({"banked": 2.5}, "banked", "whole number"),
        ({"banked": True}, "banked", "whole number"),
        ({"banked": 11}, "banked", "none are"),
        ({"brains": ["green"] * 3, "banked": 5}, "banked", "exactly 5"),
        ({"brains": ["green"] * 3, "banked": 15}, "banked", "exactly 15"),
    ],
)
def test_impossible_positions_name_the_field(fields, field, words):
    with pytest.raises(PositionError) as info:
        Position(**fields)
    assert field in {e.field for e in info.value.errors}
    assert any(words in e.reason for e in info.value.errors), info.value.errors


BSAM, SANTA, DTV = "big-summer-action-movie", "santa-claus-meets-the-zombies", "direct-to-video-sequel"


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        # Hunk's only brain face is a double brain; Hottie has no double face; Santa's double brain is his gift
        ({"mode": BSAM, "footprints": ["red"], "brains": ["hunk", "green"]}, "brains", "hunk die has no single brain"),
        ({"mode": BSAM, "footprints": ["red"], "brains": ["hunk", "green"]}, "brains", "list it in double_brains"),
        ({"mode": BSAM, "footprints": ["red"], "brains": ["hottie", "green"], "double_brains": ["hottie"]},
         "double_brains", "hottie die has no double-brain face"),
        ({"mode": BSAM, "footprints": ["red"], "brains": ["green"], "shotguns": ["hottie"],
          "double_shotguns": ["hottie"]}, "double_shotguns", "hottie die has no double-shotgun face"),
        ({"mode": SANTA, "footprints": ["red"], "brains": ["green"], "shotguns": ["santa"],
          "double_shotguns": ["santa"]}, "double_shotguns", "santa die has no double-shotgun face"),
    ],
)
def test_a_pile_shows_only_faces_its_dice_have(fields, field, words):
    with pytest.raises(PositionError) as info:
        Position(**fields)
    assert any(e.field == field and words in e.reason for e in info.value.errors), info.value.errors


@pytest.mark.parametrize(
    "fields",
    [
        {"mode": BSAM, "footprints": ["red"], "brains": ["hunk", "green"], "double_brains": ["hunk"]},
        {"mode": BSAM, "footprints": ["red"], "brains": ["green"], "shotguns": ["hunk"]},  # a single shotgun
        {"mode": BSAM, "footprints": ["red"], "brains": ["green"], "shotguns": ["hunk"], "double_shotguns": ["hunk"]},
        {"mode": BSAM, "footprints": ["red"], "brains": ["hottie", "green"]},
        {"mode": BSAM, "footprints": ["red"], "brains": ["green"], "shotguns": ["hottie"]},
        {"mode": SANTA, "footprints": ["red"], "brains": ["santa", "green"], "double_brains": ["santa"]},  # gift
        {"mode": SANTA, "footprints": ["red"], "brains": ["santa", "green"]},  # his single brain
        # the School Bus's DEAD END turns footprints, Hunk's too, into single brains
        {"mode": BSAM, "school_bus": True, "footprints": ["red"], "brains": ["hunk", "green"]},
    ],
    ids=["hunk's double brain", "hunk's shotgun", "hunk's double shotgun", "hottie's brain", "hottie's shotgun",
         "santa's gift",
         "santa's brain", "hunk's dead end"],
)
def test_faces_the_dice_have_are_accepted(fields):
    Position(**fields)


def test_every_error_is_reported_at_once():
    with pytest.raises(PositionError) as info:
        Position(footprints=["blue"], brains=["purple"], banked=-3)
    assert {e.field for e in info.value.errors} == {"footprints[0]", "brains[0]", "banked"}


def test_banked_reachable_with_shotguns():
    # With two shotguns a recycling can note 9 brains (9 brains + 2 shotguns = 11 dice out of 13).
    Position(brains=["green"] * 3, shotguns=["red", "red"], banked=9)
    Position(brains=["green"] * 3, banked=11)
    Position(brains=["green"] * 3, banked=26)


@given(positions())
def test_generated_positions_are_valid(p):
    assert sum(p.cup.values()) + len(p.footprints) + len(p.brains) + len(p.shotguns) == 13


def test_banked_rule_matches_breadth_first_search():
    """Ground truth: propagate bit masks of reachable banked values (< 60) over every roll."""
    limit = 60
    full = (1 << limit) - 1
    table = table_for("original")
    masks = [0] * len(table)
    masks[table.start] = 1
    shift = [sum(s.brains) if needs_recycling(table.mode, s) else 0 for s in table.states]
    changed = True
    while changed:
        changed = False
        for i, row in enumerate(table.edges):
            if not masks[i]:
                continue
            moved = (masks[i] << shift[i]) & full
            for _, j, _ in row:
                if moved | masks[j] != masks[j]:
                    masks[j] |= moved
                    changed = True
    for i, state in enumerate(table.states):
        out = sum(state.hand) + sum(state.brains) + sum(state.shotguns)
        for banked in range(limit - 13):
            expected = bool(masks[i] >> banked & 1)
            rule = banked == 0 or (out > 0 and banked_reachable(banked, sum(state.shotguns), out))
            assert rule == expected, (state, banked)


def test_the_position_is_defined_once() -> None:
    """`POSITION_FIELDS` (by part: base game, Double Feature, School Bus) is `Position`'s fields, in order, and
    every form a position takes elsewhere is made of them: the /v1/odds answer's position, the review's decisions
    and the CLI's options (the requests: test_every_operation_that_takes_a_position_takes_all_of_it)."""
    from dataclasses import fields

    from analysis.position import BASE_FIELDS, COUNTS, DOUBLE_FEATURE_FIELDS, PILES
    from api import spec
    from api.cli import odds_command

    declared = [f for f in fields(Position) if f.init]
    assert tuple(f.name for f in declared) == POSITION_FIELDS == BASE_FIELDS + DOUBLE_FEATURE_FIELDS + SCHOOL_BUS_FIELDS
    kinds = {f.name: f.type for f in declared}
    assert {n for n, t in kinds.items() if t == "tuple[str, ...]"} == {*PILES, "effects"}
    assert {n for n, t in kinds.items() if t == "int"} == set(COUNTS)
    schemas = spec.load()[1]["components"]["schemas"]
    assert set(schemas["Position"]["properties"]) == {*POSITION_FIELDS, "first_roll", "score", "cup"}
    game = {"mode", "recycle"}  # a game log gives them once; it has no School Bus
    assert game <= set(schemas["GameLog"]["properties"])
    assert set(schemas["ReviewPosition"]["properties"]) == {*BASE_FIELDS, *DOUBLE_FEATURE_FIELDS, "score"} - game
    assert {p.name for p in odds_command.params} == {*POSITION_FIELDS, "objective", "exact", "verbose", "as_json"}


# Every operation of openapi.yaml that takes a position, with its own parameters (in the query, or fields of its JSON
# body) that are not the position's; and the fields of the position an operation does not take, with why.
POSITION_OPERATIONS = {
    ("/v1/odds", "get"): {"objective", "scores", "seat", "final_round", "exact", "format"},
    ("/v1/odds", "post"): {"objective", "scores", "seat", "final_round", "exact"},
    ("/v1/odds.txt", "get"): {"objective", "scores", "seat", "final_round", "field", "exact"},
    ("/v1/bust.txt", "get"): {"exact"},
    ("/v1/advice.txt", "get"): {"objective", "scores", "seat", "final_round"},
    ("/v1/win.txt", "get"): {"scores", "seat", "final_round"},
}
NOT_TAKEN = {("/v1/win.txt", "get"): set(SCHOOL_BUS_FIELDS)}  # (its full-game tables are of games without the bus)


def test_every_operation_that_takes_a_position_takes_all_of_it() -> None:
    """A field added to the position and forgotten by an operation of the contract fails here, and so does an
    operation that takes a position and is not listed above."""
    from api import spec

    document = spec.load()[1]

    def parameters(operation: dict) -> set[str]:
        names = {spec.resolve(document, p)["name"] for p in operation.get("parameters", ())}
        body = operation.get("requestBody", {}).get("content", {}).get("application/json")
        return names | set(spec.resolve(document, body["schema"])["properties"] if body else ())

    taken = {(path, method): parameters(operation) for path, item in document["paths"].items()
             for method, operation in item.items() if method in ("get", "post", "put", "patch", "delete")}
    position = set(POSITION_FIELDS)
    assert {op for op, names in taken.items() if names & position - {"mode", "recycle"}} == set(POSITION_OPERATIONS)
    for op, own in POSITION_OPERATIONS.items():
        assert taken[op] == position - NOT_TAKEN.get(op, set()) | own, op


# -- Double Feature positions ----------------------------------------------------------------------------------------
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


# -- School Bus positions --------------------------------------------------------------------------------------------
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
