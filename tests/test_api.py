"""The HTTP API through Flask's test client: every endpoint, every form, every refusal.

Positions here keep at least one shotgun set aside (or are the warmed start of a turn): their
exact final-score distributions take milliseconds, where a position with no shotgun yet takes
seconds to compute the first time.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openapi_core.exceptions import OpenAPIError
from openapi_spec_validator import OpenAPIV30SpecValidator, OpenAPIV31SpecValidator

from analysis import MODES
from analysis.position import MAX_BANKED, RECYCLE_VARIANTS
from api import create_app, docs, spec
from api.modes import served

from .responses import exact, fields, problem

WORKED = {"footprints": ["green", "red"], "brains": ["green"], "shotguns": ["red"], "banked": 0}
POSITIONS = [
    WORKED,
    {"footprints": ["yellow"], "brains": ["green", "green"], "shotguns": ["red", "yellow"]},
    {"brains": ["green"] * 6 + ["yellow"] * 4, "shotguns": ["red"]},  # the cup runs out: recycling
    {"footprints": ["red", "red"], "brains": ["green"], "shotguns": ["yellow"], "objective": "reach:3"},
    {"footprints": ["green"], "brains": ["yellow", "green"], "shotguns": ["red"], "objective": "rule:4,2"},
]
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def query(body: dict[str, Any]) -> dict[str, Any]:
    """A JSON position as GET query parameters (piles comma-separated)."""
    return {k: ",".join(v) if isinstance(v, list) else v for k, v in body.items()}










# -- the service ----------------------------------------------------------------------------------


def test_health(client: FlaskClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok"}


def test_modes_list_every_die_and_face(client: FlaskClient) -> None:
    modes = client.get("/v1/modes").get_json()["modes"]
    assert [m["name"] for m in modes] == [m.name for m in served()]
    original = modes[0]
    assert original["bust_at"] == 3 and original["dice_per_roll"] == 3
    assert {d["name"]: d["count"] for d in original["dice"]} == {"green": 6, "yellow": 4, "red": 3}
    faces = {"green": (3, 1, 2), "yellow": (2, 2, 2), "red": (1, 3, 2)}  # brains, shotguns, footprints
    for die in original["dice"]:
        assert len(die["faces"]) == 6
        counts = tuple(sum(f[k] for f in die["faces"]) for k in ("brains", "shotguns", "footprints"))
        assert counts == faces[die["name"]]


def test_spec_is_served_as_written(client: FlaskClient) -> None:
    response = client.get("/openapi.yaml")
    assert response.status_code == 200
    assert response.mimetype == "application/yaml"
    assert response.get_data(as_text=True) == spec.SPEC_PATH.read_text(encoding="utf-8")


def test_the_packaged_spec_is_the_repository_spec() -> None:
    assert spec.SPEC_PATH.resolve() == Path(__file__).resolve().parent.parent / "openapi.yaml"


def test_spec_is_valid_openapi_3_1_and_swagger_ui_4_can_render_it() -> None:
    OpenAPIV31SpecValidator(spec.load()[1]).validate()
    OpenAPIV30SpecValidator(docs.display_spec()).validate()  # what /docs hands Swagger UI 4


def test_spec_states_the_game_bounds() -> None:
    schemas = spec.load()[1]["components"]["schemas"]
    assert schemas["ModeName"]["enum"][0] == "original"
    assert set(schemas["ModeName"]["enum"]) <= set(MODES), "the API serves only modes that analysis knows"
    assert set(schemas["DieName"]["enum"]) == {d for m in served() for d in m.die_names}
    assert schemas["Recycle"]["enum"] == list(RECYCLE_VARIANTS)
    assert schemas["Banked"]["maximum"] == MAX_BANKED
    assert (schemas["Footprints"]["maxItems"], schemas["Shotguns"]["maxItems"], schemas["Brains"]["maxItems"]) == (
        3, 3, 13)  # 3 shotgun dice under Santa's helmet (tests/test_api_expansions.py)
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


def test_docs_work_offline(client: FlaskClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert "/docs/swagger-ui-bundle.js" in html and "/docs/swagger-ui.css" in html
    assert not re.search(r"(src|href)=\"(https?:)?//", html), "a CDN or any other host"
    for asset, mimetype in docs.ASSETS.items():
        response = client.get(f"/docs/{asset}")
        assert response.status_code == 200 and response.mimetype == mimetype
        assert len(response.data) > 10_000
    assert fields(problem(client.get("/docs/index.html"), 404)) == ["asset"]


# -- odds -----------------------------------------------------------------------------------------


def test_first_roll_of_the_base_game(client: FlaskClient) -> None:
    """The worked anchor: P(bust on the first roll) = 94/3861; the first roll is compulsory."""
    body = client.get("/v1/odds").get_json()
    assert body["next_roll"]["bust"] == {"exact": "94/3861", "value": 94 / 3861}
    assert body["position"] == {"mode": "original", "footprints": [], "brains": [], "shotguns": [], "banked": 0,
                                "recycle": "before-draw", "score": 0, "cup": {"green": 6, "yellow": 4, "red": 3}}
    assert body["decision"]["action"] == "roll"
    assert body["decision"]["stop"] == {"exact": "0/1", "value": 0.0}
    assert body["next_roll"]["recycles"] is False


@pytest.mark.parametrize("position", POSITIONS, ids=lambda p: json.dumps(p))
def test_get_and_post_agree(client: FlaskClient, position: dict[str, Any]) -> None:
    posted = client.post("/v1/odds", json=position)
    got = client.get("/v1/odds", query_string=query(position))
    assert posted.status_code == got.status_code == 200
    assert posted.get_json() == got.get_json()


@pytest.mark.parametrize("position", [{}, *POSITIONS], ids=lambda p: json.dumps(p))
def test_answers_are_exact_distributions(client: FlaskClient, position: dict[str, Any]) -> None:
    body = client.post("/v1/odds", json={**position, "exact": True}).get_json()
    roll = body["next_roll"]
    outcomes = {(o["brains"], o["shotguns"]): exact(o) for o in roll["outcomes"]}
    assert sum(outcomes.values()) == 1
    set_aside = len(body["position"]["shotguns"])
    assert exact(roll["bust"]) == sum(p for (_, s), p in outcomes.items() if set_aside + s >= 3)
    assert exact(roll["expected_brains"]) == sum(b * p for (b, _), p in outcomes.items())
    scores = body["turn"]["score_distribution"]
    assert sum(exact(s) for s in scores) == 1
    assert [s["score"] for s in scores] == sorted({s["score"] for s in scores})
    decision = body["decision"]
    roll_value, stop_value = exact(decision["roll"]), exact(decision["stop"])
    objective = decision["objective"]
    assert objective == position.get("objective", "expected-brains")
    if position and decision["action"] != "tie":
        assert (decision["action"] == "roll") == (roll_value > stop_value)
    # Rolling now is worth what the distribution of the final score says it is worth.
    if objective.startswith("reach:"):
        target = int(objective.removeprefix("reach:"))
        assert roll_value == sum(exact(s) for s in scores if s["score"] >= target)
    else:
        assert roll_value == sum(s["score"] * exact(s) for s in scores)


def test_the_position_is_normalised_not_changed(client: FlaskClient) -> None:
    body = client.post("/v1/odds", json={"footprints": ["red", "green"], "brains": ["green"], "shotguns": ["red"]})
    position = body.get_json()["position"]
    assert position["footprints"] == ["green", "red"]
    assert position["cup"] == {"green": 4, "yellow": 4, "red": 1}
    assert position["score"] == 1


def test_recycling_is_reported(client: FlaskClient) -> None:
    body = client.post("/v1/odds", json=POSITIONS[2]).get_json()
    assert body["next_roll"]["recycles"] is True
    assert body["position"]["cup"] == {"green": 0, "yellow": 0, "red": 2}


def test_turn_start_must_roll_whatever_the_objective(client: FlaskClient) -> None:
    body = client.get("/v1/odds", query_string={"objective": "reach:1"}).get_json()
    assert body["decision"]["action"] == "roll"
    assert body["decision"]["stop"]["exact"] == "0/1"


def test_a_reached_target_stops(client: FlaskClient) -> None:
    body = client.post("/v1/odds", json={**WORKED, "objective": "reach:1"}).get_json()
    assert body["decision"] == {"action": "stop", "objective": "reach:1", "roll": body["decision"]["roll"],
                                "stop": {"exact": "1/1", "value": 1.0}}


def test_empty_query_values_are_empty_piles(client: FlaskClient) -> None:
    empty = client.get("/v1/odds?footprints=&brains=&shotguns=")
    assert empty.status_code == 200
    assert empty.get_json() == client.get("/v1/odds").get_json()


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


def test_csv_for_spreadsheets(client: FlaskClient) -> None:
    response = client.get("/v1/odds", query_string={**query(WORKED), "format": "csv"})
    assert response.status_code == 200 and response.mimetype == "text/csv"
    table = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert table[0] == ["key", "value"]
    values = dict(table[1:])
    assert len(values) == len(table) - 1, "keys are unique"
    body = client.get("/v1/odds", query_string=query(WORKED)).get_json()
    assert float(values["bust"]) == body["next_roll"]["bust"]["value"]
    assert float(values["roll"]) == body["decision"]["roll"]["value"]
    assert values["action"] == body["decision"]["action"]
    assert values["footprints"] == "green red"
    assert sum(float(v) for k, v in values.items() if k.startswith("score_distribution.")) == pytest.approx(1)
    assert sum(float(v) for k, v in values.items() if k.startswith("outcome.")) == pytest.approx(1)


def test_the_longest_csv_fits_a_spreadsheet_cell(client: FlaskClient) -> None:
    """The start of a turn has the longest score distribution; Excel's WEBSERVICE stops at 32,767 characters."""
    response = client.get("/v1/odds?format=csv")
    assert response.status_code == 200
    assert len(response.get_data(as_text=True)) < 32_767


