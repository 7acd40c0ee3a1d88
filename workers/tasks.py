"""Every Celery task of the project, each a thin call into the job module that computes it: the table graph (its jobs'
records, heartbeat and start are workers/tables.py's), a stored solution's build (workers/solutions.py) and the
reports (workers/reports.py). Those modules import no task: they send them by name (`jobs.send`), so that a server
that only reads the store loads no Celery, and no module imports one that imports it back.

A table job is one graph per table, resumable after any fault. A table is solved layer by layer
(`analysis.game.units`: two players' score pairs, or more players' starts of a turn): the units of a layer run in
parallel on any worker as the header of a chord, and the chord's body, `advance`, joins them and starts the next
layer's chord; after the last layer it stores the table atomically. Every task is pure given its arguments
(idempotent), acknowledged late (a killed worker's task is redelivered) and retried only for transient faults.

Redis is not trusted to keep anything: the job's durable record (`JobKey` in the store: `jobs.read_record`) and
its layers' results (`tables.layer_key`, one entry a layer) are its checkpoint. `advance` stores a layer's results
and then the record (the layers done) before it launches the next one, so when Redis restarts empty, or a launch
fails, `resume_lost_jobs` (run by every worker on connecting to the broker, and every `SWEEP_EVERY` seconds) starts
the job again from its last layer. Each launch of a job is a *run* with its own token, and a task of a superseded
run, or a repeated message of one already recorded, does nothing: a table is written once, and only whole
(`analysis.game.units.assemble` refuses a table with a missing value). Progress is also written under the job's id
in the result backend, which is how a sweep tells a job in flight from one Redis forgot.

A unit's message names its job and layer, not the values it needs: the worker reads the earlier layers' results from
the store, and keeps them (`_known`) for the job's next layers, so that it reads each layer once. (Sent with every
unit, the earlier values would cost as much to decode as the unit's own work, and two workers would be no faster
than one.)

A worker that dies mid-task (SIGKILL, the OOM killer, a lost machine) leaves its message unacknowledged, and Redis
redelivers it only after the visibility timeout (an hour by default, which must exceed the longest task), so the
chord of that layer would wait an hour. Instead, while a task of a job runs it keeps a heartbeat in Redis
(``zombie-odds:beat:<job>``, rewritten every `BEAT_EVERY` s, expiring after `tables.LOST_AFTER` s; starting a job
and launching a layer write it too). A running job with no heartbeat is either waiting in the queue behind other
work, or lost: a sweep that finds no heartbeat and nothing waiting in the queue takes it for lost and starts a new
run from its last checkpoint, within about `LOST_AFTER` + `SWEEP_EVERY` seconds of its worker's death. (With other
work queued, a lost job waits until the queue drains, or for the visibility timeout: resuming a job that merely
waits would send it to the back of the queue again, and again.) The dead worker's message, when Redis redelivers it,
belongs to a superseded run and does nothing. The job's status then says it was resumed, and why (`detail`).

A stored turn solution's build on a worker (`build_solution`) and the reports' build (`build_report`) and beat
(`scheduled_reports`) are tasks here too.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from celery import bootsteps, chord, current_app, group, shared_task

from analysis.game import units

from . import jobs, reports, solutions
from .celery_app import redis_client
from .jobs import TRANSIENT, BrokerUnavailable
from .shared import store
from .store import table_key
from .tables import beat, beat_key, layer_key, progress, resumed, table_record

__all__ = ["solve_unit", "advance", "launch", "resume_lost_jobs", "ResumeLostJobs", "BEAT_EVERY", "SWEEP_EVERY",
           "RETRY", "build_solution", "build_report", "scheduled_reports"]

log = logging.getLogger(__name__)

RETRY = {"autoretry_for": TRANSIENT, "retry_backoff": True, "max_retries": 5, "acks_late": True}
BEAT_EVERY = 5  # seconds between two heartbeats of a job while one of its tasks runs (tables.LOST_AFTER: lost)
SWEEP_EVERY = 10  # seconds between two sweeps for lost jobs on each worker

# -- the job's durable record (jobs.read_record) --------------------------------------------------------------


def _superseded(job_id: str, run: str) -> bool:
    record = jobs.read_record(job_id)
    return record is None or record["run"] != run or record["state"] != "running"


def _fail(job_id: str, run: str, error: Exception) -> None:
    record = jobs.read_record(job_id)
    if record is None or record["run"] != run:
        return
    record.update(state="failed", error=f"{type(error).__name__}: {error}")
    jobs.write_record(record["id"], record)
    current_app.backend.store_result(job_id, {**progress(record), "error": record["error"]}, "FAILURE")


# -- the job's heartbeat (Redis: tables.beat) ---------------------------------------------------------------


@contextmanager
def _beating(job_id: str) -> Iterator[None]:
    """Keep the job's heartbeat while the block runs (a thread: a unit may take longer than `tables.LOST_AFTER`)."""
    client = redis_client()  # here: Celery's current app is per thread, the beating thread would get another
    if client is None:
        yield
        return
    stop = threading.Event()

    def keep() -> None:
        while True:
            beat(client, job_id)
            if stop.wait(BEAT_EVERY):
                return

    threading.Thread(target=keep, name=f"beat {job_id}", daemon=True).start()
    try:
        yield
    finally:
        stop.set()


