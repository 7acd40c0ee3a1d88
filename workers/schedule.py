"""When the reports are made (Celery beat), for which modes, and which period a run belongs to.

Settings (environment):

* ``ZOMBIE_ODDS_REPORT_SCHEDULE``: a crontab line of five fields, ``minute hour day-of-month month
  day-of-week`` in UTC (default ``0 3 * * *``: nightly at 03:00), or a whole number of seconds
  (``30``: every 30 s, for trials). Day of month and day of week must both match, as in Celery.
* ``ZOMBIE_ODDS_REPORT_SOLVE_MODES``: comma-separated modes whose whole-turn table a report may build in
  this process (default ``original``). That table is what the heavy sections need (one turn, the policy
  summary, the rules against optimal play) and what bounds a worker's memory: about 1 GB for the base
  game, about 3 GB for Big Summer Action Movie or Santa Claus (README, "Reports"). A report of any other
  mode is still made, cheaply: its bust odds, the two-player table if one is stored, and each heavy
  section listed as missing with the reason (this setting).
* ``ZOMBIE_ODDS_REPORT_MODES``: comma-separated modes the beat reports on (default: the modes of
  ``ZOMBIE_ODDS_REPORT_SOLVE_MODES``, whose reports are whole; ``POST /v1/reports`` takes every mode).
* ``ZOMBIE_ODDS_REPORT_VARIANTS``: comma-separated recycle variants (default ``before-draw``).
* ``ZOMBIE_ODDS_REPORT_RULES``: the fixed rules played against the optimal player, separated by spaces
  (``stop-at:3 stop-at:6,2 ahead-by:1``; default analysis.report.DEFAULT_RULES; empty for none).

A report belongs to a *period*: the schedule's latest tick at or before the moment it runs (for a
number of seconds, the epoch cut into slots of that length). Its id is derived from the period and
its inputs, so however many beats fire and however often a run is repeated, one period has one
report per mode and inputs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from analysis import MODES
from analysis.game import parse_rule
from analysis.position import RECYCLE_VARIANTS
from analysis.report import DEFAULT_RULES

if TYPE_CHECKING:
    from celery.schedules import crontab, schedule

__all__ = ["Schedule", "parse_schedule", "current", "report_modes", "report_variants", "report_rules",
           "solve_modes", "beat_schedule", "DEFAULT_SCHEDULE", "DEFAULT_SOLVE_MODES", "PERIOD_FORMAT"]

DEFAULT_SCHEDULE = "0 3 * * *"
DEFAULT_SOLVE_MODES = "original"  # about 1 GB per worker process; the expansions take about 3 GB each
PERIOD_FORMAT = "%Y%m%d-%H%M%S"  # a period's label: sortable, and safe in a store key and a URL
_LOOKBACK = timedelta(days=5 * 366)  # a crontab that matches nothing in five years is refused


@dataclass(frozen=True)
class Schedule:
    """A crontab line (`cron`) or a fixed number of seconds (`every`)."""

    text: str
    cron: crontab | None = None
    every: int | None = None

    def celery(self) -> crontab | schedule:
        from celery.schedules import schedule

        return self.cron if self.cron is not None else schedule(timedelta(seconds=self.every))

    @property
    def expires(self) -> int:
        """Seconds after which a run that no worker took yet is dropped (the next run makes the report)."""
        return self.every if self.every is not None else 3600

    def period(self, now: datetime | None = None) -> datetime:
        """The latest tick of the schedule at or before `now` (UTC)."""
        now = (now or datetime.now(UTC)).astimezone(UTC)
        if self.every is not None:
            seconds = int(now.timestamp()) // self.every * self.every
            return datetime.fromtimestamp(seconds, UTC)
        return _previous_tick(self.cron, now)

    def label(self, now: datetime | None = None) -> str:
        return self.period(now).strftime(PERIOD_FORMAT)


def _previous_tick(cron: crontab, now: datetime) -> datetime:
    t = now.replace(second=0, microsecond=0)
    while now - t <= _LOOKBACK:
        if (t.month not in cron.month_of_year or t.day not in cron.day_of_month
                or t.isoweekday() % 7 not in cron.day_of_week):  # Celery: 0 is Sunday
            t = t.replace(hour=0, minute=0) - timedelta(minutes=1)
        elif t.hour not in cron.hour:
            t = t.replace(minute=0) - timedelta(minutes=1)
        elif t.minute not in cron.minute:
            t -= timedelta(minutes=1)
        else:
            return t
    raise ValueError(f"the crontab {cron} never matches")


def parse_schedule(text: str) -> Schedule:
    """``"0 3 * * *"`` (crontab, UTC) or ``"30"`` (seconds); ValueError for anything else."""
    text = text.strip()
    if text.isdigit():
        if int(text) < 1:
            raise ValueError("a schedule in seconds must be at least 1")
        return Schedule(text, every=int(text))
    from celery.schedules import crontab  # (only a process that reads a crontab line loads Celery's parser of one)

    fields = text.split()
    if len(fields) != 5:
        raise ValueError(f"expected a crontab line of five fields or a number of seconds, not {text!r}")
    try:
        minute, hour, day_of_month, month_of_year, day_of_week = fields
        cron = crontab(minute=minute, hour=hour, day_of_month=day_of_month, month_of_year=month_of_year,
                       day_of_week=day_of_week)
    except Exception as e:  # Celery raises its own ParseException (a ValueError in spirit)
        raise ValueError(f"bad crontab {text!r}: {e}") from None
    s = Schedule(text, cron=cron)
    s.period(datetime(2000, 1, 1, tzinfo=UTC))  # a crontab that never matches fails here, not at night
    return s


def current() -> Schedule:
    return parse_schedule(os.environ.get("ZOMBIE_ODDS_REPORT_SCHEDULE", DEFAULT_SCHEDULE))


def _listed(name: str, known, default: str) -> tuple[str, ...]:
    items = tuple(x.strip() for x in os.environ.get(name, default).split(",") if x.strip())
    unknown = [x for x in items if x not in known]
    if unknown:
        raise ValueError(f"{name}: unknown {', '.join(unknown)}; known: {', '.join(known)}")
    return items


def solve_modes() -> tuple[str, ...]:
    """The modes whose whole-turn table this process may build for a report (bounded memory)."""
    return _listed("ZOMBIE_ODDS_REPORT_SOLVE_MODES", tuple(MODES), DEFAULT_SOLVE_MODES)


def report_modes() -> tuple[str, ...]:
    return _listed("ZOMBIE_ODDS_REPORT_MODES", tuple(MODES), ",".join(solve_modes()))


def report_variants() -> tuple[str, ...]:
    return _listed("ZOMBIE_ODDS_REPORT_VARIANTS", RECYCLE_VARIANTS, "before-draw")


def report_rules() -> tuple[str, ...]:
    rules = tuple(os.environ.get("ZOMBIE_ODDS_REPORT_RULES", " ".join(DEFAULT_RULES)).split())
    for rule in rules:
        parse_rule(rule)  # ValueError names the bad one
    return rules


def beat_schedule() -> dict[str, dict]:
    """Celery's ``beat_schedule``: one entry, the reports of every configured mode."""
    s = current()
    return {"zombie-odds-reports": {"task": "workers.reports.scheduled_reports", "schedule": s.celery(),
                                    "options": {"expires": s.expires}}}
