"""api/serving.py: `zombie-odds serve` under a hostile load (issue 27, items 4 and 7): gunicorn's settings, `/healthz`
answered while every worker computes, workers recycled by memory (not while a job of theirs runs, and after giving
freed memory back), each server with its own control socket (or none), gunicorn's own errors as problems, a server
whose Redis is down, and its background builder ending with it.

Real servers are started with `zombie-odds serve` on free loopback ports. The slow request is a real one: a School
Bus objective solved for the request (`/v1/odds?school_bus=true&objective=reach:20`, a minute and more than a
gigabyte unstopped), stopped at a deadline of a few seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.memory import return_freed_memory
from api.serving import Worker, options
from tests.conftest import builder_busy
from workers.store import held

# Modules that hold the background builder's lock (`builder_busy`) run in one process, one after the other.
pytestmark = pytest.mark.xdist_group("builder-busy")  # (tests/conftest.py)

SLOW = "/v1/odds?school_bus=true&objective=reach:20"


@pytest.fixture(scope="module", autouse=True)
def no_builds() -> Iterator[None]:
    """The servers here share the run's solutions, some of which it does not build (a variant's School Bus turn): the
    background builder's lock held keeps each server from starting a builder beside the module."""
    with builder_busy():
        yield


ZOMBIE_ODDS = str(Path(sys.executable).parent / "zombie-odds")


# -- gunicorn's settings --------------------------------------------------------------------------------------------


def test_serve_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 4: the worker timeout above the deadline, workers recycled; item 7: gunicorn's request limits."""
    monkeypatch.delenv("ZOMBIE_ODDS_REQUEST_DEADLINE", raising=False)
    s = options("127.0.0.1", 8000, 2, 2, None, 10000, 1000, 2048, None)
    assert s["worker_class"] == "api.serving.Worker" and s["threads"] == 2
    assert s["timeout"] == 50 and s["graceful_timeout"] == 30  # the deadline (20 s) + 30; in-flight requests finish
    assert s["max_requests"] == 10000 and s["max_requests_jitter"] == 1000 and callable(s["post_request"])
    assert s["control_socket_disable"] is True and "control_socket" not in s
    assert (s["limit_request_line"], s["limit_request_fields"], s["limit_request_field_size"]) == (8190, 100, 8190)
    monkeypatch.setenv("ZOMBIE_ODDS_REQUEST_DEADLINE", "60")
    assert options("127.0.0.1", 8000, 2, 2, None, 0, 0, 2048, "/tmp/x.ctl")["timeout"] == 90
    with pytest.raises(ValueError, match="must be above the request deadline"):
        options("127.0.0.1", 8000, 2, 2, 60, 0, 0, 2048, None)


# -- real servers ---------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`zombie-odds serve` in a child process; its log (stderr) collected."""

    def __init__(self, tmp: Path, *args: str, env: dict[str, str] | None = None):
        self.port, self.home = free_port(), tmp
        self.url = f"http://127.0.0.1:{self.port}"
        environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        environ.update({"HOME": str(tmp), "ZOMBIE_ODDS_STORE": str(tmp / "store"), **(env or {})})
        environ.pop("XDG_RUNTIME_DIR", None)  # gunicorn's default control socket is then ~/.gunicorn/gunicorn.ctl
        self.process = subprocess.Popen([ZOMBIE_ODDS, "serve", "--port", str(self.port), *args], env=environ,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        deadline = time.monotonic() + 120
        try:
            while get(self.url + "/healthz", 2)[0] != 200:
                assert self.process.poll() is None and time.monotonic() < deadline, "".join(self.lines)
                time.sleep(0.2)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)
        self.reader.join(timeout=10)
        self.process.stderr.close()

    def _read(self) -> None:
        with contextlib.suppress(ValueError):  # closed by `stop` while a builder child of the server held it open
            self.lines.extend(self.process.stderr)


def get(url: str, timeout: float = 60, headers: dict[str, str] | None = None) -> tuple[int, Any, bytes, float]:
    """(status, headers, body, seconds); status 0 if the connection failed."""
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=timeout) as r:
            return r.status, r.headers, r.read(), time.perf_counter() - start
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read(), time.perf_counter() - start
    except OSError as e:
        return 0, {}, repr(e).encode(), time.perf_counter() - start


