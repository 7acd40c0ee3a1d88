"""workers/tables.py: table jobs as the API and the CLI follow them: a job's id is its table's key (looked up, never
parsed), the stored table is the truth (a succeeded job, read and parsed once per version), a record whose process is
gone is a failed job, a server leaves the tables outside `ZOMBIE_ODDS_EMBEDDED_TABLES` to the workers, and a job asked
for twice runs once. The solve itself is stubbed here: tests/api/test_tables.py and tests/workers/test_tasks.py run it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from analysis import MODES
from analysis.position import RECYCLE_VARIANTS
from workers import tables
from workers.store import JobKey, Key, Store, table_key

KEY = table_key("original", "before-draw", 2)
TABLE = {"p_first_player_wins": 0.4667, "win_probability": [[0.5]]}  # (what a status reads of a stored table)


@pytest.fixture(autouse=True)
def shelf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    """An empty store of the test's own (no REDIS_URL: jobs run in this process)."""
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    monkeypatch.delenv("REDIS_URL", raising=False)
    return Store(tmp_path)


def test_a_jobs_id_names_its_table_and_is_looked_up_never_parsed() -> None:
    assert tables.job_id(KEY) == "table-original-before-draw-p2-v1"
    for mode in MODES:
        for variant in RECYCLE_VARIANTS:
            key = table_key(mode, variant, 2)
            assert tables.key_for_job(tables.job_id(key)) == key and "--" not in tables.job_id(key)
    three = table_key("original", "draw-then-recycle", 3)
    assert tables.key_for_job("table-original-draw-then-recycle-p3-v1") == three
    assert tables.key_for_job("table-original-before-draw-p4-v1") == table_key("original", "before-draw", 4)
    assert tables.key_for_job("table-santa-claus-meets-the-zombies-before-draw-p4-v1") is None
    for unknown in ("table-original-before-draw-p5-v1", "table-original-before-draw-p2-v0", "table-chess-before-draw"
                    "-p2-v1", "..", "table-original-before-draw-p2-v1/../x", ""):
        assert tables.key_for_job(unknown) is None, unknown


def test_the_tables_a_server_computes_itself_are_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ZOMBIE_ODDS_EMBEDDED_TABLES", raising=False)
    assert tables.embedded_tables() == {("original", 2), ("original", 3)}
    monkeypatch.setenv("ZOMBIE_ODDS_EMBEDDED_TABLES", " original , big-summer-action-movie:2,original:3,")
    assert tables.embedded_tables() == {("original", 2), ("big-summer-action-movie", 2), ("original", 3)}
    monkeypatch.setenv("ZOMBIE_ODDS_EMBEDDED_TABLES", "")
    assert tables.embedded_tables() == frozenset()


def test_a_stored_table_is_a_succeeded_job_and_a_corrupt_one_none(shelf: Store) -> None:
    assert tables.status(KEY) is None and tables.stored(KEY) is None  # never submitted
    digest = shelf.put(KEY, TABLE)
    job = tables.status(KEY)
    assert (job.id, job.state, job.sha256, job.p_first_player_wins) == (tables.job_id(KEY), "succeeded", digest, 0.4667)
    assert job.done == job.total == 27 and not job.active
    path = shelf.root / f"{KEY.name}.json"
    path.write_text(path.read_text().replace("0.4667", "0.9999"))  # bit rot
    assert tables.stored(KEY) is None and tables.status(KEY) is None
    assert (shelf.root / f"{KEY.name}.corrupt").exists() and not path.exists()


