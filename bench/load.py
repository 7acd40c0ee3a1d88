"""The load test of issue #6: gunicorn on loopback under wrk, a realistic mix, beside a bare Flask endpoint.

Usage: python bench/load.py [--seconds 60] [--connections 64] [--workers 2] [--redis redis://127.0.0.1:6379/12]

Three runs of `--seconds` each, with `--connections` connections (wrk, 2 threads), all on gunicorn
with `--workers` workers on 127.0.0.1 (`zombie-odds serve`: threaded workers, api.serving):

1. the mix, rate limits on and counted in Redis (shared by the workers, as in production), loopback
   limited too (`RATELIMIT_EXEMPT_LOOPBACK=false`: loopback clients are not limited by default), with
   a limit far above the load (it measures the limiter's cost; it is not a test of the limit itself:
   tests/api/test_limits.py is);
2. the same mix on the server as shipped (no rate-limit setting at all): wrk runs on the server's
   machine, whose clients are not limited by default, so every request is answered (it measures
   answers, not 429s); the limiter's overhead is the difference with run 1;
3. a bare Flask endpoint (bench/bare.py, gunicorn's sync workers), the baseline.

The mix: odds of mid-turn positions by GET (JSON), POST (JSON), CSV and plain text for spreadsheets
(`/v1/odds.txt`, `/v1/bust.txt`), and the base game's full win-probability table, mostly revalidated
with `If-None-Match` (a 304) as a client that already holds it does, sometimes fetched whole. The
table is solved in this process first and put in a temporary store the server reads. Every request
is answered once before the clock starts (its exact values cached). An error is a socket error or
any status other than 200 and 304; the script exits non-zero if there is one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from bench_http import wait_for

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

POSITIONS = [
    "footprints=green,red&brains=green&shotguns=red",
    "footprints=yellow&brains=green,green,yellow&shotguns=red,red",
    "footprints=red,red&brains=green,green,green,yellow&shotguns=yellow",
    "footprints=green,yellow,red&brains=green,green&shotguns=red",
    "footprints=green&brains=green,yellow,yellow&shotguns=red",
    "footprints=yellow,yellow&brains=green,green,green&shotguns=red,yellow",
]
BODIES = [
    {"footprints": ["green", "red"], "brains": ["green"], "shotguns": ["red"]},
    {"footprints": ["yellow"], "brains": ["green", "green", "yellow"], "shotguns": ["red", "red"],
     "objective": "reach:5"},
    {"footprints": ["red", "red"], "brains": ["green", "green", "green", "yellow"], "shotguns": ["yellow"]},
]
TABLE = "/v1/tables/original"

LUA = """
requests = {%s}
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) statuses = {}; i = math.random(#requests) end
function request()
  i = i %% #requests + 1
  local r = requests[i]
  return wrk.format(r[1], r[2], r[3], r[4])
end
function response(status, headers, body) statuses[status] = (statuses[status] or 0) + 1 end
function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("statuses")) do total[k] = (total[k] or 0) + v end
  end
  for k, v in pairs(total) do io.write(string.format("status %%d %%d\\n", k, v)) end
end
"""


def mix(etag: str) -> list[tuple[str, str, dict[str, str], str | None]]:
    """(method, path, headers, body): 20 requests in the proportions of a day's traffic."""
    json_header = {"Content-Type": "application/json"}
    out = [("GET", f"/v1/odds?{p}", {}, None) for p in POSITIONS]  # 6: the calculator and rules sites
    out += [("GET", f"/v1/odds?{p}", {}, None) for p in POSITIONS[:2]]  # 2
    out += [("POST", "/v1/odds", json_header, json.dumps(b)) for b in BODIES]  # 3: programs
    out += [("GET", f"/v1/odds?{p}&format=csv", {}, None) for p in POSITIONS[4:]]  # 2: IMPORTDATA
    out += [("GET", f"/v1/odds.txt?{POSITIONS[0]}&field=bust", {}, None),  # 3: WEBSERVICE
            ("GET", f"/v1/odds.txt?{POSITIONS[3]}&field=action", {}, None),
            ("GET", f"/v1/bust.txt?{POSITIONS[1]}", {}, None)]
    out += [("GET", TABLE, {"If-None-Match": etag}, None)] * 3  # 3: a client holding the table revalidates
    out += [("GET", TABLE, {}, None)]  # 1: and one fetches it whole
    return out


def lua(requests: list[tuple[str, str, dict[str, str], str | None]]) -> str:
    def string(s: str | None) -> str:
        return "nil" if s is None else json.dumps(s)  # a JSON string is a valid Lua string literal here

    def headers(h: dict[str, str]) -> str:
        return "{" + ", ".join(f"[{string(k)}] = {string(v)}" for k, v in h.items()) + "}"

    return LUA % ", ".join(f"{{{string(m)}, {string(p)}, {headers(h)}, {string(b)}}}" for m, p, h, b in requests)


def wrk(url: str, seconds: int, connections: int, script: str | None) -> dict:
    cmd = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "10s"]
    out = subprocess.run(cmd + (["-s", script] if script else []) + [url], capture_output=True, text=True,
                         check=True).stdout

    def ms(label: str) -> float:
        m = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\b", out, re.M)
        return float(m[1]) * {"us": 0.001, "ms": 1, "s": 1000}[m[2]]

    statuses = {int(k): int(v) for k, v in re.findall(r"^status (\d+) (\d+)$", out, re.M)}
    socket_errors = sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    if not statuses:  # no Lua script: wrk's own count of non-2xx/3xx
        non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        statuses = {0: int(non2xx[1])} if non2xx else {}
    errors = socket_errors + sum(n for s, n in statuses.items() if s not in (200, 304))
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1]), "p50": ms("50"), "p99": ms("99"),
            "errors": errors, "statuses": statuses, "requests": int(re.search(r"(\d+) requests in", out)[1])}


