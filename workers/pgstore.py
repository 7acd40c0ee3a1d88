"""The durable store in PostgreSQL, shared by machines that share no directory (``ZOMBIE_ODDS_STORE=postgresql://...``).

It keeps the directory store's promises (workers/store.py) with the database's own means:

- an entry is one row (its JSON envelope, with the sha256 of the canonical JSON of its data), written by one
  statement; an array entry is its manifest row and its files in parts of `PART` bytes (a ``bytea`` holds at most
  1 GB), written in one transaction with its journal line, so that a reader sees it whole or not at all;
- a read recomputes the digests; a row that does not match is renamed ``<name>.corrupt`` (kept for inspection,
  never served) and reported as missing, so that it is recomputed;
- an entry's lock is a session-level advisory lock held on a connection of its own: the server drops it when the
  holder's connection ends, so a killed process never leaves one taken.

What a process maps must be a local file: `get_arrays` keeps a verified copy of an array entry in a local directory
store (`ZOMBIE_ODDS_CACHE`, by default ``var/cache``), fetched when it is missing or differs from the database's
(by the manifest's digest), every file checked against its sha256 before the copy is renamed into place. That
directory also holds what is local by nature: the embedded jobs' locks (workers/jobs.py).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from .store import CorruptEntry, EntryInfo, JobKey, Key, Store, _digest, _opened

__all__ = ["PostgresStore", "PART"]

log = logging.getLogger(__name__)

PART = 32 * 2**20  # bytes of an array file per row

_SCHEMA = """
create table if not exists zombie_odds_entries (
    name text primary key, sha256 text not null, envelope bytea not null, written double precision not null);
create table if not exists zombie_odds_manifests (
    name text primary key, sha256 text not null, envelope bytea not null, written double precision not null);
create table if not exists zombie_odds_parts (
    name text not null, file text not null, part integer not null, bytes bytea not null,
    primary key (name, file, part));
create table if not exists zombie_odds_journal (at double precision not null, name text not null, sha256 text not null);
create index if not exists zombie_odds_journal_name on zombie_odds_journal (name);
"""
_SCHEMA_LOCK = 0x7A6F6D626965  # the advisory lock held while creating the tables (two processes at once)


def _lock_id(name: str) -> int:
    """An advisory lock's 64-bit key for an entry's name."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


