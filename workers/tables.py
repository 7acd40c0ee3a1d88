"""Table jobs as the API and the CLI follow them: one job per table, however often it is asked for.

A job's id is derived from its table's key (`job_id`), so asking for a table that is being computed
finds the running job instead of starting a second one. `submit` starts a job unless the table is
stored or its job runs; `status` says where a job stands (a `TableJob`); `load` gives the stored
solution, parsed once per process. The stored table is the truth: once it is in the store, its job
has succeeded, whatever any record says. Both ways of running use the same graph of tasks (tasks.py), whose
durable record in the store (`jobs.read_record`) every process reads alike:

* with `REDIS_URL`, `start_table_job` hands the graph to the workers (who resume it after a fault);
* embedded (no `REDIS_URL`: tasks run eagerly), a thread of this process runs it (`jobs.start`), holding the
  job's lock while it runs; a record that says "running" with its lock free was interrupted: the job is
  reported failed, and submitting it again resumes it from its last finished layer.

Submitting to the workers takes the job's lock for a moment first, so that two processes asked at once start one
job. The graph's first task is sent by its name (`jobs.send`): this module imports no task, and only following or
submitting a job imports Celery: a server that reads its stored tables loads none.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kombu.exceptions import OperationalError
from redis.exceptions import RedisError

from analysis.dice import MODES
from analysis.game import GameSolution, SeatsSolution, units
from analysis.game.units import no_table_reason
from analysis.position import RECYCLE_VARIANTS

from . import jobs
from .jobs import TRANSIENT, BrokerUnavailable
from .shared import store
from .store import ENGINE_VERSION, CorruptEntry, EntryInfo, JobKey, Key, table_key

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["NotHere", "embedded_tables", "units_per_layer",
           "TableJob", "job_id", "key_for_job", "submit", "status", "join", "load", "stored", "QUEUE_ERRORS",
           "no_table_reason", "layer_key", "table_record", "progress", "beat", "beat_key", "LOST_AFTER",
           "start_table_job", "resumed", "job_status"]

log = logging.getLogger(__name__)

# What calling the job queue (Redis) may raise when it is down or unreachable (jobs.BrokerUnavailable: a RedisError).
QUEUE_ERRORS = (OperationalError, RedisError, ConnectionError, TimeoutError)
# A running job without a heartbeat for this long, and none of it queued, is lost: four beats missed (tasks.BEAT_EVERY),
# so a task that holds the interpreter for seconds (encoding a table of megabytes) is not taken for dead.
LOST_AFTER = 20


@dataclass(frozen=True)
class TableJob:
    """Where the job computing one table stands. ``state``: queued (no layer done yet), running,
    succeeded (the table is stored: ``sha256`` and ``p_first_player_wins`` are set) or failed
    (``error`` says why; submitting again restarts it)."""

    id: str
    key: Key
    state: str
    done: int
    total: int
    sha256: str | None = None
    p_first_player_wins: float | None = None
    error: str | None = None
    # why a job in progress does not move (the job queue is unreachable), or that it was resumed and why (kept
    # once it succeeded)
    detail: str | None = None

    @property
    def active(self) -> bool:
        return self.state in ("queued", "running")


def job_id(key: Key) -> str:
    """The id of the job computing `key`: readable, safe in a URL and a file name (no ``--``)."""
    return f"{key.kind}-{key.mode}-{key.variant}-p{key.players}-v{key.engine}"


def key_for_job(job: str) -> Key | None:
    """The table a job id stands for (current engine), or None: ids are never parsed, only looked up."""
    return _jobs().get(job)


def _jobs() -> dict[str, Key]:
    keys = [table_key(m, v, p) for m in MODES for p in units.exact_players(m) for v in RECYCLE_VARIANTS]
    return {job_id(k): k for k in keys if k.engine == ENGINE_VERSION}


def stored(key: Key) -> tuple[dict[str, Any], str] | None:
    """(data, sha256) of the stored table, or None (absent, or corrupt: moved aside to be recomputed)."""
    try:
        return store().get(key)
    except CorruptEntry:
        return None


# The solutions this process has read, by store and table: each with the entry's size and time of writing then
# (`Store.info`, which every write changes: writes are renames or rows replaced) and its sha256.
_solutions: dict[tuple[str, str], tuple[EntryInfo, GameSolution | SeatsSolution, str]] = {}
_solutions_lock = threading.Lock()


def load(key: Key) -> tuple[GameSolution | SeatsSolution, str] | None:
    """The stored solution and its sha256, read, checked and parsed once per process and per version of the entry.

    Each question reads only the entry's size and time of writing (`Store.info`); the entry itself is read and
    checked against its sha256 when they change. A four-player table is 16 MB of JSON, a second to read and check:
    too long to pay on every question. The solution memoises the mid-turn sweeps it computes, so keeping one object
    per table matters more than the parsing it saves.
    """
    shelf = store()
    info, name = shelf.info(key), (str(shelf), key.name)
    if info is None:
        return None
    with _solutions_lock:
        known = _solutions.get(name)
    if known is not None and known[0] == info:
        return known[1], known[2]
    entry = stored(key)
    if entry is None:
        return None
    data, digest = entry
    solution = known[1] if known is not None and known[2] == digest else units.solution_from(data)
    with _solutions_lock:
        _solutions[name] = (info, solution, digest)
    return solution, digest


def _total(key: Key) -> int:
    return len(units.layers(key.mode, key.variant, key.players)) + 1  # the layers, then storing the table


def _succeeded(key: Key, detail: str | None = None) -> TableJob | None:
    entry = stored(key)
    if entry is None:
        return None
    data, digest = entry
    total = _total(key)
    return TableJob(job_id(key), key, "succeeded", total, total, digest, data["p_first_player_wins"], detail=detail)


def _in_progress(key: Key, done: int, total: int, detail: str | None = None) -> TableJob:
    return TableJob(job_id(key), key, "queued" if done == 0 else "running", done, total, detail=detail)


def _failed(key: Key, error: str, done: int = 0) -> TableJob:
    return TableJob(job_id(key), key, "failed", done, _total(key), error=error)


# -- the job's durable record, heartbeat and start (its graph of tasks is tasks.py's) --------------------------
def layer_key(job: str, mode: str, variant: str, players: int, layer: int) -> Key:
    """The stored results of a table job's layer (the job's id, which may be long, by its digest)."""
    return Key("layer", mode, variant, players, tag=f"{hashlib.sha256(job.encode()).hexdigest()[:32]}-{layer}")


def table_record(job: str) -> dict[str, Any] | None:
    """The record of table job `job`, or None: the store's job records are every kind's (reports' and solutions' too),
    and only a table job's has a run's token."""
    record = jobs.read_record(job)
    return record if record is not None and "run" in record else None


def progress(record: dict[str, Any]) -> dict[str, Any]:
    """What the job's record says of its progress (its result in the backend while it runs)."""
    return {"done": record["done"], "total": record["total"], "mode": record["mode"],
            "variant": record["variant"], "players": record["players"]}


