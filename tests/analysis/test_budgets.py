"""analysis/budgets.py: how far from a bust a position is answered for one request, in full, exactly, in floats or not
at all (`room`, `approximate`, `left_out`, `too_large`), and the answers past the exact budget, from the float solution
of their turn (analysis.odds ``exact=False``, stored solutions): Direct-to-Video Sequel without the School Bus more than
3 shotguns from a bust (its whole turn, ~6 million (state, score) pairs to the cap of 2,904 brains), and Santa with the
School Bus 4 shotguns from a bust (his whole bus turn).

Each answer's values are floats with their bound; the decision is checked against the exact one where both
exist (one shotgun later), the answers against the spec. The whole turns these tests solve are 2.5-2.8 GB each, so
they run in a module of their own, whose caches are emptied when it ends (`release`). Two tests check the API's
rendering of such an answer (its documented example, the command line).
"""

from __future__ import annotations

import csv
import io
from fractions import Fraction
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient

from analysis import Position, Reach, kept, next_roll, odds
from analysis.budgets import MAX_SCORE, MAX_TARGET, approximate, left_out, max_room, room, too_large
from analysis.odds import NearTie
from analysis.policy import CAP_MARGIN
from api import spec
from api.cli import main
from workers import solutions

from ..responses import exact, fields, position_of, problem, query

OPERATION = spec.load()[1]["paths"]["/v1/odds"]["post"]
SEQUEL = "direct-to-video-sequel"
BSAM, SANTA = "big-summer-action-movie", "santa-claus-meets-the-zombies"
EARLY = [{"mode": SEQUEL}, {"mode": SEQUEL, "footprints": ["green"], "brains": ["green", "yellow"]},
         {"mode": SEQUEL, "footprints": ["green"], "brains": ["green"], "effects": ["helmet"]}]  # room 3
LATER = [  # room 2 (Santa's helmet still possible, or in force), answered exactly
    {"mode": SEQUEL, "footprints": ["green"], "brains": ["green"], "shotguns": ["red"]},
    {"mode": SEQUEL, "footprints": ["green", "green"], "shotguns": ["green"]},
    {"mode": SEQUEL, "footprints": ["green"], "brains": ["green"], "shotguns": ["red"], "effects": ["helmet"]},
]


def _release() -> None:
    """Empty the caches of whole-turn tables and solutions (2.5-2.8 GB each here)."""
    kept.forget("whole", "bus rooted")


def test_room_three_is_answered_in_floats() -> None:
    assert [room(position_of(body)) for body in EARLY + LATER] == [3, 3, 3, 2, 2, 2]
    assert all(approximate(position_of(body)) for body in EARLY)
    assert not any(approximate(position_of(body)) for body in LATER)


# -- the budgets: how far from a bust each kind of position is answered ---------------------------------------------
@pytest.mark.parametrize(("position", "expected"), [
    (Position(), 2),  # three shotguns bust: two more can be taken
    (Position(footprints=["green"], brains=["green"], shotguns=["red"]), 1),
    (Position(mode=SANTA), 3),  # Santa's helmet, still in the cup, may yet raise the threshold to 4
    (Position(mode=SANTA, footprints=["green"], brains=["green"], shotguns=["santa"]), 1),  # shot: no helmet to come
    (Position(mode=SANTA, footprints=["red", "red"], brains=["yellow"], effects=["helmet"]), 3),  # in force
    (Position(mode=BSAM, footprints=["green"], brains=["green", "yellow"]), 2),  # Hunk and Hottie raise nothing
    (Position(mode=SANTA, school_bus=True, riding=True, bus_shotguns=1, footprints=["green"],
              brains=["green", "yellow"]), 2),  # a shotgun token counts as a shotgun
], ids=["turn start", "a shotgun", "santa", "santa shot", "helmet", "hunk and hottie", "a shotgun token"])
def test_room_counts_the_shotguns_a_turn_can_still_take(position: Position, expected: int) -> None:
    assert room(position) == expected


