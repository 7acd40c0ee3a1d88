"""Celery: the table graph in-process (the embedded default) and on a real worker over a real Redis."""

import os
import subprocess
import sys
import time

import pytest
import redis

from analysis.game import solve_game
from workers import app
from workers.celery_app import configure
from workers.store import Store
from workers.tasks import job_status, start_table_job, table_key

REDIS_URL = "redis://127.0.0.1:6379/15"


@pytest.fixture
def store_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path / "store"))
    return tmp_path / "store"


def test_json_only():
    assert app.conf.accept_content == ["json"] and app.conf.task_serializer == "json"
    assert app.conf.task_acks_late and app.conf.task_reject_on_worker_lost


def test_embedded_default_runs_the_same_graph_in_process(store_dir):
    configure(app, "")
    job = start_table_job("original")
    state, summary = job_status(job)
    assert state == "SUCCESS" and summary["done"] == summary["total"]
    data, digest = Store(store_dir).get(table_key("original", "before-draw", 2))
    assert summary["sha256"] == digest
    assert data["tiebreak"] == solve_game("original").tiebreak
    assert summary["p_first_player_wins"] == solve_game("original").p_first_player_wins


@pytest.fixture
def worker(store_dir):
    client = redis.Redis.from_url(REDIS_URL)
    client.ping()  # scripts/test starts Redis on loopback when it is not running
    client.flushdb()
    env = {**os.environ, "REDIS_URL": REDIS_URL, "ZOMBIE_ODDS_STORE": str(store_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "workers", "worker", "--concurrency", "2",
                             "--loglevel", "WARNING", "--without-gossip", "--without-mingle"], env=env)
    configure(app, REDIS_URL)
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        configure(app, "")
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
    assert data["seat1"] == [list(row) for row in solve_game("original").seat1]  # bit for bit
