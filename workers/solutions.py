"""Stored turn solutions (analysis/solutions.py): built once per mode and recycle variant, mapped by every process.

A solution is one array entry of the store (`Store.put_arrays`): every server process maps its files
read-only, so N gunicorn workers share one copy in the page cache. Who builds it:

* with `REDIS_URL`, a Celery worker (`build_solution`), submitted by the first server that misses it;
* on the embedded default, the background builder (`build_in_background`): one child process at a time, in any
  process sharing the store, started by the server at start-up and by a request that misses a solution; it builds
  every missing solution, the base game first: a build takes up to ~2.4 GB, which a serving process would keep,
  and the child gives it back when it exits;
* ``zombie-odds solutions build``, on any machine that shares the store.

A build holds the solution's lock in the store (`Store.lock`) while it computes, so two builders of one
solution compute it once: the second waits, then finds it stored. `status` tells a missing solution from one
being built (its lock is held) or queued (the background builder's lock is held, or a Celery job record says so).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from celery import shared_task

from analysis.dice import MODES
from analysis.position import RECYCLE_VARIANTS
from analysis.solutions import StoredTurn, build

from .store import ENGINE_VERSION, CorruptEntry, JobKey, Key, Store, held, try_lock
from .tasks import store as shared_store

__all__ = ["COMBINATIONS", "SolutionStatus", "solution_key", "job_id", "load", "build_and_store", "status", "submit",
           "submit_missing", "build_in_background", "build_missing", "build_solution", "forget_caches"]

log = logging.getLogger(__name__)

# Every combination a solution is stored for, the base game first (it is built first at start-up).
COMBINATIONS = tuple((mode, recycle) for mode in MODES for recycle in RECYCLE_VARIANTS)
QUEUED_FOR = 600  # seconds a queued build may wait for a worker before a request submits it again (a no-op if done)


def store() -> Store:
    """Where solutions are stored: `ZOMBIE_ODDS_SOLUTIONS` (large read-only files, ~700 MB in all, may live on a
    volume of their own), by default the store (`ZOMBIE_ODDS_STORE`)."""
    root = os.environ.get("ZOMBIE_ODDS_SOLUTIONS")
    return Store(root) if root else shared_store()


def solution_key(mode: str, recycle: str) -> Key:
    return Key("solution", mode, recycle, 1)


def job_id(mode: str, recycle: str) -> str:
    return f"solution-{mode}-{recycle}-v{ENGINE_VERSION}"


_loaded: dict[str, tuple[str, StoredTurn]] = {}  # folder -> (its manifest's digest, the solution mapped)
_loaded_lock = threading.Lock()


def load(mode: str, recycle: str) -> StoredTurn | None:
    """The stored solution, mapped (checked against its checksums once per process and per version); None if it
    is not built (or was found corrupt: moved aside, to be built again)."""
    key = solution_key(mode, recycle)
    shelf = store()
    folder = str(shelf.root / key.name)
    with _loaded_lock:
        here = _loaded.get(folder)
        if here is not None and here[0] == _manifest_digest(folder):
            return here[1]
        try:
            entry = shelf.get_arrays(key)
        except CorruptEntry as e:
            log.warning("%s", e)
            return None
        if entry is None:
            return None
        meta, arrays, digest = entry
        turn = StoredTurn(meta, arrays)
        _loaded[folder] = (digest, turn)
        return turn


def _manifest_digest(folder: os.PathLike) -> str | None:
    """The digest a manifest names (cheap: the files were checked when the solution was first mapped)."""
    try:
        with open(os.path.join(folder, "manifest.json")) as f:
            return json.load(f)["sha256"]
    except (OSError, ValueError, KeyError):
        return None


def forget_caches() -> None:
    """Drop the tables and solutions a build leaves in this process's caches (gigabytes for the sequel)."""
    from analysis import policy, table

    table._whole_table.cache_clear()
    policy._solve_whole.cache_clear()


def build_and_store(mode: str, recycle: str) -> str:
    """Build one solution and store it, unless it is stored; returns its digest. Holds the solution's lock."""
    key = solution_key(mode, recycle)
    shelf = store()
    with shelf.lock(key):
        if shelf.has_arrays(key):
            return _manifest_digest(shelf.root / key.name) or ""
        try:
            meta, arrays = build(mode, recycle)
            digest = shelf.put_arrays(key, meta, arrays)
        except Exception as e:
            _record(mode, recycle, "failed", error=f"{type(e).__name__}: {e}")
            raise
        finally:
            forget_caches()
        shelf.remove(JobKey(job_id(mode, recycle)))
        return digest


