"""Fixtures for the HTTP API tests, in the style of Flask's tutorial (flaskr).

The application is stateless, so one app serves the whole session. Warming it once matters: the
first answer for the `original` mode builds and solves its table (~20 s); every later test, and
the schemathesis run, then shares the process-wide caches of analysis and api.odds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
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

from analysis import ExpectedBrains, Position, kept
from api import create_app
from api.answers import compute
from workers import jobs
from workers import solutions as solution_jobs

from . import games

TESTS = Path(__file__).resolve().parent
# Test modules run in one process together where they share a costly result of the process's caches: such a module
# names its group (`pytestmark = pytest.mark.xdist_group("bus-turn-start")`: those solve the base game's whole School
# Bus turn exactly, a minute each in separate processes).


# The groups that take longest, longest first (measured with --durations=0): pytest-xdist hands the groups out in the
# order of the run (`--no-loadscope-reorder`: not by their numbers of tests), so that one of these taken last would
# run alone at the end while the other processes idle.
LONGEST = ("bus-turn-start", "test_faults", "builder-busy", "analysis/game/test_seats", "analysis/test_table",
           "api/test_docs", "analysis/test_simulate", "analysis/test_exact", "analysis/test_budgets", "reports",
           "workers/test_tasks", "api/test_tables", "api/test_embed", "analysis/test_solutions",
           "analysis/game/test_rules", "analysis/game/test_many", "analysis/test_policy", "analysis/game/test_duel",
           "analysis/game/test_solution")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Group each test module whole (pytest-xdist's `--dist loadgroup`: a group runs in one process, so a module's
    fixtures are built once), the modules naming one group together, the `LONGEST` first; and refuse two items with
    one node id: pytest-xdist would keep one of them and drop the other unrun."""
    ids = Counter(item.nodeid for item in items)
    if twice := sorted(nodeid for nodeid, n in ids.items() if n > 1):
        raise pytest.UsageError(f"{len(twice)} node ids name more than one test, e.g. {twice[0]}")
    for item in items:
        if not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(group(item)))
    items.sort(key=lambda item: LONGEST.index(group(item)) if group(item) in LONGEST else len(LONGEST))


LIBC = ctypes.CDLL(ctypes.util.find_library("c"))  # glibc (Debian)


def group(item: pytest.Item) -> str:
    """The module's own group if it names one, else the module: its path under tests/ (``analysis/test_roll``)."""
    named = item.get_closest_marker("xdist_group")
    return named.args[0] if named else item.path.relative_to(TESTS).with_suffix("").as_posix()


@pytest.hookimpl(trylast=True)  # after pytest's own teardown: the group's fixtures are gone
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """A group's turns go with it: the analysis keeps what a process solved (analysis/kept.py) for the next question,
    and the groups share nothing, so a test process that kept every group's turns would hold gigabytes for none (the
    other kinds, small or bounded, stay: a game solved once serves every group that asks).
    The memory goes back to the system too: glibc keeps the freed blocks of millions of small objects (the exact
    values' integers) in its heap (3 GB after the base game's exact School Bus turn) until asked to trim it.
    What is left lives as long as the process (modules, the session's fixtures: most of a million objects), so it is
    frozen out of the collector's sight (`gc.freeze`): a collection then walks only what later groups make, not the
    whole process (about a second of walking at every group's end)."""
    if nextitem is None or group(nextitem) != group(item):
        kept.forget(*kept.TURNS)
        gc.collect()
        gc.freeze()
        LIBC.malloc_trim(0)


# The stored solutions the API answers from, built once per test run: every mode without the bus but the sequel's
# second variant (15 s and 2.4 GB more, by the tests that ask for it: `sequel_solutions`), and with the bus the base
# game's both variants and the Double Feature modes' first (45 s each; the other variant's arrays differ only in
# the rolls that recycle, tested in the base game and by tests/analysis/test_bus_solutions.py).
SOLUTION_BUILDS = (
    (("original", "big-summer-action-movie", "santa-claus-meets-the-zombies"), (), "--no-school-bus"),
    (("direct-to-video-sequel",), ("before-draw",), "--no-school-bus"),
    (("big-summer-action-movie",), ("before-draw",), "--school-bus"),
    (("original",), (), "--school-bus"),
    (("santa-claus-meets-the-zombies",), ("before-draw",), "--school-bus"),
)
# Solved at the start of the run too, beside the builds: Big Summer's two-player game (tests/games.py), which groups in
# both processes read; solved by the first group that asks, it would keep a group of the other process waiting (its
# solve takes most of a minute).
START_GAMES = (("big-summer-action-movie", "before-draw"),)


def built_for_the_run(mode: str, recycle: str, school_bus: bool) -> bool:
    """Whether the run's start builds this solution (`SOLUTION_BUILDS`): known before any is built, so that what a
    test generates at collection does not depend on which builds happened to be done."""
    return any(mode in modes and (not variants or recycle in variants) and (flag == "--school-bus") == school_bus
               for modes, variants, flag in SOLUTION_BUILDS)