def test_each_kind_of_position_is_answered_within_its_limits() -> None:
    """The base game is answered anywhere, exactly; the sequel without the bus exactly up to room 2 and in floats
    past it; with the bus, Big Summer with its distribution up to room 1, its values only (expected brains) at room 2,
    and the sequel's bus turn start not at all (no float solution of it is solved for one request)."""
    assert max_room(Position()) is None and too_large(Position()) is None
    assert approximate(Position()) is None and left_out(Position()) is None
    early = Position(mode=SEQUEL, footprints=["green"], brains=["green", "yellow"])
    assert max_room(early) == 2 and too_large(early) is None
    assert approximate(early) == left_out(early) and "3 shotguns from a bust" in approximate(early)

    one_shotgun = Position(mode=BSAM, school_bus=True, footprints=["green"], brains=["green"], shotguns=["red"])
    assert room(one_shotgun) == max_room(one_shotgun) == 1
    assert left_out(one_shotgun) is None and too_large(one_shotgun, Reach(5)) is None
    none_yet = Position(mode=BSAM, school_bus=True, footprints=["green"], brains=["green", "yellow"])
    assert room(none_yet) == 2 and approximate(none_yet) is None
    assert "score distribution" in left_out(none_yet) and too_large(none_yet) is None
    assert too_large(none_yet, Reach(5)).field == "objective"

    start = Position(mode=SEQUEL, school_bus=True)
    assert room(start) == 3 and approximate(start) is None and too_large(start).field == "mode"
    later = Position(mode=SEQUEL, school_bus=True, footprints=["green"], brains=["green", "yellow"])
    assert too_large(later).field == "shotguns" and "4 shotguns from a bust" in too_large(later).reason


def test_a_far_target_is_refused_with_the_bus_and_early_in_the_sequel() -> None:
    """`MAX_TARGET` brains above the score is the most solved with the School Bus, and in the sequel two shotguns
    from a bust or further; elsewhere any target is."""
    def far(position: Position) -> Reach:
        return Reach(position.score + MAX_TARGET + 1)

    def near(position: Position) -> Reach:
        return Reach(position.score + MAX_TARGET)

    bus = Position(school_bus=True)
    assert too_large(Position(), far(Position())) is None
    assert too_large(bus, near(bus)) is None and too_large(bus, far(bus)).field == "objective"
    sequel_room_2 = Position(mode=SEQUEL, footprints=["green"], brains=["green"], shotguns=["red"])
    sequel_room_1 = Position(mode=SEQUEL, footprints=["green"], brains=["green"], shotguns=["red", "red"])
    assert (room(sequel_room_2), room(sequel_room_1)) == (2, 1)
    assert too_large(sequel_room_2, far(sequel_room_2)).field == "objective"
    assert too_large(sequel_room_2, near(sequel_room_2)) is None
    assert too_large(sequel_room_1, far(sequel_room_1)) is None


# -- the highest certified score of a capped turn ---------------------------------------------------------------------
@pytest.mark.parametrize(("mode", "school_bus"), [("original", False), (BSAM, False), (SANTA, False), (SEQUEL, False),
                                                  ("original", True), (BSAM, True), (SANTA, True)])
def test_the_highest_score_answered_is_each_capped_solution_s_bound(mode: str, school_bus: bool) -> None:
    """`MAX_SCORE` holds the capped turns (a roll that cannot bust), each at its stored solution's top less the cap's
    margin: the bound up to which the cap moves no value (the run builds each of these: tests/conftest.py)."""
    meta = solutions.load(mode, "before-draw", school_bus).meta
    assert meta["capped"] == ((mode, school_bus) in MAX_SCORE)
    assert not meta["capped"] or MAX_SCORE[mode, school_bus] == meta["top"] - CAP_MARGIN