@pytest.mark.parametrize("field", ["bust", "action", "roll", "stop"])
def test_one_value_as_text(client: FlaskClient, field: str) -> None:
    """A value as text: the float of the answer (from the stored solution), or with exact=true the exact one's."""
    floats = client.get("/v1/odds", query_string=query(WORKED)).get_json()
    fractions = client.get("/v1/odds", query_string={**query(WORKED), "exact": "true"}).get_json()

    def pick(body: dict[str, Any]) -> Any:
        return body["decision"]["action"] if field == "action" else (
            body["next_roll"]["bust"] if field == "bust" else body["decision"][field])

    as_float = client.get("/v1/odds.txt", query_string={**query(WORKED), "field": field})
    as_exact = client.get("/v1/odds.txt", query_string={**query(WORKED), "field": field, "exact": "true"})
    for response in (as_float, as_exact):
        assert response.status_code == 200 and response.mimetype == "text/plain"
    if field == "action":
        assert as_float.get_data(as_text=True) == as_exact.get_data(as_text=True) == pick(floats) == pick(fractions)
    else:
        assert float(as_float.get_data(as_text=True)) == pick(floats)["value"]
        assert as_exact.get_data(as_text=True) == pick(fractions)["exact"]
        assert abs(pick(floats)["value"] - pick(fractions)["value"]) <= pick(floats).get("within", 0)


