"""Fixtures for the HTTP API tests, in the style of Flask's tutorial (flaskr).

The application is stateless, so one app serves the whole session. Warming it once matters: the
first answer for the `original` mode builds and solves its table (~20 s); every later test, and
the schemathesis run, then shares the process-wide caches of analysis and api.odds.
"""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient

from analysis import Position
from api import create_app
from api.odds import compute


@pytest.fixture(scope="session")
def warm() -> None:
    """Build the base game's table and the start of a turn once per test session."""
    compute(Position(), "expected-brains")


@pytest.fixture(scope="session")
def app(warm: None) -> Flask:
    return create_app({"TESTING": True})


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
