"""Fixtures of the tests of workers/: a store of the test's own, and a real Celery worker on the Redis database of the
module that asks for it (its `REDIS_URL`: each module its own, as pytest-xdist runs modules side by side)."""

import os
import subprocess
import sys

import pytest
import redis

from workers.celery_app import create, using


@pytest.fixture
def store_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path / "store"))
    return tmp_path / "store"


@pytest.fixture
def worker(store_dir, request):
    """`celery -A workers.celery_app worker` on the module's Redis database (emptied before and after); this
    process's Celery app pointed at it while the test runs."""
    redis_url = request.module.REDIS_URL
    client = redis.Redis.from_url(redis_url)
    client.ping()  # scripts/test starts Redis on loopback when it is not running
    client.flushdb()
    env = {**os.environ, "REDIS_URL": redis_url, "ZOMBIE_ODDS_STORE": str(store_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "workers.celery_app", "worker", "--concurrency", "2",
                             "--loglevel", "WARNING", "--without-gossip", "--without-mingle"], env=env)
    try:
        with using(create(redis_url)):
            yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        client.flushdb()
