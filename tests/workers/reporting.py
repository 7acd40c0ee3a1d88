"""The base game's report content (analysis.report.build over its two-player table: ~10 s), built once per test
process for the modules that check, store and serve it: tests/analysis/test_report.py, tests/workers/test_reports.py
and tests/api/test_reports.py, which name one xdist group (`GROUP`) so that they run in one process. The store's
modules make their fixtures of `stored_table` and `stored_content` (``pytest.fixture(scope="module", name=...)``).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from analysis.report import build
from workers import reports
from workers.store import Store, table_key

from ..games import solved_game

GROUP = "reports"
RULES = ("stop-at:3",)  # one rule keeps the modules' cost down; the nightly default plays seven


@cache
def base_game_content() -> dict[str, Any]:
    return build("original", "before-draw", solved_game("original"), rules=RULES)


def stored_table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A store holding the base game's two-player table, for every test of the module."""
    root = tmp_path_factory.mktemp("store")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOMBIE_ODDS_STORE", str(root))
        mp.setenv("ZOMBIE_ODDS_REPORT_RULES", " ".join(RULES))
        mp.delenv("ZOMBIE_ODDS_REPORT_SCHEDULE", raising=False)
        Store(root).put(table_key("original", "before-draw", 2), solved_game("original").to_dict())
        yield root


def stored_content(store_dir: Path, warm: None) -> dict[str, Any]:
    """The report's content for the base game, computed once per process; kept in the store as a worker would keep
    it."""
    data = base_game_content()
    inputs, _ = reports.inputs_for("original")
    Store(store_dir).put(inputs.data_key, data)
    return data