def test_bust_as_text_at_the_start(client: FlaskClient) -> None:
    assert client.get("/v1/odds.txt?field=bust&exact=true&_=42").get_data(as_text=True) == "94/3861"


def test_head_is_get_without_a_body(client: FlaskClient) -> None:
    response = client.head("/v1/odds", query_string=query(WORKED))
    assert response.status_code == 200 and response.data == b""


# -- refusals -------------------------------------------------------------------------------------

BAD_BODIES = [
    # (id, body, status, field at fault)
    ("7 green dice of 6", {"brains": ["green"] * 7}, 422, "brains"),
    ("3 shotguns", {"footprints": ["green"], "shotguns": ["red", "red", "red"]}, 422, "shotguns"),
    ("4 footprints", {"footprints": ["green"] * 4}, 422, "footprints"),
    ("unknown die", {"footprints": ["green", "purple"], "shotguns": ["red"]}, 422, "footprints[1]"),
    ("unknown mode", {"mode": "zombie-dice-9"}, 422, "mode"),
    ("unknown recycle variant", {**WORKED, "recycle": "sometimes"}, 422, "recycle"),
    ("negative banked", {**WORKED, "banked": -1}, 422, "banked"),
    ("banked 5 is unreachable", {**WORKED, "banked": 5}, 422, "banked"),
    ("banked with nothing out", {"banked": 11}, 422, "banked"),
    ("banked 10**9", {**WORKED, "banked": 10**9}, 422, "banked"),
    ("banked 1.5", {**WORKED, "banked": 1.5}, 422, "banked"),
    ("banked as a string", {**WORKED, "banked": "0"}, 422, "banked"),
    ("banked true", {**WORKED, "banked": True}, 422, "banked"),
    ("only 1 die out of the cup", {"footprints": ["green"]}, 422, "footprints"),
    ("reach:0", {"objective": "reach:0"}, 422, "objective"),
    ("reach:41", {"objective": "reach:41"}, 422, "objective"),
    ("objective junk", {"objective": "winning"}, 422, "objective"),
    ("rule:0,1 matches the pattern, not the rules", {**WORKED, "objective": "rule:0,1"}, 422, "objective"),
    ("rule:101,3", {**WORKED, "objective": "rule:101,3"}, 422, "objective"),
    ("a string where a list belongs", {"footprints": "green,red", "shotguns": ["red"]}, 422, "footprints"),
    ("nested junk", {"brains": [["green"], {"die": "green"}], "shotguns": ["red"]}, 422, "brains[0]"),
    ("null pile", {"brains": None}, 422, "brains"),
    ("unknown field", {**WORKED, "colour": "green"}, 422, "colour"),
    ("a list body", [WORKED], 422, "body"),
    ("a string body", "footprints=green", 422, "body"),
]


