"""The tests mirror the house: the module ``analysis/game/kernel.py`` is tested in
``tests/analysis/game/test_kernel.py`` (the application factory, ``api/__init__.py``, in
``tests/api/test_factory.py``, as in Flask's tutorial), and that test module imports the module it tests or names it
in its docstring (a blueprint is tested through the HTTP client). The tests at the top of tests/ check the whole
service (bad input, the contract, the README, the house itself)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .test_imports import PACKAGES, ROOT, module_name

TESTS = ROOT / "tests"


def mirror(path: Path) -> Path:
    """Where the module at `path` is tested."""
    relative = path.relative_to(ROOT)
    name = "test_factory.py" if relative == Path("api/__init__.py") else f"test_{relative.name}"
    return TESTS / relative.parent / name


def modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py")
                  if p.name != "__init__.py" or p.relative_to(ROOT) == Path("api/__init__.py"))


def imported(path: Path) -> set[str]:
    """The modules a test module imports (``from analysis.game import kernel`` names analysis.game.kernel too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_has_its_test_module(path: Path) -> None:
    test = mirror(path)
    assert test.is_file(), f"{path.relative_to(ROOT)} has no {test.relative_to(ROOT)}"
    module, named = path.relative_to(ROOT), ast.get_docstring(ast.parse(test.read_text())) or ""
    assert str(module) in named or module_name(path) in imported(test), f"{test.relative_to(ROOT)} is not {module}'s"


def test_every_test_module_mirrors_a_module() -> None:
    """Below the top of tests/, a test module tests one module of the house."""
    mirrors = {mirror(p) for p in modules()}
    strays = [p.relative_to(ROOT) for p in TESTS.rglob("test_*.py") if p.parent != TESTS and p not in mirrors]
    assert strays == []


def test_the_mirror() -> None:
    assert mirror(ROOT / "analysis/game/kernel.py") == TESTS / "analysis/game/test_kernel.py"
    assert mirror(ROOT / "api/__init__.py") == TESTS / "api/test_factory.py"
    assert len(modules()) > 60