def beat_key(job: str) -> str:
    return f"zombie-odds:beat:{job}"


def beat(client: Redis | None, job: str) -> None:
    """The job is alive now (for `LOST_AFTER` seconds). Never raises: with Redis down no sweep runs either."""
    if client is None:
        return
    try:
        client.set(beat_key(job), int(time.time()), ex=LOST_AFTER)
    except TRANSIENT as e:
        log.warning("no heartbeat for job %s: %s", job, e)


def start_table_job(mode: str, variant: str = "before-draw", players: int = 2, split: int = 2,
                    job_id: str | None = None) -> str:
    """Start computing one table (tasks.py's graph, its first step sent by name); returns the job id to follow with
    `job_status`.

    A job already running for the same table is not started twice: its id is returned. A job started again under
    the id of one that stopped goes on from its last finished layer (`_carried_over`). Raises ValueError for a
    table that cannot be computed, `BrokerUnavailable` when Redis is down.
    """
    from celery import current_app

    from .celery_app import redis_client

    if no_table_reason(mode, players) is not None or variant not in RECYCLE_VARIANTS:
        raise ValueError(no_table_reason(mode, players) or f"no table for variant {variant!r}")
    if job_id is None:
        for key in store().jobs():
            other = table_record(key.id)
            if other is not None and other["state"] == "running" and (
                    other["mode"], other["variant"], other["players"]) == (mode, variant, players):
                return other["id"]
    layers = units.layers(mode, variant, players, split)
    record = {"id": job_id or str(uuid.uuid4()), "mode": mode, "variant": variant, "players": players,
              "split": split, "state": "running", "run": uuid.uuid4().hex, "done": 0, "total": len(layers) + 1}
    JobKey(record["id"])  # a safe id, or ValueError before anything is written
    record.update(_carried_over(record))
    try:
        current_app.backend.store_result(record["id"], progress(record), "PROGRESS")  # before the record: a
        jobs.write_record(record["id"], record)  # sweep never mistakes a job being started for a lost one
        beat(redis_client(), record["id"])  # nor one whose launch a worker has taken and not yet run
        jobs.send("workers.tasks.launch", (record["id"], record["run"]), ignore_result=True)
    except TRANSIENT as e:
        if JobKey(record["id"]) in store():  # saved but never queued: say so (starting again makes a new job)
            record.update(state="failed", error="the job queue (Redis) became unavailable before the job was queued")
            jobs.write_record(record["id"], record)
        raise BrokerUnavailable(f"the job queue (Redis) is unavailable: {e}") from e
    return record["id"]


