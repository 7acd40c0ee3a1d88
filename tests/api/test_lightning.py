"""api/lightning.py: /v1/lightning through Flask's test client: the deck, the analysis, the advice, every refusal.

Every answer is checked against analysis.lightning itself (the API only renders it) and, under
TESTING, against openapi.yaml by the response validation hook.
"""

from __future__ import annotations

import csv
import io
from fractions import Fraction
from typing import Any
from urllib.parse import quote

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import given
from hypothesis import strategies as st

from analysis.lightning import (
    CARD_GRAMMAR,
    CERTIFIED_ERROR,
    DECK,
    WITHIN_HORIZON,
    advice,
    analyze,
    bonus_chase,
    race,
)
from api import spec

from ..responses import exact, fields, no_bug, problem
from ..strategies import FUZZ

ADVICE = "/v1/lightning/advice"
ANALYZE = "/v1/lightning/cards/analyze"
ROLL = "1,1,3,4,6,6"


def url(card: str, dice: str = ROLL, path: str = ADVICE, **extra: str) -> str:
    """A query string as a client must write it: the card URL-encoded (`|` %7C, `&` %26, `+` %2B)."""
    query = "&".join([f"card={quote(card, safe='')}", f"dice={dice}", *(f"{k}={v}" for k, v in extra.items())])
    return f"{path}?{query}"


# -- the deck -------------------------------------------------------------------------------------


def test_the_deck_lists_every_card_with_its_expected_throws(client: FlaskClient) -> None:
    response = client.get("/v1/lightning/cards")
    assert response.status_code == 200
    body = response.get_json()
    assert body["grammar"] == CARD_GRAMMAR
    assert [(c["name"], c["card"]) for c in body["cards"]] == [(name, card.text) for name, card in DECK.items()]
    for item in body["cards"]:
        assert exact(item["expected_throws"]) == analyze(item["card"]).expected_throws
    four = body["cards"][0]
    assert (four["card"], four["expected_throws"]["exact"]) == ("kind:4", "811138/203203")


def test_every_deck_card_round_trips_through_the_api(client: FlaskClient) -> None:
    """The canonical text the deck shows is a card the API accepts, and it analyses to itself."""
    for card in client.get("/v1/lightning/cards").get_json()["cards"]:
        body = client.post(ANALYZE, json={"card": card["card"]}).get_json()
        assert body["card"] == card["card"] and body["expected_throws"] == card["expected_throws"]


def test_the_spec_carries_the_card_grammar() -> None:
    document = spec.load()[1]
    description = document["components"]["schemas"]["LightningCard"]["description"]
    assert all(line in description for line in CARD_GRAMMAR.splitlines())
    assert "%7C" in document["components"]["parameters"]["card"]["description"]
    assert "%26" in document["components"]["parameters"]["card"]["description"]


# -- analysis -------------------------------------------------------------------------------------


def test_analysis_of_a_card(client: FlaskClient) -> None:
    response = client.post(ANALYZE, json={"card": "Kind:4"})
    assert response.status_code == 200 and response.mimetype == "application/json"
    body = response.get_json()
    truth = analyze("kind:4")
    assert body["card"] == "kind:4"
    assert exact(body["expected_throws"]) == truth.expected_throws == Fraction(811138, 203203)
    assert exact(body["variance"]) == truth.variance
    within = [exact(w) for w in body["within"]]
    assert within == list(truth.within)
    assert [w["throws"] for w in body["within"]] == list(range(1, WITHIN_HORIZON + 1))
    assert within[0] == Fraction(203, 3888)
    distribution = [exact(d) for d in body["distribution"]]
    assert [d["throws"] for d in body["distribution"]] == list(range(1, WITHIN_HORIZON + 1))
    assert all(p > 0 for p in distribution)
    assert [sum(distribution[:k]) for k in range(1, 21)] == within
    assert sum(distribution) + exact(body["beyond"]) == 1
    policy = body["policy"]
    assert policy["summary"] == truth.policy_summary and policy["verified_optimal"] is True
    assert policy["keeps_used"] == truth.keeps_used
    assert [(tuple(k["roll"]), tuple(k["keep"])) for k in policy["typical_keeps"]] == list(truth.typical_keeps)
    assert "race" not in body and "bonus_chase" not in body


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_the_race(client: FlaskClient, players: int) -> None:
    body = client.post(ANALYZE, json={"card": "kind:4 | straight", "players": players}).get_json()
    truth = race("kind:4 | straight", players)
    result = body["race"]
    assert result["players"] == players and result["exact"] is True
    assert exact(result["error_bound"]) == 0
    sole, tie = exact(result["sole_winner"]), exact(result["tie"])
    assert sole == truth.sole_winner[0] and tie == truth.tie
    assert players * sole + tie == 1
    assert exact(result["expected_throws"]) == truth.expected_throws
    assert 1 <= truth.expected_throws < exact(body["expected_throws"])  # racing ends sooner than chasing alone


