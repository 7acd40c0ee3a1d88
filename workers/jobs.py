"""The embedded back end of every job: a thread of this process, one run per job id at a time in this process
(`submit`), and, for a job with a lock, one run across every process that shares the store (`start`).

A job runs `work` in a daemon thread named after it, and its outcome is a `concurrent.futures.Future`: what `work`
returned, or what it raised, for whoever waits on it. While it runs, this process knows it by its id (`running`),
so asking for it again gives the run going on rather than a second one; once it ends it is forgotten, and asking
again runs it again. A daemon thread dies with its process: a job must leave nothing half written, as the store's
entries (written whole or not at all) do.

A job's lock is a file under the store's ``locks/`` (`lock_path`), named by the job's id. The thread that runs a
job by `start` holds it from the first step to the last, and the kernel drops it when the process dies, so `runs`
(some process holds the lock) is true exactly while a process runs the job: a record that says "running" while
the lock is free was interrupted. Whoever starts a job first takes its lock, so two processes asked at once start
one run; the job's work checks under the lock whether its result is stored already (a run that ended just
before), so that it is computed once. Tables (tables.py), reports (reports.py) and the solutions' background
builder (solutions.py) run this way without `REDIS_URL`; with it, Celery's workers run them.

The answers of /v1/odds (api/answers.py) are jobs by `submit`: the request waits for its answer's Future for a
while, and what the work raised (a 422 for a position too large, say) is raised to it. Their lock is the answer's
own in the store, taken by the work, and a semaphore bounds how many compute at once (a solve can take gigabytes).
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, wait
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TypeVar

from .shared import store
from .store import Store, held, try_lock

__all__ = ["lock_path", "runs", "submit", "start", "running", "runs_here", "join", "exclusive", "serialised"]

log = logging.getLogger(__name__)

T = TypeVar("T")

_jobs: dict[str, Future] = {}  # the jobs this process runs, by id: each one's outcome
_jobs_lock = threading.Lock()


def lock_path(job: str, where: Store | None = None) -> Path:
    """The lock file of job `job` under the store (`where`, by default the current one)."""
    folder = (where or store()).root / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{job}.lock"


def runs(job: str, where: Store | None = None) -> bool:
    """Whether some process holds the job's lock, that is, runs it now."""
    return held(lock_path(job, where))


def submit(job: str, work: Callable[[], T], slots: threading.Semaphore | None = None) -> Future[T]:
    """The outcome of job `job`: the run of it this process has going on, else a new run of `work` in a daemon
    thread of this process, inside `slots` if given (so that a semaphore of n lets n such jobs work at once, the
    others waiting their turn). The Future holds what `work` returned or raised; the job is forgotten as it ends,
    before the Future is set, so that a caller it wakes sees the job ended and, asking again, runs it again."""
    with _jobs_lock:
        future = _jobs.get(job)
        return future if future is not None else _spawn(job, work, slots)


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

    with _jobs_lock:  # (a new run, even if the last one is still being forgotten: the lock is this run's)
        _spawn(job, run)
    return True


def _spawn(job: str, work: Callable[[], T], slots: threading.Semaphore | None = None) -> Future[T]:
    """Start a run of `job` and make it the one this process knows; the caller holds `_jobs_lock`."""
    future: Future[T] = Future()
    future.set_running_or_notify_cancel()  # (a job runs to its end: `cancel` does not stop it)
    _jobs[job] = future
    threading.Thread(target=_run, args=(job, future, work, slots), name=f"job {job}", daemon=True).start()
    return future


def _run(job: str, future: Future[T], work: Callable[[], T], slots: threading.Semaphore | None) -> None:
    try:
        with slots if slots is not None else nullcontext():
            result, error = work(), None
    except BaseException as e:  # (whoever waits on the job re-raises it)
        result, error = None, e
    with _jobs_lock:
        if _jobs.get(job) is future:  # (not a newer run `start` made)
            del _jobs[job]
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


def running() -> int:
    """How many jobs this process runs now."""
    with _jobs_lock:
        return len(_jobs)


def runs_here(job: str) -> bool:
    """Whether this process runs `job` now (`runs`: whether any process does, by its lock)."""
    with _jobs_lock:
        return job in _jobs


def join(job: str, timeout: float | None = None) -> None:
    """Wait until this process's run of `job` (if any) has ended: a command that started a job should not exit
    before its result and its last record are written."""
    with _jobs_lock:
        future = _jobs.get(job)
    if future is not None:
        wait([future], timeout)


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
