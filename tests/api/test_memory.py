"""api/memory.py: a worker's own memory, and freed memory given back to the system."""

from __future__ import annotations

import threading
from pathlib import Path

from api.memory import give_back, private_mb, return_freed_memory


def test_a_workers_own_memory_leaves_out_the_mapped_solutions(tmp_path: Path) -> None:
    """Recycling counts a worker's own memory: reading 64 MB of a mapped file (as a stored solution is read) moves
    it by little, and 64 MB of fresh private pages written move it by 64."""
    import mmap

    import numpy as np

    path = tmp_path / "mapped.npy"
    np.save(path, np.ones(8 * 2**20))  # 64 MB
    before = private_mb()
    mapped = np.load(path, mmap_mode="r")
    assert float(mapped.sum()) == 8 * 2**20  # every page read
    assert private_mb() - before < 16
    own = mmap.mmap(-1, 64 * 2**20, flags=mmap.MAP_PRIVATE)  # new pages (an allocator may reuse freed ones)
    for at in range(0, len(own), mmap.PAGESIZE):
        own[at] = 1
    assert private_mb() - before > 48
    own.close()


def test_freed_memory_a_threads_arena_holds_is_given_back() -> None:
    """Blocks freed in the middle of a thread's arena stay the process's until the heap is trimmed (`give_back`),
    whatever the thresholds: 190 MB of 1 KB blocks, one in 64 kept, is over 100 MB given back."""
    return_freed_memory()
    kept: list[bytes] = []

    def churn() -> None:
        blocks = [bytes(1000) for _ in range(200_000)]
        kept.extend(blocks[::64])

    thread = threading.Thread(target=churn)
    thread.start()
    thread.join()
    before = private_mb()
    assert give_back()
    assert before - private_mb() > 100
    assert len(kept) == 3125
