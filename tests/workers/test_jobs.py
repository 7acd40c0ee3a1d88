"""workers/jobs.py: a job runs in one thread of one process at a time, and its lock dies with its process."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from workers import jobs
from workers.store import Store


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
