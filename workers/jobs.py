"""The embedded back end of every job: a thread of this process, one run per job id across every process that
shares the store.

A job's lock is a file under the store's ``locks/`` (`lock_path`), named by the job's id. The thread that runs a
job (`start`) holds it from the first step to the last, and the kernel drops it when the process dies, so `runs`
(some process holds the lock) is true exactly while a process runs the job: a record that says "running" while
the lock is free was interrupted. Whoever starts a job first takes its lock, so two processes asked at once start
one run; the job's work checks under the lock whether its result is stored already (a run that ended just
before), so that it is computed once. Tables (tables.py), reports (reports.py) and the solutions' background
builder (solutions.py) run this way without `REDIS_URL`; with it, Celery's workers run them.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .shared import store
from .store import Store, held, try_lock

__all__ = ["lock_path", "runs", "start", "running", "join", "exclusive", "serialised"]

log = logging.getLogger(__name__)

_threads: dict[str, threading.Thread] = {}  # the jobs this process runs, by id


def lock_path(job: str, where: Store | None = None) -> Path:
    """The lock file of job `job` under the store (`where`, by default the current one)."""
    folder = (where or store()).root / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{job}.lock"


def runs(job: str, where: Store | None = None) -> bool:
    """Whether some process holds the job's lock, that is, runs it now."""
    return held(lock_path(job, where))


def start(job: str, work: Callable[[], object]) -> bool:
    """Run `work` in a daemon thread of this process holding the job's lock; False, and nothing run, if another
    thread or process holds it. An exception ends the job, not the process: it is logged, and the job's own
    record says why."""
    fd = try_lock(lock_path(job))
    if fd is None:
        return False

    def run() -> None:
        try:
            work()
        except Exception:
            log.exception("job %s failed", job)
        finally:
            os.close(fd)

    thread = _threads[job] = threading.Thread(target=run, name=f"job {job}", daemon=True)
    thread.start()
    return True


def running() -> int:
    """How many jobs this process runs now."""
    return sum(thread.is_alive() for thread in list(_threads.values()))


def join(job: str, timeout: float | None = None) -> None:
    """Wait until this process's thread running `job` (if any) has ended: a command that started a job should not
    exit before its result and its last record are written."""
    thread = _threads.get(job)
    if thread is not None:
        thread.join(timeout)


@contextmanager
def exclusive(job: str, where: Store | None = None) -> Iterator[bool]:
    """True inside if this caller holds the job's lock (nobody else runs it), False if someone does; it does not
    wait."""
    fd = try_lock(lock_path(job, where))
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)


@contextmanager
def serialised(job: str) -> Iterator[None]:
    """Hold the job's lock for a moment, waiting for it: two processes submitting `job` to the workers at once see
    one another's submission."""
    fd = os.open(lock_path(job), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