def test_a_stored_solution_is_read_and_parsed_once_per_version(shelf: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A question reads only the entry's size and time of writing: the entry (megabytes to read and check) is read
    again once it was written again."""
    parsed: list[dict] = []
    read: list[Key] = []
    stored = tables.stored
    monkeypatch.setattr(tables.units, "solution_from", lambda data: parsed.append(data) or object())
    monkeypatch.setattr(tables, "stored", lambda key: read.append(key) or stored(key))
    assert tables.load(KEY) is None
    digest = shelf.put(KEY, TABLE)
    first, sha = tables.load(KEY)
    assert sha == digest and tables.load(KEY) == (first, digest) and parsed == [TABLE] and read == [KEY]
    newer = shelf.put(KEY, {**TABLE, "p_first_player_wins": 0.5})  # computed again
    second, sha = tables.load(KEY)
    assert sha == newer and second is not first and len(parsed) == 2 and read == [KEY, KEY]
    assert tables.load(KEY) == (second, newer) and len(read) == 2


def record(state: str, **fields: object) -> dict[str, object]:
    return {"id": tables.job_id(KEY), "mode": "original", "variant": "before-draw", "players": 2, "split": 2,
            "state": state, "run": "r1", "done": 3, "total": 27, "known": {}, "updated": time.time(), **fields}


def test_a_record_says_running_but_no_process_holds_its_lock_so_it_was_interrupted(shelf: Store) -> None:
    shelf.put(JobKey(tables.job_id(KEY)), record("running"))
    job = tables.status(KEY)
    assert job.state == "failed" and job.done == 3 and job.error.startswith("interrupted")
    shelf.put(JobKey(tables.job_id(KEY)), record("failed", error="out of memory"))
    assert (tables.status(KEY).state, tables.status(KEY).error) == ("failed", "out of memory")
    shelf.put(JobKey(tables.job_id(KEY)), record("done", summary={"sha256": "0" * 64}))
    lost = tables.status(KEY)  # it said done, and the table is not there (moved aside as corrupt)
    assert lost.state == "failed" and "lost" in lost.error


def test_what_has_no_table_is_refused_and_a_server_leaves_large_tables_to_the_workers(
        shelf: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[object] = []
    monkeypatch.setattr(tables, "start_table_job", lambda *args, **kwargs: started.append(args))
    with pytest.raises(ValueError, match="5 players of original have no exact table"):
        tables.submit("original", players=5)
    with pytest.raises(ValueError, match="no such mode"):
        tables.submit("chess")
    monkeypatch.setenv("ZOMBIE_ODDS_EMBEDDED_TABLES", "original")
    with pytest.raises(tables.NotHere, match="only on Celery workers"):
        tables.submit("big-summer-action-movie", server=True)
    big = table_key("big-summer-action-movie", "before-draw", 2)
    digest = shelf.put(big, TABLE)  # computed elsewhere (a worker, `zombie-odds tables build`): served
    assert tables.submit("big-summer-action-movie", server=True).sha256 == digest
    assert started == [] and list(shelf.root.glob("job--*")) == []


def test_a_job_asked_for_while_it_runs_is_joined_not_started_again(shelf: Store,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Embedded, the job runs in a thread of this process under its lock: asked again meanwhile (from any thread),
    it is the same job, queued; once its table is stored it has succeeded, and is not computed again."""
    release, runs = threading.Event(), []

    def solve(mode: str, variant: str, players: int, split: int, job_id: str) -> None:  # stands for the graph of tasks
        runs.append(job_id)
        assert release.wait(30)
        shelf.put(table_key(mode, variant, players), TABLE)

    monkeypatch.setattr(tables, "start_table_job", solve)
    first = tables.submit("original")
    asked = []
    others = [threading.Thread(target=lambda: asked.append(tables.submit("original"))) for _ in range(3)]
    for thread in others:
        thread.start()
    for thread in others:
        thread.join()
    assert first.state == "queued" and [job.state for job in asked] == ["queued"] * 3
    assert tables.status(KEY).state == "queued"
    release.set()
    tables.join(KEY, timeout=30)
    job = tables.status(KEY)
    assert job.state == "succeeded" and runs == [tables.job_id(KEY)]
    assert tables.submit("original").state == "succeeded" and runs == [tables.job_id(KEY)]


def test_a_job_is_cut_into_the_units_the_setting_names(shelf: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each layer in as many units as `ZOMBIE_ODDS_TABLE_UNITS` says (as many as the workers sharing the job), 2 by
    default; anything but a whole number from 1 is refused, naming the setting."""
    splits: list[int] = []
    monkeypatch.setattr(tables, "start_table_job", lambda *args, split, job_id: splits.append(split))
    for setting, split in ((None, 2), ("8", 8), ("1", 1)):
        if setting is None:
            monkeypatch.delenv("ZOMBIE_ODDS_TABLE_UNITS", raising=False)
        else:
            monkeypatch.setenv("ZOMBIE_ODDS_TABLE_UNITS", setting)
        tables.submit("original")
        tables.join(KEY, timeout=30)
        assert splits[-1] == split == tables.units_per_layer()
    for wrong in ("0", "two", "-3", ""):
        monkeypatch.setenv("ZOMBIE_ODDS_TABLE_UNITS", wrong)
        with pytest.raises(ValueError, match="ZOMBIE_ODDS_TABLE_UNITS must be a whole number"):
            tables.units_per_layer()


def test_a_key_of_another_kind_has_no_job() -> None:
    assert tables.key_for_job(tables.job_id(Key("report", "original", "before-draw", 2))) is None