@pytest.mark.parametrize(("body", "status", "field"), [c[1:] for c in BAD_BODIES], ids=[c[0] for c in BAD_BODIES])
def test_bad_bodies_are_refused_naming_the_field(client: FlaskClient, body: Any, status: int, field: str) -> None:
    assert field in fields(problem(client.post("/v1/odds", json=body), status))


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


BAD_QUERIES = [
    ("/v1/odds?footprints=purple", "footprints[0]"),
    ("/v1/odds?footprints=green,,red&shotguns=red", "footprints[1]"),
    ("/v1/odds?shotguns=red,red,red&footprints=green", "shotguns"),
    ("/v1/odds?banked=abc", "banked"),
    ("/v1/odds?banked=-3", "banked"),
    ("/v1/odds?banked=1&banked=2", "banked"),
    ("/v1/odds?mode=", "mode"),
    ("/v1/odds?objective=reach:41", "objective"),
    ("/v1/odds?format=xml", "format"),
    ("/v1/odds?brains=green,green,green,green,green,green,green", "brains"),
    ("/v1/odds.txt?footprints=green,red&brains=green&shotguns=red", "field"),
    ("/v1/odds.txt?field=everything", "field"),
    ("/v1/odds.txt?field=bust&exact=maybe", "exact"),
]


@pytest.mark.parametrize(("url", "field"), BAD_QUERIES, ids=[u for u, _ in BAD_QUERIES])
def test_bad_queries_are_refused_naming_the_field(client: FlaskClient, url: str, field: str) -> None:
    assert field in fields(problem(client.get(url), 422))


def test_every_fault_is_named_at_once(client: FlaskClient) -> None:
    body = problem(client.get("/v1/odds?footprints=green,green,green,green&banked=-1&objective=x"), 422)
    assert fields(body) == ["footprints", "banked", "objective"]


def test_unknown_route_and_wrong_method(client: FlaskClient) -> None:
    problem(client.get("/v2/odds"), 404)
    problem(client.get("/v1/odds/"), 404)
    wrong = client.delete("/v1/odds")
    problem(wrong, 405)
    assert set(wrong.headers["Allow"].split(", ")) == {"GET", "HEAD", "OPTIONS", "POST"}
    problem(client.post("/healthz"), 405)


# -- CORS -----------------------------------------------------------------------------------------


