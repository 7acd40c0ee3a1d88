"""Fixtures for the HTTP API tests, in the style of Flask's tutorial (flaskr).

The application is stateless, so one app serves the whole session. Warming it once matters: the
first answer for the `original` mode builds and solves its table (~20 s); every later test, and
the schemathesis run, then shares the process-wide caches of analysis and api.odds.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.serving import make_server

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


@pytest.fixture(scope="session")
def server_url(app: Flask) -> Iterator[str]:
    """The app on a real HTTP server on a free loopback port, for clients that are not Flask's (a browser)."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join()
