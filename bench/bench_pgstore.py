"""The PostgreSQL store with solutions: writing each into the database, a new machine's first read (fetch, check,
map) and its later reads (a checked local copy, mapped).

    PYTHONPATH=. .venv/bin/python bench/bench_pgstore.py SOLUTIONS [POSTGRES]

SOLUTIONS is a directory store holding built solutions (``zombie-odds solutions build``); POSTGRES the server's
maintenance database (default ``postgresql://postgres@127.0.0.1:5432/postgres``), on which a scratch database is made
and dropped. Prints a Markdown table row per solution.
"""

from __future__ import annotations

import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

from workers.pgstore import PostgresStore
from workers.store import Key, Store


def main(solutions: Path, postgres: str) -> None:
    name = f"zombie_odds_bench_{uuid.uuid4().hex}"
    with psycopg.connect(postgres, autocommit=True) as admin:
        admin.execute(f"create database {name}")
    url = postgres.rsplit("/", 1)[0] + f"/{name}"
    source = Store(solutions)
    print("| solution | MiB | write s | first read s | later read s |")
    print("|---|---|---|---|---|")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for folder in sorted(p for p in solutions.iterdir() if (p / "manifest.json").exists()):
                key = Key.parse(folder.name)
                meta, arrays, _ = source.get_arrays(key)
                size = sum(a.nbytes for a in arrays.values()) / 2**20
                with PostgresStore(url, Path(tmp) / "builder") as builder:
                    start = time.perf_counter()
                    builder.put_arrays(key, meta, arrays)
                    write = time.perf_counter() - start
                with PostgresStore(url, Path(tmp) / f"server-{folder.name}") as server:
                    start = time.perf_counter()
                    server.get_arrays(key)
                    first = time.perf_counter() - start
                    start = time.perf_counter()
                    server.get_arrays(key)
                    later = time.perf_counter() - start
                print(f"| {folder.name} | {size:.0f} | {write:.1f} | {first:.1f} | {later:.2f} |", flush=True)
    finally:
        with psycopg.connect(postgres, autocommit=True) as admin:
            admin.execute(f"drop database {name} with (force)")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "postgresql://postgres@127.0.0.1:5432/postgres")
