"""The durable store for computed tables and reports: a local directory, atomic and checksummed.

A crash, a restart of the API, the workers or Redis loses nothing and never exposes half a file:

- each entry is one JSON file written to a temporary name in the same directory, flushed and fsynced,
  then renamed over the final name (rename is atomic on POSIX), and the directory is fsynced;
- the file is an envelope ``{"key": ..., "sha256": ..., "data": ...}`` where ``sha256`` is the digest of
  the canonical JSON of ``data``; a read recomputes it, and a file that does not match (bit rot, a
  hand edit, a truncated copy) is moved aside to ``*.corrupt`` and reported as missing, so that it is
  recomputed rather than served.

Keys are versioned (kind, mode, rules variant, player count, engine version), so a new engine never
reads an old engine's table.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Key", "Store", "CorruptEntry", "ENGINE_VERSION"]

# Bump when a change to analysis/ changes any number a stored table holds.
ENGINE_VERSION = "1"

_SAFE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


class CorruptEntry(Exception):
    """A stored file failed its checksum; it was moved aside and must be recomputed."""


@dataclass(frozen=True)
class Key:
    """What a stored entry is: e.g. Key("table", "original", "before-draw", 2)."""

    kind: str
    mode: str
    variant: str
    players: int
    engine: str = ENGINE_VERSION

    def __post_init__(self) -> None:
        for part in (self.kind, self.mode, self.variant, self.engine):
            if not _SAFE.match(part):  # never a path component that could escape the store
                raise ValueError(f"unsafe key component {part!r}")
        if not isinstance(self.players, int) or not 1 <= self.players <= 8:
            raise ValueError("players must be 1..8")

    @property
    def name(self) -> str:
        return f"{self.kind}--{self.mode}--{self.variant}--p{self.players}--v{self.engine}"

    @classmethod
    def parse(cls, name: str) -> Key:
        kind, mode, variant, players, engine = name.split("--")
        return cls(kind, mode, variant, int(players.removeprefix("p")), engine.removeprefix("v"))


def _digest(data: Any) -> str:
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class Store:
    """Entries under one directory (created on first use)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def _path(self, key: Key) -> Path:
        return self.root / f"{key.name}.json"

    def put(self, key: Key, data: Any) -> str:
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
            os.replace(tmp, self._path(key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        dir_fd = os.open(self.root, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return digest

    def get(self, key: Key) -> tuple[Any, str] | None:
        """(data, sha256) if stored and intact; None if absent. A corrupt file raises CorruptEntry."""
        path = self._path(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            envelope = json.loads(raw)
            ok = envelope["key"] == key.name and _digest(envelope["data"]) == envelope["sha256"]
        except (ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            os.replace(path, path.with_suffix(".corrupt"))
            raise CorruptEntry(f"{key.name}: checksum mismatch; moved aside to be recomputed")
        return envelope["data"], envelope["sha256"]

    def __contains__(self, key: Key) -> bool:
        return self._path(key).exists()

    def keys(self) -> Iterator[Key]:
        if not self.root.exists():
            return
        for path in sorted(self.root.glob("*.json")):
            if path.name.startswith(".tmp-"):
                continue
            try:
                yield Key.parse(path.stem)
            except ValueError:
                continue