def test_cors_lets_any_site_call_v1(client: FlaskClient) -> None:
    origin = {"Origin": "https://rules.example"}
    for response in (client.get("/v1/odds.txt?field=bust", headers=origin),
                     client.post("/v1/odds", json=WORKED, headers=origin),
                     client.get("/v1/odds?banked=-1", headers=origin)):  # errors are readable too
        assert response.headers["Access-Control-Allow-Origin"] == "*"
    preflight = client.options("/v1/odds", headers={**origin, "Access-Control-Request-Method": "POST",
                                                    "Access-Control-Request-Headers": "content-type"})
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == "*"
    assert {"GET", "POST"} <= set(preflight.headers["Access-Control-Allow-Methods"].split(", "))
    assert "content-type" in preflight.headers["Access-Control-Allow-Headers"].lower()
    assert "Access-Control-Allow-Origin" not in client.get("/healthz").headers


# -- configuration and the safety nets ------------------------------------------------------------


def test_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    assert create_app({"TESTING": True}).config["VALIDATE_RESPONSES"] is True
    assert create_app().config["VALIDATE_RESPONSES"] is False
    assert create_app().config["MAX_CONTENT_LENGTH"] == 16 * 1024
    monkeypatch.setenv("ZOMBIE_ODDS_VALIDATE_RESPONSES", "true")
    monkeypatch.setenv("ZOMBIE_ODDS_MAX_CONTENT_LENGTH", "1024")
    app = create_app()
    assert app.config["VALIDATE_RESPONSES"] is True and app.config["MAX_CONTENT_LENGTH"] == 1024
    assert create_app({"VALIDATE_RESPONSES": False}).config["VALIDATE_RESPONSES"] is False


def test_a_response_that_breaks_the_spec_is_caught(warm: None) -> None:
    app = create_app({"TESTING": True})
    app.view_functions["health.healthz"] = lambda: {"status": "sick"}
    with pytest.raises(OpenAPIError):
        app.test_client().get("/healthz")
    app.config["VALIDATE_RESPONSES"] = False
    assert app.test_client().get("/healthz").get_json() == {"status": "sick"}


def test_a_bug_is_a_logged_500_problem(warm: None, caplog: pytest.LogCaptureFixture) -> None:
    app = create_app({"TESTING": True, "VALIDATE_RESPONSES": False})

    def broken() -> None:
        raise RuntimeError("a bug")

    app.view_functions["health.healthz"] = broken
    with caplog.at_level(logging.ERROR):
        body = problem(app.test_client().get("/healthz"), 500)
    assert "a bug" not in body["detail"]
    assert any("a bug" in r.getMessage() and r.exc_info for r in caplog.records)


# -- fuzz: no input reaches the catch-all ---------------------------------------------------------

FIELDS = ["footprints", "brains", "shotguns", "banked", "mode", "recycle", "objective"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12) | st.sampled_from(["green", "yellow", "red", "original", "reach:3", "rule:2,1"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def no_bug(response: Any) -> None:
    assert response.status_code < 500, response.get_data(as_text=True)
    if response.status_code >= 400:
        problem(response, response.status_code)


@FUZZ
@given(body=st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), json_values, max_size=5))
def test_fuzzed_json_never_reaches_the_catch_all(app: Flask, body: dict[str, Any]) -> None:
    no_bug(app.test_client().post("/v1/odds", json=body))


@FUZZ
@given(data=st.binary(max_size=200), content_type=st.sampled_from(["application/json", "text/plain", "x/y; a=b"]))
def test_fuzzed_bytes_never_reach_the_catch_all(app: Flask, data: bytes, content_type: str) -> None:
    no_bug(app.test_client().post("/v1/odds", data=data, headers={"Content-Type": content_type}))


@FUZZ
@given(
    path=st.sampled_from(["/v1/odds", "/v1/odds.txt"]),
    params=st.lists(st.tuples(st.sampled_from([*FIELDS, "format", "field", "exact"]) | st.text(max_size=6),
                              st.text(max_size=20) | st.sampled_from(["green,red", "red", "", "true", "9"])),
                    max_size=6),
)
def test_fuzzed_queries_never_reach_the_catch_all(app: Flask, path: str, params: list[tuple[str, str]]) -> None:
    no_bug(app.test_client().get(path, query_string=params))


