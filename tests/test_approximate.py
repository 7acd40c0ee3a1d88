"""Positions whose exact fractions are out of reach, answered from the float solution of their turn
(analysis.odds ``exact=False``, analysis.budgets.approximate): Direct-to-Video Sequel without the School Bus more than
3 shotguns from a bust (its whole turn, ~6 million (state, score) pairs to the cap of 2,904 brains), and Santa
with the School Bus 4 shotguns from a bust (his whole bus turn).

Each answer's values are floats with their bound; the decision is checked against the exact one where both
exist (one shotgun later), the turn's value against physical dice, the answers against the spec. The whole
turns these tests solve are 2.5-2.8 GB each, so they run in a module of their own, whose caches are emptied
when it ends (`release`).
"""

from __future__ import annotations

import csv
import io
import random
from fractions import Fraction
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient

from analysis import kept, next_roll, odds, simulate
from analysis.budgets import approximate, room
from analysis.odds import NearTie
from api import spec
from api.cli import main
from workers import solutions

from .montecarlo import within_4_sigma
from .responses import exact, fields, position_of, problem, query

OPERATION = spec.load()[1]["paths"]["/v1/odds"]["post"]
SEQUEL = "direct-to-video-sequel"
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


def test_the_sequel_turn_in_floats_against_physical_dice() -> None:
    """Turns from the sequel's turn start played on physical dice (analysis/simulate.py) with the stored solution's
    policy (roll where rolling is worth more than the score): their mean within 4 sigma of its value of rolling."""
    turn = solutions.load(SEQUEL, "before-draw")
    start = position_of(EARLY[0])

    def rolls(played: simulate.Turn) -> bool:
        p = played.position()
        return turn.roll(turn.node(p), p.score) > p.score

    rng = random.Random(2026)
    scores = [simulate.play_turn(start, rolls, rng) for _ in range(4_000)]
    assert within_4_sigma(scores, turn.roll(turn.node(start), 0))


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
