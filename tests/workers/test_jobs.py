"""workers/jobs.py: a job runs in one thread of one process at a time, and its lock dies with its process; a job's
outcome (what it returned or raised) is a Future, one per run, and a semaphore bounds how many such jobs work at
once. On Redis, a job's lock is a key with one holder, which it lets go of only while it is still its own, and one
caller of many wins a claim."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from workers import jobs
from workers.celery_app import create, using
from workers.store import JobKey, Store

REDIS_URL = "redis://127.0.0.1:6379/9"  # this module's own database


@pytest.fixture(autouse=True)
def a_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    return tmp_path


def test_a_job_runs_once_while_its_lock_is_held() -> None:
    go, ran = threading.Event(), []
    assert not jobs.runs("one")
    assert jobs.start("one", lambda: (go.wait(10), ran.append("first")))
    assert jobs.runs("one")
    assert not jobs.start("one", lambda: ran.append("second"))  # the first run holds the lock
    with jobs.exclusive("one") as mine:
        assert not mine
    go.set()
    jobs.join("one", 10)
    assert ran == ["first"]
    assert not jobs.runs("one")
    assert jobs.start("one", lambda: ran.append("again"))  # free again: a new run
    jobs.join("one", 10)
    assert ran == ["first", "again"]


def test_a_failing_job_is_logged_and_lets_go_of_its_lock(caplog: pytest.LogCaptureFixture) -> None:
    def fail() -> None:
        raise RuntimeError("no luck")

    assert jobs.start("bad", fail)
    jobs.join("bad", 10)
    assert not jobs.runs("bad")
    assert "job bad failed" in caplog.text and "no luck" in caplog.text


def test_the_lock_of_a_killed_process_is_free(a_store: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from workers import jobs; from workers.store import Store\n"
         "with jobs.exclusive('far', Store(sys.argv[1])) as mine:\n    print(mine, flush=True); time.sleep(60)",
         str(a_store)], stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout.readline().strip() == "True"
            assert jobs.runs("far") and jobs.runs("far", Store(a_store))
            assert not jobs.start("far", lambda: None)  # another process runs it
        finally:
            holder.send_signal(signal.SIGKILL)
            holder.wait(10)
    assert not jobs.runs("far")
    with jobs.exclusive("far") as mine:
        assert mine


def test_submitters_to_the_workers_take_turns() -> None:
    inside, order = threading.Event(), []

    def second() -> None:
        inside.wait(10)
        with jobs.serialised("queue"):
            order.append("second")

    other = threading.Thread(target=second)
    other.start()
    with jobs.serialised("queue"):
        inside.set()
        other.join(0.3)  # it waits for the lock
        order.append("first")
    other.join(10)
    assert order == ["first", "second"]


def test_a_job_submitted_while_it_runs_is_the_run_going_on() -> None:
    go, ran = threading.Event(), []

    def first_run() -> str:
        go.wait(10)
        ran.append("first")
        return "first"

    first = jobs.submit("one", first_run)
    assert jobs.running() == 1 and jobs.runs_here("one") and not jobs.runs_here("two")
    again = jobs.submit("one", lambda: ran.append("second") or "second")
    assert again is first and not first.done()
    go.set()
    assert again.result(10) == "first" and ran == ["first"]


def test_a_job_is_forgotten_as_it_ends_and_asked_again_runs_again() -> None:
    ran: list[int] = []
    first = jobs.submit("one", lambda: ran.append(1) or len(ran))
    assert first.result(10) == 1
    assert jobs.running() == 0 and not jobs.runs_here("one")  # (forgotten before its outcome is set)
    second = jobs.submit("one", lambda: ran.append(2) or len(ran))
    assert second is not first and second.result(10) == 2 and ran == [1, 2]
    jobs.join("one", 10)  # (nothing runs: at once)


def test_what_a_job_raises_is_raised_to_whoever_waits_on_it() -> None:
    def fail() -> None:
        raise ValueError("no luck")

    job = jobs.submit("bad", fail)
    with pytest.raises(ValueError, match="no luck"):
        job.result(10)
    assert jobs.running() == 0 and not job.cancel()  # (ended: a job's outcome stays what it was)


def test_a_job_running_is_not_cancelled() -> None:
    go = threading.Event()
    job = jobs.submit("one", lambda: go.wait(10))
    assert not job.cancel()
    go.set()
    assert job.result(10) is True


def test_a_semaphore_bounds_how_many_jobs_work_at_once() -> None:
    go, lock, inside, most = threading.Event(), threading.Lock(), [0], [0]

    def work(n: int) -> int:
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        go.wait(10)
        with lock:
            inside[0] -= 1
        return n

    at_once = threading.BoundedSemaphore(2)
    four = [jobs.submit(f"job {n}", lambda n=n: work(n), at_once) for n in range(4)]
    try:
        for _ in range(200):
            if inside[0] == 2:
                break
            time.sleep(0.01)
        time.sleep(0.2)  # (time for a third to come in, were it let in)
        assert inside[0] == 2 and jobs.running() == 4  # (two work; two, waiting their turn, run already)
    finally:
        go.set()
    assert [job.result(10) for job in four] == [0, 1, 2, 3]
    assert most[0] == 2 and jobs.running() == 0


def test_a_job_started_and_one_submitted_are_counted_alike() -> None:
    go = threading.Event()
    assert jobs.start("locked", lambda: go.wait(10))
    job = jobs.submit("free", lambda: go.wait(10))
    assert jobs.running() == 2 and jobs.submit("locked", lambda: None) is not job
    go.set()
    jobs.join("locked", 10)
    job.result(10)
    assert jobs.running() == 0 and not jobs.runs("locked")


def test_without_redis_a_claim_is_won_by_this_process() -> None:
    assert jobs.claim("resume-x", 30) and jobs.claim("resume-x", 30)  # (the embedded default runs no sweep)


@pytest.fixture
def on_redis() -> Iterator[str]:
    """This process's Celery app on Redis (its own database) while the test runs: the locks are Redis keys there; a
    name of the test's own."""
    client = redis.Redis.from_url(REDIS_URL)
    client.ping()  # scripts/test starts Redis on loopback when it is not running
    name = f"test-{uuid.uuid4().hex}"
    with using(create(REDIS_URL)):
        yield name
    client.delete(f"zombie-odds:lock:{name}")


