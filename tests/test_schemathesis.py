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

Double Feature positions cost more, and that is why some are dropped too: analysis solves each one
over a transition table of the states its own turn can still reach, built for that position (about
0.7 ms of CPU per state, ~25 rolls per state) and kept while it is one of the last two. That is ~2,000 to
4,000 states (about a second) when the next shotgun busts (`room` 0, analysis.budgets.room), 15,000 to
35,000 states (10-30 s, up to 1 GB) with one more shotgun to go, and the whole turn (51,000 to 63,000
states: a minute or more and 2.4 GB each) with none or at the start of a turn. So a valid Double
Feature position is generated only at room 0 (direct-to-video-sequel's before its first shotgun too:
they are answered from the float solution of its whole turn, ~30 s and 2.5 GB once per process, which
tests/api/test_odds.py checks against the spec), as is every invalid combination.

The School Bus multiplies those states by its phases and tokens: its base-game table is the whole
turn (minutes of CPU, built once per process; tests/analysis/test_odds.py builds it), a Double Feature position
with the bus costs seconds even at room 0 and 2-3 GB at room 1. So a valid School Bus position is
generated only when the API refuses it as too large (`analysis.budgets.too_large`); the spec's
request examples (run as they are) and tests/api/test_odds.py cover the answered ones. A position
whose answer is read from a stored solution this run does not build (the sequel's with the bus, the
second recycling variant of most modes: tests/conftest.py) is not generated either: its answer is a 503
naming the job that builds it, by design (tests/api/test_solutions.py), which no server error may be here.

Full-game tables: the run has a store of its own holding the base game's two-player tables (both
recycling variants, solved once per session: tests/analysis/game/test_solution.py solves them too), so tables,
heatmaps, jobs and `/v1/odds` with `scores` are all answered from it and no request starts a
computation of tens of seconds in a background thread (filters would not stop the coverage phase's
requests); the three-player table, minutes of CPU, is left to workers (a 422 naming the mode: tests/conftest.py).
tests/api/test_tables.py follows such jobs to their end.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from analysis import ExpectedBrains, Position, PositionError, parse_objective
from analysis.budgets import above_certified, room, too_large
from analysis.odds import stored_solution
from api import create_app
from api.answers import compute
from api.spec import load
from tests.conftest import builder_busy, built_for_the_run
from workers.store import Store, table_key

from .games import solved_game

# Modules that hold the background builder's lock (`builder_busy`) run in one process, one after the other.
pytestmark = pytest.mark.xdist_group("builder-busy")  # (tests/conftest.py)

REQUESTS: Counter[str] = Counter()
PILES = ("footprints", "brains", "shotguns", "double_brains", "double_shotguns", "effects", "kept_out")
BUS = ("school_bus", "bus_brains", "bus_shotguns", "riding", "bus_out")
CHEAP_TARGET = 6  # reach:K and rule:N,S with K, N <= 6 take well under a second the first time


def expensive(values: Any) -> bool:
    """Would the engine need seconds for this valid request? (Invalid ones are always cheap.)"""
    if not isinstance(values, dict):
        return False
    fields = {k: values[k] for k in ("mode", "recycle", "banked", *BUS) if k in values}
    for pile in PILES:
        value = values.get(pile, ())
        if isinstance(value, str):  # a query parameter, as generated before serialisation
            value = value.split(",") if value else ()
        if not isinstance(value, list | tuple):
            return False
        fields[pile] = tuple(value)
    for name in ("banked", "bus_brains", "bus_shotguns"):
        if isinstance(fields.get(name), float) and fields[name].is_integer():
            fields[name] = int(fields[name])
    for name in ("school_bus", "riding", "bus_out"):  # a query parameter, as generated before serialisation
        if isinstance(fields.get(name), str):
            fields[name] = fields[name] == "true"
    try:
        position = Position(**fields)
        objective = parse_objective(values.get("objective", "expected-brains"))
    except (PositionError, ValueError, TypeError):
        return False
    if above_certified(position) is not None:  # refused at once: a 422 naming banked
        return False
    if objective.above(0) > CHEAP_TARGET:
        return True
    solution = stored_solution(position, objective)
    if solution is not None and not built_for_the_run(*solution):  # a 503 (module docstring)
        return True
    if not position.game_mode.plain or position.school_bus:  # Double Feature, School Bus (module docstring)
        return too_large(position) is None and (position.school_bus or room(position) > 0)
    return not position.turn_start and not position.shotguns and position.score < 60


# Built at import: schemathesis' lazy `from_fixture` loader does not work with pytest 9 (it sets
# pytest's removed `Node._nodeid`). The app is stateless; the engine's caches are per process.
schema = schemathesis.openapi.from_wsgi("/openapi.yaml", create_app({"TESTING": True}))
# A generated body over the API's limit (a few hundred KiB) is refused with 413 Content Too Large before it is read:
# a rejection like any other 4xx (openapi.yaml's `TooLarge`), which schemathesis' list leaves out.
schema.config.checks.negative_data_rejection.expected_statuses.append("413")


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
def no_builds() -> Iterator[None]:
    """A question whose solution this run did not build is a 503 naming its job; the background builder's lock held
    here keeps those questions from starting builds that would run beside the whole module."""
    with builder_busy():
        yield


@pytest.fixture(scope="module", autouse=True)
def warm_both_variants(warm: None) -> None:
    compute(Position(recycle="draw-then-recycle"), ExpectedBrains())


@pytest.fixture(scope="module", autouse=True)
def table_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    root = tmp_path_factory.mktemp("store")
    for variant in ("before-draw", "draw-then-recycle"):
        Store(root).put(table_key("original", variant, 2), solved_game("original", variant).to_dict())
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOMBIE_ODDS_STORE", str(root))
        mp.setenv("ZOMBIE_ODDS_REPORT_RULES", "")  # a POST /v1/reports renders a report without rule games
        yield


TABLES = "^/v1/(tables|jobs)"  # few inputs each (a mode, a player count, a variant, a version): fewer examples


@schema.exclude(path_regex=TABLES).parametrize()
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.filter_too_much])
def test_the_api_keeps_its_contract(case: Any) -> None:
    REQUESTS[case.operation.label] += 1
    case.call_and_validate(excluded_checks=[positive_data_acceptance])


@schema.include(path_regex=TABLES).parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.filter_too_much])
def test_the_tables_keep_their_contract(case: Any) -> None:
    REQUESTS[case.operation.label] += 1
    case.call_and_validate(excluded_checks=[positive_data_acceptance])


def test_enough_requests_were_generated() -> None:
    """>= 500 requests in all (the odds operations carry the count: the others have few inputs), and every
    operation had some. (100 examples per operation: the whole suite must stay within CI's 15 minutes.)"""
    if not {"GET /v1/odds", "POST /v1/odds", "GET /v1/odds.txt"} <= REQUESTS.keys():
        pytest.skip(f"the contract test did not run for every odds operation: {dict(REQUESTS)}")
    assert sum(REQUESTS.values()) >= 500, REQUESTS
    # Every operation is exercised, but the one serving this document (schemathesis leaves it out by design).
    operations = {f"{method.upper()} {path}" for path, item in load()[1]["paths"].items() for method in item
                  if method in ("get", "put", "post", "delete", "patch")} - {"GET /openapi.yaml"}
    assert operations <= REQUESTS.keys(), f"never exercised: {sorted(operations - REQUESTS.keys())}"