# -- tasks ------------------------------------------------------------------------------------------------


@shared_task(**RETRY)
def solve_unit(unit: dict[str, Any], job_id: str, run: str, layer: int) -> dict[str, Any]:
    """Solve one unit of layer `layer` from every earlier layer's values (stored); returns this unit's values only."""
    if _superseded(job_id, run):
        return {}
    try:
        with _beating(job_id):
            return units.solve(unit, _known(job_id, unit["mode"], unit["recycle"], unit["players"], layer))
    except TRANSIENT:
        raise
    except Exception as e:  # a bug or a bad job, not a fault: the job fails and says why
        _fail(job_id, run, e)
        raise


@shared_task(**RETRY)
def advance(results: list[dict[str, Any]], job_id: str, run: str, layer: int) -> dict[str, Any]:
    """Layer `layer` is done: checkpoint it, then launch the next layer, or store the table after the last."""
    record = jobs.read_record(job_id)
    if record is None or record["run"] != run or record["state"] != "running" or record["done"] != layer:
        return {"stale": True}  # a superseded run, or a message delivered twice: already recorded
    try:
        with _beating(job_id):
            store().put(layer_key(job_id, record["mode"], record["variant"], record["players"], layer), results)
            record["done"] = layer + 1
            layers = _layers(record)
            if record["done"] < len(layers):
                jobs.write_record(record["id"], record)
                _launch(record, layers)
                return {"layer": layer}
            return _finish(record)
    except (*TRANSIENT, BrokerUnavailable):  # a fault, not a failure: the sweep resumes the job
        raise
    except Exception as e:
        _fail(job_id, run, e)
        raise


# The earlier layers' values this process has read, by job: (layers read, their values); a worker takes one job's
# units at a time mostly, and a unit of another job's replaces the one kept.
_kept: dict[str, tuple[int, units.Known]] = {}
_kept_lock = threading.Lock()


def _known(job_id: str, mode: str, variant: str, players: int, layer: int) -> units.Known:
    """The values of the job's layers before `layer`, read from the store: only those not read already."""
    with _kept_lock:
        read, known = _kept.get(job_id, (0, None))
        if known is None or read > layer:  # (a unit of an earlier layer, redelivered: it needs fewer layers)
            read, known = 0, units.Known(players)
        for k in range(read, layer):
            entry = store().get(layer_key(job_id, mode, variant, players, k))
            if entry is None:
                raise ValueError(f"layer {k} of the job has no stored results")
            for result in entry[0]:
                known.add(result)
        _kept.clear()
        _kept[job_id] = (layer, known)
        return known


@shared_task(ignore_result=True, **RETRY)
def launch(job_id: str, run: str) -> None:
    """Start the job's next layer from its durable record. The API publishes only this one message, with
    no result to wait for, so it never subscribes to anything in Redis."""
    record = jobs.read_record(job_id)
    if record is not None and record["run"] == run and record["state"] == "running":
        _launch(record, _layers(record))