def serve(port: int, workers: int, env: dict[str, str]) -> subprocess.Popen:
    bin_dir = Path(sys.executable).parent
    return subprocess.Popen([str(bin_dir / "zombie-odds"), "serve", "--port", str(port), "--workers", str(workers)],
                            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop(server: subprocess.Popen) -> None:
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)


def limiter_cost(redis_url: str, rounds: int = 7, n: int = 500) -> tuple[float, float]:
    """Microseconds per request of a cached answer in this process, rate limits on (Redis) and off:
    the runs alternate, and the median of each is kept, so that other load on the machine cancels out."""
    import time

    from api import create_app

    on = create_app({"RATELIMIT_STORAGE_URI": redis_url, "RATELIMIT_APPLICATION": "10000000 per minute",
                     "RATELIMIT_EXEMPT_LOOPBACK": False})  # (the test client's address is 127.0.0.1)
    off = create_app({"RATELIMIT_ENABLED": False})
    times: dict[str, list[float]] = {"on": [], "off": []}
    for _ in range(rounds):
        for name, app in (("on", on), ("off", off)):
            client = app.test_client()
            client.get("/v1/modes")
            start = time.perf_counter()
            for _ in range(n):
                client.get("/v1/modes")
            times[name].append((time.perf_counter() - start) / n * 1e6)
    return tuple(sorted(times[k])[rounds // 2] for k in ("on", "off"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/12", help="the rate limits' storage")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk not found: apt-get install wrk")

    from analysis.game import solve_game
    from workers.store import Store, table_key

    store = tempfile.mkdtemp(prefix="zombie-odds-load-")
    Store(store).put(table_key("original", "before-draw", 2), solve_game("original").to_dict())
    base = {**os.environ, "PYTHONPATH": str(ROOT), "ZOMBIE_ODDS_STORE": store}
    base.pop("REDIS_URL", None)  # no job is started: the table is stored
    limited = {**base, "ZOMBIE_ODDS_RATELIMIT_STORAGE_URI": args.redis, "ZOMBIE_ODDS_RATELIMIT_APPLICATION":
               "10000000 per minute", "ZOMBIE_ODDS_RATELIMIT_EXEMPT_LOOPBACK": "false"}
    results = {}
    try:
        runs = (("mix, rate limits on (Redis)", limited, 8765), ("mix, as shipped (loopback)", base, 8767))
        for name, env, port in runs:
            server = serve(port, args.workers, env)
            try:
                url = f"http://127.0.0.1:{port}"
                wait_for(f"{url}/healthz", 300)
                etag = urllib.request.urlopen(url + TABLE, timeout=60).headers["ETag"]
                requests = mix(etag)
                for method, path, headers, body in requests:  # each answered once, and right, before the clock
                    request = urllib.request.Request(url + path, method=method, headers=headers,
                                                     data=body.encode() if body else None)
                    try:
                        status = urllib.request.urlopen(request, timeout=300).status
                    except urllib.error.HTTPError as e:
                        status = e.code
                    if status not in (200, 304):
                        raise SystemExit(f"{method} {path}: {status}")
                with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
                    f.write(lua(requests))
                results[name] = wrk(url, args.seconds, args.connections, f.name)
            finally:
                stop(server)
        baseline = subprocess.Popen([str(Path(sys.executable).parent / "gunicorn"), "-w", str(args.workers), "-b",
                                     "127.0.0.1:8766", "bench.bare:app"], env=base, cwd=ROOT, stderr=subprocess.DEVNULL)
        try:
            wait_for("http://127.0.0.1:8766/bare", 60)
            results["bare Flask endpoint"] = wrk("http://127.0.0.1:8766/bare", args.seconds, args.connections, None)
        finally:
            stop(baseline)
    finally:
        shutil.rmtree(store, ignore_errors=True)

    print(f"gunicorn {args.workers} workers; wrk 2 threads, {args.connections} connections, {args.seconds} s each")
    for name, r in results.items():
        statuses = ", ".join(f"{s}: {n}" for s, n in sorted(r["statuses"].items()))
        print(f"{name:30} {r['rps']:8.0f} req/s  p50 {r['p50']:6.2f} ms  p99 {r['p99']:6.2f} ms  "
              f"errors {r['errors']}  ({r['requests']} requests; {statuses or 'all 2xx'})")
    on, off, bare = (results[k]["rps"] for k in results)
    print(f"throughput: limits on / as shipped (loopback, not limited) = {on / off:.2f}; mix (limits on) / bare = "
          f"{on / bare:.2f}")
    cost_on, cost_off = limiter_cost(args.redis)
    print(f"limiter cost in-process (a cached GET, median of alternating runs): {cost_on:.0f} us with, "
          f"{cost_off:.0f} us without: +{cost_on - cost_off:.0f} us per request")
    if any(r["errors"] for r in results.values()):
        raise SystemExit("errors under load")


if __name__ == "__main__":
    main()