class PostgresStore(Store):
    """Entries in the PostgreSQL database at `url`; a local directory (`cache`) for the copies a process maps."""

    def __init__(self, url: str, cache: str | os.PathLike):
        super().__init__(cache)
        self.url = url
        self._local = threading.local()
        self._opened: list[tuple[int, psycopg.Connection]] = []  # (pid, connection) of every thread's connection
        self._opened_lock = threading.Lock()

    def __str__(self) -> str:
        return self.url.split("@")[-1]  # (never the password)

    # -- connections ----------------------------------------------------------------------------------------
    def _connect(self) -> psycopg.Connection:
        return psycopg.connect(self.url, autocommit=True)

    def _db(self) -> psycopg.Connection:
        """This thread's connection (a new one after a fork or once it broke), the tables created on first use.

        A connection inherited through a fork stays referenced, never closed nor finalised by the child: closing it
        would end the parent's session on the socket they share."""
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed or conn.broken or self._local.pid != os.getpid():
            conn = self._local.conn = self._connect()
            self._local.pid = os.getpid()
            with self._opened_lock:
                self._opened = [(pid, c) for pid, c in self._opened if pid != os.getpid() or not c.closed]
                self._opened.append((os.getpid(), conn))
            with conn.transaction():
                conn.execute("select pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                conn.execute(_SCHEMA)
        return conn

    def close(self) -> None:
        """Close the connections this process opened (every thread's); the next use opens new ones."""
        with self._opened_lock:
            mine = [c for pid, c in self._opened if pid == os.getpid()]
            self._opened = [(pid, c) for pid, c in self._opened if pid != os.getpid()]
        for conn in mine:
            conn.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _one(self, query: str, params: tuple = ()) -> tuple | None:
        return self._db().execute(query, params).fetchone()

    # -- JSON entries -----------------------------------------------------------------------------------------
    def put(self, key: Key | JobKey, data: Any) -> str:
        digest = _digest(data)
        envelope = json.dumps({"key": key.name, "sha256": digest, "data": data}, separators=(",", ":"),
                              allow_nan=False).encode()
        with self._db().transaction() as tx:
            tx.connection.execute(
                "insert into zombie_odds_entries values (%s, %s, %s, %s) on conflict (name) do update set "
                "sha256 = excluded.sha256, envelope = excluded.envelope, written = excluded.written",
                (key.name, digest, envelope, time.time()))
            self._record(tx.connection, key.name, digest)
        return digest

    @staticmethod
    def _record(conn: psycopg.Connection, name: str, digest: str) -> None:
        conn.execute("insert into zombie_odds_journal values (%s, %s, %s)", (time.time(), name, digest))

    def get(self, key: Key | JobKey) -> tuple[Any, str] | None:
        row = self._one("select envelope from zombie_odds_entries where name = %s", (key.name,))
        if row is None:
            return None
        envelope = _opened(row[0], key.name)
        if envelope is None:
            self._set_aside("zombie_odds_entries", key.name)
            raise CorruptEntry(f"{key.name}: checksum mismatch; moved aside to be recomputed")
        return envelope["data"], envelope["sha256"]

    def _set_aside(self, table: str, name: str) -> None:
        """Rename a corrupt entry ``<name>.corrupt`` (replacing an older one): kept for inspection, never served."""
        aside = f"{name}.corrupt"
        with self._db().transaction() as tx:
            for t in (table, *(("zombie_odds_parts",) if table == "zombie_odds_manifests" else ())):
                tx.connection.execute(f"delete from {t} where name = %s", (aside,))
                tx.connection.execute(f"update {t} set name = %s where name = %s", (aside, name))
        log.error("%s: checksum mismatch; moved aside to %s, never served", name, aside)

    def info(self, key: Key | JobKey) -> EntryInfo | None:
        row = self._one("select octet_length(envelope), written from zombie_odds_entries where name = %s",
                        (key.name,))
        return EntryInfo(*row) if row else None

    def remove(self, key: Key | JobKey) -> None:
        self._db().execute("delete from zombie_odds_entries where name = %s", (key.name,))

    def __contains__(self, key: Key | JobKey) -> bool:
        return self._one("select 1 from zombie_odds_entries where name = %s", (key.name,)) is not None

    def writes(self, key: Key | JobKey) -> int:
        return self._one("select count(*) from zombie_odds_journal where name = %s", (key.name,))[0]

    def _names(self, pattern: str) -> list[str]:
        rows = self._db().execute("select name from zombie_odds_entries where name like %s order by name", (pattern,))
        return [name for (name,) in rows if not name.endswith(".corrupt")]

    def jobs(self) -> Iterator[JobKey]:
        for name in self._names("job--%"):
            try:
                yield JobKey(name.removeprefix("job--"))
            except ValueError:
                continue

    def keys(self) -> Iterator[Key]:
        for name in self._names("%"):
            try:
                yield Key.parse(name)
            except ValueError:  # job records
                continue

    # -- array entries ----------------------------------------------------------------------------------------
    def put_arrays(self, key: Key, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> str:
        """Write named arrays as one entry, in one transaction; the local copy is written first (through the
        directory store: the files and their digests), so the process that built it maps it without a fetch."""
        digest = super().put_arrays(key, meta, arrays)
        folder = self._folder(key)
        manifest = (folder / "manifest.json").read_bytes()
        files = json.loads(manifest)["data"]["files"]
        with self._db().transaction() as tx:
            conn = tx.connection
            conn.execute("delete from zombie_odds_parts where name = %s", (key.name,))
            for name in files:
                with open(folder / f"{name}.npy", "rb") as f:
                    for part, chunk in enumerate(iter(lambda: f.read(PART), b"")):
                        conn.execute("insert into zombie_odds_parts values (%s, %s, %s, %s)",
                                     (key.name, name, part, chunk))
            conn.execute(
                "insert into zombie_odds_manifests values (%s, %s, %s, %s) on conflict (name) do update set "
                "sha256 = excluded.sha256, envelope = excluded.envelope, written = excluded.written",
                (key.name, digest, manifest, time.time()))
            self._record(conn, key.name, digest)
        return digest

    def array_digest(self, key: Key) -> str | None:
        row = self._one("select sha256 from zombie_odds_manifests where name = %s", (key.name,))
        return row[0] if row else None

    def has_arrays(self, key: Key) -> bool:
        return self.array_digest(key) is not None

    def get_arrays(self, key: Key) -> tuple[dict[str, Any], dict[str, np.ndarray], str] | None:
        """(meta, arrays, digest) mapped read-only from the local copy, fetched first if it is missing or not the
        database's; None if absent. A damaged entry in the database is moved aside and raises `CorruptEntry`; a
        damaged local copy is fetched again."""
        digest = self.array_digest(key)
        if digest is None:
            return None
        if super().array_digest(key) == digest:
            try:
                return super().get_arrays(key)
            except CorruptEntry:
                pass  # the local copy: fetched again below
        self._fetch(key)
        return super().get_arrays(key)

    def _fetch(self, key: Key) -> None:
        """Copy an array entry from the database into the local directory, every file checked, renamed into place."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.root))
        try:
            with self._db().transaction() as tx:
                conn = tx.connection
                conn.execute("set transaction isolation level repeatable read")  # one version of every part
                row = conn.execute("select envelope from zombie_odds_manifests where name = %s",
                                   (key.name,)).fetchone()
                envelope = _opened(row[0], key.name)
                ok = envelope is not None
                for name, expected in envelope["data"]["files"].items() if ok else ():
                    with open(tmp / f"{name}.npy", "wb") as f:
                        h = hashlib.sha256()
                        parts = conn.cursor().stream("select bytes from zombie_odds_parts where name = %s and "
                                                     "file = %s order by part", (key.name, name))
                        for (chunk,) in parts:  # (one row at a time: a file may be hundreds of MB)
                            f.write(chunk)
                            h.update(chunk)
                        f.flush()
                        os.fsync(f.fileno())
                    ok = ok and h.hexdigest() == expected
            if not ok:
                self._set_aside("zombie_odds_manifests", key.name)
                raise CorruptEntry(f"{key.name}: checksum mismatch; moved aside to be recomputed")
            (tmp / "manifest.json").write_bytes(row[0])
            final = self._folder(key)
            if final.exists():
                shutil.rmtree(final)
            os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    # -- locks ------------------------------------------------------------------------------------------------
    @contextmanager
    def lock(self, key: Key) -> Iterator[None]:
        """Hold the entry's advisory lock (waiting for it) on a connection of its own while the block runs.

        It is let go before the connection closes: the server ends a closed session's locks only once its backend
        has noticed, so a `busy` asked at once could still see it taken."""
        with self._connect() as conn:
            conn.execute("select pg_advisory_lock(%s)", (_lock_id(key.name),))
            try:
                yield
            finally:
                if not conn.broken:
                    conn.execute("select pg_advisory_unlock(%s)", (_lock_id(key.name),))

    def busy(self, key: Key) -> bool:
        """Whether a session holds the entry's lock (asked with a shared lock, let go at once)."""
        free = self._one("select pg_try_advisory_lock_shared(%s)", (_lock_id(key.name),))[0]
        if free:
            self._db().execute("select pg_advisory_unlock_shared(%s)", (_lock_id(key.name),))
        return not free
