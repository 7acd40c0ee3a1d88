"""Where the test suite's time goes: its tests' durations summed by group, the unit a test process runs whole.

    PYTHONPATH=. .venv/bin/python bench/bench_suite.py [--top 20] [--from LOG] [-- PYTEST ARGS...]

Runs the suite as scripts/test does (``python -m pytest``, pytest-xdist's processes, one per core) with
``--durations=0``, or reads the output of such a run (``--from``), and prints its wall time, the CPU time of the run
(the pytest processes and every child they waited for: Celery workers, solution builds, servers) and, per group
(tests/conftest.py: a test module, or the modules naming one group), the seconds its tests spent in setup, call and
teardown. A group runs whole in one process, so the groups' seconds add up to about the processes' wall time times
their number; the session's solution builds are the setup of each process's first test.
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import time
from collections import defaultdict

LINE = re.compile(r"^([\d.]+)s (setup|call|teardown)\s+(\S.*)$")
SUMMARY = re.compile(r"(\d+ (?:passed|failed).* in [\d.]+s.*?)(?: =+)?$")


def groups(output: str) -> dict[str, dict[str, float]]:
    """Per group (the node id's ``@group`` suffix that pytest-xdist's loadgroup adds, else the module), the seconds
    of each phase."""
    spent: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for line in output.splitlines():
        if m := LINE.match(line.strip()):
            seconds, phase, nodeid = float(m[1]), m[2], m[3]
            group = nodeid.rsplit("@", 1)[1] if "@" in nodeid else nodeid.split("::")[0]
            spent[group][phase] += seconds
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=20, help="groups to list, longest first")
    parser.add_argument("--from", dest="log", help="read a saved run's output instead of running the suite")
    parser.add_argument("pytest", nargs="*", help="more arguments for pytest (after --)")
    args = parser.parse_args()
    if args.log:
        with open(args.log, encoding="utf-8") as f:
            output = f.read()
    else:
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "pytest", "--durations=0", "-q", *args.pytest],
                             capture_output=True, text=True)
        wall = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = usage.ru_utime + usage.ru_stime
        output = run.stdout
        print(f"wall {wall:.0f} s, CPU {cpu:.0f} s (pytest's exit status {run.returncode})")
    if summary := [m for line in output.splitlines() if (m := SUMMARY.search(line.strip()))]:
        print(summary[-1][1])
    spent = groups(output)
    total = sum(sum(p.values()) for p in spent.values())
    print("\n| group | setup s | call s | teardown s | total s | share |\n|---|---|---|---|---|---|")
    longest = sorted(spent.items(), key=lambda item: -sum(item[1].values()))
    rest = longest[args.top:]
    rows = longest[:args.top]
    if rest:
        rows.append((f"the other {len(rest)} groups", _summed(rest)))
    for group, phases in rows:
        s = sum(phases.values())
        print(f"| {group} | {phases['setup']:.1f} | {phases['call']:.1f} | {phases['teardown']:.1f} | {s:.1f} "
              f"| {s / total:.1%} |")
    every = _summed(longest)
    print(f"| all {len(spent)} groups | {every['setup']:.1f} | {every['call']:.1f} | {every['teardown']:.1f} | "
          f"{total:.1f} | |")


def _summed(groups: list[tuple[str, dict[str, float]]]) -> dict[str, float]:
    """The seconds of each phase over `groups`."""
    return {phase: sum(phases[phase] for _, phases in groups) for phase in ("setup", "call", "teardown")}


if __name__ == "__main__":
    main()