def test_response_cache_serves_the_same_bytes_and_ignores_cache_busters():
    from api import create_app

    app = create_app({"TESTING": True, "RESPONSE_CACHE_SIZE": 8, "VALIDATE_RESPONSES": True})
    client = app.test_client()
    url = "/v1/odds?footprints=green,red&brains=green&shotguns=red"
    first = client.get(url)
    again = client.get(url + "&_=12345")
    assert first.status_code == again.status_code == 200
    assert first.data == again.data and again.headers["Access-Control-Allow-Origin"] == "*"
    assert len(app.extensions["response_cache"]) == 1
    assert client.get(url + "&nocache=1").status_code == 422  # only `_` is a cache-buster: no hit for another
    assert client.get("/v1/odds?shotguns=red,red,red").status_code == 422  # errors are not cached
    assert len(app.extensions["response_cache"]) == 1
    other = client.get("/v1/odds?footprints=green,red&brains=green&shotguns=red&objective=reach:2")
    assert other.data != first.data and len(app.extensions["response_cache"]) == 2


def test_two_workers_asked_one_answer_at_once_compute_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second worker asked for an answer another is computing waits on the answer's lock and serves what the
    first stored, instead of computing it again (a Santa turn start: 4 to 20 minutes and GBs each)."""
    import threading

    import api.answers

    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    compute, calls, started = api.answers.compute, [], threading.Event()

    def slow(*args: object) -> object:
        calls.append(args)
        started.set()
        time.sleep(0.5)  # long enough for the second worker to ask meanwhile
        return compute(*args)

    monkeypatch.setattr(api.answers, "compute", slow)
    workers = [create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 0}).test_client() for _ in range(2)]
    answers: list[dict] = []
    # (an objective that no stored solution answers: expected brains is read from one, never computed here)
    body = {"footprints": ["green", "yellow"], "brains": ["red"], "shotguns": ["yellow"], "objective": "reach:3"}
    first = threading.Thread(target=lambda: answers.append(workers[0].post("/v1/odds", json=body).json))
    first.start()
    assert started.wait(30)
    answers.append(workers[1].post("/v1/odds", json=body).json)
    first.join()
    assert len(calls) == 1 and answers[0] == answers[1] and answers[0]["decision"]["action"] in ("roll", "stop")
    assert list((tmp_path / "locks").iterdir()) == []


def test_a_slow_answer_is_stored_for_every_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gunicorn's workers each keep their own caches: an answer that took `SHARE_ANSWERS_AFTER` seconds is put
    in the store, and another worker (another app, which cannot compute) serves it in every form; a copy that
    fails its checksum is moved aside and computed again; a quicker answer is not stored."""
    import api.answers
    from analysis import Position
    from workers.store import Store

    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    # (an objective that no stored solution answers: expected brains is read from one, never computed here)
    store, query = Store(tmp_path), "footprints=green,red&brains=green&shotguns=red&objective=reach:3"
    key = api.answers.answer_key(Position(footprints=("green", "red"), brains=("green",), shotguns=("red",)), "reach:3")
    expected = create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 0}).test_client().get(f"/v1/odds?{query}").json
    assert store.get(key)[0] == expected and store.writes(key) == 1

    compute = api.answers.compute
    monkeypatch.setattr(api.answers, "compute", lambda *args: pytest.fail("computed again"))
    other = create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 0}).test_client()
    assert other.post("/v1/odds", json={"footprints": ["green", "red"], "brains": ["green"],
                                        "shotguns": ["red"], "objective": "reach:3"}).json == expected
    assert other.get(f"/v1/odds.txt?{query}&field=bust&exact=true").text == expected["next_roll"]["bust"]["exact"]
    assert other.get(f"/v1/odds?{query}&format=csv").status_code == 200

    (tmp_path / f"{key.name}.json").write_text("{}")
    monkeypatch.setattr(api.answers, "compute", compute)
    assert other.get(f"/v1/odds?{query}").json == expected
    assert (tmp_path / f"{key.name}.corrupt").exists() and store.get(key)[0] == expected and store.writes(key) == 2

    slow_only = create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 60}).test_client()
    assert slow_only.get(f"/v1/odds?{query.replace('reach:3', 'reach:2')}").status_code == 200
    assert store.get(api.answers.answer_key(Position(footprints=("green", "red"), brains=("green",),
                                                  shotguns=("red",)), "reach:2")) is None
