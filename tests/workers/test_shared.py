"""workers/shared.py: the store `ZOMBIE_ODDS_STORE` names, read on every call: a directory (./var/store by default),
or a PostgreSQL database by its URL, one per database and local directory in a process."""

from __future__ import annotations

from pathlib import Path

import pytest

from workers.pgstore import PostgresStore
from workers.shared import store
from workers.store import Key, Store

KEY = Key("table", "original", "before-draw", 3)


def test_the_default_store_is_the_directory_var_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ZOMBIE_ODDS_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    shelf = store()
    assert type(shelf) is Store and shelf.root == Path("var/store")
    assert shelf.root.resolve() == (tmp_path / "var" / "store").resolve()


def test_the_store_is_read_from_the_environment_on_every_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A test or a command that points the store elsewhere is followed at once: an entry put through one directory
    is not in the next."""
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path / "one"))
    one = store()
    one.put(KEY, {"x": 1})
    assert store().get(KEY)[0] == {"x": 1} and one.root == tmp_path / "one"
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path / "two"))
    assert type(store()) is Store and store().root == tmp_path / "two" and store().get(KEY) is None


def test_the_store_is_the_database_its_url_names(database, tmp_path, monkeypatch):
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", database)
    monkeypatch.setenv("ZOMBIE_ODDS_CACHE", str(tmp_path))
    shelf = store()
    try:
        assert isinstance(shelf, PostgresStore) and shelf is store() and shelf.root == tmp_path
        assert str(shelf) == database.split("@")[-1]  # (never a password)
        assert shelf.get(KEY) is None
    finally:
        shelf.close()


def test_a_postgres_url_by_either_scheme_is_a_database(database: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``postgres://`` is ``postgresql://``'s other name; another local directory is another store of one database,
    and both see what either writes."""
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", database.replace("postgresql://", "postgres://", 1))
    monkeypatch.setenv("ZOMBIE_ODDS_CACHE", str(tmp_path / "a"))
    first = store()
    monkeypatch.setenv("ZOMBIE_ODDS_CACHE", str(tmp_path / "b"))
    second = store()
    try:
        assert isinstance(first, PostgresStore) and isinstance(second, PostgresStore) and first is not second
        first.put(KEY, {"p": 0.5})
        assert second.get(KEY)[0] == {"p": 0.5}
    finally:
        first.close()
        second.close()
