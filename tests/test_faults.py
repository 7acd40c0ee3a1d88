"""Faults, with real processes: Redis stopped mid-job, a worker killed with SIGKILL mid-task, everything restarted.

Each test runs its own redis-server (a free port, nothing kept on disk: a restart comes back empty, the worst case),
real `celery -A workers.celery_app worker` processes (where a test stands them for two machines, each in a network
namespace of its own if this machine allows it) and a store in a temporary directory, and checks what the issue
promises: the API keeps answering, job status says what happened, the job completes (resumed from its durable checkpoint
when Redis forgot it or its worker died), the stored table equals the in-process solution bit for bit and was written
exactly once, and a corrupt file is never served. Most tests shorten the visibility timeout (Redis redelivers a dead
worker's message after it); one kills a worker with the production default, an hour.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from celery import current_app
from flask.testing import FlaskClient

from api import create_app
from workers.celery_app import create, using
from workers.store import Store, table_key
from workers.tables import job_status

from .games import solved_game

KEY = table_key("original", "before-draw", 2)
VISIBILITY = 6  # seconds before Redis redelivers the message of a dead worker (3600 in production)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition: Callable[[], object], seconds: float, what: str) -> object:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


class RedisServer:
    """A redis-server of our own that the test can stop and start again (it comes back empty)."""

    def __init__(self, directory: Path):
        self.port, self.dir, self.proc = free_port(), directory, None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.dir.mkdir(exist_ok=True)
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.dir)], stdout=subprocess.DEVNULL)
        client = redis.Redis(port=self.port)
        wait_until(lambda: self._ping(client), 10, "redis-server to start")

    @staticmethod
    def _ping(client: redis.Redis) -> bool:
        try:
            return client.ping()
        except redis.ConnectionError:
            return False

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


class Fleet:
    """Celery worker processes (each in its own process group, so SIGKILL takes its pool too)."""

    def __init__(self, env: dict[str, str], logs: Path):
        self.env, self.logs, self.procs = env, logs, {}

    def start(self, name: str, concurrency: int = 1, cwd: Path | None = None, on: Machine | None = None,
              **env: str) -> subprocess.Popen:
        """Start worker `name`, in working directory `cwd` (a directory of its own: a machine) if given, on another
        `Machine` if given, with `env` on top of the fleet's environment."""
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 (closed with the process)
        if cwd is not None:
            cwd.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(
            [*(on.prefix if on else ()), sys.executable, "-m", "celery", "-A", "workers.celery_app", "worker", "-n",
             f"{name}@%h", "--concurrency", str(concurrency), "--loglevel", "INFO", "--without-gossip",
             "--without-mingle", "--without-heartbeat"],
            env={**self.env, **env}, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        proc.log = log
        self.procs[name] = proc
        return proc

    def kill(self, name: str) -> None:
        proc = self.procs.pop(name)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        proc.log.close()

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def stop_all(self) -> None:
        for name in list(self.procs):
            proc = self.procs.pop(name)
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=30)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
            proc.log.close()