@pytest.fixture(scope="module")
def busy_server(sequel_solutions: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Two workers of two threads, a deadline of 3 s (every solution stored: the server builds none), slow answers
    computed by their requests (`ANSWER_WAIT` null: no job), so that each one runs into its deadline."""
    server = Server(tmp_path_factory.mktemp("busy"), "--workers", "2", "--threads", "2",
                    env={"ZOMBIE_ODDS_REQUEST_DEADLINE": "3", "ZOMBIE_ODDS_ANSWER_WAIT": "null"})
    yield server
    server.stop()


def test_healthz_answers_in_milliseconds_while_every_worker_computes(busy_server: Server) -> None:
    """Item 4: with two slow requests `/healthz` timed out at 30 s, and gunicorn's killed worker answered an HTML
    500. Here six slow requests hold every thread of both workers (and two wait for one) while `/healthz` is asked
    ten times a second; the slow ones end at their deadline, as problems."""
    slow: list[tuple[int, Any, bytes, float]] = []
    threads = [threading.Thread(target=lambda: slow.append(get(busy_server.url + SLOW))) for _ in range(6)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    health = []
    while any(thread.is_alive() for thread in threads):
        status, _, _, took = get(busy_server.url + "/healthz", 10)
        health.append((status, took))
        time.sleep(0.1)
    for thread in threads:
        thread.join()
    times = sorted(took for _, took in health)
    print(f"/healthz while busy: {len(health)} checks, median {times[len(times) // 2] * 1000:.1f} ms, "
          f"max {times[-1] * 1000:.1f} ms")
    assert len(health) >= 20 and {status for status, _ in health} == {200}
    assert times[-1] < 0.5, times  # measured: 20-30 ms at most on a loaded machine
    for status, headers, body, took in slow:
        assert status == 503 and headers["Content-Type"] == "application/problem+json", body[:300]
        assert int(headers["Retry-After"]) >= 1 and headers["X-Content-Type-Options"] == "nosniff"
        assert took < 3 * 3 + 5  # its deadline, after at most one other's in its worker's queue


def test_a_server_opens_no_control_socket_unless_asked(busy_server: Server, tmp_path: Path) -> None:
    """Item 4: every `zombie-odds serve` used gunicorn's default `~/.gunicorn/gunicorn.ctl`, so stopping one server
    removed another's. Now none by default (the busy server's HOME has none); one of its own with --control-socket."""
    assert busy_server.process.poll() is None
    assert not (busy_server.home / ".gunicorn").exists()
    ctl = tmp_path / "mine.ctl"
    server = Server(tmp_path, "--workers", "1", "--control-socket", str(ctl))
    try:
        for _ in range(100):  # gunicorn opens it once its arbiter runs, a moment after the first answer
            if ctl.is_socket():
                break
            time.sleep(0.1)
        assert ctl.is_socket()
    finally:
        server.stop()
    assert not (tmp_path / ".gunicorn").exists()


def test_a_worker_left_large_by_a_request_is_recycled(sequel_solutions: Path, tmp_path: Path) -> None:
    """Item 4: `/v1/bust.txt?school_bus=true` left a worker holding 3.4 GB. A worker above --max-worker-memory
    after a request finishes it and is replaced (here the limit is 1 MB: every request); answers go on."""
    server = Server(tmp_path, "--workers", "1", "--threads", "1", "--max-worker-memory", "1")
    try:
        answers = []
        for _ in range(3):
            answers.append(get(server.url + "/v1/modes")[0])
            time.sleep(1.5)  # the replacement boots
    finally:
        server.stop()
    log = "".join(server.lines)
    assert answers == [200, 200, 200], log
    assert log.count("MB (over 1 MB) after GET /v1/modes: recycling it") >= 2, log
    assert log.count("Booting worker with pid") >= 3, log


# -- gunicorn's own errors (item 7) ---------------------------------------------------------------------------------


def raw(server: Server, request: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        connection.sendall(request)
        data = b""
        while chunk := connection.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


@pytest.mark.parametrize(("request_bytes", "status"), [
    (b"GET /v1/modes?x=" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    (b"GET /v1/modes HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 10_000 + b"\r\n\r\n", 431),
    (b"GET /v1/modes HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: 1\r\n" % i for i in range(150)) + b"\r\n", 431),
    (b"NOT HTTP AT ALL\r\n\r\n", 400),
], ids=["10 KB URL", "10 KB header", "150 headers", "not HTTP"])
def test_gunicorns_own_errors_are_problems_with_nosniff(busy_server: Server, request_bytes: bytes,
                                                        status: int) -> None:
    """Item 7: gunicorn's 400/414/431 were HTML pages without nosniff. They come before the application sees the
    request (openapi.yaml's info lists them), in the application's problem shape."""
    got, headers, body = raw(busy_server, request_bytes)
    assert got == status, body
    assert headers["Content-Type"] == "application/problem+json" and headers["X-Content-Type-Options"] == "nosniff"
    problem = json.loads(body)
    assert problem["status"] == status and problem["title"] and len(body) < 1000


def test_a_long_url_within_gunicorns_limit_reaches_the_application(busy_server: Server) -> None:
    """gunicorn's default request line is 4,094 bytes; serve allows its most, 8,190: the application answers."""
    status, headers, body, _ = get(busy_server.url + "/v1/odds?footprints=" + ",".join(["x"] * 3000), 30)
    assert status == 422 and headers["Content-Type"] == "application/problem+json", body[:300]
    assert len(body) < 10_000 and json.loads(body)["errors_omitted"] > 0


def test_a_server_whose_redis_is_down_starts_and_says_so(tmp_path: Path) -> None:
    """`serve` with `REDIS_URL` naming a Redis that does not answer starts (it died at start), answers `/healthz`
    and what needs no job, and a question whose solution is missing is a 503 with `Retry-After` that says the job
    queue cannot be reached, never a job recorded as queued that no queue holds."""
    env = {"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "ZOMBIE_ODDS_SOLUTIONS": str(tmp_path / "none")}
    server = Server(tmp_path, "--workers", "1", env=env)
    try:
        assert get(server.url + "/v1/modes")[0] == 200
        for _ in range(2):
            status, headers, body, _ = get(server.url + "/v1/odds?footprints=green,red&brains=green&shotguns=red")
            assert status == 503 and headers["Retry-After"] and b"job queue cannot be reached" in body, body
    finally:
        server.stop()
    assert "the job queue cannot be reached" in "".join(server.lines)
    assert not list((tmp_path / "none").glob("job--*"))


def test_a_servers_background_builder_ends_with_the_server(tmp_path: Path) -> None:
    """On the embedded default a server starts a builder of the missing solutions, a child process of its own session
    (a worker's recycling does not end it). Stopping the server stops it: it kept building alone, into the memory of
    a 6 GiB build, after the server it worked for was gone. A build it cuts short leaves nothing in the store."""
    solutions = tmp_path / "solutions"
    lock = solutions / "locks" / "solutions-builder.lock"
    server = Server(tmp_path, "--workers", "1", env={"ZOMBIE_ODDS_SOLUTIONS": str(solutions)})
    try:
        for _ in range(300):
            if lock.exists() and held(lock):
                break
            time.sleep(0.1)
        assert held(lock), "".join(server.lines)
        time.sleep(1)  # (into the base game's build)
    finally:
        server.stop()
    for _ in range(300):
        if not held(lock):
            break
        time.sleep(0.1)
    assert not held(lock)
    assert not list(solutions.glob(".tmp-*"))


def test_a_worker_has_glibc_give_freed_memory_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker fixes glibc's thresholds as it starts (what that saves is measured in bench/README.md)."""
    assert return_freed_memory()  # glibc's mallopt took both settings
    called = []
    monkeypatch.setattr("api.serving.return_freed_memory", lambda: called.append(True))
    monkeypatch.setattr("gunicorn.workers.gthread.ThreadWorker.init_process", lambda self: None)
    monkeypatch.setattr("gunicorn.util.write_error", None)  # (restored after: init_process sets it)
    Worker.init_process(object.__new__(Worker))
    assert called == [True]


class FakeWorker:
    """What `recycle_when_large`'s hook reads and sets of a gunicorn worker."""

    alive, pid = True, 1

    class log:  # noqa: N801 - gunicorn's worker.log
        @staticmethod
        def info(*args: Any) -> None:
            pass


def test_a_worker_running_an_answer_job_is_not_recycled_until_it_ends() -> None:
    """Recycling a worker for its memory while an answer's job runs would kill the job (to start again, as large,
    when the question is asked again): the first request after the job ends recycles it."""
    import api.answers
    from analysis import ExpectedBrains, Position
    from api.serving import recycle_when_large
    from workers import jobs

    hook, worker, release = recycle_when_large(0), FakeWorker(), threading.Event()
    key = api.answers.answer_key(Position(), ExpectedBrains())
    job = jobs.submit(key.name, release.wait)  # (as `api.answers.shared_answer` submits an answer's job)
    try:
        hook(worker, None, {}, None)
        assert worker.alive and jobs.running() == 1 and api.answers.computing(key)
    finally:
        release.set()
        job.result(10)
    hook(worker, None, {}, None)
    assert not worker.alive


def test_a_worker_gives_freed_memory_back_before_it_is_measured_for_recycling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the limit, the worker's heap is trimmed (`give_back`) and measured again: what it had freed is not its
    own."""
    from api.serving import recycle_when_large

    own = iter([1500.0, 300.0])
    given: list[bool] = []
    monkeypatch.setattr("api.serving.private_mb", lambda: next(own))
    monkeypatch.setattr("api.serving.give_back", lambda: given.append(True))
    hook, worker = recycle_when_large(1024), FakeWorker()
    hook(worker, None, {}, None)
    assert worker.alive and given == [True]


def test_a_worker_running_a_table_job_is_not_recycled_until_it_ends(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """So is a table's (or a report's) job of the embedded default, a thread of the worker (three players' table:
    minutes and 1.4 GB)."""
    from api.serving import recycle_when_large
    from workers import jobs

    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))  # (the job's lock is there)
    hook, worker, release = recycle_when_large(0), FakeWorker(), threading.Event()
    assert jobs.start("job", release.wait)  # (as `workers.tables` starts a table's job)
    try:
        hook(worker, None, {}, None)
        assert worker.alive and jobs.running() == 1 and jobs.runs("job")
    finally:
        release.set()
        jobs.join("job", 10)
    hook(worker, None, {}, None)
    assert not worker.alive
