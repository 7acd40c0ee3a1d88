"""Stored turn solutions (analysis/solutions.py): built once per mode, School Bus or not and recycle variant, mapped
by every process.

A solution is one array entry of the store (`Store.put_arrays`): every server process maps its files
read-only, so N gunicorn workers share one copy in the page cache. Who builds it:

* with `REDIS_URL`, a Celery worker (`tasks.build_solution`), submitted by the first server that misses it;
* on the embedded default, the background builder (`build_in_background`): one child process at a time, in any
  process sharing the store, started by the server at start-up and by a request that misses a solution; it builds
  every missing solution, the base game first: a build takes up to ~2.4 GB, which a serving process would keep,
  and the child gives it back when it exits;
* ``zombie-odds solutions build``, on any machine that shares the store.

A build holds the solution's lock in the store (`Store.lock`) while it computes, so two builders of one
solution compute it once: the second waits, then finds it stored. `status` tells a missing solution from one
being built (its lock is held) or queued (the background builder's lock is held, or a Celery job record says so).
Only submitting imports Celery: a server that reads its solutions loads none.
"""

from __future__ import annotations

import _thread
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from analysis import kept
from analysis.stored import build, build_memory, combinations, open_turn

from . import jobs
from .shared import store as shared_store
from .store import ENGINE_VERSION, CorruptEntry, JobKey, Key, Store

__all__ = ["combinations", "NotEnoughMemory", "available_memory", "check_memory", "build_memory", "SolutionStatus",
           "solution_key", "job_id", "load", "build_and_store", "status", "submit", "submit_missing",
           "build_in_background", "build_missing", "forget_caches", "server"]

log = logging.getLogger(__name__)

QUEUED_FOR = 600  # seconds a queued build may wait for a worker before a request submits it again (a no-op if done)


def store() -> Store:
    """Where solutions are stored: `ZOMBIE_ODDS_SOLUTIONS` (large read-only files, ~700 MB in all, may live on a
    volume of their own), by default the store (`ZOMBIE_ODDS_STORE`)."""
    root = os.environ.get("ZOMBIE_ODDS_SOLUTIONS")
    return Store(root) if root else shared_store()


def solution_key(mode: str, recycle: str, bus: bool = False) -> Key:
    return Key("solution", mode, recycle, 1, tag="bus" if bus else "")


def job_id(mode: str, recycle: str, bus: bool = False) -> str:
    return f"solution-{mode}{'-bus' if bus else ''}-{recycle}-v{ENGINE_VERSION}"


_loaded: dict[str, tuple[str, Any]] = {}  # store/entry -> (its manifest's digest, the solution mapped)
_loaded_lock = threading.Lock()


def load(mode: str, recycle: str, bus: bool = False) -> Any:
    """The stored solution (`analysis.solutions.stored_turn`), mapped (checked against its checksums once per
    process and per version); None if it is not built (or was found corrupt: moved aside, to be built again)."""
    key = solution_key(mode, recycle, bus)
    shelf = store()
    where = f"{shelf}/{key.name}"
    with _loaded_lock:
        here = _loaded.get(where)
        if here is not None and here[0] == shelf.array_digest(key):
            return here[1]
        try:
            entry = shelf.get_arrays(key)
        except CorruptEntry as e:
            log.warning("%s", e)
            return None
        if entry is None:
            return None
        meta, arrays, digest = entry
        turn = open_turn(meta, arrays)
        _loaded[where] = (digest, turn)
        return turn


def forget_caches() -> None:
    """Drop the tables and solutions a build leaves in this process's caches (gigabytes for the sequel)."""
    kept.forget("whole", "bus whole")


def build_and_store(mode: str, recycle: str, bus: bool = False) -> str:
    """Build one solution and store it, unless it is stored; returns its digest. Holds the solution's lock."""
    key = solution_key(mode, recycle, bus)
    shelf = store()
    with shelf.lock(key):
        if shelf.has_arrays(key):
            return shelf.array_digest(key) or ""
        try:
            check_memory(mode, bus)
            meta, arrays = build(mode, recycle, bus)
            digest = shelf.put_arrays(key, meta, arrays)
        except Exception as e:
            _record(mode, recycle, bus, "failed", error=f"{type(e).__name__}: {e}")
            raise
        finally:
            forget_caches()
        shelf.remove(JobKey(job_id(mode, recycle, bus)))
        return digest


class NotEnoughMemory(MemoryError):
    """This machine has less memory available than a build takes (`analysis.stored.build_memory`)."""


def check_memory(mode: str, bus: bool) -> None:
    """Refuse to start a build the machine cannot hold (the kernel would kill it midway), or that takes more than
    `ZOMBIE_ODDS_BUILD_MEMORY` GiB, saying what it needs."""
    need, free = build_memory(mode, bus), available_memory()
    allowed = os.environ.get("ZOMBIE_ODDS_BUILD_MEMORY")
    if allowed and need > float(allowed) * 2**30:
        where = f"builds here may take {float(allowed):.1f} GiB (ZOMBIE_ODDS_BUILD_MEMORY)"
    elif free is not None and free < need:
        where = f"this machine has {free / 2**30:.1f} GiB available"
    else:
        return
    raise NotEnoughMemory(f"the build of mode {mode}{' with the School Bus' if bus else ''} takes up to "
                          f"{need / 2**30:.1f} GiB of memory and {where}: build it where there is (zombie-odds "
                          "solutions build, into a store this server shares)")


