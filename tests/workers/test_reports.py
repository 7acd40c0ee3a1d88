"""workers/reports.py: scheduled reports built from analysis.report's content (tests/analysis/test_report.py checks
it), rendered and stored once per period and inputs, the most complete of a period the latest, a missing table
started or said to be impossible; two real beats with a real worker over a real Redis make one report per period."""

import json
import os
import subprocess
import sys
import time
from collections import Counter

import pytest
import redis

from workers import jobs, reports, tasks
from workers.store import JobKey, Key, Store, table_key

from .reporting import GROUP, RULES, stored_content, stored_table

REDIS_URL = "redis://127.0.0.1:6379/14"
pytestmark = pytest.mark.xdist_group(GROUP)  # (tests/workers/reporting.py)


store_dir = pytest.fixture(scope="module", name="store_dir")(stored_table)
content = pytest.fixture(scope="module", name="content")(stored_content)
SANTA = "santa-claus-meets-the-zombies"


# -- building and storing --------------------------------------------------------------------------------------

def test_a_report_is_made_once_per_period_and_inputs(store_dir, content):
    period = "20200101-030000"
    first = tasks.build_report.apply(("original", "before-draw", period)).get()
    second = tasks.build_report.apply(("original", "before-draw", period)).get()
    assert first == {"id": first["id"], "made": True} and second == {"id": first["id"], "made": False}
    assert Store(store_dir).writes(reports.key_of(first["id"])) == 1
    assert reports.load(first["id"])["period"] == "2020-01-01T03:00:00Z"


# -- two beats, one worker, real Redis ---------------------------------------------------------------------------
def test_two_beats_make_one_report_per_period(store_dir, content, tmp_path):
    client = redis.Redis.from_url(REDIS_URL)
    client.ping()  # scripts/test starts Redis on loopback when it is not running
    client.flushdb()
    env = {**os.environ, "REDIS_URL": REDIS_URL, "ZOMBIE_ODDS_STORE": str(store_dir),
           "ZOMBIE_ODDS_REPORT_SCHEDULE": "3", "ZOMBIE_ODDS_REPORT_MODES": "original",
           "ZOMBIE_ODDS_REPORT_RULES": " ".join(RULES)}
    celery = [sys.executable, "-m", "celery", "-A", "workers.celery_app"]
    before = {r["id"] for r in reports.reports("original")}
    procs = [subprocess.Popen([*celery, "worker", "--concurrency", "1", "--loglevel", "WARNING", "--without-gossip",
                               "--without-mingle", "--without-heartbeat"], env=env)]
    procs += [subprocess.Popen([*celery, "beat", "--loglevel", "WARNING", "-s", str(tmp_path / f"beat{n}"),
                                "--pidfile", str(tmp_path / f"beat{n}.pid")], env=env) for n in (1, 2)]
    try:
        deadline = time.time() + 150  # it ends as soon as three periods have their report
        while time.time() < deadline:
            assert all(p.poll() is None for p in procs), "a celery process died"
            made = [r for r in reports.reports("original") if r["id"] not in before]
            if len({r["period"] for r in made}) >= 3:
                break
            time.sleep(0.5)
    finally:
        for p in procs[1:]:
            p.terminate()
        for p in procs[1:]:
            p.wait(timeout=30)
        time.sleep(2)  # a build already taken finishes
        procs[0].terminate()
        procs[0].wait(timeout=60)
    made = [r for r in reports.reports("original") if r["id"] not in before]
    per_period = Counter(r["period"] for r in made)
    assert len(per_period) >= 3 and set(per_period.values()) == {1}, per_period
    store = Store(store_dir)
    assert all(store.writes(reports.key_of(r["id"])) == 1 for r in made)
    runs = Counter()  # the beats' runs per period: both beats fired, the duplicates made nothing
    for name in client.scan_iter("celery-task-meta-*"):
        meta = json.loads(client.get(name))
        if meta.get("name") == "workers.reports.scheduled_reports" and meta["status"] == "SUCCESS":
            runs[meta["result"]["period"]] += 1
    assert max(runs.values()) >= 2, runs
    client.flushdb()


