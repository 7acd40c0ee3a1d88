"""Celery: the table graph in-process (the embedded default) and on a real worker over a real Redis."""

import os
import subprocess
import sys
import time

import pytest
import redis

from workers import app
from workers.celery_app import create, using
from workers.store import Store
from workers.tasks import job_status, start_table_job, table_key

from .games import solved_game

REDIS_URL = "redis://127.0.0.1:6379/15"


@pytest.fixture
def store_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path / "store"))
    return tmp_path / "store"


def test_json_only():
    assert app.conf.accept_content == ["json"] and app.conf.task_serializer == "json"
    assert app.conf.task_acks_late and app.conf.task_reject_on_worker_lost


def test_embedded_default_runs_the_same_graph_in_process(store_dir):
    assert app.conf.task_always_eager  # (the process's own app: no REDIS_URL here)
    job = start_table_job("original")
    state, summary = job_status(job)
    assert state == "SUCCESS" and summary["done"] == summary["total"]
    data, digest = Store(store_dir).get(table_key("original", "before-draw", 2))
    assert summary["sha256"] == digest
    assert data["tiebreak"] == solved_game("original").tiebreak
    assert summary["p_first_player_wins"] == solved_game("original").p_first_player_wins


@pytest.fixture
def worker(store_dir):
    client = redis.Redis.from_url(REDIS_URL)
    client.ping()  # scripts/test starts Redis on loopback when it is not running
    client.flushdb()
    env = {**os.environ, "REDIS_URL": REDIS_URL, "ZOMBIE_ODDS_STORE": str(store_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "workers", "worker", "--concurrency", "2",
                             "--loglevel", "WARNING", "--without-gossip", "--without-mingle"], env=env)
    try:
        with using(create(REDIS_URL)):
            yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        client.flushdb()


def test_a_real_worker_computes_and_stores_the_table(worker, store_dir):
    job = start_table_job("original")
    deadline = time.time() + 900
    seen = set()
    while (state := job_status(job))[0] not in ("SUCCESS", "FAILURE") and time.time() < deadline:
        assert worker.poll() is None, "the worker died"
        seen.add(state[1].get("done"))
        time.sleep(0.5)
    state, summary = job_status(job)
    assert state == "SUCCESS", summary
    assert summary["done"] == summary["total"] > 20 and len(seen) > 3  # progress was reported on the way
    data, digest = Store(store_dir).get(table_key("original", "before-draw", 2))
    assert summary["sha256"] == digest
    assert data["seat1"] == [list(row) for row in solved_game("original").seat1]  # bit for bit


@pytest.fixture
def solutions_in_store(store_dir, monkeypatch):
    """Solutions kept in the store itself (their default), for the server and a worker started after this."""
    monkeypatch.delenv("ZOMBIE_ODDS_SOLUTIONS")


def test_a_real_worker_builds_a_missing_solution_the_api_asked_for(solutions_in_store, worker):
    """With REDIS_URL, a server missing a solution queues its build for the workers (503 meanwhile); a worker builds
    it into the shared store, and the server then answers from it."""
    from api import create_app
    from workers import solutions

    client = create_app({"TESTING": True}).test_client()
    url = "/v1/odds?mode=original&recycle=draw-then-recycle&footprints=green,red&brains=yellow"
    first = client.get(url)
    assert first.status_code == 503 and first.headers["Retry-After"]
    job = first.get_json()["job"]
    deadline = time.time() + 300
    while (state := client.get(job).get_json()["state"]) != "built":
        assert state in ("queued", "building") and time.time() < deadline, state
        assert worker.poll() is None, "the worker died"
        time.sleep(0.3)
    assert client.get(url).status_code == 200
    assert solutions.store().writes(solutions.solution_key("original", "draw-then-recycle")) == 1


def test_a_job_whose_worker_died_is_resumed_once_and_says_so(store_dir):
    """No worker runs here: the queue and the heartbeat stand for one. A job waiting in the queue is not lost;
    once its message is gone (taken by a worker that died: it waits unacknowledged for an hour) and no
    heartbeat is left, a sweep resumes it once, and its status says it was resumed and why."""
    from workers.tasks import resume_lost_jobs

    client = redis.Redis.from_url(REDIS_URL)
    client.ping()
    client.flushdb()
    try:
        with using(create(REDIS_URL)) as celery:
            job = start_table_job("original")
            assert resume_lost_jobs() == []  # its launch message waits in the queue: not lost
            client.delete(celery.conf.task_default_queue)  # a worker took it and died; it never beat
            assert resume_lost_jobs() == [job]
            assert resume_lost_jobs() == []  # the new run's launch beat, and its units wait in the queue
            state, meta = job_status(job)
            assert state == "PROGRESS" and meta["resumed"] == 1, meta
            assert meta["detail"] == "resumed from its last finished layer (0 of 26) after its worker stopped"
    finally:
        client.flushdb()
