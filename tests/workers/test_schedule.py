"""workers/schedule.py: when the reports are made (a crontab line in UTC, or a number of seconds), the period a run
belongs to, and for which modes (`ZOMBIE_ODDS_REPORT_MODES`, `ZOMBIE_ODDS_REPORT_SOLVE_MODES`)."""

from datetime import UTC, datetime

import pytest

from analysis.report import DEFAULT_RULES
from workers.schedule import (
    DEFAULT_SCHEDULE,
    beat_schedule,
    current,
    parse_schedule,
    report_rules,
    report_variants,
)

SANTA = "santa-claus-meets-the-zombies"


def test_schedule_periods():
    nightly = parse_schedule("0 3 * * *")
    assert nightly.label(datetime(2026, 11, 29, 2, 59, tzinfo=UTC)) == "20261128-030000"
    assert nightly.label(datetime(2026, 11, 29, 3, 0, 59, tzinfo=UTC)) == "20261129-030000"
    assert parse_schedule("30 6 * * 1").label(datetime(2026, 11, 29, 12, tzinfo=UTC)) == "20261123-063000"  # Monday
    assert parse_schedule("5").label(datetime(2026, 11, 29, 0, 0, 7, tzinfo=UTC)) == "20261129-000005"
    for bad in ("", "0 3 * *", "61 * * * *", "0 0 30 2 *", "0", "often"):
        with pytest.raises(ValueError):
            parse_schedule(bad)


def test_the_modes_a_worker_solves_are_a_setting(monkeypatch):
    from workers import schedule

    monkeypatch.delenv("ZOMBIE_ODDS_REPORT_SOLVE_MODES", raising=False)
    monkeypatch.delenv("ZOMBIE_ODDS_REPORT_MODES", raising=False)
    assert schedule.solve_modes() == schedule.report_modes() == ("original",)
    monkeypatch.setenv("ZOMBIE_ODDS_REPORT_SOLVE_MODES", f"original,{SANTA}")
    assert schedule.report_modes() == ("original", SANTA)
    monkeypatch.setenv("ZOMBIE_ODDS_REPORT_MODES", "direct-to-video-sequel")
    assert schedule.report_modes() == ("direct-to-video-sequel",)
    monkeypatch.setenv("ZOMBIE_ODDS_REPORT_SOLVE_MODES", "chess")
    with pytest.raises(ValueError, match="ZOMBIE_ODDS_REPORT_SOLVE_MODES: unknown chess"):
        schedule.solve_modes()


def test_a_run_expires_at_the_next_tick_of_a_schedule_in_seconds_within_an_hour_of_a_crontab(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOMBIE_ODDS_REPORT_SCHEDULE", "45")
    [entry] = beat_schedule().values()
    assert entry["task"] == "workers.reports.scheduled_reports" and entry["options"] == {"expires": 45}
    assert entry["schedule"].run_every.total_seconds() == 45
    monkeypatch.delenv("ZOMBIE_ODDS_REPORT_SCHEDULE")
    assert current().text == DEFAULT_SCHEDULE == "0 3 * * *"
    [entry] = beat_schedule().values()
    assert entry["options"] == {"expires": 3600} and entry["schedule"].hour == {3} and entry["schedule"].minute == {0}


def test_a_crontab_that_never_matches_is_refused_when_read_not_at_night() -> None:
    with pytest.raises(ValueError, match="never matches"):
        parse_schedule("0 0 29 2 1")  # a Monday 29 February: 1988, then 2016 (in five years from 2000: none)
    assert parse_schedule("0 0 29 2 *").label(datetime(2027, 3, 1, tzinfo=UTC)) == "20240229-000000"


def test_the_variants_and_rules_a_report_plays_are_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ZOMBIE_ODDS_REPORT_VARIANTS", raising=False)
    monkeypatch.delenv("ZOMBIE_ODDS_REPORT_RULES", raising=False)
    assert report_variants() == ("before-draw",) and report_rules() == tuple(DEFAULT_RULES)
    monkeypatch.setenv("ZOMBIE_ODDS_REPORT_VARIANTS", " draw-then-recycle , before-draw,")
    assert report_variants() == ("draw-then-recycle", "before-draw")
    monkeypatch.setenv("ZOMBIE_ODDS_REPORT_VARIANTS", "sometimes")
    with pytest.raises(ValueError, match="ZOMBIE_ODDS_REPORT_VARIANTS: unknown sometimes"):
        report_variants()
    monkeypatch.setenv("ZOMBIE_ODDS_REPORT_RULES", "stop-at:3  stop-at:5")
    assert report_rules() == ("stop-at:3", "stop-at:5")
    monkeypatch.setenv("ZOMBIE_ODDS_REPORT_RULES", "stop-at:3 roll-forever")
    with pytest.raises(ValueError):
        report_rules()
