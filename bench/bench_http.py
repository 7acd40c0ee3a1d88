"""HTTP load: /v1/odds and /v1/advice.txt of random reachable positions under gunicorn, beside a bare Flask endpoint.

Usage: python bench/bench_http.py [--seconds 60] [--connections 64] [--workers 2] [--positions 40000]
                                  [--solutions DIR] [--in-process N]

Needs `wrk` (Debian package `wrk`). The stored solutions are built into DIR first (a new temporary folder by
default; a solution already there is not built again). The load asks `--positions` distinct positions, drawn by
simulated play (analysis.simulate.random_position) across every stored solution (mode, recycle, School Bus),
each once per pass (far more than the server's response cache holds: every answer is read from the mapped
solutions), first as `/v1/advice.txt` (what an app asking "should I roll?" reads: the next roll exactly, the
decision and the values), then as `/v1/odds` (the whole answer: the turn's score distribution included; those
that outlast the server's wait are 503s naming the job that goes on computing them).
Rate limits are off for the run (it measures answers, not the limiter). Both servers run gunicorn with the same
number of workers on 127.0.0.1, and each load stops by itself after `--seconds`. Each odds worker's RSS, PSS and
private memory (/proc/PID/smaps_rollup: the pages of its mapped files that no other process maps, and its own) are
read before the two loads, as they end (the answers that outlasted the server's wait still computing as jobs), and
once the workers use under a twentieth of a core (those jobs ended).

With `--in-process N`, no server: N `/v1/advice.txt` requests of random positions through Flask's test client, under
cProfile, each solution mapped first; it prints the mean time of a request and of its parts (the request's
validation against openapi.yaml, the answer).
"""

from __future__ import annotations

import argparse
import os
import random
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
sys.path.insert(0, str(ROOT))

from analysis.simulate import random_position  # noqa: E402
from workers.solutions import combinations  # noqa: E402

LUA = """
local f = io.open("%s")
paths = {}
for line in f:lines() do paths[#paths + 1] = line end
f:close()
i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i %% #paths) + 1])
end
"""


def url(position, path: str = "/v1/odds") -> str:
    fields = {"mode": position.mode, "recycle": position.recycle}
    if position.banked:
        fields["banked"] = position.banked
    for name in ("footprints", "brains", "shotguns", "double_brains", "double_shotguns", "effects", "kept_out"):
        if getattr(position, name):
            fields[name] = ",".join(getattr(position, name))
    if position.school_bus:
        fields["school_bus"] = "true"
        for name in ("bus_brains", "bus_shotguns"):
            if getattr(position, name):
                fields[name] = getattr(position, name)
        for name in ("riding", "bus_out"):
            if getattr(position, name):
                fields[name] = "true"
    return path + "?" + "&".join(f"{k}={v}" for k, v in fields.items())