def test_keys_of_reports_are_validated():
    assert reports.key_of("original--before-draw--p2--v1--20261129-030000-959562a34aaf") == Key(
        "report", "original", "before-draw", 2, "1", "20261129-030000-959562a34aaf")
    for bad in ("", "..", "original", "original--before-draw--p2--v1", "a--b--p2--v1--x--y", "../../etc--a--p2--v1--t"):
        assert reports.key_of(bad) is None


def test_the_latest_report_of_a_period_is_the_most_complete(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    where = Store(tmp_path)

    def put(period, solve, created, ok):
        inputs = reports.Inputs("original", "before-draw", period, None, RULES, solve=solve)
        sections = [{"status": "ok"}] * ok + [{"status": "missing"}] * (5 - ok)
        where.put(inputs.key, {"id": inputs.id, "created": created, "content": {"sections": sections}})
        return inputs.id

    put("20200101-030000", True, "2020-01-01T03:00:00+00:00", 5)  # an older period, however complete
    whole = put("20200102-030000", True, "2020-01-02T03:00:00+00:00", 5)
    light = put("20200102-030000", False, "2020-01-02T03:05:00+00:00", 1)  # made later, by a smaller worker
    assert whole != light
    assert reports.latest("original")["id"] == whole


def test_a_missing_table_is_started_or_said_to_be_impossible(monkeypatch):
    """What the game sections and the notes say when the two-player table is missing: its job was started,
    or the engine cannot compute that table (workers/tables.py refuses it), or this server does not try."""
    monkeypatch.setenv("ZOMBIE_ODDS_REPORT_SOLVE_MODES", f"original,{SANTA}")
    inputs = reports.Inputs(SANTA, "before-draw", "20200101-030000", None, RULES)

    def impossible(mode, variant):
        raise ValueError(f"no full-game table for {mode}: too large")

    monkeypatch.setattr(reports.tables, "submit", impossible)
    note, reason = reports._missing_table(inputs)
    assert reason == f"the two-player table of mode {SANTA} (before-draw) cannot be computed: no full-game table " \
                     f"for {SANTA}: too large"
    assert note.startswith("No two-player table") and "too large" in note
    started = reports.tables.TableJob("table-job", table_key(SANTA, "before-draw", 2), "queued", 0, 9)
    monkeypatch.setattr(reports.tables, "submit", lambda mode, variant: started)
    note, reason = reports._missing_table(inputs)
    assert "job table-job computes it (state: queued)" in note and "each report starts its job" in reason
    light = reports.Inputs(SANTA, "before-draw", "20200101-030000", None, RULES, solve=False)
    assert light.id != inputs.id and light.data_key != inputs.data_key
    monkeypatch.setattr(reports.tables, "submit", impossible)  # not called: this server does not solve it
    note, reason = reports._missing_table(light)
    assert "no job was started" in note and "ZOMBIE_ODDS_REPORT_SOLVE_MODES" in reason


def test_a_report_jobs_record_says_where_it_stands_and_its_lock_whether_it_runs(tmp_path, monkeypatch):
    """Embedded, a report's job keeps its record in the store (workers/jobs.py): a record that says running while
    nobody holds the job's lock was interrupted."""
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    report = reports.Inputs("original", "before-draw", "20200101-030000", None, RULES).id
    assert reports.status(report) is None
    jobs.write_record(reports._record_id(report), {"state": "running"})
    assert reports.status(report) == reports.ReportJob(
        report, "failed", error="interrupted: the process making it stopped; ask again")
    with jobs.exclusive(reports._task_id(report)) as mine:
        assert mine and reports.status(report) == reports.ReportJob(report, "running")
    jobs.write_record(reports._record_id(report), {"state": "failed", "error": "RuntimeError: no luck"})
    assert reports.status(report) == reports.ReportJob(report, "failed", error="RuntimeError: no luck")
    assert list(Store(tmp_path).jobs()) == [JobKey(reports._record_id(report))]
