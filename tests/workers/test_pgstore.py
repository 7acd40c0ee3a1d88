"""workers/pgstore.py: the store in a real PostgreSQL database: what the directory store promises, across "machines"
(stores with local directories of their own), damage detected, locks that die with their holder."""

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import numpy as np
import psycopg
import pytest

from workers.pgstore import PART, PostgresStore
from workers.store import CorruptEntry, JobKey, Key

KEY = Key("table", "original", "before-draw", 3)
ARRAYS = Key("solution", "original", "before-draw", 1, tag="bus")


@pytest.fixture
def machine(database, tmp_path) -> Iterator[Callable[[str], PostgresStore]]:
    """`machine(name)`: the database's store as seen from a machine with a local directory of its own."""
    opened: list[PostgresStore] = []

    def open_on(name: str) -> PostgresStore:
        opened.append(PostgresStore(database, tmp_path / name))
        return opened[-1]

    yield open_on
    for shelf in opened:
        shelf.close()


def test_entries_round_trip_listed_and_counted(machine):
    one, other = machine("one"), machine("two")  # two machines, which share only the database
    assert one.get(KEY) is None and KEY not in one and list(one.keys()) == [] and one.info(KEY) is None
    digest = one.put(KEY, {"p_seat_wins": [0.3, 0.33, 0.37]})
    one.put(JobKey("abc"), {"state": "running"})
    assert other.get(KEY) == ({"p_seat_wins": [0.3, 0.33, 0.37]}, digest)
    assert list(other.keys()) == [KEY] and list(other.jobs()) == [JobKey("abc")] and KEY in other
    assert other.info(KEY).size > 30 and abs(other.info(KEY).written - time.time()) < 60
    other.put(KEY, {"p_seat_wins": [1, 0, 0]})
    assert one.get(KEY)[0] == {"p_seat_wins": [1, 0, 0]} and one.writes(KEY) == 2
    one.remove(KEY)
    assert other.get(KEY) is None and KEY not in other


def test_a_damaged_row_is_set_aside_never_served(machine, database):
    shelf = machine("here")
    shelf.put(KEY, {"x": [1, 2, 3]})
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("update zombie_odds_entries set envelope = "
                     "convert_to(replace(convert_from(envelope, 'UTF8'), '1,2', '9,2'), 'UTF8')")
    with pytest.raises(CorruptEntry):
        shelf.get(KEY)
    assert shelf.get(KEY) is None and list(shelf.keys()) == []
    with psycopg.connect(database) as conn:
        assert conn.execute("select name from zombie_odds_entries").fetchall() == [(f"{KEY.name}.corrupt",)]


def test_arrays_are_mapped_from_a_verified_local_copy(machine, tmp_path):
    builder, server = machine("builder"), machine("server")
    big = np.arange(PART // 8 + 1000, dtype=np.float64)  # more than one part
    assert server.get_arrays(ARRAYS) is None and not server.has_arrays(ARRAYS)
    digest = builder.put_arrays(ARRAYS, {"top": 3}, {"values": big, "small": np.arange(5, dtype=np.int8)})
    assert server.has_arrays(ARRAYS) and server.array_digest(ARRAYS) == digest
    meta, arrays, etag = server.get_arrays(ARRAYS)
    assert meta == {"top": 3} and etag == digest and np.array_equal(arrays["values"], big)
    assert isinstance(arrays["values"].base, np.memmap) and not arrays["values"].flags.writeable
    copy = tmp_path / "server" / ARRAYS.name / "values.npy"
    assert copy.exists()  # the server's own copy, which its processes map

    raw = copy.read_bytes()
    copy.write_bytes(raw[:-8] + bytes([raw[-8] ^ 1]) + raw[-7:])  # the local copy rots: fetched again
    assert np.array_equal(server.get_arrays(ARRAYS)[1]["values"], big)
    assert builder.writes(ARRAYS) == 1


def test_a_damaged_part_in_the_database_is_never_mapped(machine, database, tmp_path):
    builder, server = machine("builder"), machine("server")
    builder.put_arrays(ARRAYS, {"top": 3}, {"values": np.arange(1000.0)})
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("update zombie_odds_parts set bytes = overlay(bytes placing '\\x01'::bytea from 200)")
    with pytest.raises(CorruptEntry):
        server.get_arrays(ARRAYS)
    assert not server.has_arrays(ARRAYS) and server.get_arrays(ARRAYS) is None  # set aside, to be built again
    assert not (tmp_path / "server" / ARRAYS.name).exists()


HOLD = """
import sys, time
from workers.pgstore import PostgresStore
from workers.store import Key
with PostgresStore(sys.argv[1], sys.argv[2]).lock(Key("table", "original", "before-draw", 3)):
    print("held", flush=True)
    time.sleep(600)
"""


def test_a_lock_is_held_across_processes_and_dies_with_its_holder(machine, database, tmp_path):
    shelf = machine("here")
    assert not shelf.busy(KEY)
    with subprocess.Popen([sys.executable, "-c", HOLD, database, str(tmp_path / "holder")],
                          stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout.readline() == "held\n"
            assert shelf.busy(KEY) and shelf.busy(KEY)  # (asking does not take it)
            holder.send_signal(signal.SIGKILL)
            holder.wait(timeout=10)
            deadline = time.monotonic() + 10
            while shelf.busy(KEY) and time.monotonic() < deadline:  # the server ends the dead session
                time.sleep(0.05)
            with shelf.lock(KEY):
                assert shelf.busy(KEY)
            assert not shelf.busy(KEY)
        finally:
            holder.kill()  # (at once, whatever failed)