def test_a_certified_race_says_it_is_not_exact(client: FlaskClient) -> None:
    """sum:21 with 6 players: the exact answer would be too large; every value is within error_bound."""
    result = client.post(ANALYZE, json={"card": "sum:21", "players": 6}).get_json()["race"]
    truth = race("sum:21", 6)
    assert result["exact"] is False
    bound = exact(result["error_bound"])
    assert bound == truth.error_bound and 0 < bound <= CERTIFIED_ERROR
    assert exact(result["sole_winner"]) == truth.sole_winner[0]
    assert exact(result["tie"]) == truth.tie
    assert exact(result["expected_throws"]) == truth.expected_throws


def test_fractions_longer_than_pythons_str_limit_are_written_whole(client: FlaskClient) -> None:
    """A six-player race on an exact multiset has ~4,900-digit fractions: past int-to-str's 4,300 digits."""
    card = "faces:1,1,2,3,5,6"
    result = client.post(ANALYZE, json={"card": card, "players": 6}).get_json()["race"]
    assert result["exact"] is True
    assert len(result["sole_winner"]["exact"]) > 4300 * 2
    assert exact(result["sole_winner"]) == race(card, 6).sole_winner[0]


@pytest.mark.parametrize("number", [1, 6])
def test_the_bonus_chase(client: FlaskClient, number: int) -> None:
    body = client.post(ANALYZE, json={"card": "kind:4", "number": number}).get_json()
    truth = bonus_chase("kind:4", number)
    chase = body["bonus_chase"]
    assert chase["number"] == number and chase["also_matches"] is True  # six of a kind is four of a kind
    assert exact(chase["p_pass"]) == truth.p_pass == exact(chase["expected_passes"])
    assert 0 < truth.p_pass < Fraction(1, 100)


def test_the_bonus_chase_when_six_numbers_do_not_match(client: FlaskClient) -> None:
    chase = client.post(ANALYZE, json={"card": "straight", "number": 3}).get_json()["bonus_chase"]
    p = exact(chase["p_pass"])
    assert chase["also_matches"] is False and exact(chase["expected_passes"]) == p / (1 - p)


def test_race_and_bonus_together_and_whole_floats(client: FlaskClient) -> None:
    """JSON's 4.0 is the integer 4, as for the Zombie Dice `banked`."""
    a = client.post(ANALYZE, json={"card": "three-pairs", "players": 4, "number": 2}).get_json()
    b = client.post(ANALYZE, json={"card": "three-pairs", "players": 4.0, "number": 2.0}).get_json()
    assert a == b and a["race"]["players"] == 4 and a["bonus_chase"]["number"] == 2


# -- advice ---------------------------------------------------------------------------------------


