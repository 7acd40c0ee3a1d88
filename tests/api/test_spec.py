"""api/spec.py: openapi.yaml as the contract every request is checked against: the packaged spec, the game's bounds
it states, its operations as the application's routes, query parameters declared and bodies read strictly (refused
with a problem naming the field), and answers checked against it under TESTING.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from openapi_core.exceptions import OpenAPIError

from analysis import EFFECTS, MODES
from analysis.position import MAX_BANKED, RECYCLE_VARIANTS
from api import create_app, spec
from api.modes import served

from ..responses import fields, problem, query

WORKED = {"footprints": ["green", "red"], "brains": ["green"], "shotguns": ["red"], "banked": 0}

HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def test_the_packaged_spec_is_the_repository_spec() -> None:
    assert spec.SPEC_PATH.resolve() == Path(__file__).resolve().parents[2] / "openapi.yaml"


def test_spec_states_the_game_bounds() -> None:
    schemas = spec.load()[1]["components"]["schemas"]
    assert schemas["ModeName"]["enum"][0] == "original"
    assert set(schemas["ModeName"]["enum"]) <= set(MODES), "the API serves only modes that analysis knows"
    assert set(schemas["DieName"]["enum"]) == {d for m in served() for d in m.die_names}
    assert schemas["Recycle"]["enum"] == list(RECYCLE_VARIANTS)
    assert schemas["Banked"]["maximum"] == MAX_BANKED
    assert (schemas["Footprints"]["maxItems"], schemas["Shotguns"]["maxItems"], schemas["Brains"]["maxItems"]) == (
        3, 3, 13)  # 3 shotgun dice under Santa's helmet (tests/api/test_odds.py)
    pattern = schemas["Objective"]["pattern"]
    assert [k for k in range(0, 100) if re.search(pattern, f"reach:{k}")] == list(range(1, 41))
    assert not re.search(pattern, "junk")
    assert all("example" in s for s in schemas.values())


def test_routes_are_exactly_the_spec(app: Flask) -> None:
    """Flask's routes and the spec's operations are the same set (HEAD and OPTIONS are Flask's own)."""
    documented = {
        (path, method.upper())
        for path, item in spec.load()[1]["paths"].items()
        for method in item
        if method in HTTP_METHODS
    }
    routes = {
        (rule.rule.replace("<", "{").replace(">", "}"), method)
        for rule in app.url_map.iter_rules()
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }
    assert routes == documented


def test_unknown_query_parameters_are_refused_but_the_cache_buster(client: FlaskClient) -> None:
    plain = client.get("/v1/odds", query_string=query(WORKED))
    busted = client.get("/v1/odds", query_string={**query(WORKED), "_": "1712345678"})
    assert busted.status_code == 200
    assert busted.get_json() == plain.get_json()
    unknown = {**query(WORKED), "_": "1", "nocache": "", "objectiv": "x"}
    body = problem(client.get("/v1/odds", query_string=unknown), 422)
    assert sorted(fields(body)) == ["nocache", "objectiv"]  # each unknown one named, the cache-buster not
    reasons = {e["field"]: e["reason"] for e in body["errors"]}
    assert reasons["objectiv"] == "unknown parameter `objectiv`: did you mean `objective`?"
    assert reasons["nocache"].startswith("unknown parameter `nocache`")


BAD_RAW = [
    # (id, raw body, content type, status, field at fault or None)
    ("malformed JSON", b'{"footprints": ["green",', "application/json", 400, None),
    ("empty body", b"", "application/json", 400, None),
    ("invalid UTF-8", b'{"mode": "orig\xffinal"}', "application/json", 400, None),
    ("UTF-16 is not JSON's encoding", '{"banked": 0}'.encode("utf-16"), "application/json", 400, None),
    ("NaN is not JSON", b'{"banked": NaN}', "application/json", 400, None),
    ("a 5000-digit number", b'{"banked": 1' + b"0" * 5000 + b"}", "application/json", 400, None),
    ("nested 5000 deep", b'{"brains": ' + b"[" * 5000 + b"]" * 5000 + b"}", "application/json", 400, None),
    ("a null body", b"null", "application/json", 422, "body"),
    ("duplicate key", b'{"banked": 0, "banked": 11}', "application/json", 422, "banked"),
    ("plain text", b"{}", "text/plain", 415, None),
    ("a form", b"footprints=green", "application/x-www-form-urlencoded", 415, None),
    ("latin-1 JSON", b"{}", "application/json; charset=latin-1", 415, None),
    ("no content type", b"{}", None, 415, None),
    ("huge body", b'{"mode": "' + b"x" * 17_000 + b'"}', "application/json", 413, None),
]


@pytest.mark.parametrize(("data", "content_type", "status", "field"), [c[1:] for c in BAD_RAW],
                         ids=[c[0] for c in BAD_RAW])
def test_bad_raw_bodies_are_refused(client: FlaskClient, data: bytes, content_type: str | None, status: int,
                                    field: str | None) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    body = problem(client.post("/v1/odds", data=data, headers=headers), status)
    if field:
        assert field in fields(body)


def test_a_response_that_breaks_the_spec_is_caught(warm: None) -> None:
    app = create_app({"TESTING": True})
    app.view_functions["health.healthz"] = lambda: {"status": "sick"}
    with pytest.raises(OpenAPIError):
        app.test_client().get("/healthz")
    app.config["VALIDATE_RESPONSES"] = False
    assert app.test_client().get("/healthz").get_json() == {"status": "sick"}


def test_the_spec_names_every_die_effect_and_mode() -> None:
    schemas = spec.load()[1]["components"]["schemas"]
    assert schemas["ModeName"]["enum"] == list(MODES)
    assert schemas["EffectName"]["enum"] == list(EFFECTS)
    doubles = {face: sum(1 for d in {d for m in MODES.values() for d in m.dice} if d.face(face))
               for face in ("double-brain", "double-shotgun")}
    assert (schemas["DoubleBrains"]["maxItems"], schemas["DoubleShotguns"]["maxItems"]) == (
        doubles["double-brain"], doubles["double-shotgun"])
    top_bust = max(m.bust_at for m in MODES.values()) + sum(e.bust_bonus for e in EFFECTS.values())
    assert schemas["Shotguns"]["maxItems"] == top_bust - 1