def test_a_score_above_the_certified_bound_is_refused(client: FlaskClient) -> None:
    """Santa's School Bus turn at 480 brains, two green footprints in hand and his helmet in force: its rolls can bust
    and are worth rolling on (m/q up to 789 brains), past the stored solution's cap, so neither it nor a solve for
    the request answers: a 422 naming ``banked``. At the bound it is answered."""
    body = {"mode": SANTA, "school_bus": True, "footprints": ["green", "green"], "effects": ["helmet"], "banked": 480}
    for objective in ("expected-brains", "reach:30"):
        assert fields(problem(client.post("/v1/odds", json={**body, "objective": objective}), 422)) == ["banked"]
    assert too_large(position_of(body)).field == "banked"
    at = {**body, "banked": MAX_SCORE[SANTA, True]}
    assert too_large(position_of(at)) is None
    assert client.post("/v1/odds", json=at).get_json()["decision"]["action"] == "roll"


def test_the_documented_float_answer_is_the_answer(app: Flask) -> None:
    name = "direct-to-video-sequel-early"
    body = OPERATION["requestBody"]["content"]["application/json"]["examples"][name]["value"]
    documented = OPERATION["responses"]["200"]["content"]["application/json"]["examples"][name]["value"]
    assert app.test_client().post("/v1/odds", json=body).get_json() == documented


@pytest.mark.parametrize("body", EARLY, ids=["turn start", "no shotgun", "no shotgun, helmet"])
def test_the_sequel_with_most_of_its_turn_ahead_is_answered_in_floats(client: FlaskClient,
                                                                     body: dict[str, Any]) -> None:
    """Room 3, from the stored solution: the next roll exact, the decision, the value of rolling as a float with
    the solution's bound (`Approximate`, the response checked against the spec), the score distribution in floats
    with its own bound; CSV and text agree, and `exact=true` is a 422 naming `exact`."""
    position = position_of(body)
    answer = client.post("/v1/odds", json=body).get_json()
    decision = answer["decision"]
    assert decision["action"] == "roll" and "turn_left_out" not in answer
    assert set(decision["roll"]) == {"value", "within"}
    solution = client.get(f"/v1/solutions/solution-{SEQUEL}-before-draw-v1").get_json()
    assert decision["roll"]["within"] == solution["within"]
    assert exact(decision["stop"]) == position.score
    values = {a["action"]: a["value"] for a in decision["actions"]}
    assert values["roll"] == decision["roll"] and values.get("stop", decision["stop"]) == decision["stop"]
    assert exact(answer["next_roll"]["bust"]) == next_roll(position).bust
    turn = answer["turn"]
    mean = sum(s["score"] * s["value"] for s in turn["score_distribution"])
    assert abs(mean - decision["roll"]["value"]) < 1e-6
    rows = dict(csv.reader(io.StringIO(client.get("/v1/odds", query_string={**query(body), "format": "csv"}).text)))
    assert float(rows["roll"]) == decision["roll"]["value"] and rows["action"] == "roll"
    text = client.get("/v1/odds.txt", query_string={**query(body), "field": "roll"}).text
    assert float(text) == decision["roll"]["value"]
    refused = problem(client.get("/v1/odds.txt", query_string={**query(body), "field": "roll", "exact": "true"}), 422)
    assert fields(refused) == ["exact"]


@pytest.mark.parametrize("body", LATER, ids=["one shotgun", "a green shotgun", "one shotgun, helmet"])
def test_the_float_values_are_within_their_bound_of_the_exact_ones(client: FlaskClient, body: dict[str, Any]) -> None:
    """Where the sequel has exact values (two shotguns from a bust and nearer, over the states a position reaches),
    the stored solution's answer has the same decision, and its values of rolling and its score distribution are
    within their bounds of the exact ones."""
    position = position_of(body)
    floats = client.post("/v1/odds", json=body).get_json()
    exact_answer = odds(position)
    assert floats["decision"]["action"] == exact_answer.decision.action
    roll = floats["decision"]["roll"]
    assert abs(Fraction(roll["value"]) - exact_answer.decision.roll) <= roll["within"]
    distribution = {s["score"]: s["value"] for s in floats["turn"]["score_distribution"]}
    assert all(abs(distribution.get(k, 0.0) - float(q)) <= floats["turn"]["within"]
               for k, q in exact_answer.score_distribution.items())