def test_advice(client: FlaskClient) -> None:
    response = client.get(url("kind:4"))
    assert response.status_code == 200 and response.mimetype == "application/json"
    body = response.get_json()
    truth = advice("kind:4", [1, 1, 3, 4, 6, 6])
    assert body == {
        "card": "kind:4",
        "dice": [1, 1, 3, 4, 6, 6],
        "matched": False,
        "keep": list(truth.keep),
        "reroll": list(truth.reroll),
        "expected_throws_left": {"exact": "2252/637", "value": 2252 / 637},
        "equally_good": [list(k) for k in truth.equally_good],
    }
    assert sorted(body["keep"] + body["reroll"]) == body["dice"]


def test_advice_in_any_order_and_when_matched(client: FlaskClient) -> None:
    assert client.get(url("kind:4", "6,4,1,6,3,1")).get_json() == client.get(url("kind:4")).get_json()
    body = client.get(url("kind:4", "2,5,2,2,5,2")).get_json()
    assert body["matched"] is True and body["keep"] == [2, 2, 2, 2, 5, 5] and body["reroll"] == []
    assert body["expected_throws_left"] == {"exact": "0/1", "value": 0.0}


def test_cards_with_every_operator_encoded_in_the_query(client: FlaskClient) -> None:
    """`|`, `&`, `!` and `+` travel URL-encoded; the answer names the canonical card."""
    for card, canonical in [("kind:4 | straight", "kind:4 | straight"), ("all-even & sum:20-30", None),
                            ("three-pairs & !kind:4", "!kind:4 & three-pairs"), ("4+2", "4+2"),
                            ("(kind:3 or straight) and not all-odd", None)]:
        response = client.get(url(card, "2,2,4,4,6,1"))
        assert response.status_code == 200, response.get_json()
        assert response.get_json()["card"] == (canonical or analyze(card).card.text)
    assert client.get(f"{ADVICE}?card=kind:4%20%7C%20straight&dice={ROLL}").get_json()["card"] == "kind:4 | straight"


def test_an_unencoded_ampersand_cuts_the_card(client: FlaskClient) -> None:
    """What the encoding rule prevents: `&sum:20-30` becomes an unknown parameter, refused (never the card
    cut short, answered)."""
    body = problem(client.get(f"{ADVICE}?card=all-even&sum:20-30&dice={ROLL}"), 422)
    assert fields(body) == ["sum:20-30"]
    assert body["errors"][0]["reason"].startswith("unknown parameter `sum:20-30`")


def test_advice_as_csv(client: FlaskClient) -> None:
    response = client.get(url("kind:4", format="csv"))
    assert response.status_code == 200 and response.mimetype == "text/csv"
    text = response.get_data(as_text=True)
    assert text.startswith("key,value\r\n")
    table = dict(list(csv.reader(io.StringIO(text)))[1:])
    json_body = client.get(url("kind:4")).get_json()
    assert table["card"] == "kind:4" and table["dice"] == "1 1 3 4 6 6" and table["matched"] == "false"
    assert table["keep"] == " ".join(map(str, json_body["keep"]))
    assert table["reroll"] == " ".join(map(str, json_body["reroll"]))
    assert float(table["expected_throws_left"]) == json_body["expected_throws_left"]["value"]
    assert [table[f"equally_good.{i}"] for i in range(1, len(json_body["equally_good"]) + 1)] == [
        " ".join(map(str, k)) for k in json_body["equally_good"]]
    matched = dict(list(csv.reader(io.StringIO(client.get(url("kind:4", "5,5,5,5,1,2", format="csv")).text)))[1:])
    assert (matched["matched"], matched["keep"], matched["reroll"]) == ("true", "1 2 5 5 5 5", "none")
    assert matched["expected_throws_left"] == "0.0"


@pytest.mark.parametrize(("field", "expected"), [("keep", "1 1"), ("reroll", "3 4 6 6"),
                                                  ("expected_throws_left", repr(2252 / 637))])
def test_one_advice_value_as_text(client: FlaskClient, field: str, expected: str) -> None:
    response = client.get(url("kind:4", path=f"{ADVICE}.txt", field=field))
    assert response.status_code == 200 and response.mimetype == "text/plain"
    assert response.get_data(as_text=True) == expected


