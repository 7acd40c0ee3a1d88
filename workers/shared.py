"""The store a process shares with the API and every worker, named by `ZOMBIE_ODDS_STORE`: a directory
(workers/store.py, the embedded default ./var/store) or a PostgreSQL database by its URL (``postgresql://...``:
workers/pgstore.py), which machines that share no directory share; such a process keeps the verified local copies it
maps in `ZOMBIE_ODDS_CACHE` (default ./var/cache)."""

from __future__ import annotations

import functools
import os

from .store import Store

__all__ = ["store"]


def store() -> Store:
    """The store `ZOMBIE_ODDS_STORE` names (read on every call: a test or a command may point it elsewhere)."""
    where = os.environ.get("ZOMBIE_ODDS_STORE", "var/store")
    if where.startswith(("postgresql://", "postgres://")):
        return _database(where, os.environ.get("ZOMBIE_ODDS_CACHE", "var/cache"))
    return Store(where)


@functools.cache
def _database(url: str, cache: str) -> Store:
    """One `PostgresStore` per database and local directory in a process (each keeps its connections)."""
    from .pgstore import PostgresStore  # (psycopg is imported only where a database is named)

    return PostgresStore(url, cache)
