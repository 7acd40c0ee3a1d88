"""api/faults.py: request validation stopped at the first `MAX_FAULTS` faults, each fault of a request named at once,
and the memo of the spec's paths and of each parameter's unmarshalled value, which never keeps a refused value.
"""

from __future__ import annotations

from collections.abc import Iterator

from flask import Flask
from flask.testing import FlaskClient

from api.errors import MAX_ERRORS, MAX_FAULTS
from api.faults import first_faults
from api.spec import openapi

from ..responses import fields, problem


def test_every_fault_is_named_at_once(client: FlaskClient) -> None:
    body = problem(client.get("/v1/odds?footprints=green,green,green,green&banked=-1&objective=x"), 422)
    assert fields(body) == ["footprints", "banked", "objective"]


def test_the_first_faults_are_taken_and_no_more_are_looked_for() -> None:
    looked: list[int] = []

    def faults() -> Iterator[int]:
        n = 0
        while True:  # as jsonschema's lazy walk of a huge body
            looked.append(n)
            yield n
            n += 1

    assert first_faults(faults()) == list(range(MAX_FAULTS)) and len(looked) == MAX_FAULTS
    assert first_faults(iter([1, 2])) == [1, 2]


def test_a_body_of_thousands_of_faults_is_refused_after_the_first(client: FlaskClient) -> None:
    """1,500 unknown dice (13 KB, within the body limit): the schema's walk stops at `MAX_FAULTS` faults, of which
    `MAX_ERRORS` are listed."""
    body = problem(client.post("/v1/odds", json={"brains": ["purple"] * 1500}), 422)
    assert len(body["errors"]) == MAX_ERRORS and body["errors_omitted"] == MAX_FAULTS - MAX_ERRORS
    assert body["errors"][0]["field"] == "brains"


def test_parameters_are_memoised_by_their_raw_values_but_refused_ones(app: Flask) -> None:
    unmarshaller = openapi().request_unmarshaller
    client = app.test_client()

    def memoised(name: str) -> set[tuple]:
        return {key[3] for key in unmarshaller._memo if key[2] == name}

    assert client.get("/v1/odds?footprints=green,red&brains=green&shotguns=red").status_code == 200
    assert ("green,red",) in memoised("footprints") and ("red",) in memoised("shotguns")
    assert client.get("/v1/odds?recycle=sometimes").status_code == 422
    assert ("sometimes",) not in memoised("recycle")
    paths = len(unmarshaller._paths)
    assert client.get("/v1/odds?footprints=green,red&brains=green&shotguns=yellow").status_code == 200
    assert len(unmarshaller._paths) == paths  # /v1/odds's operation was found once
    assert any(key[2] == "/v1/odds" for key in unmarshaller._paths)