def test_exact_value_as_text_and_an_empty_keep(client: FlaskClient) -> None:
    text = client.get(url("kind:4", path=f"{ADVICE}.txt", field="expected_throws_left", exact="true"))
    assert text.get_data(as_text=True) == "2252/637"
    keep = client.get(url("straight", "1,1,1,1,1,1", path=f"{ADVICE}.txt", field="keep"))
    assert keep.status_code == 200 and keep.get_data(as_text=True) == "none"  # nothing worth keeping: reroll all
    reroll = client.get(url("straight", "1,1,1,1,1,1", path=f"{ADVICE}.txt", field="reroll"))
    assert reroll.get_data(as_text=True) == "1 1 1 1 1 1"


def test_head_and_cors(client: FlaskClient) -> None:
    head = client.head(url("kind:4"))
    assert head.status_code == 200 and head.data == b""
    response = client.get("/v1/lightning/cards", headers={"Origin": "https://rules.example"})
    assert response.headers["Access-Control-Allow-Origin"] == "*"


# -- refusals -------------------------------------------------------------------------------------

LONG_CARD = "kind:4 | " * 22 + "straight"  # 206 characters
DEEP_CARD = "(" * 20 + "kind:4" + ")" * 20

BAD_QUERIES = [
    # (id, url, field at fault)
    ("card syntax: dangling |", url("kind:4 |"), "card"),
    ("card syntax: unbalanced (", url("(kind:4"), "card"),
    ("unknown pattern", url("foo"), "card"),
    ("kind:7", url("kind:7"), "card"),
    ("unmatchable sum", url("sum:40-50"), "card"),
    ("unmatchable conjunction", url("all-even & all-odd"), "card"),
    ("card over 200 characters", url(LONG_CARD), "card"),
    ("card nested too deep", url(DEEP_CARD), "card"),
    ("empty card", f"{ADVICE}?card=&dice={ROLL}", "card"),
    ("no card", f"{ADVICE}?dice={ROLL}", "card"),
    ("card given twice", f"{ADVICE}?card=kind:4&card=kind:5&dice={ROLL}", "card"),
    ("5 dice", url("kind:4", "1,1,3,4,6"), "dice"),
    ("7 dice", url("kind:4", "1,1,3,4,6,6,2"), "dice"),
    ("a die showing 0", url("kind:4", "0,1,3,4,6,6"), "dice[0]"),
    ("a die showing 7", url("kind:4", "1,1,3,4,6,7"), "dice[5]"),
    ("a negative die", url("kind:4", "1,1,-3,4,6,6"), "dice[2]"),
    ("a die that is not a number", url("kind:4", "1,1,3,4,6,a"), "dice[5]"),
    ("a die of 1.5", url("kind:4", "1,1,3,4,6,1.5"), "dice[5]"),
    ("dice separated by spaces", url("kind:4", "1%201%203%204%206%206"), "dice[0]"),  # one item: '1 1 3 4 6 6'
    ("no dice", url("kind:4", ""), "dice"),
    ("dice given twice", url("kind:4") + f"&dice={ROLL}", "dice"),
    ("format xml", url("kind:4", format="xml"), "format"),
    ("txt without field", url("kind:4", path=f"{ADVICE}.txt"), "field"),
    ("txt field unknown", url("kind:4", path=f"{ADVICE}.txt", field="everything"), "field"),
    ("txt bad dice", url("kind:4", "9,9,9,9,9,9", path=f"{ADVICE}.txt", field="keep"), "dice[0]"),
    ("txt bad card", url("kind:1", path=f"{ADVICE}.txt", field="keep"), "card"),
]


@pytest.mark.parametrize(("url", "field"), [c[1:] for c in BAD_QUERIES], ids=[c[0] for c in BAD_QUERIES])
def test_bad_queries_are_refused_naming_the_field(client: FlaskClient, url: str, field: str) -> None:
    assert field in fields(problem(client.get(url), 422))


