"""A catalogue of impossible and hostile input: each is a 4xx problem+json that names the field at fault.

Nothing here may reach the engine, be silently corrected, or become a 500: every case checks the
status, the media type and the field named in `errors` (and, with TESTING on, the answer is checked
against openapi.yaml too).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient

from api import create_app

ODDS = "/v1/odds"
JSON = "application/json"


def get(path: str) -> Callable[[FlaskClient], Any]:
    return lambda client: client.get(path)


def post(body: Any) -> Callable[[FlaskClient], Any]:
    return lambda client: client.post(ODDS, json=body)


def raw(data: bytes | str, content_type: str | None = JSON) -> Callable[[FlaskClient], Any]:
    headers = {"Content-Type": content_type} if content_type else {}
    return lambda client: client.post(ODDS, data=data, headers=headers)


CATALOGUE = {
    # impossible positions (the game's rules)
    "too many dice of a colour": (get(f"{ODDS}?footprints=green,green,green&brains=green,green,green,green"),
                                  422, "brains"),
    "three shotguns already": (get(f"{ODDS}?shotguns=red,red,red"), 422, "shotguns"),
    "four footprints": (get(f"{ODDS}?footprints=green,green,green,green"), 422, "footprints"),
    "unknown mode": (get(f"{ODDS}?mode=chess"), 422, "mode"),
    "unknown die": (get(f"{ODDS}?footprints=purple"), 422, "footprints[0]"),
    "die of another mode": (get(f"{ODDS}?footprints=hunk"), 422, "footprints[0]"),
    "a Santa effect without Santa": (post({"effects": ["helmet"]}), 422, "effects[0]"),
    "Santa kept out of a game without him": (post({"kept_out": ["santa"]}), 422, "kept_out[0]"),
    "a double brain not in the brains": (post({"mode": "big-summer-action-movie", "double_brains": ["hunk"]}),
                                         422, "double_brains"),
    "bus fields without the bus": (get(f"{ODDS}?bus_brains=1"), 422, "bus_brains"),
    "riding a bus that is not there": (post({"riding": True}), 422, "riding"),
    "brains noted though the cup never ran out": (get(f"{ODDS}?banked=3"), 422, "banked"),
    "objective beyond its range": (get(f"{ODDS}?objective=reach:41"), 422, "objective"),
    "a game decision without scores": (post({"seat": 1}), 422, "scores"),
    # numbers
    "negative number": (get(f"{ODDS}?banked=-1"), 422, "banked"),
    "huge number": (post({"banked": 10**30}), 422, "banked"),
    "number too long to parse": (raw('{"banked": 1' + "0" * 5000 + "}"), 400, "body"),
    "fraction for an integer": (post({"banked": 1.5}), 422, "banked"),
    "boolean for an integer": (post({"banked": True}), 422, "banked"),
    "NaN": (raw('{"banked": NaN}'), 400, "body"),
    # shapes
    "null for a list": (post({"footprints": None}), 422, "footprints"),
    "huge array": (post({"brains": ["green"] * 1000}), 422, "brains"),
    "huge array in a query": (get(f"{ODDS}?footprints=" + ",".join(["green"] * 3000)), 422, "footprints"),
    "deep JSON": (raw("[" * 5000 + "]" * 5000), 400, "body"),
    "deep JSON in a field": (raw('{"footprints": ' + "[" * 900 + "]" * 900 + "}"), 422, "footprints[0]"),
    "not an object": (post([1, 2]), 422, "body"),
    "unknown field": (post({"dice": 3}), 422, "dice"),
    "duplicate JSON key": (raw('{"banked": 1, "banked": 2}'), 422, "banked"),
    "duplicate query parameter": (get(f"{ODDS}?banked=1&banked=2"), 422, "banked"),
    "control character in a value": (get(f"{ODDS}?mode=orig%00inal"), 422, "mode"),
    # the body itself
    "wrong content type": (raw("footprints=green", "application/x-www-form-urlencoded"), 415, "Content-Type"),
    "no content type": (raw("{}", None), 415, "Content-Type"),
    "JSON in UTF-16": (raw("{}".encode("utf-16"), "application/json; charset=utf-16"), 415, "Content-Type"),
    "body over the size limit": (raw(json.dumps({"brains": ["green"] * 3000})), 413, "body"),
    "invalid UTF-8": (raw(b'{"mode": "\xff"}'), 400, "body"),
    "empty body": (raw(b""), 400, "body"),
    # ids and names in paths
    "path traversal in a job id": (get("/v1/jobs/..%2F..%2Fetc%2Fpasswd"), 404, "id"),
    "backslash traversal in a job id": (get("/v1/jobs/..%5C..%5Cwin.ini"), 404, "id"),
    "dot-dot as a job id": (get("/v1/jobs/%2e%2e"), 404, "id"),
    "path traversal in a report id": (get("/v1/reports/..%2F..%2Fvar%2Fstore"), 404, "id"),
    "path traversal in a table mode": (get("/v1/tables/..%2F..%2Fetc"), 404, "mode"),
    "path traversal in a docs asset": (get("/docs/..%2F..%2Fpyproject.toml"), 404, "asset"),
    # Lightning Dice
    "a die showing 7": (get("/v1/lightning/advice?card=kind:4&dice=1,2,3,4,5,7"), 422, "dice[5]"),
    "a card over 200 characters": (get("/v1/lightning/advice?dice=1,2,3,4,5,6&card=" + "kind:4%7C" * 40 + "kind:4"),
                                   422, "card"),
}


@pytest.fixture(scope="module")
def bad_client() -> FlaskClient:
    """No warm-up: not one of these requests may reach the engine."""
    return create_app({"TESTING": True}).test_client()


def test_the_catalogue_is_large() -> None:
    assert len(CATALOGUE) >= 20


@pytest.mark.parametrize("case", CATALOGUE)
def test_refused_with_a_problem_naming_the_field(bad_client: FlaskClient, case: str) -> None:
    send, status, field = CATALOGUE[case]
    answer = send(bad_client)
    assert answer.status_code == status, answer.json
    assert answer.mimetype == "application/problem+json"
    problem = answer.json
    assert problem["status"] == status and problem["title"] and problem["detail"]
    assert field in [e["field"] for e in problem.get("errors", [])], problem
    assert len(answer.data) < 4096  # a reason never echoes a huge input back
