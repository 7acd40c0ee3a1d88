"""openapi.yaml against the application: schemathesis generates requests from the spec, valid and not.

Every built-in check runs on every response: no server error (so no input reaches the catch-all),
status codes, content types, headers and bodies as documented, schema-invalid requests refused,
undocumented methods answered 405. One is left out: `positive_data_acceptance` expects every
schema-valid request to succeed, but the game's rules (at most 6 green dice across all piles, the
brains a recycling can note, ...) cannot be written in JSON Schema, so a schema-valid position may
rightly be refused with 422.

Run time. The engine answers most positions in milliseconds once its tables are built, but an
exact final-score distribution from a position with no shotgun yet takes ~5 s, and an objective
with a long target (`rule:66,3`) up to a minute the first time. So the warm-up computes the start
of a turn for both recycling variants, and the generated cases whose position and objective are
valid and that expensive are dropped (by `filter_body` / `filter_query`, using analysis' own
validation): everything the API refuses, and every cheap valid position, is still generated.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from analysis import Position, PositionError, parse_objective
from api import create_app
from api.odds import compute

REQUESTS: Counter[str] = Counter()
PILES = ("footprints", "brains", "shotguns")
CHEAP_TARGET = 6  # reach:K and rule:N,S with K, N <= 6 take well under a second the first time


def expensive(values: Any) -> bool:
    """Would the engine need seconds for this valid request? (Invalid ones are always cheap.)"""
    if not isinstance(values, dict):
        return False
    fields = {k: values[k] for k in ("mode", "recycle", "banked") if k in values}
    for pile in ("footprints", "brains", "shotguns"):
        value = values.get(pile, ())
        if isinstance(value, str):  # a query parameter, as generated before serialisation
            value = value.split(",") if value else ()
        if not isinstance(value, list | tuple):
            return False
        fields[pile] = tuple(value)
    if isinstance(fields.get("banked"), float) and fields["banked"].is_integer():
        fields["banked"] = int(fields["banked"])
    try:
        position = Position(**fields)
        objective = parse_objective(values.get("objective", "expected-brains"))
    except (PositionError, ValueError, TypeError):
        return False
    if objective.kind != "expected-brains" and objective.target > CHEAP_TARGET:
        return True
    return not position.turn_start and not position.shotguns and position.score < 60


# Built at import: schemathesis' lazy `from_fixture` loader does not work with pytest 9 (it sets
# pytest's removed `Node._nodeid`). The app is stateless; the engine's caches are per process.
schema = schemathesis.openapi.from_wsgi("/openapi.yaml", create_app({"TESTING": True}))


@schema.hook
def filter_body(ctx: Any, body: Any) -> bool:
    return not expensive(body)


@schema.hook
def filter_query(ctx: Any, query: Any) -> bool:
    return not expensive(query) and not empty_item(query)


def empty_item(query: Any) -> bool:
    """A pile of one die named "" (a negative case) is sent as `brains=`: on the wire, that is the empty
    pile (OpenAPI's style table: form style, empty value), which the API rightly accepts."""
    return isinstance(query, dict) and any(query.get(pile) in ([""], "") for pile in PILES)


@pytest.fixture(scope="module", autouse=True)
def warm_both_variants(warm: None) -> None:
    compute(Position(recycle="draw-then-recycle"), "expected-brains")


@schema.parametrize()
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.filter_too_much])
def test_the_api_keeps_its_contract(case: Any) -> None:
    REQUESTS[case.operation.label] += 1
    case.call_and_validate(excluded_checks=[positive_data_acceptance])


def test_enough_requests_were_generated() -> None:
    """>= 1,000 requests in all: the odds operations carry the count (the others have few inputs)."""
    if not {"GET /v1/odds", "POST /v1/odds", "GET /v1/odds.txt"} <= REQUESTS.keys():
        pytest.skip(f"the contract test did not run for every odds operation: {dict(REQUESTS)}")
    assert sum(REQUESTS.values()) >= 1000, REQUESTS