BAD_BODIES = [
    # (id, body, field at fault)
    ("card syntax", {"card": "kind:4 & & straight"}, "card"),
    ("unmatchable card", {"card": "all-even & all-odd"}, "card"),
    ("faces need six", {"card": "faces:1,2,3"}, "card"),
    ("empty card", {"card": ""}, "card"),
    ("card over 200 characters", {"card": LONG_CARD}, "card"),
    ("card not a string", {"card": 4}, "card"),
    ("players 1", {"card": "kind:4", "players": 1}, "players"),
    ("players 7", {"card": "kind:4", "players": 7}, "players"),
    ("players 2.5", {"card": "kind:4", "players": 2.5}, "players"),
    ("players as a string", {"card": "kind:4", "players": "4"}, "players"),
    ("players true", {"card": "kind:4", "players": True}, "players"),
    ("number 0", {"card": "kind:4", "number": 0}, "number"),
    ("number 7", {"card": "kind:4", "number": 7}, "number"),
    ("number null", {"card": "kind:4", "number": None}, "number"),
    ("unknown field", {"card": "kind:4", "dice": [1, 1, 3, 4, 6, 6]}, "dice"),
]


@pytest.mark.parametrize(("body", "field"), [c[1:] for c in BAD_BODIES], ids=[c[0] for c in BAD_BODIES])
def test_bad_bodies_are_refused_naming_the_field(client: FlaskClient, body: Any, field: str) -> None:
    assert field in fields(problem(client.post(ANALYZE, json=body), 422))


def test_a_bad_card_names_the_fragment_at_fault(client: FlaskClient) -> None:
    body = problem(client.post(ANALYZE, json={"card": "kind:4 | kind:9"}), 422)
    assert body["errors"] == [{"field": "card", "reason": "kind:N needs N from 2 to 6, got 9 (at 'kind:9')"}]


def test_every_fault_is_named_at_once(client: FlaskClient) -> None:
    body = problem(client.post(ANALYZE, json={"card": "kind:4", "players": 9, "number": 0}), 422)
    assert sorted(fields(body)) == ["number", "players"]


def test_the_analysis_takes_json_only(client: FlaskClient) -> None:
    problem(client.post(ANALYZE, data=b"card=kind:4", headers={"Content-Type": "text/plain"}), 415)
    problem(client.post(ANALYZE, data=b'{"card": ', headers={"Content-Type": "application/json"}), 400)
    problem(client.get(ANALYZE), 405)
    problem(client.post("/v1/lightning/cards"), 405)


# -- fuzz: no card text reaches the catch-all -----------------------------------------------------

card_text = st.text(max_size=30) | st.lists(
    st.sampled_from(["kind:4", "straight", "sum:", "20-30", "faces:", "has:6,6", "1,2", "4+2", "+", "|", "&", "!",
                     "(", ")", "and", "or", "not", "all-even", "three-pairs", " ", ":", ",", "-", "9"]),
    max_size=8).map("".join)


@FUZZ
@given(card=card_text, players=st.none() | st.integers(0, 8), number=st.none() | st.integers(-1, 8))
def test_fuzzed_cards_never_reach_the_catch_all(app: Flask, card: str, players: int | None,
                                                number: int | None) -> None:
    body = {"card": card, **({"players": players} if players is not None else {}),
            **({"number": number} if number is not None else {})}
    no_bug(app.test_client().post(ANALYZE, json=body))


@FUZZ
@given(card=card_text, dice=st.lists(st.integers(-1, 8).map(str) | st.text(max_size=3), max_size=8))
def test_fuzzed_advice_queries_never_reach_the_catch_all(app: Flask, card: str, dice: list[str]) -> None:
    no_bug(app.test_client().get(ADVICE, query_string={"card": card, "dice": ",".join(dice)}))
