"""Scheduled reports (issue #5): built by a thin task from analysis.report, rendered, stored once per period.

A report is identified by its inputs: the mode, the rules variant, the engine version, the sha256 of
the two-player table it was made from (or none), the fixed rules it plays and its *period* (the
schedule's tick it belongs to: workers/schedule.py). Its id is derived from them (`Inputs.id`), so a
run repeated for the same inputs finds the report already stored and writes nothing, and two beats
firing the same tick make one report: the second run finds it stored, or finds the first one
building it (the job's lock: workers/jobs.py).

Building takes the table from the durable store. When it is missing, the report says so (its game
sections are listed as missing, with the reason) and a job computing it is started, so the next
report has them; nothing is guessed. What the engine computes for given inputs does not change with
the period, so the content (analysis.report) is kept in the store too (kind ``report-data``) and
each later period only renders it again. A stored report holds the content, its charts (PNG and
SVG, drawn once), its HTML page (one self-contained page: inline CSS, charts as SVG ``data:`` URIs,
readable on a phone) and a CSV of every table, in one checksummed entry (workers/store.py), rendered by
workers/render.py.

`submit` is what ``POST /v1/reports`` calls: a job whose id is the id of the report it will make;
on workers with Redis (the task `build_report` of workers/tasks.py, sent by name: this module imports no Celery
until it submits or follows a job), or in a thread of this process without it (the embedded default:
workers/jobs.py), followed with `status`. Beat's task (`scheduled_reports`) runs `scheduled_reports` here.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from analysis.game import GameSolution
from analysis.odds import NO_WHOLE_TURN
from analysis.report import REPORT_FORMAT, build

from . import jobs, render, schedule, tables
from .shared import store
from .store import ENGINE_VERSION, CorruptEntry, Key, Store, table_key

__all__ = ["Inputs", "ReportJob", "inputs_for", "build_report", "scheduled_reports", "make", "submit", "status",
           "reports", "latest", "load", "key_of"]

log = logging.getLogger(__name__)

KIND, DATA_KIND = "report", "report-data"
PLAYERS = 2  # the game sections are about the two-player table


# -- inputs and ids ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Inputs:
    """Everything a report is a function of; its id and store keys are derived from these alone."""

    mode: str
    variant: str
    period: str  # schedule.PERIOD_FORMAT
    table_sha: str | None
    rules: tuple[str, ...]
    engine: str = ENGINE_VERSION
    solve: bool = True  # the whole-turn table is built (schedule.solve_modes): the heavy sections are made

    def _digest(self, *, period: bool) -> str:
        parts = {"format": REPORT_FORMAT, "mode": self.mode, "variant": self.variant, "engine": self.engine,
                 "table": self.table_sha, "rules": list(self.rules), "period": self.period if period else None,
                 **({} if self.solve else {"solve": False})}  # a whole report keeps the ids it always had
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    @property
    def key(self) -> Key:
        tag = f"{self.period}-{self._digest(period=True)[:12]}"
        return Key(KIND, self.mode, self.variant, PLAYERS, self.engine, tag)

    @property
    def data_key(self) -> Key:
        """The content's key: the same for every period (the engine's answer does not depend on it)."""
        return Key(DATA_KIND, self.mode, self.variant, PLAYERS, self.engine, self._digest(period=False)[:16])

    @property
    def id(self) -> str:
        return report_id(self.key)


def report_id(key: Key) -> str:
    return key.name.removeprefix(f"{KIND}--")


def key_of(report: str) -> Key | None:
    """The store key of a report id, or None if the id is not one (ids are validated, never used as paths)."""
    try:
        key = Key.parse(f"{KIND}--{report}")
    except ValueError:
        return None
    return key if key.tag and report_id(key) == report else None


def inputs_for(mode: str, variant: str = "before-draw", period: str | None = None
               ) -> tuple[Inputs, GameSolution | None]:
    """The inputs of a report made now (the stored table, the configured rules) and the table itself."""
    period = period or schedule.current().label()
    datetime.strptime(period, schedule.PERIOD_FORMAT)  # ValueError for a malformed period
    loaded = tables.load(table_key(mode, variant, PLAYERS))
    game, sha = loaded if loaded is not None else (None, None)
    solve = mode in schedule.solve_modes() and mode not in NO_WHOLE_TURN
    return Inputs(mode, variant, period, sha, schedule.report_rules(), solve=solve), game


# -- building ------------------------------------------------------------------------------------------------
def _stored(key: Key, where: Store | None = None) -> tuple[dict[str, Any], str] | None:
    try:
        return (where or store()).get(key)
    except CorruptEntry:  # moved aside: it is made again
        log.warning("report entry %s failed its checksum; it will be made again", key.name)
        return None


def _budget(mode: str) -> str:
    """The reason, as kept in the content (shared by every server with the same inputs: no setting's value)."""
    return (f"the whole-turn table of mode {mode} takes gigabytes of memory (README, Reports): a report builds it "
            f"only for the modes listed in ZOMBIE_ODDS_REPORT_SOLVE_MODES, and a worker listing {mode} there makes "
            "the whole report")


def _not_solved(inputs: Inputs) -> str:
    """Why the whole-turn table of `inputs.mode` is not built here ("" when it is, or cannot be at all)."""
    if inputs.solve or inputs.mode in NO_WHOLE_TURN:
        return ""
    return f"not computed by this server: {_budget(inputs.mode)}"


def _missing_table(inputs: Inputs) -> tuple[str, str]:
    """A missing two-player table: start its job when this server may, and say so. Returns the note for
    this report and the reason its game sections give (kept in the content, so it names no job)."""
    mode, variant = inputs.mode, inputs.variant
    if mode in NO_WHOLE_TURN:  # its table is a long job of its own: reports never start it
        return (f"The two-player table of mode {mode} ({variant}) is not stored, and reports do not start its job "
                f"(minutes of CPU): POST /v1/tables/{mode}/jobs computes it.",
                f"the two-player table of mode {mode} ({variant}) is not in the store: POST /v1/tables/{mode}/jobs "
                "computes it")
    if not inputs.solve:
        here = ", ".join(schedule.solve_modes()) or "none"
        return (f"The two-player table of mode {mode} ({variant}) is not stored; no job was started here "
                f"(ZOMBIE_ODDS_REPORT_SOLVE_MODES is {here}): the sections that need it are marked missing.",
                f"the two-player table of mode {mode} ({variant}) is not in the store, and this server does not "
                f"compute it: it is computed from the whole-turn table, and {_budget(mode)}")
    try:
        job = tables.submit(mode, variant)
    except ValueError as e:  # the engine has no table for this mode (workers/tables.py says why)
        return (f"No two-player table of mode {mode} ({variant}) can be computed: {e}.",
                f"the two-player table of mode {mode} ({variant}) cannot be computed: {e}")
    except Exception as e:  # the queue is down: the report is still made, and says why the table is not coming
        note = f"The two-player table was missing and its job could not be started ({type(e).__name__}: {e})."
    else:
        why = f": {job.error}" if job.error else ""
        note = (f"The two-player table of mode {mode} ({variant}) was missing when this report was made: job "
                f"{job.id} computes it (state: {job.state}{why}). The sections that need it are marked missing.")
    return note, (f"the two-player table of mode {mode} ({variant}) was not in the store when this content was "
                  "computed; each report starts its job (the notes say how it stands), and the reports made once "
                  "it is stored have this section")


def content_for(inputs: Inputs, game: GameSolution | None, where: Store, game_missing: str = "") -> dict[str, Any]:
    """analysis.report's content for the inputs, from the store when it was computed before."""
    entry = _stored(inputs.data_key, where)
    if entry is not None:
        return entry[0]
    content = build(inputs.mode, inputs.variant, game, rules=inputs.rules, game_missing=game_missing,
                    solve_missing=_not_solved(inputs))
    where.put(inputs.data_key, content)
    return content


def make(inputs: Inputs, game: GameSolution | None, where: Store | None = None) -> dict[str, Any]:
    """Build, render and store the report of `inputs` unless it is stored; a short summary either way.

    The caller holds the report job's lock (`jobs.exclusive`). `where` is the store (default: the configured one;
    a job running in a thread keeps the store it was asked in)."""
    where = where or store()
    entry = _stored(inputs.key, where)
    if entry is not None:
        return {"id": inputs.id, "made": False}
    note, reason = _missing_table(inputs) if game is None else ("", "")
    notes = [note] if note else []
    content = content_for(inputs, game, where, reason)
    created = datetime.now(UTC)
    doc = {"id": inputs.id, "mode": inputs.mode, "variant": inputs.variant, "engine": inputs.engine,
           "period": _iso(inputs.period), "created": created.isoformat(timespec="seconds"),
           "table": {"key": table_key(inputs.mode, inputs.variant, PLAYERS).name,
                     **({"sha256": inputs.table_sha} if inputs.table_sha else {})},
           "rules": list(inputs.rules), "notes": notes, "content": content}
    doc["csv"] = {t["name"]: render.table_csv(t) for t in content["tables"]}
    doc["charts"] = render.draw_charts(doc, game)
    doc["html"] = render.html(doc)
    where.put(inputs.key, doc)
    log.info("report %s stored", inputs.id)
    return {"id": inputs.id, "made": True}


def _iso(period: str) -> str:
    return datetime.strptime(period, schedule.PERIOD_FORMAT).replace(tzinfo=UTC).isoformat().replace("+00:00", "Z")


# -- what the tasks run (workers/tasks.py) ----------------------------------------------------------------------
def build_report(mode: str, variant: str = "before-draw", period: str | None = None) -> dict[str, Any]:
    """Make the report of `mode` for `period` (default: the current one) unless it exists or is being made."""
    inputs, game = inputs_for(mode, variant, period)
    with jobs.exclusive(_task_id(inputs.id)) as mine:
        if not mine:
            return {"id": inputs.id, "made": False, "elsewhere": True}
        return make(inputs, game)


def _task_id(report: str) -> str:
    return f"report-{report}"


def scheduled_reports() -> dict[str, Any]:
    """What beat sends: one `build_report` per configured mode and variant, for the current period.

    A report already stored, queued or being made is not asked for again (a second beat firing the same
    tick finds the first one's work)."""
    period = schedule.current().label()
    asked = []
    for mode in schedule.report_modes():
        for variant in schedule.report_variants():
            job = submit(mode, variant, period)
            asked.append({"mode": mode, "variant": variant, "id": job.id, "state": job.state})
    return {"period": period, "reports": asked}


# -- jobs: POST /v1/reports ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReportJob:
    """A report being made: ``state`` queued, running, succeeded (``report`` is its id) or failed (``error``)."""

    id: str  # the id of the report it makes (the inputs it was asked with)
    state: str
    report: str | None = None
    error: str | None = None


def _record_id(report: str) -> str:
    """The id of the record of the job making `report` (a report's id is too long for one, and holds ``--``)."""
    return f"report-{hashlib.sha256(report.encode()).hexdigest()[:40]}"


def submit(mode: str, variant: str = "before-draw", period: str | None = None) -> ReportJob:
    """Make a report now unless it exists or is being made; its job either way (never a second copy)."""
    inputs, game = inputs_for(mode, variant, period)
    done = status(inputs.id)
    if done is not None and done.state != "failed":
        return done
    from celery import current_app

    from .celery_app import embedded

    if embedded():
        where = store()
        jobs.start(_task_id(inputs.id), lambda: _run_here(inputs, game, where))  # (or it runs already)
        return ReportJob(inputs.id, "running")
    current_app.backend.store_result(_task_id(inputs.id), {"report": inputs.id}, "QUEUED")
    jobs.send("workers.reports.build_report", (mode, variant, inputs.period), task_id=_task_id(inputs.id))
    return ReportJob(inputs.id, "queued")


def _run_here(inputs: Inputs, game: GameSolution | None, where: Store) -> None:
    """The embedded default: make the report in this thread (`jobs.start`, holding the job's lock throughout),
    unless it was stored meanwhile."""
    if _stored(inputs.key, where) is not None:
        jobs.write_record(_record_id(inputs.id), {"state": "succeeded", "report": inputs.id}, where)
        return
    jobs.write_record(_record_id(inputs.id), {"state": "running"}, where)
    try:
        summary = make(inputs, game, where)
        jobs.write_record(_record_id(inputs.id), {"state": "succeeded", "report": summary["id"]}, where)
    except Exception as e:  # the job fails, the server does not: the record says why
        log.exception("report %s failed", inputs.id)
        jobs.write_record(_record_id(inputs.id), {"state": "failed", "error": f"{type(e).__name__}: {e}"}, where)


def status(job: str) -> ReportJob | None:
    """Where the job making report `job` stands; None if there is no such job."""
    key = key_of(job)
    if key is None:
        return None
    if _stored(key) is not None:
        return ReportJob(job, "succeeded", job)
    if jobs.runs(_task_id(job)):
        return ReportJob(job, "running")
    from celery import current_app

    from .celery_app import embedded

    if embedded():
        record = jobs.read_record(_record_id(job))
        if record is None:
            return None
        if record["state"] == "succeeded":
            return ReportJob(job, "succeeded", record["report"])
        if record["state"] == "failed":
            return ReportJob(job, "failed", error=record["error"])
        return ReportJob(job, "failed", error="interrupted: the process making it stopped; ask again")
    result = current_app.AsyncResult(_task_id(job))
    state, info = result.state, result.info
    if state == "PENDING":
        return None
    if state == "FAILURE":
        return ReportJob(job, "failed", error=f"{type(info).__name__}: {info}")
    if state == "SUCCESS" and isinstance(info, dict):
        made = key_of(info.get("id", ""))
        if made is not None and _stored(made) is not None:
            return ReportJob(job, "succeeded", info["id"])
        return ReportJob(job, "failed", error="the report was made and is no longer in the store; ask again")
    return ReportJob(job, "queued" if state == "QUEUED" else "running")


# -- reading -----------------------------------------------------------------------------------------------------
def describe(key: Key) -> dict[str, Any]:
    """A report as listed: from its key alone (no file is read)."""
    period = key.tag[: len("YYYYmmdd-HHMMSS")]
    return {"id": report_id(key), "mode": key.mode, "variant": key.variant, "engine": key.engine,
            "period": _iso(period), "url": f"/v1/reports/{report_id(key)}"}


def _report_keys() -> list[Key]:
    every = store().keys()
    return [k for k in every if k.kind == KIND and k.tag]


def reports(mode: str | None = None) -> list[dict[str, Any]]:
    """Every stored report (of `mode`), newest period first."""
    found = [k for k in _report_keys() if mode is None or k.mode == mode]
    return [describe(k) for k in sorted(found, key=lambda k: (k.tag[:15], k.name), reverse=True)]


def load(report: str) -> dict[str, Any] | None:
    """The stored report (checksum verified), or None."""
    key = key_of(report)
    entry = _stored(key) if key is not None else None
    return entry[0] if entry is not None else None


def latest(mode: str, variant: str = "before-draw") -> dict[str, Any] | None:
    """The report of the latest period for `mode` (current engine); of two for one period, the one with more
    sections (a worker that builds the whole-turn table made it), then the later made."""
    keys = [k for k in _report_keys() if k.mode == mode and k.variant == variant and k.engine == ENGINE_VERSION]
    if not keys:
        return None
    newest = max(k.tag[:15] for k in keys)
    docs = [d for d in (load(report_id(k)) for k in keys if k.tag[:15] == newest) if d is not None]
    return max(docs, key=lambda d: (_complete(d), d["created"])) if docs else None


def _complete(doc: dict[str, Any]) -> int:
    return sum(s["status"] == "ok" for s in doc["content"]["sections"])
