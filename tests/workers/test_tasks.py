"""workers/tasks.py: the table graph of Celery tasks, in-process (the embedded default) and on a real worker over a
real Redis (its progress reported, the table stored bit for bit), a job whose worker died resumed once, saying
so, and a job whose process was killed going on from its last finished layer when asked again."""

import os
import subprocess
import sys
import time
from collections import Counter

import redis

from workers import tables, tasks
from workers.celery_app import app, create, using
from workers.store import JobKey, Store, table_key
from workers.tables import job_status, layer_key, start_table_job

from ..games import solved_game

REDIS_URL = "redis://127.0.0.1:6379/15"


def test_embedded_default_runs_the_same_graph_in_process(store_dir, monkeypatch):
    """The same graph, and the same checkpoints: each layer's results stored once, read once by the process that
    solves the next layers' units (two a layer), and removed once the table is stored."""
    assert app.conf.task_always_eager  # (the process's own app: no REDIS_URL here)
    reads: Counter[str] = Counter()
    get = Store.get

    def counted(self: Store, key):
        reads[key.name] += key.name.startswith("layer--")
        return get(self, key)

    monkeypatch.setattr(Store, "get", counted)
    job = start_table_job("original")
    state, summary = job_status(job)
    assert state == "SUCCESS" and summary["done"] == summary["total"]
    shelf = Store(store_dir)
    data, digest = shelf.get(table_key("original", "before-draw", 2))
    assert summary["sha256"] == digest
    assert data["tiebreak"] == solved_game("original").tiebreak
    assert summary["p_first_player_wins"] == solved_game("original").p_first_player_wins
    layers = [layer_key(job, "original", "before-draw", 2, k) for k in range(summary["total"] - 1)]
    assert [reads[key.name] for key in layers] == [1] * len(layers) == [1] * 26
    stored = list(shelf.keys())
    assert not [key for key in stored if key.kind == "layer"] and "known" not in shelf.get(JobKey(job))[0]


def test_a_real_worker_computes_and_stores_the_table(worker, store_dir):
    """Each layer in three units, one more than the worker's processes: the table is the same bit for bit."""
    job = start_table_job("original", split=3)
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


def test_a_job_whose_worker_died_is_resumed_once_and_says_so(store_dir):
    """No worker runs here: the queue and the heartbeat stand for one. A job waiting in the queue is not lost, nor
    one whose launch message a worker has taken and not yet run (starting the job beat); once its message is gone
    (taken by a worker that died: it waits unacknowledged for an hour) and no heartbeat is left, a sweep resumes it
    once, and its status says it was resumed and why."""
    from workers.tasks import resume_lost_jobs

    client = redis.Redis.from_url(REDIS_URL)
    client.ping()
    client.flushdb()
    try:
        with using(create(REDIS_URL)) as celery:
            job = start_table_job("original")
            assert resume_lost_jobs() == []  # its launch message waits in the queue: not lost
            client.delete(celery.conf.task_default_queue)  # a worker took it
            assert resume_lost_jobs() == []  # and will run it: the job beat when it started
            client.delete(f"zombie-odds:beat:{job}")  # the worker died: no heartbeat for `LOST_AFTER` s
            assert resume_lost_jobs() == [job]
            assert resume_lost_jobs() == []  # the new run's launch beat, and its units wait in the queue
            state, meta = job_status(job)
            assert state == "PROGRESS" and meta["resumed"] == 1, meta
            assert meta["detail"] == "resumed from its last finished layer (0 of 26) after its worker stopped"
    finally:
        client.flushdb()


def test_a_job_whose_process_was_killed_goes_on_from_its_last_finished_layer(store_dir, monkeypatch):
    """`zombie-odds tables build` is SIGKILLed once its record counts three layers done. Asked again, the job starts
    a new run from the layers its checkpoints hold, solving none of them again, says so while it runs and once it is
    done, and stores the table bit for bit."""
    env = {**os.environ, "ZOMBIE_ODDS_STORE": str(store_dir)}
    env.pop("REDIS_URL", None)
    build = subprocess.Popen([sys.executable, "-m", "api.cli", "tables", "build", "--mode", "original"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shelf, key = Store(store_dir), table_key("original", "before-draw", 2)
    job = tables.job_id(key)

    def recorded() -> dict:
        entry = shelf.get(JobKey(job))
        return entry[0] if entry else {"done": 0}

    try:
        deadline = time.time() + 300
        while recorded()["done"] < 3 and time.time() < deadline:
            assert build.poll() is None, "the build ended before it was killed"
            time.sleep(0.02)
    finally:
        build.kill()
        build.wait()
    killed = recorded()
    assert killed["state"] == "running" and killed["done"] >= 3
    assert tables.status(key).error.startswith("interrupted")

    asked, seen = [], []
    known = tasks._known

    def watched(job_id, mode, variant, players, layer):
        asked.append(layer)
        if len(asked) == 1:
            seen.append(job_status(job_id)[1])
        return known(job_id, mode, variant, players, layer)

    monkeypatch.setattr(tasks, "_known", watched)
    assert tables.submit("original").state == "queued"
    tables.join(key, timeout=300)
    assert tables.status(key).state == "succeeded"
    assert min(asked) == killed["done"]  # (each unit asks for the values before its layer)
    resumed = f"resumed from its last finished layer ({killed['done']} of 26) after its process stopped"
    assert seen[0]["resumed"] == 1 and seen[0]["detail"] == resumed
    assert tables.status(key).detail == resumed  # and it still says so once it succeeded
    data, _ = shelf.get(key)
    assert data["seat1"] == [list(row) for row in solved_game("original").seat1]
