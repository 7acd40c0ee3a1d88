"""Fixtures for the HTTP API tests, in the style of Flask's tutorial (flaskr).

The application is stateless, so one app serves the whole session. Warming it once matters: the
first answer for the `original` mode builds and solves its table (~20 s); every later test, and
the schemathesis run, then shares the process-wide caches of analysis and api.odds.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.serving import make_server

from analysis import Position
from api import create_app
from api.odds import compute

# Test modules run in one process together where they share a costly result of the process's caches: both of
# these solve the base game's whole School Bus turn exactly (80 s each in separate processes).
TOGETHER = {"test_bus.py": "bus-turn-start", "test_api_expansions.py": "bus-turn-start"}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Group each test module whole (pytest-xdist's `--dist loadgroup`: a group runs in one process, so a module's
    fixtures are built once), `TOGETHER` as one group; and refuse two items with one node id: pytest-xdist
    would keep one of them and drop the other unrun."""
    ids = Counter(item.nodeid for item in items)
    if twice := sorted(nodeid for nodeid, n in ids.items() if n > 1):
        raise pytest.UsageError(f"{len(twice)} node ids name more than one test, e.g. {twice[0]}")
    for item in items:
        item.add_marker(pytest.mark.xdist_group(TOGETHER.get(item.path.name, item.path.stem)))


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


CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium driven by its chromedriver (a fresh profile per test module)."""
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        message = f"Debian chromium and chromium-driver are needed ({CHROMIUM}, {CHROMEDRIVER})"
        if os.environ.get("CI"):
            pytest.fail(message + "; scripts/test installs them")
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="zombie-odds-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--window-size=900,1100", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@contextmanager
def queued_on(url: str) -> Iterator[redis.Redis]:
    """Celery pointed at a real Redis database where no worker listens: jobs sent there stay queued.
    The database is emptied before and after."""
    from workers import app as celery_app
    from workers.celery_app import configure

    queue = redis.Redis.from_url(url)
    queue.ping()  # scripts/test starts Redis on loopback when it is not running
    queue.flushdb()
    configure(celery_app, url)
    try:
        yield queue
    finally:
        configure(celery_app, "")
        queue.flushdb()
        queue.close()