def test_an_exact_tie_with_most_of_the_turn_ahead_is_a_tie(client: FlaskClient) -> None:
    """Rolling and stopping equal within the bound (7 brains, a yellow, a red and Hottie's footprints in hand,
    reached from the sequel's turn start; an exact tie): the answer says so, with both values."""
    body = {"mode": SEQUEL, "footprints": ["yellow", "red", "hottie"],
            "brains": ["green", "green", "green", "green", "yellow", "red", "santa"]}
    answer = client.post("/v1/odds", json=body).get_json()
    decision = answer["decision"]
    assert decision["action"] == "tie"
    assert abs(decision["roll"]["value"] - exact(decision["stop"])) <= decision["roll"]["within"]


def test_santa_with_the_bus_before_a_shotgun_is_answered_in_floats(client: FlaskClient) -> None:
    """Room 3, his whole bus turn: the stored solution's values (checked against the spec), the decision, the brain
    given up on tyre tracks. Room 2, riding with a brain token (stay: 89 tyre-tracks results, each a
    choice among the token and brain dice): the float answer has the exact one's
    decision, actions and tyre-tracks choices, its values within their bound of the exact ones."""
    _release()  # the sequel's whole turn: not held beside Santa's
    early = {"mode": "santa-claus-meets-the-zombies", "school_bus": True, "footprints": ["green"],
             "brains": ["green", "green"]}
    position = position_of(early)
    answer = client.post("/v1/odds", json=early).get_json()
    decision = answer["decision"]
    assert approximate(position) is not None  # (without the stored solution: `exact=False`, below)
    assert 0 < answer["turn"]["within"] < 1e-6  # read from the stored solution, the distribution included
    assert decision["action"] == "board" and exact(decision["stop"]) == 2
    values = {a["action"]: a["value"] for a in decision["actions"]}
    assert list(values) == ["stop", "roll", "board"] and values["board"] == decision["roll"]
    assert values["board"]["value"] > values["roll"]["value"] + values["board"]["within"] + values["roll"]["within"]
    assert decision["give_up"] and all(g["choice"] in [c["give_up"] for c in g["choices"]] for g in decision["give_up"])
    # a fixed rule: below its target it rolls on, with the better rolling action; at its target the rolls are not
    # solved (the rule stops there), so their values, and the answer, are out of reach in floats
    rule = odds(position, "rule:3,3", exact=False).decision
    assert rule.action == "board" and rule.actions["board"] > rule.actions["roll"] > 2
    with pytest.raises(NearTie):
        odds(position, "rule:2,3", exact=False)
    riding = {"mode": "santa-claus-meets-the-zombies", "school_bus": True, "riding": True, "bus_brains": 1,
              "brains": ["green", "yellow", "green"], "shotguns": ["red"]}
    assert room(position_of(riding)) == 2 and approximate(position_of(riding)) is None
    exact_odds, float_odds = odds(position_of(riding)), odds(position_of(riding), exact=False)
    assert float_odds.decision.action == exact_odds.decision.action
    assert float_odds.decision.actions.keys() == exact_odds.decision.actions.keys()
    for action, value in exact_odds.decision.actions.items():
        assert abs(Fraction(float_odds.decision.actions[action]) - value) <= 1e-9 * max(1, value), action
    assert [g.choice for g in float_odds.give_up] == [g.choice for g in exact_odds.give_up] != []
    for f, e in zip(float_odds.give_up, exact_odds.give_up):
        assert all(abs(Fraction(f.choices[k]) - v) <= 1e-9 * max(1, v) for k, v in e.choices.items())


def test_the_command_line_renders_a_float_answer() -> None:
    """The sequel before its first shotgun: the values of rolling are floats, and the text says so."""
    result = CliRunner().invoke(main, ["odds", "--mode", SEQUEL, "--footprints", "green", "--brains", "green,yellow"])
    assert result.exit_code == 0, result.output
    assert "Decision (expected-brains): ROLL" in result.stdout and "(float, within 3e-05)" in result.stdout
    assert "Final score if you roll now and play on optimally" in result.stdout