class Machine:
    """Another machine for worker processes: a network namespace of its own (`ip netns`, where this machine allows it:
    root), joined to this one by a veth pair and nothing else. Its processes reach this machine's Redis and
    PostgreSQL, which listen on loopback only, through forwarders on this end of the pair (`reach` gives the URL
    to use there): a worker on it shares with the others only what goes over the wire."""

    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:8]
        self.netns, here, there = f"zombie-odds-{tag}", f"zo{tag}a", f"zo{tag}b"
        net = f"10.{random.randrange(200, 250)}.{random.randrange(256)}"
        self.address, self.prefix = f"{net}.1", ("ip", "netns", "exec", self.netns)
        self._listeners: dict[int, socket.socket] = {}
        for command in (f"netns add {self.netns}", f"link add {here} type veth peer name {there} netns {self.netns}",
                        f"addr add {self.address}/30 dev {here}", f"link set {here} up",
                        f"-n {self.netns} addr add {net}.2/30 dev {there}", f"-n {self.netns} link set {there} up",
                        f"-n {self.netns} link set lo up"):
            subprocess.run(["ip", *command.split()], check=True, capture_output=True)

    @staticmethod
    def allowed() -> bool:
        probe = f"zombie-odds-probe-{uuid.uuid4().hex[:8]}"
        if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode:
            return False
        subprocess.run(["ip", "netns", "delete", probe], check=True)
        return True

    def reach(self, url: str) -> str:
        """`url` (a service on this machine's loopback) as a process on this machine reaches it: the pair's address,
        forwarded to the loopback."""
        parts = urlsplit(url)
        port = parts.port
        if port not in self._listeners:
            self._listeners[port] = listener = socket.create_server((self.address, port))
            threading.Thread(target=_forward, args=(listener, port), daemon=True).start()
        netloc = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
        return urlunsplit(parts._replace(netloc=f"{netloc}{self.address}:{port}"))

    def close(self) -> None:
        for listener in self._listeners.values():
            listener.close()
        subprocess.run(["ip", "netns", "delete", self.netns], check=True)  # (its end of the pair with it)


def _forward(listener: socket.socket, port: int) -> None:
    """Accept connections on `listener` and join each to the same port on loopback (`_join`)."""
    while True:
        try:
            there, _ = listener.accept()
        except OSError:  # closed
            return
        threading.Thread(target=_join, args=(there, port), daemon=True).start()


def _join(there: socket.socket, port: int) -> None:
    """One connection joined to the same port on loopback, byte for byte both ways, until either side ends."""
    with there, socket.create_connection(("127.0.0.1", port)) as here:
        back = threading.Thread(target=_pipe, args=(here, there), daemon=True)
        back.start()
        _pipe(there, here)
        back.join()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(1 << 16):
            sink.sendall(data)
    for end in (source, sink):
        with contextlib.suppress(OSError):
            end.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def machines() -> Iterator[Callable[[], Machine | None]]:
    """Another `Machine` each call, or None where this machine does not allow network namespaces (the workers are
    then processes of this one, each in a directory of its own); every one removed after the test (asked for before
    `world`, whose workers stop first)."""
    made: list[Machine] = []
    allowed = Machine.allowed()

    def another() -> Machine | None:
        if not allowed:
            return None
        made.append(Machine())
        return made[-1]

    yield another
    for machine in made:
        machine.close()


@pytest.fixture
def world(request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[RedisServer, Fleet, Store]]:
    """Our Redis, a worker fleet pointed at it, the store; this process's Celery app pointed at them too.
    The visibility timeout is `VISIBILITY`, or the default when the test parametrizes `world` with None."""
    server = RedisServer(tmp_path / "redis")
    server.start()
    store_dir = tmp_path / "store"
    env = {"REDIS_URL": server.url, "ZOMBIE_ODDS_STORE": str(store_dir)}
    visibility = getattr(request, "param", VISIBILITY)
    if visibility is None:
        monkeypatch.delenv("ZOMBIE_ODDS_VISIBILITY_TIMEOUT", raising=False)
    else:
        env["ZOMBIE_ODDS_VISIBILITY_TIMEOUT"] = str(visibility)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    fleet = Fleet({**os.environ, **env}, tmp_path)
    try:
        with using(create(server.url)):
            yield server, fleet, Store(store_dir)
    finally:
        fleet.stop_all()
        server.stop()
        monkeypatch.delenv("REDIS_URL")


def api(redis_url: str) -> FlaskClient:
    """A fresh API process's view (a new app), rate limited in our Redis as in production."""
    app = create_app({"TESTING": True, "RATELIMIT_ENABLED": True, "RATELIMIT_STORAGE_URI": redis_url})
    return app.test_client()


def submit(client: FlaskClient) -> str:
    answer = client.post("/v1/tables/original/jobs", json={})
    assert answer.status_code == 202, answer.json
    return answer.json["id"]


def job(client: FlaskClient, job_id: str) -> dict:
    answer = client.get(f"/v1/jobs/{job_id}")
    assert answer.status_code == 200, answer.json
    return answer.json


