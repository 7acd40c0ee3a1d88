"""api/errors.py: every error is an RFC 9457 problem: routing errors keep their status and `Allow`, a view's
`ApiError` its fields, headers and extensions, a long list of faults or a long detail is cut, every 503 says when
to ask again, and a bug is a logged 500 that reveals nothing; fuzzed requests never reach that catch-all.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import given
from hypothesis import strategies as st

from analysis import FieldError
from api import create_app
from api.errors import MAX_DETAIL, MAX_ERRORS, RETRY_AFTER, ApiError
from api.errors import problem as make_problem

from ..responses import fields, no_bug, problem
from ..strategies import FUZZ


def test_unknown_route_and_wrong_method(client: FlaskClient) -> None:
    problem(client.get("/v2/odds"), 404)
    problem(client.get("/v1/odds/"), 404)
    wrong = client.delete("/v1/odds")
    problem(wrong, 405)
    assert set(wrong.headers["Allow"].split(", ")) == {"GET", "HEAD", "OPTIONS", "POST"}
    problem(client.post("/healthz"), 405)


def test_a_bug_is_a_logged_500_problem(warm: None, caplog: pytest.LogCaptureFixture) -> None:
    app = create_app({"TESTING": True, "VALIDATE_RESPONSES": False})

    def broken() -> None:
        raise RuntimeError("a bug")

    app.view_functions["health.healthz"] = broken
    with caplog.at_level(logging.ERROR):
        body = problem(app.test_client().get("/healthz"), 500)
    assert "a bug" not in body["detail"]
    assert any("a bug" in r.getMessage() and r.exc_info for r in caplog.records)


def test_a_problem_lists_the_first_fields_and_counts_the_rest(app: Flask) -> None:
    with app.app_context():
        body = make_problem(422, "bad", [FieldError(f"brains[{i}]", "not a die") for i in range(MAX_ERRORS + 7)]).json
    assert [e["field"] for e in body["errors"]] == [f"brains[{i}]" for i in range(MAX_ERRORS)]
    assert body["errors_omitted"] == 7
    with app.app_context():
        few = make_problem(422, "bad", [FieldError("banked", "too large")]).json
    assert few["errors"] == [{"field": "banked", "reason": "too large"}] and "errors_omitted" not in few


def test_a_long_detail_is_cut_between_two_faults(app: Flask) -> None:
    detail = "; ".join(f"brains[{i}]: purple is not a die" for i in range(200))
    with app.app_context():
        cut = make_problem(422, detail).json["detail"]
        short = make_problem(422, "brains[0]: purple is not a die").json["detail"]
    assert len(cut) <= MAX_DETAIL and cut.endswith("; ... (the first faults only: see `errors`)")
    assert detail.startswith(cut.removesuffix("; ... (the first faults only: see `errors`)") + "; ")
    assert short == "brains[0]: purple is not a die"


def test_a_views_api_error_keeps_its_status_headers_and_extensions(warm: None) -> None:
    """What a view raises is the answer: every 503 says when to ask again, its own Retry-After if it has one."""
    app = create_app({"TESTING": True, "VALIDATE_RESPONSES": False})
    raised: list[ApiError] = []

    def view() -> None:
        raise raised[-1]

    app.view_functions["health.healthz"] = view
    client = app.test_client()
    raised.append(ApiError(503, "the table is being computed", headers={"Retry-After": "10"},
                           extensions={"job": "/v1/jobs/table-original-before-draw-p2-v1"}))
    waiting = problem(client.get("/healthz"), 503)
    assert waiting["job"] == "/v1/jobs/table-original-before-draw-p2-v1"
    assert client.get("/healthz").headers["Retry-After"] == "10"
    raised.append(ApiError(503, "the job queue cannot be reached"))
    assert client.get("/healthz").headers["Retry-After"] == RETRY_AFTER
    raised.append(ApiError(422, "impossible", [FieldError("shotguns", "3 shotguns: a bust")]))
    refused = client.get("/healthz")
    assert fields(problem(refused, 422)) == ["shotguns"] and "Retry-After" not in refused.headers


# -- fuzz: no input reaches the catch-all ---------------------------------------------------------

FIELDS = ["footprints", "brains", "shotguns", "banked", "mode", "recycle", "objective"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12) | st.sampled_from(["green", "yellow", "red", "original", "reach:3", "rule:2,1"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)


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
