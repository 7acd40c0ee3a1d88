"""The durable store for computed tables and reports: a local directory, atomic and checksummed.

A crash, a restart of the API, the workers or Redis loses nothing and never exposes half a file:

- each entry is one JSON file written to a temporary name in the same directory, flushed and fsynced,
  then renamed over the final name (rename is atomic on POSIX), and the directory is fsynced;
- the file is an envelope ``{"key": ..., "sha256": ..., "data": ...}`` where ``sha256`` is the digest of
  the canonical JSON of ``data``; a read recomputes it, and a file that does not match (bit rot, a
  hand edit, a truncated copy) is moved aside to ``*.corrupt`` and reported as missing, so that it is
  recomputed rather than served.

Keys are versioned (kind, mode, rules variant, player count, engine version), so a new engine never
reads an old engine's table. A job's own record (`JobKey`, its checkpoint: see workers/tasks.py) is an
entry like any other. Every write appends one line to ``journal.log`` (time, entry, sha256): an audit of
what was computed when, and how the tests count that a table was written exactly once.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Key", "table_key", "JobKey", "Store", "EntryInfo", "CorruptEntry", "ENGINE_VERSION", "held", "locked",
           "try_lock"]

# Bump when a change to analysis/ changes any number a stored table or answer (api.odds.shared_answer) holds.
ENGINE_VERSION = "1"

log = logging.getLogger(__name__)

_SAFE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


class CorruptEntry(Exception):
    """A stored file failed its checksum; it was moved aside and must be recomputed."""


@dataclass(frozen=True)
class Key:
    """What a stored entry is: e.g. Key("table", "original", "before-draw", 2). A `tag` tells apart
    entries of one kind made from other inputs (a report: its period and the digest of its inputs)."""

    kind: str
    mode: str
    variant: str
    players: int
    engine: str = ENGINE_VERSION
    tag: str = ""

    def __post_init__(self) -> None:
        for part in (self.kind, self.mode, self.variant, self.engine, *((self.tag,) if self.tag else ())):
            if not _SAFE.match(part) or "--" in part:  # never a path component that could escape the store
                raise ValueError(f"unsafe key component {part!r}")
        if not isinstance(self.players, int) or not 1 <= self.players <= 8:
            raise ValueError("players must be 1..8")

    @property
    def name(self) -> str:
        tag = f"--{self.tag}" if self.tag else ""
        return f"{self.kind}--{self.mode}--{self.variant}--p{self.players}--v{self.engine}{tag}"

    @classmethod
    def parse(cls, name: str) -> Key:
        kind, mode, variant, players, engine, *tag = name.split("--")
        if len(tag) > 1 or not players.startswith("p") or not engine.startswith("v"):
            raise ValueError(f"not a key: {name!r}")
        return cls(kind, mode, variant, int(players.removeprefix("p")), engine.removeprefix("v"), *tag)


def table_key(mode: str, variant: str, players: int) -> Key:
    """The stored game table of `players` players (a table job's result: workers/tasks.py), current engine."""
    return Key("table", mode, variant, players)


@dataclass(frozen=True)
class JobKey:
    """A job's durable record, by job id (a UUID, or any safe name: never a path)."""

    id: str

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _SAFE.match(self.id) or "--" in self.id:
            raise ValueError(f"unsafe job id {self.id!r}")

    @property
    def name(self) -> str:
        return f"job--{self.id}"


@dataclass(frozen=True)
class EntryInfo:
    """A stored entry's size in bytes and when it was written (seconds since the epoch)."""

    size: int
    written: float


def _digest(data: Any) -> str:
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _opened(raw: bytes, name: str) -> dict[str, Any] | None:
    """The envelope in `raw` if it is entry `name`'s and its data match its sha256; None if it is damaged."""
    try:
        envelope = json.loads(raw)
        if envelope["key"] == name and _digest(envelope["data"]) == envelope["sha256"]:
            return envelope
    except (ValueError, KeyError, TypeError):
        pass
    return None


def _file_digest(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Store:
    """Entries under one directory (created on first use)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def __str__(self) -> str:
        return str(self.root)

    def _path(self, key: Key | JobKey) -> Path:
        return self.root / f"{key.name}.json"

    def put(self, key: Key | JobKey, data: Any) -> str:
        """Write `data` atomically; returns its sha256 (also the entry's strong ETag)."""
        self.root.mkdir(parents=True, exist_ok=True)
        digest = _digest(data)
        envelope = {"key": key.name, "sha256": digest, "data": data}
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.root)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(envelope, f, separators=(",", ":"), allow_nan=False)
                f.flush()
                os.fsync(f.fileno())
            self._journal(key, digest)
            os.replace(tmp, self._path(key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _fsync_dir(self.root)
        return digest

    def _journal(self, key: Key | JobKey, digest: str) -> None:
        """Note a write in ``journal.log``, one short line (appends are atomic), before its entry appears: whoever
        sees an entry finds its line."""
        with open(self.root / "journal.log", "a") as journal:
            journal.write(f"{time.time():.3f} {key.name} {digest}\n")

    def get(self, key: Key | JobKey) -> tuple[Any, str] | None:
        """(data, sha256) if stored and intact; None if absent. A corrupt file raises CorruptEntry."""
        path = self._path(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        envelope = _opened(raw, key.name)
        if envelope is None:
            os.replace(path, path.with_suffix(".corrupt"))
            log.error("%s: checksum mismatch; moved aside to %s, never served", key.name, path.with_suffix(".corrupt"))
            raise CorruptEntry(f"{key.name}: checksum mismatch; moved aside to be recomputed")
        return envelope["data"], envelope["sha256"]

    def _folder(self, key: Key) -> Path:
        return self.root / key.name

    def put_arrays(self, key: Key, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> str:
        """Write named arrays as one entry: a folder of ``.npy`` files and ``manifest.json`` (the meta, each
        file's sha256, and the manifest's own digest), filled under a temporary name, fsynced, then renamed
        into place whole. Returns the manifest's digest (the entry's ETag)."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.root))
        try:
            files = {}
            for name, array in arrays.items():
                path = tmp / f"{name}.npy"
                with open(path, "wb") as f:
                    np.save(f, np.ascontiguousarray(array), allow_pickle=False)
                    f.flush()
                    os.fsync(f.fileno())
                files[name] = _file_digest(path)
            data = {"meta": meta, "files": files}
            digest = _digest(data)
            with open(tmp / "manifest.json", "w") as f:
                json.dump({"key": key.name, "sha256": digest, "data": data}, f, allow_nan=False)
                f.flush()
                os.fsync(f.fileno())
            final = self._folder(key)
            if final.exists():  # an older copy (or one moved aside): replaced whole
                shutil.rmtree(final)
            self._journal(key, digest)
            os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        _fsync_dir(self.root)
        return digest

    def get_arrays(self, key: Key) -> tuple[dict[str, Any], dict[str, np.ndarray], str] | None:
        """(meta, arrays, digest) of an array entry, each array memory-mapped read-only (every process mapping
        it shares one copy in the page cache); None if absent. Every file is checked against its sha256 first:
        a mismatch moves the entry aside (``*.corrupt``) and raises `CorruptEntry`."""
        folder = self._folder(key)
        try:
            envelope = _opened((folder / "manifest.json").read_bytes(), key.name)
        except FileNotFoundError:
            return None
        try:
            data = envelope["data"]
            ok = all(_file_digest(folder / f"{name}.npy") == digest for name, digest in data["files"].items())
        except (KeyError, TypeError, FileNotFoundError):  # (no envelope: TypeError)
            ok = False
        if not ok:
            aside = folder.with_name(folder.name + ".corrupt")
            shutil.rmtree(aside, ignore_errors=True)
            os.replace(folder, aside)
            log.error("%s: checksum mismatch; moved aside to %s, never served", key.name, aside)
            raise CorruptEntry(f"{key.name}: checksum mismatch; moved aside to be recomputed")
        # plain read-only views of the maps (a `np.memmap` slice costs microseconds more, every one)
        arrays = {name: np.asarray(np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False))
                  for name in data["files"]}
        return data["meta"], arrays, envelope["sha256"]

    def has_arrays(self, key: Key) -> bool:
        return (self._folder(key) / "manifest.json").exists()

    def array_digest(self, key: Key) -> str | None:
        """The digest an array entry's manifest names, or None (cheap: its files are checked when mapped)."""
        try:
            with open(self._folder(key) / "manifest.json") as f:
                return json.load(f)["sha256"]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    @contextmanager
    def lock(self, key: Key) -> Iterator[None]:
        """Hold the exclusive lock of `key` (waiting for it) while computing its entry, so that two processes
        asked for one entry compute it once: the second waits, then reads what the first stored."""
        with locked(self._lock_path(key)):
            yield

    def busy(self, key: Key) -> bool:
        """Whether a process holds the lock of `key` (`lock`): it computes that entry now."""
        return held(self._lock_path(key))

    def _lock_path(self, key: Key) -> Path:
        return self.root / "locks" / f"{key.name}.lock"

    def info(self, key: Key | JobKey) -> EntryInfo | None:
        """The entry's size and when it was written, or None if absent."""
        try:
            status = self._path(key).stat()
        except FileNotFoundError:
            return None
        return EntryInfo(status.st_size, status.st_mtime)

    def remove(self, key: Key | JobKey) -> None:
        """Delete an entry (a reader at that moment sees it whole or absent: writes are renames)."""
        self._path(key).unlink(missing_ok=True)

    def __contains__(self, key: Key | JobKey) -> bool:
        return self._path(key).exists()

    def writes(self, key: Key | JobKey) -> int:
        """How many times `key` was written (from the journal)."""
        try:
            lines = (self.root / "journal.log").read_text().splitlines()
        except FileNotFoundError:
            return 0
        return sum(line.split(" ")[1] == key.name for line in lines if line.count(" ") == 2)

    def jobs(self) -> Iterator[JobKey]:
        """Every job record, oldest name first."""
        for path in sorted(self.root.glob("job--*.json")):
            try:
                yield JobKey(path.stem.removeprefix("job--"))
            except ValueError:
                continue

    def keys(self) -> Iterator[Key]:
        if not self.root.exists():
            return
        for path in sorted(self.root.glob("*.json")):
            if path.name.startswith(".tmp-"):
                continue
            try:
                yield Key.parse(path.stem)
            except ValueError:  # job records and stray files
                continue


def held(path: Path) -> bool:
    """Whether some process holds the lock on `path` (asked with a shared lock: two processes asking at once do
    not mistake each other for the holder; a missing file is a free lock)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def try_lock(path: Path) -> int | None:
    """An open descriptor holding an exclusive lock on `path` (created if missing), or None if another
    holder has it. The lock dies with the descriptor, so a crashed process never leaves it taken."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path`, waiting for it, and remove the file before letting go, so that
    one lock per entry leaves no files behind. A waiter woken on a file its holder removed takes the lock
    again on the file now at `path` (the usual unlink-safe pattern: the lock is the inode at the path)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            current = os.stat(path).st_ino
        except FileNotFoundError:
            current = None
        except BaseException:
            os.close(fd)
            raise
        if current == os.fstat(fd).st_ino:
            break
        os.close(fd)
    try:
        yield
    finally:
        path.unlink(missing_ok=True)  # still holding it: a newcomer creates a fresh file
        os.close(fd)
