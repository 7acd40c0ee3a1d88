"""The soak of issue #27: random positions of every stored solution under load, a hostile client mixed in.

Usage: python bench/soak.py [--seconds 600] [--connections 32] [--workers 2] [--solutions DIR]

`zombie-odds serve` (its defaults but for the rate limit, off: the load comes from loopback, which is not limited
anyway) answers, for `--seconds`:

* wrk with `--connections` connections asking /v1/odds of 40,000 distinct positions drawn by simulated play
  across every stored solution (as bench_http.py does; built into DIR first if missing);
* a hostile client, one request at a time: bodies over the 16 KiB limit (with Content-Length and chunked),
  misspelt parameters, impossible positions, far targets, a game log of 256 KiB, a slowly sent body;
* a prober asking /healthz every 0.5 s;
* a sampler reading every worker's RSS every 10 s.

It prints wrk's figures, the hostile client's statuses, /healthz's p50/p99/max, and each worker's RSS range;
it exits non-zero on any 5xx or socket error.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.simulate import random_position  # noqa: E402
from bench.bench_http import LUA, memory, run_wrk, url, wait_for  # noqa: E402
from workers.solutions import combinations  # noqa: E402

PORT = 8775
HOSTILE = [
    ("POST", "/v1/odds", json.dumps({"footprints": ["green"] * 5000}), {}),  # over 16 KiB, with Content-Length
    ("POST", "/v1/odds", "CHUNKED", {}),  # over 16 KiB, chunked
    ("GET", "/v1/odds?footprints=green,red&brains=green&shotgun=red", None, {}),  # a typo
    ("GET", "/v1/odds?footprints=green,red,red,red&brains=green", None, {}),  # four dice in hand
    ("GET", "/v1/odds?footprints=green,red&brains=green&objective=reach:40&school_bus=true", None, {}),  # far
    ("GET", "/v1/odds?mode=direct-to-video-sequel&school_bus=true", None, {}),  # no stored solution
    ("GET", "/v1/odds?banked=1_0&footprints=green", None, {}),  # lenient number
    ("POST", "/v1/review", json.dumps({"game": [{"player": "x" * 100, "rolls": []}] * 2000}), {}),  # a big log
    ("GET", "/v1/bust.txt?footprints=green,red&brains=green&shotguns=red&_=1", None, {}),
]


def hostile(stop: threading.Event, statuses: Counter) -> None:
    """One hostile request after another (and, every tenth, a body sent slowly), counting the statuses."""
    k = 0
    while not stop.is_set():
        method, path, body, headers = HOSTILE[k % len(HOSTILE)]
        k += 1
        conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
        try:
            if body == "CHUNKED":
                conn.putrequest(method, path)
                conn.putheader("Content-Type", "application/json")
                conn.putheader("Transfer-Encoding", "chunked")
                conn.endheaders()
                chunk = b"[" + b"1," * 4000 + b"1]"
                for _ in range(4):
                    conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                conn.send(b"0\r\n\r\n")
            elif k % 10 == 0:  # slowloris-like: the headers, then the body a byte a tenth of a second
                data = b'{"footprints": ["green"]}'
                conn.putrequest("POST", "/v1/odds")
                conn.putheader("Content-Type", "application/json")
                conn.putheader("Content-Length", str(len(data)))
                conn.endheaders()
                for byte in data:
                    conn.send(bytes([byte]))
                    time.sleep(0.1)
            else:
                conn.request(method, path, body=body, headers={"Content-Type": "application/json", **headers})
            statuses[conn.getresponse().status] += 1
        except OSError as e:
            statuses[f"socket: {type(e).__name__}"] += 1
        finally:
            conn.close()


def probe(stop: threading.Event, times: list[float], failures: Counter) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
        try:
            conn.request("GET", "/healthz")
            status = conn.getresponse().status
            times.append(time.perf_counter() - start)
            if status != 200:
                failures[status] += 1
        except OSError as e:
            failures[type(e).__name__] += 1
        finally:
            conn.close()
        stop.wait(0.5)


def sample(stop: threading.Event, master: int, rss: dict[int, list[float]]) -> None:
    while not stop.wait(10):
        for worker in memory(master):
            rss.setdefault(worker["pid"], []).append(worker["rss"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--solutions", default=None)
    args = parser.parse_args()
    solutions = args.solutions or tempfile.mkdtemp(prefix="solutions-")
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ZOMBIE_ODDS_SOLUTIONS": solutions,
           "ZOMBIE_ODDS_RATELIMIT_ENABLED": "false", "ZOMBIE_ODDS_STORE": tempfile.mkdtemp(prefix="store-")}
    env.pop("REDIS_URL", None)
    subprocess.run([str(bin_dir / "zombie-odds"), "solutions", "build", "--quiet"], env=env, check=True)
    rng = random.Random(27)
    paths = list(dict.fromkeys(url(random_position(m, rng, recycle=v, school_bus=bus))
                               for m, v, bus in (rng.choice(combinations()) for _ in range(40_000))))
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as listing:
        listing.write("\n".join(paths) + "\n")
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(LUA % listing.name)
    server = subprocess.Popen([str(bin_dir / "zombie-odds"), "serve", "--port", str(PORT), "--workers",
                               str(args.workers)], env=env, cwd=ROOT)
    stop = threading.Event()
    statuses: Counter = Counter()
    health: list[float] = []
    failures: Counter = Counter()
    rss: dict[int, list[float]] = {}
    try:
        wait_for(f"http://127.0.0.1:{PORT}/healthz", 180)
        threads = [threading.Thread(target=hostile, args=(stop, statuses)),
                   threading.Thread(target=probe, args=(stop, health, failures)),
                   threading.Thread(target=sample, args=(stop, server.pid, rss))]
        for t in threads:
            t.start()
        load = run_wrk(f"http://127.0.0.1:{PORT}", args.seconds, args.connections, script.name)
        stop.set()
        for t in threads:
            t.join()
    finally:
        stop.set()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    print(f"{len(paths)} distinct positions over {len(combinations())} solutions, {args.connections} connections, "
          f"{args.workers} workers, {args.seconds} s")
    print(f"| /v1/odds load | requests {load['requests']} | {load['rps']:.0f}/s | p50 {load['p50']:.1f} ms | "
          f"p99 {load['p99']:.1f} ms | errors {load['errors']}: {load['non2xx']} not 2xx, {load['socket']} socket "
          "errors or wrk timeouts (10 s) |")
    print(f"hostile client: {dict(sorted(statuses.items(), key=str))}")
    ms = np.array(health) * 1e3
    print(f"/healthz: {len(ms)} probes, p50 {np.percentile(ms, 50):.1f} ms, p99 {np.percentile(ms, 99):.1f} ms, "
          f"max {ms.max():.1f} ms, failures {dict(failures)}")
    for pid, series in rss.items():
        print(f"worker {pid}: RSS {min(series):.0f}-{max(series):.0f} MiB over {len(series)} samples "
              f"(last {series[-1]:.0f})")
    fives = sum(n for s, n in statuses.items() if isinstance(s, int) and s >= 500)
    sockets = sum(n for s, n in statuses.items() if not isinstance(s, int))
    if load["errors"] or fives or sockets or failures:
        sys.exit("errors: see above")


if __name__ == "__main__":
    main()
