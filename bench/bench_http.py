"""HTTP load: /v1/odds under gunicorn on loopback beside a bare Flask endpoint on the same settings.

Usage: python bench/bench_http.py [--seconds 30] [--connections 64] [--workers 2]

Needs `wrk` (Debian package `wrk`). Both servers run gunicorn with the same worker count and bind only
to 127.0.0.1; the load is bounded by --seconds and stops by itself. The odds load cycles through
realistic mid-turn positions (GET with query parameters, some CSV and plain text), after the server
has warmed the base game (`zombie-odds serve` does that before it accepts requests).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATHS = [
    "/v1/odds?footprints=green,red&brains=green&shotguns=red",
    "/v1/odds?footprints=&brains=&shotguns=",
    "/v1/odds?footprints=yellow&brains=green,green,yellow&shotguns=red,red",
    "/v1/odds?footprints=red,red&brains=green,green,green,yellow&shotguns=yellow",
    "/v1/odds?footprints=green,yellow,red&brains=green,green&shotguns=red&objective=reach:5",
    "/v1/odds?footprints=green&brains=green,yellow,yellow&shotguns=red&format=csv",
    "/v1/odds.txt?footprints=green,red&brains=green&shotguns=red&field=bust",
    "/v1/odds.txt?footprints=yellow,yellow&brains=green,green,green&shotguns=red,yellow&field=action",
]
LUA = """
paths = {%s}
i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i %% #paths) + 1])
end
"""


def wait_for(url: str, seconds: float) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"server at {url} did not come up in {seconds} s")


def run_wrk(url: str, seconds: int, connections: int, script: str | None) -> dict[str, float]:
    cmd = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "10s"]
    if script:
        cmd += ["-s", script]
    out = subprocess.run(cmd + [url], capture_output=True, text=True, check=True).stdout
    def ms(label: str) -> float:
        m = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)", out, re.M)
        value, unit = float(m[1]), m[2]
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value
    errors = sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1]), "p50": ms("50"), "p99": ms("99"),
            "errors": errors + (int(non2xx[1]) if non2xx else 0), "raw": out}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk not found: apt-get install wrk")
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    servers = [
        subprocess.Popen([str(bin_dir / "zombie-odds"), "serve", "--port", "8765", "--workers", str(args.workers)],
                         env=env, cwd=ROOT),
        subprocess.Popen([str(bin_dir / "gunicorn"), "-w", str(args.workers), "-b", "127.0.0.1:8766", "bench.bare:app"],
                         env=env, cwd=ROOT),
    ]
    try:
        wait_for("http://127.0.0.1:8765/healthz", 180)
        wait_for("http://127.0.0.1:8766/bare", 30)
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
            f.write(LUA % ", ".join(f'"{p}"' for p in PATHS))
        for p in PATHS:  # every path answered once before the clock starts (its exact values cached)
            urllib.request.urlopen("http://127.0.0.1:8765" + p, timeout=120).read()
        odds = run_wrk("http://127.0.0.1:8765", args.seconds, args.connections, f.name)
        bare = run_wrk("http://127.0.0.1:8766/bare", args.seconds, args.connections, None)
        for name, r in (("/v1/odds mix", odds), ("bare Flask", bare)):
            print(f"{name}: {r['rps']:.0f} req/s p50={r['p50']:.2f} ms p99={r['p99']:.2f} ms errors={r['errors']}")
        print(f"throughput ratio odds/bare = {odds['rps'] / bare['rps']:.2f}")
    finally:
        for s in servers:
            s.send_signal(signal.SIGTERM)
        for s in servers:
            s.wait(timeout=30)


if __name__ == "__main__":
    main()