def _carried_over(record: dict[str, Any]) -> dict[str, Any]:
    """What a job started again under its id keeps of its earlier run: the layers it finished, when that run
    stopped (interrupted, or failed) with the same table, split and checkpoints. Each stored layer is what any run
    computes bit for bit, so the new run goes on from there; otherwise it starts at layer 0."""
    earlier = jobs.read_record(record["id"])
    same = ("mode", "variant", "players", "split", "total")
    if earlier is None or earlier["state"] not in ("running", "failed") or earlier["done"] == 0 or any(
            earlier[k] != record[k] for k in same):
        return {}
    names = [layer_key(record["id"], record["mode"], record["variant"], record["players"], k)
             for k in range(earlier["done"])]
    if not all(name in store() for name in names):
        return {}
    return {"done": earlier["done"], **resumed(earlier, earlier.get("error", "its process stopped"))}


def resumed(record: dict[str, Any], reason: str) -> dict[str, Any]:
    """What a new run of a job that stopped at `record` says of itself: how often the job was resumed, and why."""
    return {"resumed": record.get("resumed", 0) + 1,
            "detail": f"resumed from its last finished layer ({record['done']} of {record['total'] - 1}) "
                      f"after {reason}"}


def _broker_down() -> str | None:
    """Why Redis cannot be reached now, or None (always None in-process)."""
    from .celery_app import redis_client

    client = redis_client()
    if client is None:
        return None
    try:
        client.ping()
    except TRANSIENT as e:
        return f"{type(e).__name__}: {e}"
    return None


def job_status(job: str) -> tuple[str, dict[str, Any]]:
    """(state, meta) of a table job, from its durable record (so it answers with Redis down or restarted).

    PROGRESS with `done`/`total` layers; SUCCESS with the stored table's `key`, `sha256` and
    `p_first_player_wins`; FAILURE with `error`; PENDING (empty meta) for an unknown id. A job in
    progress or done that was resumed says so (`resumed`: how often, and why in `detail`); while Redis is
    unreachable it also says `broker: unavailable` and why, in `detail`: it resumes from its last
    finished layer when Redis is back.
    """
    record = table_record(job)
    if record is None:
        return "PENDING", {}
    meta = progress(record)
    if record.get("resumed"):
        meta.update(resumed=record["resumed"], detail=record["detail"])
    if record["state"] == "done":
        return "SUCCESS", {**meta, **record["summary"]}
    if record["state"] == "failed":
        return "FAILURE", {**meta, "error": record["error"]}
    down = _broker_down()
    if down:
        meta.update(broker="unavailable", detail=f"the job queue (Redis) is unavailable ({down}); the job resumes "
                    f"from its last finished layer ({record['done']} of {record['total'] - 1}) when it is back")
    return "PROGRESS", meta


# -- status ---------------------------------------------------------------------------------------
def status(key: Key) -> TableJob | None:
    """Where the job of `key` stands, or None if there is no such job (never submitted, or forgotten)."""
    from .celery_app import embedded

    state, meta = job_status(job_id(key))
    done = _succeeded(key, meta.get("detail") if state == "SUCCESS" else None)  # (the job's, if it was resumed)
    if done is not None:
        return done
    if state == "PENDING":
        return _in_progress(key, 0, _total(key)) if embedded() and jobs.runs(job_id(key)) else None
    if state == "FAILURE":
        return _failed(key, meta.get("error", "the computation failed"), meta.get("done", 0))
    if state == "SUCCESS":  # the table was stored, and is no longer there (moved aside as corrupt)
        return _failed(key, "the stored table was lost; submit the job again")
    if embedded() and not jobs.runs(job_id(key)):
        return _failed(key, "interrupted: the process computing it stopped; submit the job again",
                       meta.get("done", 0))
    return _in_progress(key, meta.get("done", 0), meta.get("total", _total(key)), meta.get("detail"))