def test_on_redis_a_job_has_one_holder_and_its_lock_is_let_go_by_its_holder_only(on_redis: str,
                                                                               a_store: Path) -> None:
    client = redis.Redis.from_url(REDIS_URL)
    with jobs.exclusive(on_redis) as mine:
        assert mine and jobs.runs(on_redis) and client.exists(f"zombie-odds:lock:{on_redis}")
        assert not list(a_store.glob("locks/*"))  # (no file lock)
        with jobs.exclusive(on_redis) as again:
            assert not again
        assert jobs.runs(on_redis)  # (the one that did not get it let go of nothing)
    assert not jobs.runs(on_redis)
    with jobs.exclusive(on_redis, seconds=0.2) as mine:
        assert mine
        time.sleep(0.4)  # it expired: somebody else may take it
        assert not jobs.runs(on_redis)
        time.sleep(0.4)
        other = client.lock(f"zombie-odds:lock:{on_redis}", timeout=30)
        assert other.acquire(blocking=False)
    assert jobs.runs(on_redis)  # the first holder, late, left the other's lock alone
    other.release()


def test_on_redis_one_caller_wins_a_claim_until_it_expires(on_redis: str) -> None:
    assert jobs.claim(on_redis, 0.3)
    assert not jobs.claim(on_redis, 0.3) and jobs.runs(on_redis)
    time.sleep(0.5)
    assert jobs.claim(on_redis, 0.3)


def test_on_redis_submitters_take_turns_and_a_job_started_holds_the_lock(on_redis: str) -> None:
    inside, order = threading.Event(), []

    def second() -> None:
        inside.wait(10)
        with jobs.serialised(on_redis):  # (`using` made the app every thread's)
            order.append("second")

    other = threading.Thread(target=second)
    other.start()
    with jobs.serialised(on_redis):
        inside.set()
        other.join(0.3)  # it waits for the lock
        order.append("first")
    other.join(10)
    assert order == ["first", "second"]
    go = threading.Event()
    assert jobs.start(on_redis, lambda: go.wait(10)) and jobs.runs(on_redis)
    assert not jobs.start(on_redis, lambda: None)
    go.set()
    jobs.join(on_redis, 10)
    assert not jobs.runs(on_redis)


def test_a_jobs_record_is_an_entry_of_the_store_read_whole_or_not_at_all(a_store: Path) -> None:
    assert jobs.read_record("one") is None
    jobs.write_record("one", {"state": "running"})
    record = jobs.read_record("one")
    assert record["state"] == "running" and time.time() - record["updated"] < 60
    assert Store(a_store).writes(JobKey("one")) == 1 and jobs.read_record("one", Store(a_store)) == record
    path = a_store / f"{JobKey('one').name}.json"
    path.write_text(path.read_text().replace("running", "failed!"))  # a hand edit: the checksum says so
    assert jobs.read_record("one") is None and not path.exists()
    assert jobs.read_record("Not--an-id") is None and jobs.read_record("../one") is None
    with pytest.raises(ValueError, match="unsafe job id"):
        jobs.write_record("../one", {"state": "running"})
