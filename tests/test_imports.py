"""The house's imports: no module of the project (analysis/, api/, workers/, the tests, the benchmarks, the scripts)
imports, however indirectly, a module that imports it back (a circle makes the order of imports matter and the
modules one piece), counting imports made inside functions too (a module's own packages excepted: Python imports them
first whatever it says); and analysis/ imports nothing of Flask, Celery or the other two packages. The benchmarks
(bench/), which no test runs, import only names the project has (most import inside `main`, so a renamed name would
show only when one is run). A server without `REDIS_URL` is built without importing Celery. Importing analysis/ turns
numpy's huge pages off, unless numpy's own setting says otherwise."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("analysis", "api", "workers")  # the house's packages (tests/test_layout.py: each module tested)
WALKED = (*PACKAGES, "tests", "bench", "scripts")  # every directory of the project that holds Python


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every project module's name -> its file."""
    return {module_name(p): p for package in WALKED for p in (ROOT / package).rglob("*.py")}


def imports() -> dict[str, set[str]]:
    """Every project module -> the project modules it imports (`from . import x` names module x where there is one)."""
    paths = modules()
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        # (a script's own directory, one without __init__.py, comes first on its path: `import x` may be its sibling)
        script = not (path.parent / "__init__.py").exists()
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                submodules = {f"{base}.{a.name}" for a in node.names} & paths.keys()
                found.update(submodules if len(submodules) == len(node.names) else {base, *submodules})
        found |= {f"{package}.{m}" for m in found} if script else set()
        # (a module's own packages are imported before it in any case: an import of one is no circle)
        graph[name] = {m for m in found if m in paths and m != name and not name.startswith(m + ".")}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circles() -> None:
    graph = imports()
    assert len(graph) > 150  # (the walk found the house)
    assert circles(graph) == []


def test_the_walk_takes_every_directory_of_python() -> None:
    ignored = {line.strip("/") for line in (ROOT / ".gitignore").read_text().split() if line.endswith("/")}
    found = {d.name for d in ROOT.iterdir() if d.is_dir() and not d.name.startswith(".") and d.name not in ignored
             and next(d.rglob("*.py"), None)}
    assert found == set(WALKED)


def test_a_scripts_sibling_is_what_it_imports() -> None:
    """bench/load.py runs as a script (`from bench_http import ...`): its import of a sibling is an edge too."""
    assert "bench.bench_http" in imports()["bench.load"]


def test_the_walk_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("foreign", ["flask", "celery", "api", "workers"])
def test_analysis_is_pure(foreign: str) -> None:
    for path in (ROOT / "analysis").rglob("*.py"):
        tree = ast.parse(path.read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level]
        assert not [n for n in names if n == foreign or n.startswith(foreign + ".")], path


@pytest.mark.parametrize("path", sorted((ROOT / "bench").glob("*.py")), ids=lambda p: p.name)
def test_the_benchmarks_import_what_the_project_has(path: Path) -> None:
    names = modules()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in PACKAGES:
            module = importlib.import_module(node.module)
            missing = [a.name for a in node.names
                       if not hasattr(module, a.name) and f"{node.module}.{a.name}" not in names]
            assert not missing, f"{path.name}:{node.lineno}: {node.module} has no {', '.join(missing)}"


def test_a_server_without_redis_is_built_without_celery() -> None:
    """The store's modules (workers/store.py, shared.py, tables.py, solutions.py) import workers/celery_app.py only
    where a job is submitted or followed, and api/reports.py imports workers/reports.py (its Celery tasks) only in its
    views: a server on the embedded default is built and answers without Celery (which the check sees once loaded)."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    code = ("import sys, api; client = api.create_app().test_client(); client.get('/healthz'); client.get('/v1/modes');"
            " print('celery' in sys.modules); import workers.celery_app; print('celery' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize("redis_url", [None, "redis://127.0.0.1:1/0"], ids=["embedded", "redis"])
def test_the_job_modules_are_imported_without_celery(redis_url: str | None) -> None:
    """workers/tables.py, solutions.py and reports.py send their Celery tasks by name (workers/jobs.py: `send`), and
    tasks.py imports them, not they it: importing them loads no Celery, with `REDIS_URL` or without (where they submit
    or follow a job, they do)."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update({"REDIS_URL": redis_url} if redis_url else {})
    code = ("import sys, workers.jobs, workers.reports, workers.tables, workers.solutions;"
            " print('celery' in sys.modules); import workers.tasks; print('celery' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize(("setting", "huge_pages"), [(None, False), ("1", True)], ids=["unset", "1"])
def test_importing_analysis_turns_numpys_huge_pages_off_unless_numpy_is_told(setting: str | None,
                                                                             huge_pages: bool) -> None:
    """analysis/__init__.py (bench/README.md: their faults cost the analysis more than they save): numpy's madvise of
    huge pages, on by default, is off once analysis is imported; `NUMPY_MADVISE_HUGEPAGE` keeps numpy's say."""
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    env.update({"NUMPY_MADVISE_HUGEPAGE": setting} if setting else {})
    code = "import analysis; from numpy._core.multiarray import _set_madvise_hugepage as was; print(was(False))"
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(huge_pages)]