def solve_game(mode: str, recycle: str) -> None:
    """Solve a two-player game into the run's store of them (`games.solved_game`) in a child process (that keeps its
    memory), as the solutions are built."""
    code = f"from pathlib import Path; from tests import games; games.ROOT = Path({str(games.ROOT)!r}); " \
           f"games.solved_game({mode!r}, {recycle!r})"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=TESTS.parent, env=os.environ.copy())


def build_solutions(modes: tuple[str, ...], variants: tuple[str, ...] = (), *flags: str) -> None:
    """Build solutions into `ZOMBIE_ODDS_SOLUTIONS` with the CLI, in a child process (that keeps their memory), one
    at a time (two test processes build side by side)."""
    flags = (*flags, *(flag for mode in modes for flag in ("--mode", mode)))
    flags += tuple(flag for variant in variants for flag in ("--variant", variant))
    command = [sys.executable, "-m", "api.cli", "solutions", "build", "--quiet", "--jobs", "1", *flags]
    subprocess.run(command, check=True, env=os.environ.copy())


@pytest.fixture(scope="session", autouse=True)
def solutions(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """A solutions folder for the whole run (shared by pytest-xdist's processes: a build holds its lock, so each
    solution is built once; the second process takes them in the reverse order, so the two build side by side),
    named by `ZOMBIE_ODDS_SOLUTIONS`: tests that point the store elsewhere keep it. The `START_GAMES` are solved in
    the same way, after the builds (so first by the second process)."""
    base = tmp_path_factory.getbasetemp()
    root = (base if worker_id == "master" else base.parent) / "solutions"
    os.environ["ZOMBIE_ODDS_SOLUTIONS"] = str(root)
    os.environ["ZOMBIE_ODDS_BUILD_MEMORY"] = "4"  # (CI's limit is 8 GB: the sequel's bus turn, 6 GiB, is not built)
    games.ROOT = root.parent / "games"
    work = [functools.partial(build_solutions, *build) for build in SOLUTION_BUILDS]
    work += [functools.partial(solve_game, *game) for game in START_GAMES]
    for step in work if worker_id in ("master", "gw0") else work[::-1]:
        step()
    return root


@pytest.fixture(scope="session", autouse=True)
def embedded_tables() -> None:
    """A server computes the base game's two-player table itself, not the three-player one (minutes of CPU): a request
    that would start it is refused (a 422 naming the mode), but in the test that follows that job
    (tests/api/test_tables.py)."""
    os.environ["ZOMBIE_ODDS_EMBEDDED_TABLES"] = "original"


@pytest.fixture(autouse=True)
def no_builder_left() -> Iterator[None]:
    """A background builder a test started (a server's start or a request that missed a solution starts one; it goes
    on to every other missing solution) ends with the test."""
    yield
    for child in solution_jobs._children:
        child.terminate()
        child.wait(timeout=60)


@contextmanager
def builder_busy() -> Iterator[None]:
    """The background builder's lock of the solutions store in use, held: to every process a missing solution is
    queued, and no question starts a build. The modules that hold it form one group (``builder-busy``), run one after
    the other: another process holding it meanwhile would find it taken. A builder that a server of another process's
    test started holds it until that server ends: this waits for it, up to `BUILDER_WAIT` seconds."""
    deadline = time.monotonic() + BUILDER_WAIT
    while True:
        with jobs.exclusive(solution_jobs.BUILDER, solution_jobs.store()) as mine:
            if mine:
                yield
                return
        assert time.monotonic() < deadline, f"another process held the background builder's lock for {BUILDER_WAIT} s"
        time.sleep(0.5)


BUILDER_WAIT = 300


@pytest.fixture(scope="session")
def sequel_solutions(solutions: Path) -> Path:
    build_solutions(("direct-to-video-sequel",), (), "--no-school-bus")
    return solutions


@pytest.fixture(scope="session")
def warm() -> None:
    """Build the base game's table and the start of a turn once per test session."""
    compute(Position(), ExpectedBrains())


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
    from workers.celery_app import create, using

    queue = redis.Redis.from_url(url)
    queue.ping()  # scripts/test starts Redis on loopback when it is not running
    queue.flushdb()
    try:
        with using(create(url)):
            yield queue
    finally:
        queue.flushdb()
        queue.close()


POSTGRES = os.environ.get("ZOMBIE_ODDS_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")


@pytest.fixture
def database() -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database on the machine's server (`ZOMBIE_ODDS_TEST_POSTGRES` names the
    server's maintenance database), dropped after the test."""
    import uuid

    import psycopg

    name = f"zombie_odds_test_{uuid.uuid4().hex}"
    with psycopg.connect(POSTGRES, autocommit=True) as admin:
        admin.execute(f"create database {name}")
    try:
        yield POSTGRES.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(POSTGRES, autocommit=True) as admin:
            admin.execute(f"drop database {name} with (force)")
