"""What every job module (tables.py, solutions.py, reports.py) runs its jobs with: a job's lock, its durable record,
a Celery task sent by name to the workers (`send`, with `REDIS_URL`), and the embedded back end: a thread of this
process, one run per job id at a time in this process (`submit`), and, for a job with a lock, one run across every
process that shares the store (`start`).

A job runs `work` in a daemon thread named after it, and its outcome is a `concurrent.futures.Future`: what `work`
returned, or what it raised, for whoever waits on it. While it runs, this process knows it by its id (`running`),
so asking for it again gives the run going on rather than a second one; once it ends it is forgotten, and asking
again runs it again. A daemon thread dies with its process: a job must leave nothing half written, as the store's
entries (written whole or not at all) do.

A job's lock is one interface (`exclusive`, `runs`, `claim`, `serialised`; `start` takes it too) with two back ends:

* embedded (no `REDIS_URL`), a file under the store's ``locks/`` (`lock_path`), named by the job's id: every process
  that runs jobs shares that directory, and the kernel drops the lock when its holder dies, so a lock is held
  exactly while its holder lives, with no expiry to choose. The thread that runs a job by `start` holds it from the
  first step to the last, so `runs` (some process holds the lock) is true exactly while a process runs the job: a
  record that says "running" while the lock is free was interrupted.
* with Celery on Redis, a key in the Redis of the app's result backend (``SET NX`` with a token of the holder's own
  and an expiry, let go only by that holder: redis-py's `Lock`): the workers and servers of a deployment may share
  no directory (a store in PostgreSQL), but they all share that Redis. A holder that dies leaves its key until it
  expires (`LOCK_SECONDS`, longer than any job that holds one), and a holder that outlives it loses it.

Whoever starts a job first takes its lock, so two processes asked at once start one run; the job's work checks
under the lock whether its result is stored already (a run that ended just before), so that it is computed once.
Tables (tables.py), reports (reports.py) and the solutions' background builder (solutions.py) run this way without
`REDIS_URL`; with it, Celery's workers run them, a report's build under its lock (`exclusive`), and one worker of
many resumes a lost table job (`claim`).

A job's durable record (`read_record`, `write_record`) is an entry of the store (`JobKey`), written whole and
checksummed, which every process sharing the store reads alike: a table job's checkpoint (tables.py, tasks.py), a
solution's build queued or failed (solutions.py), where an embedded report's job stands (reports.py).

The answers of /v1/odds (api/answers.py) are jobs by `submit`: the request waits for its answer's Future for a
while, and what the work raised (a 422 for a position too large, say) is raised to it. Their lock is the answer's
own in the store, taken by the work, and a semaphore bounds how many compute at once (a solve can take gigabytes).
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, wait
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kombu.exceptions import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import LockError, RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .shared import store
from .store import CorruptEntry, JobKey, Store, held, try_lock

if TYPE_CHECKING:
    from redis import Redis
    from redis.lock import Lock

__all__ = ["lock_path", "runs", "submit", "start", "running", "runs_here", "join", "exclusive", "serialised", "claim",
           "read_record", "write_record", "send", "BrokerUnavailable", "TRANSIENT", "LOCK_SECONDS"]

log = logging.getLogger(__name__)

T = TypeVar("T")

LOCK_SECONDS = 3600  # a Redis lock's life: longer than any job that holds one (a dead holder's lock expires)
WAIT_SECONDS = 60  # how long `serialised` waits for a Redis lock (it is held for a moment)

# What calling the job queue (Redis) raises while it is unreachable: a task that meets it is retried (tasks.RETRY).
TRANSIENT = (OperationalError, ConnectionError, TimeoutError, RedisConnectionError, RedisTimeoutError)

_jobs: dict[str, Future] = {}  # the jobs this process runs, by id: each one's outcome
_jobs_lock = threading.Lock()


class BrokerUnavailable(RedisError):
    """Redis (the job queue) cannot be reached: a job cannot be started now (its status still can be read). A
    `RedisError`, as workers/tables.py's `QUEUE_ERRORS` counts it, and not one of the faults a task is retried for
    (tasks.TRANSIENT): the sweep resumes its job."""


def read_record(job: str, where: Store | None = None) -> dict[str, Any] | None:
    """The job's durable record in the store (`where`, by default the current one), or None: no such job, an id that
    is not one, or a record that failed its checksum (moved aside)."""
    try:
        entry = (where or store()).get(JobKey(job))
    except (ValueError, CorruptEntry):
        return None
    return entry[0] if entry else None


def write_record(job: str, record: dict[str, Any], where: Store | None = None) -> None:
    """Write the job's record whole, stamped with the time (``updated``): an entry of the store (`JobKey`), written
    atomically and checksummed like any other, so that every process sharing the store reads it alike."""
    record["updated"] = time.time()
    (where or store()).put(JobKey(job), record)


def lock_path(job: str, where: Store | None = None) -> Path:
    """The lock file of job `job` under the store (`where`, by default the current one)."""
    folder = (where or store()).root / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{job}.lock"


def _redis() -> Redis | None:
    """The Redis that holds the locks (the Celery app's result backend), or None: file locks (embedded)."""
    if "workers.celery_app" not in sys.modules and not os.environ.get("REDIS_URL"):
        return None  # (no app here, and the one this process would make runs tasks in-process: Celery stays unloaded)
    from .celery_app import redis_client

    return redis_client()


def _redis_lock(client: Redis, job: str, seconds: float) -> Lock:
    return client.lock(f"zombie-odds:lock:{job}", timeout=seconds, thread_local=False)


def _let_go(lock: Lock) -> None:
    try:
        lock.release()
    except LockError:  # it expired, and maybe somebody else holds it now: theirs stays
        log.warning("the lock %s expired before its holder let go", lock.name)


def _take(job: str, where: Store | None = None, seconds: float = LOCK_SECONDS) -> Callable[[], None] | None:
    """Take the job's lock without waiting: the call that lets go of it, or None if another holder has it."""
    client = _redis() if where is None else None
    if client is None:
        fd = try_lock(lock_path(job, where))
        return None if fd is None else functools.partial(os.close, fd)
    lock = _redis_lock(client, job, seconds)
    return functools.partial(_let_go, lock) if lock.acquire(blocking=False) else None


def runs(job: str, where: Store | None = None) -> bool:
    """Whether some process holds the job's lock, that is, runs it now (`where`: `exclusive`'s)."""
    client = _redis() if where is None else None
    if client is None:
        return held(lock_path(job, where))
    return bool(client.exists(f"zombie-odds:lock:{job}"))


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
    let_go = _take(job)
    if let_go is None:
        return False

    def run() -> None:
        try:
            work()
        except Exception:
            log.exception("job %s failed", job)
        finally:
            let_go()

    with _jobs_lock:  # (a new run, even if the last one is still being forgotten: the lock is this run's)
        _spawn(job, run)
    return True


def send(task: str, args: tuple, **options: Any) -> None:
    """Submit the Celery task named `task` (tables, solutions and reports import no task, and no Celery until they
    submit): to the workers with `REDIS_URL`; embedded, it runs in this thread now, the app's task modules imported
    first (as a worker imports them: `celery_app.create` names them)."""
    from celery import current_app

    from .celery_app import embedded

    if embedded():
        current_app.loader.import_default_modules()
        current_app.tasks[task].apply_async(args, **options)
    else:
        current_app.send_task(task, args, **options)


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
def exclusive(job: str, where: Store | None = None, seconds: float = LOCK_SECONDS) -> Iterator[bool]:
    """True inside if this caller holds the job's lock (nobody else runs it), False if someone does; it does not
    wait. A Redis lock lasts `seconds` at most. A lock in a given store (`where`) is its file whatever the back end:
    the solutions' background builder, a child process of an embedded server, holds one for its whole life."""
    let_go = _take(job, where, seconds)
    try:
        yield let_go is not None
    finally:
        if let_go is not None:
            let_go()


def claim(name: str, seconds: float) -> bool:
    """Whether this caller is the one of many that wins `name` for the next `seconds` (it is never let go: it
    expires). Only the workers claim (one of them resumes a lost job), so only Redis decides: embedded, a process
    is the only one that could, and wins."""
    client = _redis()
    return client is None or _redis_lock(client, name, seconds).acquire(blocking=False)


@contextmanager
def serialised(job: str) -> Iterator[None]:
    """Hold the job's lock for a moment, waiting for it: two processes submitting `job` to the workers at once see
    one another's submission. `BrokerUnavailable` when Redis cannot be reached, TimeoutError after `WAIT_SECONDS`."""
    client = _redis()
    if client is None:
        fd = os.open(lock_path(job), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)
        return
    lock = _redis_lock(client, job, WAIT_SECONDS)
    try:
        taken = lock.acquire(blocking=True, blocking_timeout=WAIT_SECONDS)
    except (RedisConnectionError, RedisTimeoutError) as e:
        raise BrokerUnavailable(f"the job queue (Redis) is unavailable: {e}") from e
    if not taken:
        raise TimeoutError(f"the lock of job {job} stays taken")
    try:
        yield
    finally:
        _let_go(lock)