def script_for(paths: list[str]) -> str:
    """A wrk script asking `paths` in turn (the file it reads and the script, both temporary files)."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as listing:
        listing.write("\n".join(paths) + "\n")
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(LUA % listing.name)
    return script.name


def wait_for(address: str, seconds: float) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(address, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"server at {address} did not come up in {seconds} s")


def run_wrk(address: str, seconds: int, connections: int, script: str | None) -> dict[str, float]:
    cmd = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "10s"]
    if script:
        cmd += ["-s", script]
    out = subprocess.run(cmd + [address], capture_output=True, text=True, check=True).stdout

    def ms(label: str) -> float:
        m = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)", out, re.M)
        value, unit = float(m[1]), m[2]
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    errors = sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1]), "p50": ms("50"), "p99": ms("99"),
            "errors": errors + (int(non2xx[1]) if non2xx else 0), "requests": int(re.search(r"(\d+) requests", out)[1]),
            "socket": errors, "non2xx": int(non2xx[1]) if non2xx else 0}


def memory(master: int) -> list[dict[str, float]]:
    """RSS, PSS and private memory (MiB) of each worker of the gunicorn `master`."""
    out = []
    for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):
        try:
            if int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) != master:
                continue
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except (OSError, IndexError, ValueError):
            continue
        kb = {k: int(v) for k, v in re.findall(r"^(\w+):\s+(\d+) kB", rollup, re.M)}
        out.append({"pid": pid, "rss": kb["Rss"] / 1024, "pss": kb["Pss"] / 1024,
                    "clean": kb["Private_Clean"] / 1024, "dirty": (kb["Private_Dirty"] + kb["Swap"]) / 1024})
    return out


def cpu_ticks(master: int) -> int:
    """The CPU time (clock ticks) the workers of the gunicorn `master` have used."""
    ticks = 0
    for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master:
            ticks += int(fields[11]) + int(fields[12])  # utime + stime
    return ticks


def idle(master: int, window: float = 3.0, most: float = 300.0) -> float:
    """Wait until the workers of `master` use under a twentieth of a core over `window` seconds (their answer jobs
    have ended; what is left is gunicorn's heartbeat), at most `most` seconds; the seconds waited."""
    start, tick = time.monotonic(), os.sysconf("SC_CLK_TCK")
    last = cpu_ticks(master)
    while time.monotonic() - start < most:
        time.sleep(window)
        now = cpu_ticks(master)
        if now - last < window * tick / 20:
            break
        last = now
    return time.monotonic() - start


def in_process(solutions: str, count: int) -> None:
    """Where an `/v1/advice.txt` request's time goes, in this process (module docstring)."""
    import cProfile
    import pstats

    os.environ.update(ZOMBIE_ODDS_SOLUTIONS=solutions, ZOMBIE_ODDS_RATELIMIT_ENABLED="false",
                      ZOMBIE_ODDS_STORE=tempfile.mkdtemp(prefix="store-"))
    from api import create_app
    from workers.solutions import load

    client = create_app().test_client()
    for combination in combinations():
        load(*combination)
    rng = random.Random(25)
    paths = [url(random_position(m, rng, recycle=v, school_bus=bus), "/v1/advice.txt")
             for m, v, bus in (rng.choice(combinations()) for _ in range(count))]
    client.get(paths[-1])  # the spec is read and its validator built once per process, before the first answer
    profile = cProfile.Profile()
    profile.enable()
    for path in paths:
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.status_code)
    profile.disable()
    stats = pstats.Stats(profile).stats
    mean = {f"{Path(file).parent.name}/{Path(file).name} {name}": cumulative / count * 1e3
            for (file, _, name), (_, _, _, cumulative, _) in stats.items()}
    print(f"{count} /v1/advice.txt requests of random positions, mean ms per request:")
    for part in ("flask/app.py wsgi_app", "api/spec.py validate_request", "analysis/odds.py answer_from",
                 "analysis/roll.py next_roll"):
        print(f"  {part}: {mean.get(part, 0.0):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--positions", type=int, default=40_000)
    parser.add_argument("--solutions", default=None)
    parser.add_argument("--in-process", type=int, default=0)
    args = parser.parse_args()
    if args.in_process:
        return in_process(args.solutions or sys.exit("--in-process needs --solutions DIR"), args.in_process)
    if not shutil.which("wrk"):
        raise SystemExit("wrk not found: apt-get install wrk")
    solutions = args.solutions or tempfile.mkdtemp(prefix="solutions-")
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ZOMBIE_ODDS_SOLUTIONS": solutions,
           "ZOMBIE_ODDS_RATELIMIT_ENABLED": "false", "ZOMBIE_ODDS_STORE": tempfile.mkdtemp(prefix="store-")}
    subprocess.run([str(bin_dir / "zombie-odds"), "solutions", "build", "--quiet"], env=env, check=True)
    rng = random.Random(25)
    positions = list(dict.fromkeys(random_position(m, rng, recycle=v, school_bus=bus)
                                   for m, v, bus in (rng.choice(combinations()) for _ in range(args.positions))))
    scripts = {path: script_for([url(p, path) for p in positions]) for path in ("/v1/advice.txt", "/v1/odds")}
    servers = [
        subprocess.Popen([str(bin_dir / "zombie-odds"), "serve", "--port", "8765", "--workers", str(args.workers)],
                         env=env, cwd=ROOT),
        subprocess.Popen([str(bin_dir / "gunicorn"), "-w", str(args.workers), "-b", "127.0.0.1:8766",
                          "bench.bare:app"], env=env, cwd=ROOT),
    ]
    try:
        wait_for("http://127.0.0.1:8765/healthz", 180)
        wait_for("http://127.0.0.1:8766/bare", 30)
        # the bare endpoint first: the odds server's jobs (answers that outlast its wait) go on after their load
        runs = {"bare Flask": run_wrk("http://127.0.0.1:8766/bare", args.seconds, args.connections, None)}
        bare = runs["bare Flask"]
        before = memory(servers[0].pid)
        runs.update({f"`{path}`, random positions": run_wrk("http://127.0.0.1:8765", args.seconds, args.connections,
                                                            script) for path, script in scripts.items()})
        after = memory(servers[0].pid)
        waited = idle(servers[0].pid)
        settled = memory(servers[0].pid)
        print(f"{len(positions)} distinct positions over {len(combinations())} solutions, {args.connections} "
              f"connections, {args.workers} workers, {args.seconds} s each")
        print("| load | requests | req/s | p50 ms | p99 ms | errors (non-2xx) | of bare's throughput |")
        print("|---|---|---|---|---|---|---|")
        for name, r in runs.items():
            print(f"| {name} | {r['requests']} | {r['rps']:.0f} | {r['p50']:.2f} | {r['p99']:.2f} | {r['errors']} "
                  f"({r['non2xx']}) | {r['rps'] / bare['rps']:.3f} |")
        print(f"each worker's memory (MiB) before the loads, as they end, and once its answer jobs have ended "
              f"({waited:.0f} s later): private clean is pages of the mapped solutions no other process maps now, its "
              "own memory (heap, arrays) is private dirty and swapped")
        print("| reading | worker | RSS | PSS | private clean | own (private dirty) |")
        print("|---|---|---|---|---|---|")
        for reading, workers in (("before", before), ("as they end", after), ("jobs ended", settled)):
            for m in workers:
                print(f"| {reading} | {m['pid']} | {m['rss']:.0f} | {m['pss']:.0f} | {m['clean']:.0f} | "
                      f"{m['dirty']:.0f} |")
    finally:
        for s in servers:
            s.send_signal(signal.SIGTERM)
        for s in servers:
            s.wait(timeout=30)


if __name__ == "__main__":
    main()