def _layers(record: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return units.layers(record["mode"], record["variant"], record["players"], record["split"])


def _finish(record: dict[str, Any]) -> dict[str, Any]:
    mode, variant, players = record["mode"], record["variant"], record["players"]
    solution = units.assemble(mode, variant, _known(record["id"], mode, variant, players, record["done"]))
    key = table_key(mode, variant, players)
    digest = store().put(key, solution.to_dict())
    record.update(state="done", done=record["total"],
                  summary={"key": key.name, "sha256": digest, "p_first_player_wins": solution.p_first_player_wins})
    jobs.write_record(record["id"], record)
    with _kept_lock:
        _kept.pop(record["id"], None)
    for layer in range(record["total"] - 1):  # (its results are in the table now)
        store().remove(layer_key(record["id"], mode, variant, players, layer))
    summary = {**progress(record), **record["summary"]}
    current_app.backend.store_result(record["id"], summary, "SUCCESS")
    return summary


def _launch(record: dict[str, Any], layers: list[list[dict[str, Any]]]) -> None:
    """Record progress in the backend and start the chord of layer `done`; a failure marks the job stalled."""
    job_id, run, layer = record["id"], record["run"], record["done"]
    try:
        current_app.backend.store_result(job_id, progress(record), "PROGRESS")
        beat(redis_client(), job_id)  # the job moved: it is not lost while its units wait for a worker
        header = group(solve_unit.s(unit, job_id, run, layer) for unit in layers[layer])
        chord(header, advance.s(job_id, run, layer)).apply_async()
    except TRANSIENT as e:
        record["stalled"] = f"{type(e).__name__}: {e}"
        jobs.write_record(record["id"], record)  # the next sweep resumes it from here
        raise BrokerUnavailable(f"the job queue (Redis) is unavailable: {e}") from e


def _lost(record: dict[str, Any]) -> str | None:
    """Why no message will advance this running job (its launch failed, Redis forgot it, its worker died),
    or None while it is alive: a task of it ran within `LOST_AFTER` s, or work waits in the queue."""
    if record.get("stalled"):
        return "its launch failed"
    if current_app.backend.get_task_meta(record["id"])["status"] == "PENDING":
        return "the job queue (Redis) lost its messages"  # Redis restarted empty: its progress record went too
    client = redis_client()
    if client is not None and not client.exists(beat_key(record["id"])) and not client.llen(
            current_app.conf.task_default_queue):
        return "its worker stopped"
    if time.time() - record["updated"] > _visibility_timeout() + 60:
        return "it stopped moving"
    return None


def _visibility_timeout() -> int:
    """Seconds before Redis redelivers a message no worker acknowledged, as the app is configured
    (`celery_app.visibility_timeout`)."""
    return int(current_app.conf.broker_transport_options.get("visibility_timeout", 3600))


def resume_lost_jobs() -> list[str]:
    """Start a new run of every lost job from its last checkpoint; returns their ids. Never raises: a job
    that cannot be resumed now (Redis down again, a disk error) is tried again by the next sweep."""
    started = []
    for key in store().jobs():
        try:
            record = table_record(key.id)
            if record is None or record["state"] != "running":
                continue
            reason = _lost(record)
            if reason is None or not jobs.claim(f"resume-{record['id']}", 30):
                continue
            record.pop("stalled", None)
            record.update(run=uuid.uuid4().hex, **resumed(record, reason))
            jobs.write_record(record["id"], record)
            log.warning("resuming table job %s at layer %d of %d: %s", record["id"], record["done"],
                        record["total"] - 1, reason)
            _launch(record, _layers(record))
            started.append(record["id"])
        except Exception:
            log.exception("could not resume job %s; the next sweep will try again", key.id)
    return started


class ResumeLostJobs(bootsteps.StartStopStep):
    """On every (re)connection to the broker, and then every `SWEEP_EVERY` s, `resume_lost_jobs`: a step of every
    worker's consumer (workers/celery_app.py names it)."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def start(self, c) -> None:
        resume_lost_jobs()
        self.tref = c.timer.call_repeatedly(SWEEP_EVERY, resume_lost_jobs)

    def stop(self, c) -> None:
        if getattr(self, "tref", None) is not None:
            self.tref.cancel()
            self.tref = None

    shutdown = stop


# -- a stored solution ------------------------------------------------------------------------------------


@shared_task(acks_late=True, ignore_result=True)  # (its status is the store's: no result to wait for or subscribe to)
def build_solution(mode: str, recycle: str, bus: bool = False) -> str:
    """Build and store one turn solution (a no-op if it is stored): `solutions.submit` sends it with `REDIS_URL`."""
    return solutions.build_and_store(mode, recycle, bus)


# -- reports ------------------------------------------------------------------------------------------------
# (named as they were when workers/reports.py defined them: the beat's schedule and messages already queued name them)


@shared_task(name="workers.reports.build_report", **RETRY)
def build_report(mode: str, variant: str = "before-draw", period: str | None = None) -> dict[str, Any]:
    """`reports.build_report`: what `reports.submit` sends with `REDIS_URL`."""
    return reports.build_report(mode, variant, period)


@shared_task(name="workers.reports.scheduled_reports", **RETRY)
def scheduled_reports() -> dict[str, Any]:
    """`reports.scheduled_reports`: what beat sends (workers/schedule.py)."""
    return reports.scheduled_reports()
