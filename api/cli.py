"""The `zombie-odds` command: the same answers in a terminal, and the production server.

    zombie-odds odds --footprints green,red --brains green --shotguns red
    zombie-odds odds --objective reach:13 --json
    zombie-odds serve --port 8000 --workers 2
    zombie-odds tables build --mode original
    zombie-odds answers warm --mode santa-claus-meets-the-zombies

`odds` builds its position with the HTTP API's own functions (odds.position_from, odds.answer),
so both say the same thing and refuse the same positions; an impossible position prints
`field: reason` lines and exits with status 2, like any other usage error.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import click
from gunicorn.app.base import BaseApplication

from analysis import MODES, Position
from analysis.position import RECYCLE_VARIANTS
from workers.store import ENGINE_VERSION
from workers.tables import QUEUE_ERRORS, join, status, submit
from workers.tasks import store

from .errors import ApiError
from .odds import EXPANSION_FIELDS, answer, answer_key, compute, position_from, shared_answer
from .tables import TABLE_MODES

__all__ = ["main", "Server", "render"]


@click.group()
def main() -> None:
    """Exact odds for Zombie Dice."""


def _dice(text: str) -> tuple[str, ...]:
    """`green,red` -> ("green", "red"); an empty string is an empty pile, anything else is kept as given."""
    return tuple(text.split(",")) if text else ()


@main.command("odds")
@click.option("--footprints", default="", metavar="DICE", help="Footprint dice in hand, comma-separated.")
@click.option("--brains", default="", metavar="DICE", help="The brain pile, comma-separated.")
@click.option("--shotguns", default="", metavar="DICE", help="The shotgun pile, comma-separated.")
@click.option("--banked", default=0, type=int, show_default=True, help="Brains noted when the cup ran out.")
@click.option("--mode", default="original", show_default=True, help="Game mode.")
@click.option("--double-brains", default="", metavar="DICE",
              help="Double Feature: dice of the brain pile showing a double brain, comma-separated.")
@click.option("--double-shotguns", default="", metavar="DICE",
              help="Double Feature: dice of the shotgun pile showing a double shotgun, comma-separated.")
@click.option("--effects", default="", metavar="EFFECTS", help="Double Feature: Santa's effects in force, "
              "comma-separated (energy-drink, helmet).")
@click.option("--kept-out", default="", metavar="DICE", help="Double Feature: dice kept out of the cup by a "
              "recycling (santa).")
@click.option("--school-bus", is_flag=True, help="Play with the School Bus.")
@click.option("--bus-brains", default=0, type=int, show_default=True,
              help="School Bus: brain tokens taken from the bus this turn.")
@click.option("--bus-shotguns", default=0, type=int, show_default=True,
              help="School Bus: shotgun tokens taken from the bus this turn.")
@click.option("--riding", is_flag=True, help="School Bus: the player rides the bus.")
@click.option("--bus-out", is_flag=True, help="School Bus: the bus is out for the rest of the turn.")
@click.option("--recycle", default="before-draw", show_default=True, help="before-draw or draw-then-recycle.")
@click.option("--objective", default="expected-brains", show_default=True,
              help="expected-brains, reach:K or rule:N,S.")
@click.option("--json", "as_json", is_flag=True, help="Print the HTTP API's JSON answer.")
def odds_command(footprints: str, brains: str, shotguns: str, banked: int, mode: str, double_brains: str,
                 double_shotguns: str, effects: str, kept_out: str, school_bus: bool, bus_brains: int,
                 bus_shotguns: int, riding: bool, bus_out: bool, recycle: str, objective: str, as_json: bool) -> None:
    """The odds of a position: next roll, decision, final score.

    The options are /v1/odds's fields (`--kept-out` for `kept_out`, ...); the School Bus's options other than
    --school-bus need it, as over HTTP. Whether the next roll is the turn's first (`first_roll`) is not an
    option: it follows from the piles (nothing rolled yet), and the answer says it."""
    values = {"footprints": _dice(footprints), "brains": _dice(brains), "shotguns": _dice(shotguns),
              "banked": banked, "mode": mode, "double_brains": _dice(double_brains),
              "double_shotguns": _dice(double_shotguns), "effects": _dice(effects), "kept_out": _dice(kept_out),
              "school_bus": school_bus, "bus_brains": bus_brains, "bus_shotguns": bus_shotguns, "riding": riding,
              "bus_out": bus_out, "recycle": recycle, "objective": objective}
    try:
        result = answer(compute(*position_from(values)))  # a position too large to solve is refused too
    except ApiError as e:
        for error in e.errors:
            click.echo(f"{error.field}: {error.reason}", err=True)
        raise SystemExit(2) from None
    click.echo(json.dumps(result, indent=2) if as_json else render(result))


def _exact(value: dict[str, Any]) -> str:
    """The exact fraction when it is short enough to read; --json has them all (a float value: its bound)."""
    if "exact" not in value:
        return f"float, within {value['within']:.0e}"
    exact = value["exact"]
    return exact if len(exact) <= 24 else f"{len(exact)}-character fraction, see --json"


def render(result: dict[str, Any], lines: int = 10) -> str:
    """A JSON answer for people: position, next roll, outcomes, decision, the first scores."""
    p, roll, d = result["position"], result["next_roll"], result["decision"]
    cup = ", ".join(f"{die} {n}" for die, n in p["cup"].items())
    out = [
        f"Position   {p['mode']}, recycle {p['recycle']}" + (", School Bus" if p.get("school_bus") else ""),
        f"  footprints  {' '.join(p['footprints']) or '-'}",
        f"  brains      {' '.join(p['brains']) or '-'}",
        f"  shotguns    {' '.join(p['shotguns']) or '-'}",
        # Double Feature: double faces, effects, dice kept out (only those in play)
        *(f"  {k.replace('_', ' '):<11} {' '.join(p[k])}" for k in EXPANSION_FIELDS if p.get(k)),
        f"  banked      {p['banked']} (turn score {p['score']})",
        *(_bus_lines(p) if p.get("school_bus") else []),
        f"  cup         {cup}",
        "Next roll" + ("   (the cup runs out: the brain dice go back first)" if roll["recycles"] else ""),
        f"  bust             {roll['bust']['value']:.4%}  ({_exact(roll['bust'])})",
        f"  expected brains  {roll['expected_brains']['value']:.4f}  ({_exact(roll['expected_brains'])})",
        "  brains  shotguns  probability",
        *(f"  {o['brains']:>6}  {o['shotguns']:>8}  {o['value']:>11.4%}  {_exact(o)}" for o in roll["outcomes"]),
        f"Decision ({d['objective']}): {d['action'].upper()}",
        f"  roll  {d['roll']['value']:.6f}  ({_exact(d['roll'])})",
        f"  stop  {d['stop']['value']:.6f}  ({_exact(d['stop'])})",
    ]
    if "actions" in d:  # Double Feature and School Bus: every legal action's value
        out += [f"  {a['action']:<8} {a['value']['value']:.6f}" + (
            f"  (bust {a['next_roll']['bust']['value']:.4%})" if "next_roll" in a else "") for a in d["actions"]]
    for g in d.get("give_up", ()):  # School Bus: tyre tracks on the best roll
        worth = ", ".join(f"{c['give_up']} {c['value']['value']:.6f}" for c in g["choices"])
        out.append(f"  tyre tracks ({g['probability']['value']:.4%}, pile {' '.join(g['brain_pile']) or '-'}): "
                   f"give up {g['choice']}  [{worth}]")
    if "turn" not in result:  # the score distribution left out (`turn_left_out` says why)
        return "\n".join([*out, f"Final score: left out ({result['turn_left_out']})"])
    scores = result["turn"]["score_distribution"]
    shown = f"first {lines} of {len(scores)}" if len(scores) > lines else "all"
    out += [f"Final score if you roll now and play on optimally ({shown})", "  score  probability"]
    out += [f"  {s['score']:>5}  {s['value']:>11.4%}" for s in scores[:lines]]
    return "\n".join(out)


def _bus_lines(p: dict[str, Any]) -> list[str]:
    phase = "riding" if p["riding"] else "out for the turn" if p["bus_out"] else "not boarded yet"
    return [f"  bus         {phase}; tokens: {p['bus_brains']} brain(s), {p['bus_shotguns']} shotgun(s)"
            + ("; first roll of the turn (3 ordinary dice)" if p["first_roll"] else "")]


@main.group()
def tables() -> None:
    """Full-game win-probability tables (two players)."""


@tables.command("build")
@click.option("--mode", default="original", show_default=True, type=click.Choice(TABLE_MODES), help="Game mode.")
@click.option("--variant", default="before-draw", show_default=True, type=click.Choice(RECYCLE_VARIANTS),
              help="The recycling rule.")
@click.option("--players", default=2, show_default=True, type=click.IntRange(2, 8),
              help="Players (only two-player tables are computed).")
def build(mode: str, variant: str, players: int) -> None:
    """Compute a table and store it, following its job with a progress bar.

    In this process without REDIS_URL; by the workers (`celery -A workers worker`) with it. A stored
    table is not computed again, and a job already running is followed rather than started twice.
    """
    if players != 2:
        raise click.BadParameter("only two-player tables are computed (3 to 8 players: a reduced model "
                                 "built on the two-player table)", param_hint="--players")
    try:
        job = submit(mode, variant, players)
        with click.progressbar(length=job.total, label=f"{mode}, {variant}, {players} players") as bar:
            bar.update(job.done)
            while job is not None and job.active:
                time.sleep(0.2)
                job = status(job.key)
                if job is not None:
                    bar.update(job.done - bar.pos)
        if job is not None:
            join(job.key)  # in-process: the job's thread writes its last record after the table
    except QUEUE_ERRORS as e:
        raise click.ClickException(f"the job queue (Redis) cannot be reached: {e}") from None
    if job is None or job.state != "succeeded":
        raise click.ClickException(f"the job failed: {job.error if job else 'it was lost'}")
    click.echo(f"stored {job.key.name} in {store().root} (sha256 {job.sha256})")
    click.echo(f"P(first player wins) = {job.p_first_player_wins:.6f}")


@main.group()
def answers() -> None:
    """Odds answers kept in the store for every server worker (`ZOMBIE_ODDS_STORE`)."""


@answers.command("warm")
@click.option("--mode", "modes", multiple=True, type=click.Choice(list(MODES)),
              help="Game mode (repeat for several; default: every mode).")
@click.option("--variant", "variants", multiple=True, default=("before-draw",), show_default=True,
              type=click.Choice(RECYCLE_VARIANTS), help="The recycling rule (repeat for both).")
@click.option("--school-bus/--no-school-bus", default=None, help="Only with (or without) the School Bus "
              "(default: both).")
def warm(modes: tuple[str, ...], variants: tuple[str, ...], school_bus: bool | None) -> None:
    """Compute the answer to the start of a turn in each mode and store it, so that no one waits for it: a
    server asked first takes seconds to minutes (Santa's: about 90 s, the base game's with the School
    Bus one and a half). A stored answer is not computed again; a turn start the server refuses is skipped,
    with why."""
    from . import create_app

    app, shelf, objective = create_app({"SHARE_ANSWERS_AFTER": 0}), store(), "expected-brains"
    buses = (False, True) if school_bus is None else (school_bus,)
    for mode, variant, bus in itertools.product(modes or MODES, variants, buses):
        position = Position(mode=mode, recycle=variant, school_bus=bus)
        label = f"{mode}, {variant}{', School Bus' if bus else ''}"
        if answer_key(position, objective) in shelf:
            click.echo(f"{label}: already stored")
            continue
        start = time.perf_counter()
        try:
            with app.app_context():
                shared_answer(position, objective)
        except ApiError as e:  # a turn start the server refuses (api.odds.too_large)
            click.echo(f"{label}: skipped ({'; '.join(f'{f.field}: {f.reason}' for f in e.errors)})")
            continue
        click.echo(f"{label}: stored in {time.perf_counter() - start:.1f} s")


@answers.command("prune")
@click.option("--older-than", type=click.FloatRange(min=0), default=None, metavar="DAYS",
              help="Also remove answers stored at least DAYS days ago (asked again, one is computed and stored again).")
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
def prune(older_than: float | None, dry_run: bool) -> None:
    """Remove stored answers: those of another engine version (no server reads them again) and, with
    --older-than, old ones. A server keeps every answer that took a second or more (30 KB to 1.3 MB each)
    and never removes one itself; run this from cron to bound the store. Tables and reports are untouched."""
    shelf, now = store(), time.time()
    removed = freed = kept = 0
    for key in list(shelf.keys()):
        info = shelf.stat(key)
        if key.kind != "answer" or info is None:
            continue
        if key.engine == ENGINE_VERSION and (older_than is None or now - info.st_mtime < older_than * 86400):
            kept += 1
            continue
        if not dry_run:
            shelf.remove(key)
        removed, freed = removed + 1, freed + info.st_size
    verb = "would remove" if dry_run else "removed"
    click.echo(f"{verb} {removed} answers ({freed / 1e6:.1f} MB) from {shelf.root}; kept {kept}")


class Server(BaseApplication):
    """gunicorn running `api.create_app()`, loaded once in the master (preload_app).

    Loading warms the `original` mode (its table and the start of a turn, ~5 s) before the
    workers fork, so they share it copy-on-write instead of each computing it on its first request.
    """

    def __init__(self, options: dict[str, Any]):
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        from analysis import Position

        from . import create_app

        app = create_app()
        compute(Position(), "expected-brains")
        return app


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, type=int, show_default=True)
@click.option("--workers", default=2, type=click.IntRange(min=1), show_default=True)
@click.option("--timeout", default=900, type=click.IntRange(min=1), show_default=True,
              help="Seconds a request may run: an objective asked for the first time can take minutes (Santa's "
                   "turn start: one and a half; `zombie-odds answers warm` stores it beforehand).")
def serve(host: str, port: int, workers: int, timeout: int) -> None:
    """Serve the HTTP API with gunicorn."""
    Server({"bind": f"{host}:{port}", "workers": workers, "timeout": timeout, "preload_app": True}).run()