def available_memory() -> int | None:
    """Bytes of memory the kernel can give without swapping (`MemAvailable`), None where it does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _record(mode: str, recycle: str, bus: bool, state: str, **extra: Any) -> None:
    jobs.write_record(job_id(mode, recycle, bus), {"mode": mode, "recycle": recycle, "school_bus": bus, "state": state,
                                                   **extra}, store())


@dataclass(frozen=True)
class SolutionStatus:
    """Where one solution stands: ``built``, ``building`` (its lock is held), ``queued`` (a worker is to build
    it), ``failed`` (``error`` says why; asking again starts it again) or ``missing``."""

    mode: str
    recycle: str
    school_bus: bool
    state: str
    job: str
    sha256: str | None = None
    meta: dict[str, Any] | None = None
    error: str | None = None


def status(mode: str, recycle: str, bus: bool = False) -> SolutionStatus:
    key, job = solution_key(mode, recycle, bus), job_id(mode, recycle, bus)
    shelf = store()
    if shelf.has_arrays(key):
        digest = shelf.array_digest(key)
        turn = load(mode, recycle, bus)
        if turn is not None:
            return SolutionStatus(mode, recycle, bus, "built", job, digest, dict(turn.meta))
    if shelf.busy(key):
        return SolutionStatus(mode, recycle, bus, "building", job)
    if jobs.runs(BUILDER, store()) or _building_here():
        return SolutionStatus(mode, recycle, bus, "queued", job)
    record = jobs.read_record(job, shelf) or {}
    if record.get("state") == "failed":
        return SolutionStatus(mode, recycle, bus, "failed", job, error=record.get("error"))
    if record.get("state") == "queued" and time.time() - record.get("updated", 0) < QUEUED_FOR:
        return SolutionStatus(mode, recycle, bus, "queued", job)
    return SolutionStatus(mode, recycle, bus, "missing", job)


def submit(mode: str, recycle: str, bus: bool = False) -> SolutionStatus:
    """Have the solution built unless it is built or on its way: by a Celery worker with `REDIS_URL`, else by
    this server's background builder. Its status either way (``error``: why its last build failed, if it did)."""
    now = status(mode, recycle, bus)
    if now.state in ("built", "building", "queued"):
        return now
    from celery import current_app

    from .celery_app import embedded

    if embedded():
        build_in_background((mode, recycle, bus))
        return SolutionStatus(mode, recycle, bus, "queued", now.job, error=now.error)
    with current_app.connection_for_write() as connection:  # a queue that cannot be reached raises: nothing recorded
        connection.ensure_connection(max_retries=1, interval_start=0, interval_step=0.1, interval_max=0.1)
    jobs.send("workers.tasks.build_solution", (mode, recycle, bus), ignore_result=True)
    _record(mode, recycle, bus, "queued")
    return replace(status(mode, recycle, bus), error=now.error)


BUILDER = "solutions-builder"  # the background builder's lock, under the store's locks/

server: int | None = None  # the server process whose end ends the background builder (None: the one that starts it)


def build_in_background(first: tuple[str, str, bool] | None = None) -> None:
    """Start the background builder unless one runs (in any process sharing the store): a child process that builds
    every missing solution, `first` first and then the base game first, one at a time, so that no server process
    keeps the memory a build takes. It holds the builder's lock while it lives, which is how every process knows the
    missing solutions are queued. It is the server's background job and ends with the server (`server`: a gunicorn
    master, whose workers come and go); the next server to start builds what it left."""
    if jobs.runs(BUILDER, store()) or _building_here():
        return
    code = ("import sys; from workers.solutions import build_missing; "
            "build_missing(int(sys.argv[1]), tuple(sys.argv[2:]))")
    argv = [str(server or os.getpid()), *(str(part) for part in first or ())]
    _children.append(subprocess.Popen([sys.executable, "-c", code, *argv], env=os.environ.copy(),
                                      stdin=subprocess.DEVNULL, start_new_session=True))


_children: list[subprocess.Popen] = []  # the builders this process started (kept, so that each is reaped)


def _building_here() -> bool:
    """Whether a builder this process started still runs (it may not hold its lock yet)."""
    _children[:] = [c for c in _children if c.poll() is None]
    return bool(_children)


def _end_with(owner: int) -> None:
    """Interrupt this process's main thread once process `owner` has ended."""
    while True:
        time.sleep(0.5)
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            _thread.interrupt_main()
            return
        except PermissionError:  # (a process of another user: alive)
            pass


def build_missing(owner: int, first: tuple[str, ...] = ()) -> None:
    """The background builder's work (`build_in_background`) while process `owner` lives: nothing if another builder
    holds the lock. `first`: (mode, recycle, "True" or "False"), as a command line gives them. Once `owner` has
    ended, the build under way stops at once (the store's entry is written whole or not at all)."""
    with jobs.exclusive(BUILDER, store()) as mine:
        if not mine:
            return
        signal.signal(signal.SIGINT, signal.default_int_handler)  # (a server may have started it ignoring SIGINT)
        threading.Thread(target=_end_with, args=(owner,), daemon=True).start()
        try:
            order = [(first[0], first[1], first[2] == "True")] if first else []
            for mode, recycle, bus in dict.fromkeys([*order, *combinations()]):
                if not store().has_arrays(solution_key(mode, recycle, bus)):
                    try:
                        build_and_store(mode, recycle, bus)
                    except Exception:
                        log.exception("building the solution of %s (%s, School Bus %s) failed", mode, recycle, bus)
        except KeyboardInterrupt:
            log.info("the server that started the background builder has ended: so does the builder")


def submit_missing() -> None:
    """Have every missing solution built: one Celery task each with `REDIS_URL`, else the background builder."""
    missing = [c for c in combinations() if status(*c).state == "missing"]
    if not missing:
        return
    from .celery_app import embedded

    if embedded():
        build_in_background()
        return
    for combination in missing:
        submit(*combination)