def _record(mode: str, recycle: str, state: str, **extra: Any) -> None:
    store().put(JobKey(job_id(mode, recycle)), {"mode": mode, "recycle": recycle, "state": state,
                                                "updated": time.time(), **extra})


@dataclass(frozen=True)
class SolutionStatus:
    """Where one solution stands: ``built``, ``building`` (its lock is held), ``queued`` (a worker is to build
    it), ``failed`` (``error`` says why; asking again starts it again) or ``missing``."""

    mode: str
    recycle: str
    state: str
    job: str
    sha256: str | None = None
    meta: dict[str, Any] | None = None
    error: str | None = None


def status(mode: str, recycle: str) -> SolutionStatus:
    key, job = solution_key(mode, recycle), job_id(mode, recycle)
    shelf = store()
    if shelf.has_arrays(key):
        digest = _manifest_digest(shelf.root / key.name)
        turn = load(mode, recycle)
        if turn is not None:
            return SolutionStatus(mode, recycle, "built", job, digest, dict(turn.meta))
    if held(shelf.root / "locks" / f"{key.name}.lock"):
        return SolutionStatus(mode, recycle, "building", job)
    if held(_builder_lock_path()) or _building_here():
        return SolutionStatus(mode, recycle, "queued", job)
    try:
        entry = shelf.get(JobKey(job))
    except CorruptEntry:
        entry = None
    record = entry[0] if entry else {}
    if record.get("state") == "failed":
        return SolutionStatus(mode, recycle, "failed", job, error=record.get("error"))
    if record.get("state") == "queued" and time.time() - record.get("updated", 0) < QUEUED_FOR:
        return SolutionStatus(mode, recycle, "queued", job)
    return SolutionStatus(mode, recycle, "missing", job)


def submit(mode: str, recycle: str) -> SolutionStatus:
    """Have the solution built unless it is built or on its way: by a Celery worker with `REDIS_URL`, else by
    this server's background builder. Its status either way."""
    from .celery_app import app

    now = status(mode, recycle)
    if now.state in ("built", "building", "queued"):
        return now
    if app.conf.task_always_eager:
        build_in_background((mode, recycle))
        return SolutionStatus(mode, recycle, "queued", now.job)
    _record(mode, recycle, "queued")
    build_solution.delay(mode, recycle)
    return status(mode, recycle)


@shared_task(acks_late=True)
def build_solution(mode: str, recycle: str) -> str:
    """Celery: build and store one solution (a no-op if it is stored)."""
    return build_and_store(mode, recycle)


BUILDER = "solutions-builder"  # the background builder's lock, under the store's locks/


def build_in_background(first: tuple[str, str] | None = None) -> None:
    """Start the background builder unless one runs (in any process sharing the store): a child process
    (``python -m workers.solutions``) that builds every missing solution, `first` first and then the base game
    first, one at a time, so that no server process keeps the memory a build takes. It holds the builder's lock
    while it lives, which is how every process knows the missing solutions are queued."""
    if held(_builder_lock_path()) or _building_here():
        return
    _children.append(subprocess.Popen([sys.executable, "-c", "import sys; from workers.solutions import build_missing; "
                      "build_missing(tuple(sys.argv[1:]))", *(first or ())], env=os.environ.copy(),
                     stdin=subprocess.DEVNULL, start_new_session=True))


_children: list[subprocess.Popen] = []  # the builders this process started (kept, so that each is reaped)


def _building_here() -> bool:
    """Whether a builder this process started still runs (it may not hold its lock yet)."""
    _children[:] = [c for c in _children if c.poll() is None]
    return bool(_children)


def _builder_lock_path() -> Path:
    folder = store().root / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{BUILDER}.lock"


def build_missing(first: tuple[str, ...] = ()) -> None:
    """The background builder's work (`build_in_background`): nothing if another builder holds the lock."""
    fd = try_lock(_builder_lock_path())
    if fd is None:
        return
    try:
        order = [tuple(first)] if first else []
        for mode, recycle in dict.fromkeys([*order, *COMBINATIONS]):
            if not store().has_arrays(solution_key(mode, recycle)):
                try:
                    build_and_store(mode, recycle)
                except Exception:
                    log.exception("building the solution of %s (%s) failed", mode, recycle)
    finally:
        os.close(fd)



def submit_missing() -> None:
    """Have every missing solution built: one Celery task each with `REDIS_URL`, else the background builder."""
    from .celery_app import app

    missing = [c for c in COMBINATIONS if status(*c).state == "missing"]
    if missing and app.conf.task_always_eager:
        build_in_background()
    elif missing:
        for mode, recycle in missing:
            submit(mode, recycle)