def finished(client: FlaskClient, job_id: str) -> dict | None:
    state = job(client, job_id)
    return state if state["state"] in ("succeeded", "failed") else None


def served_table(client: FlaskClient) -> tuple[dict, str]:
    answer = client.get("/v1/tables/original")
    assert answer.status_code == 200, answer.json
    return answer.json, answer.headers["ETag"]


def assert_whole(table: dict) -> None:
    expected = solved_game("original")
    assert table["win_probability"]["seat1"] == [list(row) for row in expected.seat1]  # bit for bit, all present
    assert table["win_probability"]["seat2"] == [list(row) for row in expected.seat2]
    assert table["tiebreak"] == expected.tiebreak and table["final"] == list(expected.final)


def kill_mid_unit(fleet: Fleet, name: str) -> str | None:
    """SIGKILL the worker `name` (and its pool) while it runs a unit: the id of that unit, whose message
    was never acknowledged, or None if the unit ended before the kill after all."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        received = re.findall(r"solve_unit\[([0-9a-f-]+)\] received", fleet.log(name))
        if received and f"solve_unit[{received[-1]}] succeeded" not in fleet.log(name):
            fleet.kill(name)
            return None if f"solve_unit[{received[-1]}] succeeded" in fleet.log(name) else received[-1]
        time.sleep(0.01)
    raise AssertionError(f"timed out after 60 s waiting for {name} to receive a unit")


def kill_a_worker_mid_job(fleet: Fleet, client: FlaskClient, job_id: str, layers: int = 0, home: Path | None = None,
                          on: Machine | None = None, **env: str) -> str:
    """Start workers ``w1-<attempt>`` (each in ``home/<name>`` if given, `on` a machine if given, with `env`) and
    SIGKILL one mid-unit once
    `layers` layers of the job are done: the killed unit's id. The first unit of a new worker process builds the
    game's transition kernel (most of a second) before it solves anything, so a kill right after the unit is received
    lands mid-task; should the unit still have ended first, the kill does not count: the next worker's first unit is
    killed instead."""
    for attempt in range(5):
        name = f"w1-{attempt}"
        fleet.start(name, cwd=home / name if home else None, on=on, **env)
        if attempt == 0 and layers:
            wait_until(lambda: job(client, job_id)["progress"]["done"] >= layers, 120, f"{layers} layers done")
        killed = kill_mid_unit(fleet, name)
        if killed:
            return killed
    pytest.fail("every unit ended before its worker could be killed")


def redelivered(fleet: Fleet, name: str, killed: str) -> None:
    """Wait for the killed unit to succeed on worker `name`. Its message was never acknowledged, so Redis hands it
    out again once the visibility timeout has passed; that may come after the job has finished: a kill that landed
    after the unit had stored its result (the chord counted it) but before its worker logged it leaves the rest of
    the job free to finish first."""
    wait_until(lambda: f"solve_unit[{killed}] succeeded" in fleet.log(name), VISIBILITY + 60,
               f"unit {killed} redelivered to {name}")


ODDS = "/v1/odds?footprints=green,red&brains=green&shotguns=red"


def test_redis_stopped_mid_job_the_api_answers_and_the_job_resumes(world, warm) -> None:
    server, fleet, store = world
    client = api(server.url)
    fleet.start("w1")
    job_id = submit(client)
    wait_until(lambda: job(client, job_id)["progress"]["done"] >= 3, 120, "three layers done")

    server.stop()
    answer = client.get(ODDS)
    assert answer.status_code == 200 and answer.json["next_roll"]["bust"]["exact"] == "2/9"  # no Redis needed
    assert job(client, job_id)["state"] == "running"  # from the durable record: not a 500
    state, meta = job_status(job_id)
    assert state == "PROGRESS" and meta["broker"] == "unavailable" and "resumes" in meta["detail"], meta
    refused = client.post("/v1/tables/original/jobs", json={"variant": "draw-then-recycle"})
    assert refused.status_code == 503 and refused.mimetype == "application/problem+json"
    assert client.get("/v1/tables/original").status_code == 404  # nothing partial is served
    assert KEY not in store

    server.start()  # empty: the queue, the chord counters and the progress record are gone
    done = wait_until(lambda: finished(client, job_id), 180, "the job to be resumed and finish")
    assert done["state"] == "succeeded", done
    # Two ways back, both whole: the sweep resumes the job from its record, or (a race) the worker put its
    # unacknowledged layer message back into the restarted Redis when it reconnected (kombu's restore).
    log = fleet.log("w1")
    assert "resuming table job" in log or "Restoring 1 unacknowledged message" in log, log[-2000:]
    table, etag = served_table(client)
    assert_whole(table)
    assert etag == f'"{done["sha256"]}-json"' and store.writes(KEY) == 1


def test_a_job_redis_forgot_is_resumed_from_its_record(world, warm) -> None:
    """Redis restarts empty with a job queued and no worker yet (so no message can come back from a worker,
    as it may in the test above): the first worker to connect finds the job lost and resumes it from its
    durable record, and the table is whole and written once."""
    server, fleet, store = world
    client = api(server.url)
    job_id = submit(client)
    server.stop()
    server.start()  # empty: the queued layer and the progress record are gone
    fleet.start("w1")
    done = wait_until(lambda: finished(client, job_id), 180, "the job to be resumed and finish")
    assert done["state"] == "succeeded", done
    assert f"resuming table job {job_id} at layer 0" in fleet.log("w1")
    assert_whole(served_table(client)[0])
    assert store.writes(KEY) == 1


def test_a_killed_worker_a_full_restart_and_bit_rot(world, warm) -> None:
    """SIGKILL mid-task: redelivered, the table written once. Restart of API, worker and Redis: still
    served, checksum verified. A corrupted file: detected, reported, recomputed, never served."""
    server, fleet, store = world
    client = api(server.url)
    job_id = submit(client)

    killed = kill_a_worker_mid_job(fleet, client, job_id)
    assert job(client, job_id)["state"] != "succeeded"
    fleet.start("w2")
    done = wait_until(lambda: finished(client, job_id), 180, "the job to finish on w2")
    assert done["state"] == "succeeded", done
    redelivered(fleet, "w2", killed)  # the killed task itself
    assert "resuming table job" not in fleet.log("w2")  # redelivery alone finished it: Redis kept everything
    assert store.writes(KEY) == 1
    table, etag = served_table(client)
    assert_whole(table)

    fleet.stop_all()
    server.stop()
    server.start()  # empty
    fleet.start("w3")
    client = api(server.url)  # a new API process
    assert served_table(client) == (table, etag)  # still there; its checksum is verified on every read

    path = store.root / f"{KEY.name}.json"
    path.write_bytes(path.read_bytes().replace(b"0.4", b"0.5", 1))  # bit rot
    answer = client.get("/v1/tables/original")
    assert answer.status_code == 404 and b"0.5" not in answer.data  # detected, never served
    assert path.with_suffix(".corrupt").exists() and KEY not in store
    lost = job(client, job_id)
    assert lost["state"] == "failed" and "lost" in lost["error"]  # reported
    assert submit(client) == job_id
    done = wait_until(lambda: finished(client, job_id), 180, "the table to be recomputed")
    assert done["state"] == "succeeded", done
    assert served_table(client) == (table, etag) and store.writes(KEY) == 2


@pytest.mark.parametrize("world", [None], indirect=True)  # the default visibility timeout: an hour
def test_a_worker_killed_mid_job_with_default_settings_is_resumed_within_minutes(world, warm) -> None:
    """SIGKILL mid-task, mid-job, with the production settings: Redis would redeliver the killed unit only
    after an hour, but the job's heartbeat stops with its worker, and a sweep of the next worker resumes the
    job from its last finished layer (workers/tasks.py: within LOST_AFTER + SWEEP_EVERY s). Its status says
    it was resumed; the table is whole and written once."""
    server, fleet, store = world
    client = api(server.url)
    job_id = submit(client)
    killed = kill_a_worker_mid_job(fleet, client, job_id, layers=3)
    stuck = job(client, job_id)
    assert stuck["state"] == "running" and 3 <= stuck["progress"]["done"] < stuck["progress"]["total"], stuck
    assert "detail" not in stuck

    fleet.start("w2")
    details = set()

    def finished_noting_detail() -> dict | None:
        state = job(client, job_id)
        details.add(state.get("detail"))
        return state if state["state"] in ("succeeded", "failed") else None

    done = wait_until(finished_noting_detail, 180, "the job to be resumed on w2 and finish")
    assert done["state"] == "succeeded", done
    assert any(d and d.startswith("resumed from its last finished layer") and d.endswith("after its worker stopped")
               for d in details), details
    assert done["detail"] in details  # a job that succeeded after a resume keeps saying so
    log = fleet.log("w2")
    assert f"resuming table job {job_id} at layer" in log, log[-2000:]
    assert f"solve_unit[{killed}]" not in log  # not redelivered (that takes an hour): resumed instead
    assert store.writes(KEY) == 1
    assert_whole(served_table(client)[0])


def test_workers_sharing_only_postgresql_and_redis_complete_a_table_once(machines, world, warm, database, tmp_path,
                                                                        monkeypatch) -> None:
    """Two workers standing for two machines: each on a `Machine` of its own (a network namespace, where this machine
    allows it) and in a working directory of its own (its local copies there, in ``var/cache``), sharing with the API
    only the PostgreSQL store and Redis, and the job's layers. One is SIGKILLed mid-unit; the other finishes the job:
    the table whole, written once, served by the API from the database."""
    from workers.pgstore import PostgresStore

    server, fleet, _ = world
    fleet.env.pop("ZOMBIE_ODDS_SOLUTIONS", None)  # (the test session's shared folder: no worker reads it)
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", database)
    monkeypatch.setenv("ZOMBIE_ODDS_CACHE", str(tmp_path / "api"))
    client = api(server.url)

    def services(on: Machine | None) -> dict[str, str]:
        urls = {"REDIS_URL": server.url, "ZOMBIE_ODDS_STORE": database}
        return {name: on.reach(url) for name, url in urls.items()} if on else urls

    second, first = machines(), machines()
    for machine in filter(None, (first, second)):  # nothing on this machine's loopback is reached from there
        reached = f"import socket; socket.create_connection(('127.0.0.1', {urlsplit(server.url).port}), 5)"
        assert subprocess.run([*machine.prefix, sys.executable, "-c", reached], capture_output=True).returncode
    fleet.start("w2", cwd=tmp_path / "w2", on=second, **services(second))
    wait_until(lambda: "ready." in fleet.log("w2"), 60, "w2 to be ready")
    job_id = submit(client)
    killed = kill_a_worker_mid_job(fleet, client, job_id, layers=2, home=tmp_path, on=first, **services(first))
    assert re.search(r"solve_unit\[[0-9a-f-]+\] received", fleet.log("w2"))  # the two shared the job's layers
    done = wait_until(lambda: finished(client, job_id), 300, "the job to finish on w2")
    assert done["state"] == "succeeded", done
    redelivered(fleet, "w2", killed)  # to the other machine
    with PostgresStore(database, tmp_path / "reader") as shelf:
        assert shelf.writes(KEY) == 1 and done["sha256"] == shelf.get(KEY)[1]
    assert_whole(served_table(client)[0])
    assert not list(tmp_path.glob("w*/var/store"))  # nothing stored but in the database


def test_a_pickle_message_is_refused(world) -> None:
    server, fleet, store = world
    fleet.start("w1")
    wait_until(lambda: "ready." in fleet.log("w1"), 60, "the worker to be ready")
    sent = current_app.send_task("workers.tasks.solve_unit", args=[{}, {}, "x", "y"], serializer="pickle",
                                ignore_result=True)
    wait_until(lambda: "Refusing to deserialize untrusted content of type pickle" in fleet.log("w1"), 30,
               "the worker to refuse the pickle message")
    assert sent.id not in fleet.log("w1")  # never run
