"""workers/store.py: the durable store in a directory, atomic writes, checksums verified on read, corrupt files never
served."""

import json
import os

import pytest

from workers.store import CorruptEntry, Key, Store

KEY = Key("table", "original", "before-draw", 2)


def test_round_trip_and_listing(tmp_path):
    store = Store(tmp_path / "tables")
    assert store.get(KEY) is None and list(store.keys()) == []
    digest = store.put(KEY, {"p_first_player_wins": 0.4667, "win_probability": [[0.5]]})
    data, etag = store.get(KEY)
    assert data["p_first_player_wins"] == 0.4667 and etag == digest
    assert list(store.keys()) == [KEY] and KEY in store
    # a new store on the same directory (a restarted process) sees the same entry
    assert Store(tmp_path / "tables").get(KEY) == (data, digest)


def test_a_corrupted_file_is_detected_and_moved_aside(tmp_path):
    store = Store(tmp_path)
    store.put(KEY, {"x": [1, 2, 3]})
    path = tmp_path / f"{KEY.name}.json"
    envelope = json.loads(path.read_text())
    envelope["data"]["x"][0] = 9  # bit rot
    path.write_text(json.dumps(envelope))
    with pytest.raises(CorruptEntry):
        store.get(KEY)
    assert store.get(KEY) is None  # gone from the served set, kept aside for inspection
    assert (tmp_path / f"{KEY.name}.corrupt").exists()


def test_a_truncated_file_is_corrupt(tmp_path):
    store = Store(tmp_path)
    store.put(KEY, {"x": list(range(1000))})
    path = tmp_path / f"{KEY.name}.json"
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(CorruptEntry):
        store.get(KEY)


def test_a_failed_write_leaves_the_old_entry(tmp_path):
    store = Store(tmp_path)
    store.put(KEY, {"v": 1})
    with pytest.raises(ValueError):
        store.put(KEY, {"v": float("nan")})  # not JSON: refused before anything is replaced
    assert store.get(KEY)[0] == {"v": 1}
    assert [p for p in os.listdir(tmp_path) if p.startswith(".tmp-")] == []


@pytest.mark.parametrize("bad", [("../etc", "original", "v", 2), ("table", "a/b", "v", 2), ("table", "x", "", 2),
                                 ("table", "x", "v", 0), ("table", "x", "v", 99)])
def test_keys_cannot_escape_the_store(bad):
    with pytest.raises(ValueError):
        Key(*bad)


def test_one_holder_of_an_entry_lock_at_a_time_and_no_file_left(tmp_path):
    """`Store.lock` removes its lock file before letting go; a waiter woken on the removed file must take the
    lock again on the new one, or two holders would overlap (`inside` would reach 2)."""
    import threading
    import time

    store, inside, most = Store(tmp_path), [0], [0]

    def hold() -> None:
        for _ in range(30):
            with store.lock(KEY):
                inside[0] += 1
                most[0] = max(most[0], inside[0])
                time.sleep(0.001)
                inside[0] -= 1

    threads = [threading.Thread(target=hold) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == [1] and list((tmp_path / "locks").iterdir()) == []


ARRAYS = Key("solution", "original", "before-draw", 1)


def test_arrays_round_trip_memory_mapped_and_read_only(tmp_path):
    import numpy as np

    store = Store(tmp_path)
    assert store.get_arrays(ARRAYS) is None and not store.has_arrays(ARRAYS)
    digest = store.put_arrays(ARRAYS, {"top": 3}, {"a": np.arange(10), "b": np.linspace(0, 1, 5)})
    meta, arrays, etag = Store(tmp_path).get_arrays(ARRAYS)
    assert meta == {"top": 3} and etag == digest
    assert isinstance(arrays["a"].base, np.memmap) and arrays["a"].tolist() == list(range(10))
    with pytest.raises(ValueError):
        arrays["b"][0] = 7  # mapped read-only: no process can change what the others read
    assert store.writes(ARRAYS) == 1 and list(store.keys()) == []  # (array entries are not JSON entries)


@pytest.mark.parametrize("damage", ["flip", "truncate", "manifest", "missing"])
def test_a_damaged_array_entry_is_never_mapped(tmp_path, damage):
    import numpy as np

    store = Store(tmp_path)
    store.put_arrays(ARRAYS, {"top": 3}, {"a": np.arange(1000)})
    folder = tmp_path / ARRAYS.name
    target = folder / "a.npy"
    raw = target.read_bytes()
    if damage == "flip":
        target.write_bytes(raw[:-8] + bytes([raw[-8] ^ 1]) + raw[-7:])
    elif damage == "truncate":
        target.write_bytes(raw[: len(raw) // 2])
    elif damage == "manifest":
        (folder / "manifest.json").write_text((folder / "manifest.json").read_text()[:-5])
    else:
        target.unlink()
    with pytest.raises(CorruptEntry):
        store.get_arrays(ARRAYS)
    assert store.get_arrays(ARRAYS) is None  # moved aside, to be built again
    assert (tmp_path / f"{ARRAYS.name}.corrupt").is_dir()


def test_an_entry_is_busy_while_its_lock_is_held(tmp_path):
    store, key = Store(tmp_path), Key("answer", "original", "before-draw", 1, tag="a" * 40)
    assert not store.busy(key)
    with store.lock(key):
        assert store.busy(key)
    assert not store.busy(key)


def test_whoever_sees_an_entry_finds_its_journal_line(tmp_path, monkeypatch):
    """The line is written before the entry appears (its rename into place): a reader that sees the entry (a job's
    status) and then counts its writes finds this one."""
    import numpy as np

    store = Store(tmp_path)
    lines_at_rename = []

    def replace(src, dst, replace=os.replace):
        lines_at_rename.append(store.writes(KEY) + store.writes(ARRAYS))
        replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    store.put(KEY, {"x": 1})
    store.put_arrays(ARRAYS, {"top": 1}, {"values": np.arange(3.0)})
    assert lines_at_rename == [1, 2] and store.writes(KEY) == store.writes(ARRAYS) == 1