# -- submitting -------------------------------------------------------------------------------------
class NotHere(RuntimeError):
    """This server computes the table only on Celery workers: embedded, it would take gigabytes of the
    server's own memory (`embedded_tables`)."""


def embedded_tables() -> frozenset[tuple[str, int]]:
    """The tables (mode, players) a server without `REDIS_URL` computes in a thread of its own process:
    `ZOMBIE_ODDS_EMBEDDED_TABLES`, comma-separated, each a mode (its two-player table) or ``mode:players``; by
    default the base game's two-player table and its three-player one (about a minute and 1.4 GB). A Double Feature
    table needs 2 to 3.4 GiB while it is computed (tasks.py), which every server process asked for it would hold at
    once; workers, or ``zombie-odds tables build`` sharing the store, compute it."""
    names = os.environ.get("ZOMBIE_ODDS_EMBEDDED_TABLES", "original,original:3")
    out = set()
    for name in filter(None, (n.strip() for n in names.split(","))):
        mode, _, players = name.partition(":")
        out.add((mode, int(players) if players.isdigit() else 2))
    return frozenset(out)


def units_per_layer() -> int:
    """How many units each layer of a table job is cut into: `ZOMBIE_ODDS_TABLE_UNITS`, by default 2. Best as many as
    the worker processes that share the job, one unit each a layer: fewer leave workers idle, and more cost each unit's
    fixed part again without a worker to run it (docs/scaling.md). The values are the same bit for bit whatever the
    split."""
    raw = os.environ.get("ZOMBIE_ODDS_TABLE_UNITS", "2")
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"ZOMBIE_ODDS_TABLE_UNITS must be a whole number of units, at least 1, not {raw!r}")
    return int(raw)


def submit(mode: str, variant: str = "before-draw", players: int = 2, server: bool = False) -> TableJob:
    """Start computing a table unless it is stored or its job runs; its job either way. A `server`
    without Redis refuses (`NotHere`) a table outside `embedded_tables` that is not stored already."""
    from .celery_app import embedded

    reason = no_table_reason(mode, players)
    if reason is not None:
        raise ValueError(reason)
    key = table_key(mode, variant, players)
    if not embedded():
        return _submit_to_workers(key)
    if server and (mode, players) not in embedded_tables():
        job = status(key)
        if job is not None and job.state != "failed":
            return job
        raise NotHere(f"this server computes the {players}-player {mode} table only on Celery workers (REDIS_URL), "
                      f"or with `zombie-odds tables build --mode {mode} --players {players}` on its store: it takes "
                      "gigabytes of memory or minutes (ZOMBIE_ODDS_EMBEDDED_TABLES lists the tables computed in the "
                      "server's own process)")
    return _submit_here(key)


def _submit_to_workers(key: Key) -> TableJob:
    with jobs.serialised(job_id(key)):
        job = status(key)
        if job is not None and job.state != "failed":
            return job
        start_table_job(key.mode, key.variant, key.players, split=units_per_layer(), job_id=job_id(key))
        return status(key) or _in_progress(key, 0, _total(key))


def _submit_here(key: Key) -> TableJob:
    """Start the job in a thread of this process (`jobs.start`), unless the table is stored or its job runs."""
    for _ in range(100):
        job = status(key)  # stored, or running under somebody's lock
        if job is not None and job.state != "failed":
            return job
        if jobs.start(job_id(key), lambda: _run_here(key)):
            return _in_progress(key, 0, _total(key))
        time.sleep(0.01)  # somebody took the lock in between: read its status again
    raise TimeoutError(f"the lock of job {job_id(key)} stays taken")


def join(key: Key, timeout: float | None = None) -> None:
    """Wait until this process's thread running the job of `key` (if any) has ended: the table is
    stored before the job's last record is written, and a command should not exit in between."""
    jobs.join(job_id(key), timeout)


def _run_here(key: Key) -> None:
    """The job of `key`, under its lock, unless the table was stored meanwhile. A failure is recorded by the tasks
    (the job's record says why); the server carries on."""
    if _succeeded(key) is None:
        start_table_job(key.mode, key.variant, key.players, split=units_per_layer(), job_id=job_id(key))
