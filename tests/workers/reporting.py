"""The base game's report content (analysis.report.build over its two-player table: ~10 s), built once per test
process for the modules that store and serve it: tests/workers/test_reports.py and tests/api/test_reports.py, which
name one xdist group (`GROUP`) so that they run in one process."""

from __future__ import annotations

from functools import cache
from typing import Any

from analysis.report import build

from ..games import solved_game

GROUP = "reports"
RULES = ("stop-at:3",)  # one rule keeps the modules' cost down; the nightly default plays seven


@cache
def base_game_content() -> dict[str, Any]:
    return build("original", "before-draw", solved_game("original"), rules=RULES)
