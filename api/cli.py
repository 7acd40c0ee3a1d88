"""The `zombie-odds` command: the same answers in a terminal, and the production server.

    zombie-odds odds --footprints green,red --brains green --shotguns red
    zombie-odds odds --objective reach:13 --json
    zombie-odds serve --port 8000 --workers 2
    zombie-odds tables build --mode original
    zombie-odds answers warm --mode santa-claus-meets-the-zombies

`odds` builds its position with the HTTP API's own functions (answers.position_from, odds.answer_for),
so both say the same thing and refuse the same positions; an impossible position prints a
`--option: reason` line per fault (the API's field named by its option) and exits with status 2, like
any other usage error. Its answer is short (a few lines of the score distribution); `--verbose` has
every outcome of the next roll, every tyre-tracks choice and the whole distribution, `--json` the API's
answer.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import fields
from typing import Any

import click
from gunicorn.app.base import BaseApplication

from analysis import MODES, Position, Win
from analysis.odds import EXPECTED_BRAINS, stored_solution
from analysis.position import DOUBLE_FEATURE_FIELDS, PILES, POSITION_FIELDS, RECYCLE_VARIANTS
from workers import solutions as solution_jobs
from workers.shared import store
from workers.store import ENGINE_VERSION
from workers.tables import QUEUE_ERRORS, join, no_table_reason, status, submit

from .answers import answer_key, read_position, shared_answer
from .errors import ApiError, FieldError
from .odds import answer_for
from .spec import objective_fault

__all__ = ["main", "Server", "render"]


@click.group()
def main() -> None:
    """Exact odds for Zombie Dice."""


class Names(click.ParamType):
    """A list of names, comma-separated: `green,red` -> ("green", "red"); an empty string is an empty list, anything
    else is kept as given (Position names every unknown name)."""

    name = "names"

    def convert(self, value: str, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, ...]:
        return tuple(value.split(",")) if value else ()


class LiveChoice(click.Choice):
    """A choice among the keys of `names` as they are when asked, not when the command was made: `analysis.MODES`,
    to which a mode is one row added (even at run time), is read alike by --help, by validation and by completion."""

    def __init__(self, names: Mapping[str, object]) -> None:
        self.names = names
        super().__init__(names)

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self.names)

    @choices.setter
    def choices(self, _: tuple[str, ...]) -> None:
        """(click.Choice sets its choices once; these are read from `names` each time)"""


# The help of `odds`'s option for each field of a position (analysis.position.POSITION_FIELDS, which makes the
# options, in its order). The rest is Position's: its default, and its kind (a list of names is comma-separated, a
# number an integer, a boolean a flag); `mode` and `recycle` are choices.
POSITION_HELP = {
    "mode": "Game mode.",
    "footprints": "Footprint dice in hand, comma-separated.",
    "brains": "The brain pile, comma-separated.",
    "shotguns": "The shotgun pile, comma-separated.",
    "banked": "Brains noted when the cup ran out.",
    "recycle": "The recycling rule.",
    "double_brains": "Double Feature: dice of the brain pile showing a double brain, comma-separated.",
    "double_shotguns": "Double Feature: dice of the shotgun pile showing a double shotgun, comma-separated.",
    "effects": "Double Feature: Santa's effects in force, comma-separated (energy-drink, helmet).",
    "kept_out": "Double Feature: dice kept out of the cup by a recycling (santa).",
    "school_bus": "Play with the School Bus.",
    "bus_brains": "School Bus: brain tokens taken from the bus this turn.",
    "bus_shotguns": "School Bus: shotgun tokens taken from the bus this turn.",
    "riding": "School Bus: the player rides the bus.",
    "bus_out": "School Bus: the bus is out for the rest of the turn.",
}
NAMES = Names()
CHOICES = {"mode": LiveChoice(MODES), "recycle": click.Choice(RECYCLE_VARIANTS)}


def position_options(command: Callable[..., None]) -> Callable[..., None]:
    """`command` with an option per field of a position (`POSITION_HELP`), each passed by its field's name."""
    defaults = {f.name: f.default for f in fields(Position)}
    for name in reversed(POSITION_FIELDS):  # (click lists the options in the reverse order of their decorators)
        default = defaults[name]
        if isinstance(default, bool):
            kind: dict[str, Any] = {"default": default, "is_flag": True}
        elif isinstance(default, int):
            kind = {"default": default, "type": int, "show_default": True}
        elif isinstance(default, tuple):  # (none: "")
            kind = {"default": "", "type": NAMES, "metavar": "DICE" if name in PILES else name.upper()}
        else:
            kind = {"default": default, "type": CHOICES[name], "show_default": True}
        command = click.option(f"--{name.replace('_', '-')}", name, help=POSITION_HELP[name], **kind)(command)
    return command


@main.command("odds")
@position_options
@click.option("--objective", default="expected-brains", show_default=True,
              help="expected-brains, reach:K (1 <= K <= 40) or rule:N,S (1 <= N <= 100, 1 <= S <= 3).")
@click.option("--exact", is_flag=True, help="Exact values and score distribution (the base game; as exact=true).")
@click.option("--verbose", is_flag=True, help="Every outcome of the next roll, every tyre-tracks choice and the "
              "whole score distribution (by default the first few scores).")
@click.option("--json", "as_json", is_flag=True, help="Print the HTTP API's JSON answer.")
def odds_command(objective: str, exact: bool, verbose: bool, as_json: bool, **position: Any) -> None:
    """The odds of a position: next roll, decision, final score.

    The options are /v1/odds's fields (`--kept-out` for `kept_out`, ...); the School Bus's options other than
    --school-bus need it, as over HTTP. Whether the next roll is the turn's first (`first_roll`) is not an
    option: it follows from the piles (nothing rolled yet), and the answer says it."""
    values = {**position, "objective": objective, "exact": exact}
    try:
        _check_objective(values)
        result = _answer(values)  # a position too large to solve is refused too
    except ApiError as e:
        for error in e.errors:
            click.echo(f"{_option(error.field)}: {_options_in(error.reason)}", err=True)
        raise SystemExit(2) from None
    click.echo(json.dumps(result, indent=2) if as_json else render(result, verbose))


def _check_objective(values: dict[str, Any]) -> None:
    """Refuse an objective the API's schema refuses (`reach:50`) as its 422 does, in words, with the position's own
    faults; and `win`, which needs the game's scores (this command does not take them). Ranges the schema lets
    through (`rule:0,1`) are refused by position_from, in the same words."""
    objective = values["objective"]
    if objective == Win.name:
        fault = ("win needs the game's scores and seat, which this command does not take: ask the HTTP API "
                 "(/v1/odds or /v1/win.txt with scores and seat)")
    else:
        fault = objective_fault(objective)
    if fault is None:
        return
    raise ApiError(422, fault, [*read_position(values)[1], FieldError("objective", fault)])


def _options() -> dict[str, str]:
    """API field -> the `odds` option that sets it (`bus_brains` -> `--bus-brains`)."""
    return {p.name: p.opts[0] for p in odds_command.params if isinstance(p, click.Option) and p.name}


def _option(field: str) -> str:
    """An API field as the option that sets it: `bus_brains` -> `--bus-brains`, `kept_out[0]` -> `--kept-out
    (item 1)`; a field no option sets (none should) as it is."""
    name, index = re.fullmatch(r"([^\[.]*)(?:\[(\d+)\])?.*", field).groups()
    flag = _options().get(name, field)
    return f"{flag} (item {int(index) + 1})" if index is not None and flag != field else flag


def _options_in(reason: str) -> str:
    """A reason as the command's user reads it: the API's field names with an underscore (`bus_brains without
    school_bus`) as the options (`--bus-brains without --school-bus`), and a one-word one named with such an option
    (`riding and bus_out`); elsewhere a word such as `brains` or `riding` is the game's word, left alone."""
    flags = _options()
    names = sorted((f for f in flags if "_" in f), key=len, reverse=True)
    reason = re.sub(rf"\b({'|'.join(names)})\b", lambda m: flags[m[1]], reason)
    return re.sub(r"(?<![\w-])([a-z]+)(?= (?:and|without) --)", lambda m: flags.get(m[1], m[1]), reason)


def _answer(values: dict[str, Any]) -> dict[str, Any]:
    """The HTTP API's answer; a stored solution it needs and that is not built is built here first."""
    from . import create_app

    try:
        with create_app({"SHARE_ANSWERS_AFTER": None}).app_context():
            return answer_for(values)
    except ApiError as e:
        job = e.extensions.get("job", "")
        if e.status != 503 or not job.startswith("/v1/solutions/"):
            raise
    mode, recycle, bus = values["mode"], values["recycle"], bool(values.get("school_bus"))
    click.echo(f"building the stored solution of {mode}{' with the School Bus' if bus else ''} ({recycle}) first: "
               "seconds to minutes", err=True)
    try:
        solution_jobs.build_and_store(mode, recycle, bus)
    except solution_jobs.NotEnoughMemory as e:
        raise click.ClickException(str(e)) from None
    with create_app({"SHARE_ANSWERS_AFTER": None}).app_context():
        return answer_for(values)


def _exact(value: dict[str, Any]) -> str:
    """The exact fraction when it is short enough to read; --json has them all (a float value: its bound)."""
    if "exact" not in value:
        return f"float, within {value['within']:.0e}"
    exact = value["exact"]
    return exact if len(exact) <= 24 else f"{len(exact)}-character fraction, see --json"


# Without --verbose: the outcomes of the next roll when there are at most this many (the base game's at most 10; a
# Double Feature roll's up to 30 or so, summed up in a line), and this many lines of the score distribution.
OUTCOME_LINES = 10
SCORE_LINES = 5


def render(result: dict[str, Any], verbose: bool = False) -> str:
    """A JSON answer for people: position, next roll, outcomes, decision, the first scores; `verbose`, every outcome,
    every tyre-tracks choice and every score."""
    p, roll, d = result["position"], result["next_roll"], result["decision"]
    cup = ", ".join(f"{die} {n}" for die, n in p["cup"].items())
    out = [
        f"Position   {p['mode']}, recycle {p['recycle']}" + (", School Bus" if p.get("school_bus") else ""),
        f"  footprints  {' '.join(p['footprints']) or '-'}",
        f"  brains      {' '.join(p['brains']) or '-'}",
        f"  shotguns    {' '.join(p['shotguns']) or '-'}",
        # Double Feature: double faces, effects, dice kept out (only those in play)
        *(f"  {k.replace('_', ' '):<11} {' '.join(p[k])}" for k in DOUBLE_FEATURE_FIELDS if p.get(k)),
        f"  banked      {p['banked']} (turn score {p['score']})",
        *(_bus_lines(p) if p.get("school_bus") else []),
        f"  cup         {cup}",
        "Next roll" + ("   (the cup runs out: the brain dice go back first)" if roll["recycles"] else ""),
        f"  bust             {roll['bust']['value']:.4%}  ({_exact(roll['bust'])})",
        f"  expected brains  {roll['expected_brains']['value']:.4f}  ({_exact(roll['expected_brains'])})",
        *_outcome_lines(roll["outcomes"], verbose),
        f"Decision ({d['objective']}): {d['action'].upper()}",
        f"  roll  {d['roll']['value']:.6f}  ({_exact(d['roll'])})",
        f"  stop  {d['stop']['value']:.6f}  ({_exact(d['stop'])})",
    ]
    if "actions" in d:  # Double Feature and School Bus: every legal action's value
        out += [f"  {a['action']:<8} {a['value']['value']:.6f}" + (
            f"  (bust {a['next_roll']['bust']['value']:.4%})" if "next_roll" in a else "") for a in d["actions"]]
    out += _tyre_tracks_lines(d.get("give_up", ()), verbose)  # School Bus: tyre tracks on the best roll
    if "turn" not in result:  # the score distribution left out (`turn_left_out` says why)
        return "\n".join([*out, f"Final score: left out ({result['turn_left_out']})"])
    scores = result["turn"]["score_distribution"]
    lines = len(scores) if verbose else SCORE_LINES
    shown = f"first {lines} of {len(scores)}; --verbose: all" if len(scores) > lines else "all"
    out += [f"Final score if you roll now and play on optimally ({shown})", "  score  probability"]
    out += [f"  {s['score']:>5}  {s['value']:>11.4%}" for s in scores[:lines]]
    return "\n".join(out)


def _outcome_lines(outcomes: list[dict[str, Any]], verbose: bool) -> list[str]:
    if len(outcomes) > OUTCOME_LINES and not verbose:
        return [f"  {len(outcomes)} outcomes (brains, shotguns): --verbose lists each with its probability"]
    return ["  brains  shotguns  probability",
            *(f"  {o['brains']:>6}  {o['shotguns']:>8}  {o['value']:>11.4%}  {_exact(o)}" for o in outcomes)]


def _worth(choice: dict[str, Any]) -> str:
    return f"{choice['give_up']} {choice['value']['value']:.6f}"


def _tyre_tracks_lines(give_up: Sequence[dict[str, Any]], verbose: bool) -> list[str]:
    """Each result of the best roll where the bus's tyre tracks take something, and what to give up (`verbose`);
    otherwise one line: how likely, and what is given up how often."""
    if verbose:
        return [f"  tyre tracks ({g['probability']['value']:.4%}, pile {' '.join(g['brain_pile']) or '-'}): give up "
                f"{g['choice']}  [{', '.join(_worth(c) for c in g['choices'])}]" for g in give_up]
    if not give_up:
        return []
    chance = sum(g["probability"]["value"] for g in give_up)
    choices = Counter(g["choice"] for g in give_up)
    return [f"  tyre tracks ({chance:.4%} of the best roll, {len(give_up)} results): give up "
            + ", ".join(f"{choice} ({n})" for choice, n in choices.most_common()) + "; --verbose lists each"]


def _bus_lines(p: dict[str, Any]) -> list[str]:
    phase = "riding" if p["riding"] else "out for the turn" if p["bus_out"] else "not boarded yet"
    return [f"  bus         {phase}; tokens: {p['bus_brains']} brain(s), {p['bus_shotguns']} shotgun(s)"
            + ("; first roll of the turn (3 ordinary dice)" if p["first_roll"] else "")]


@main.group()
def tables() -> None:
    """Full-game win-probability tables."""


@tables.command("build")
@click.option("--mode", default="original", show_default=True, type=CHOICES["mode"], help="Game mode.")
@click.option("--variant", default="before-draw", show_default=True, type=CHOICES["recycle"],
              help="The recycling rule.")
@click.option("--players", default=2, show_default=True, type=click.IntRange(2, 8),
              help="Players: 2 or 3 in every mode, 4 in original (exactly; the API answers the other counts from "
                   "the two-player table, GET /v1/tables/MODE?players=N).")
def build(mode: str, variant: str, players: int) -> None:
    """Compute a table and store it, following its job with a progress bar.

    In this process without REDIS_URL; by the workers (`celery -A workers.celery_app worker`) with it. A stored
    table is not computed again, and a job already running is followed rather than started twice.
    """
    reason = no_table_reason(mode, players)
    if reason is not None:
        raise click.BadParameter(reason, param_hint="'--players'")
    try:
        job = submit(mode, variant, players)
        with click.progressbar(length=job.total, label=f"{mode}, {variant}, {players} players") as bar:
            bar.update(job.done)
            while job is not None and job.active:
                time.sleep(1)  # a job's status reads its durable record, which holds every value known so far
                job = status(job.key)
                if job is not None:
                    bar.update(job.done - bar.pos)
        if job is not None:
            join(job.key)  # in-process: the job's thread writes its last record after the table
    except QUEUE_ERRORS as e:
        raise click.ClickException(f"the job queue (Redis) cannot be reached: {e}") from None
    if job is None or job.state != "succeeded":
        raise click.ClickException(f"the job failed: {job.error if job else 'it was lost'}")
    click.echo(f"stored {job.key.name} in {store()} (sha256 {job.sha256})")
    click.echo(f"P(first player wins) = {job.p_first_player_wins:.6f}")


@main.group()
def solutions() -> None:
    """Stored turn solutions: every position of a mode is answered from its mode's (`ZOMBIE_ODDS_STORE`)."""


@solutions.command("build")
@click.option("--mode", "modes", multiple=True, type=CHOICES["mode"],
              help="Game mode (repeat for several; default: every mode).")
@click.option("--variant", "variants", multiple=True, type=CHOICES["recycle"],
              help="The recycling rule (repeat for both; default: both).")
@click.option("--school-bus/--no-school-bus", "bus", default=None,
              help="Only the School Bus's solutions, or only those without it (default: both).")
@click.option("--jobs", type=click.IntRange(min=1), default=len(os.sched_getaffinity(0)), show_default="one per core",
              help="Builds at once, each in a process of its own (1: one after the other, in this process).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def build_solutions(modes: tuple[str, ...], variants: tuple[str, ...], bus: bool | None, jobs: int,
                    quiet: bool) -> None:
    """Solve each chosen mode's whole turn and store it (the sequel's takes about 20 s of CPU and 2.4 GB, with the
    School Bus about 6 minutes and 5 GiB; the other modes' with the School Bus up to 26 s and 1.2 GB, the rest
    seconds). With several jobs the largest builds start first. A stored solution is not built again; a build
    this machine has not the memory for is not started (the command says so and fails, after building the others)."""
    chosen = [(m, v, b) for m, v, b in solution_jobs.combinations() if (not modes or m in modes) and
              (not variants or v in variants) and (bus is None or b == bus)]
    refused = []
    for mode, variant, b in list(chosen):
        try:
            solution_jobs.check_memory(mode, b)
        except solution_jobs.NotEnoughMemory as e:  # the others are built all the same
            refused.append(f"{mode}{', School Bus' if b else ''}, {variant}: {e}")
            chosen.remove((mode, variant, b))
    with click.progressbar(length=len(chosen), label="solutions", hidden=quiet) as bar:
        for mode, variant, b, error in _built(chosen, jobs):
            bar.update(1, f"{mode}{', School Bus' if b else ''}, {variant}")
            if error:
                refused.append(f"{mode}{', School Bus' if b else ''}, {variant}: {error}")
    if not quiet:
        for mode, variant, b in chosen:
            s = solution_jobs.status(mode, variant, b)
            if s.state != "built":
                continue
            size = f"{s.meta['nodes']:,} nodes" if b else f"{s.meta['states']:,} states"
            click.echo(f"{mode}{', School Bus' if b else ''}, {variant}: {s.state} ({size}, "
                       f"within {s.meta['within']:.1e})")
    if refused:
        raise click.ClickException("not built: " + "; ".join(refused))


def _built(chosen: list[tuple[str, str, bool]], jobs: int) -> Iterator[tuple[str, str, bool, str | None]]:
    """Build each of `chosen` (`workers.solutions.build_and_store`), `jobs` at a time: one at a time in this process,
    in order; more, each in a new process (which gives its memory back), the largest (by memory) first. Yields each
    as it is done, with why it was not built (too little memory left), or None."""
    if min(jobs, len(chosen)) <= 1:
        for mode, variant, b in chosen:
            yield mode, variant, b, _build_one(mode, variant, b)
        return
    order = sorted(chosen, key=lambda c: -solution_jobs.build_memory(c[0], c[2]))
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])  # (imported once: each build's process is a fork of that one)
    with ProcessPoolExecutor(jobs, mp_context=context, max_tasks_per_child=1) as pool:
        futures = {pool.submit(_build_one, *c): c for c in order}
        for future in as_completed(futures):
            yield *futures[future], future.result()


def _build_one(mode: str, variant: str, bus: bool) -> str | None:
    try:
        solution_jobs.build_and_store(mode, variant, bus)
    except solution_jobs.NotEnoughMemory as e:
        return str(e)
    return None


@main.group()
def answers() -> None:
    """Odds answers kept in the store for every server worker (`ZOMBIE_ODDS_STORE`)."""


@answers.command("warm")
@click.option("--mode", "modes", multiple=True, type=CHOICES["mode"],
              help="Game mode (repeat for several; default: every mode).")
@click.option("--variant", "variants", multiple=True, default=("before-draw",), show_default=True,
              type=CHOICES["recycle"], help="The recycling rule (repeat for both).")
@click.option("--school-bus/--no-school-bus", default=None, help="Only with (or without) the School Bus "
              "(default: both).")
def warm(modes: tuple[str, ...], variants: tuple[str, ...], school_bus: bool | None) -> None:
    """Compute the answer to the start of a School Bus turn in each mode and store it, so that no one waits for it:
    a server asked first takes a minute or more. A stored answer is not computed again; a turn start the server
    refuses is skipped, with why; one read from a stored solution needs no warming."""
    from . import create_app

    app, shelf, objective = create_app({"SHARE_ANSWERS_AFTER": 0, "ANSWER_WAIT": None}), store(), EXPECTED_BRAINS
    buses = (False, True) if school_bus is None else (school_bus,)
    for mode, variant, bus in itertools.product(modes or MODES, variants, buses):
        position = Position(mode=mode, recycle=variant, school_bus=bus)
        label = f"{mode}, {variant}{', School Bus' if bus else ''}"
        if stored_solution(position, objective) is not None:
            click.echo(f"{label}: read from its stored solution (zombie-odds solutions build), nothing to warm")
            continue
        if answer_key(position, objective) in shelf:
            click.echo(f"{label}: already stored")
            continue
        start = time.perf_counter()
        try:
            with app.app_context():
                shared_answer(position, objective)
        except ApiError as e:  # a turn start the server refuses (analysis.budgets.too_large)
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
        info = shelf.info(key)
        if key.kind != "answer" or info is None:
            continue
        if key.engine == ENGINE_VERSION and (older_than is None or now - info.written < older_than * 86400):
            kept += 1
            continue
        if not dry_run:
            shelf.remove(key)
        removed, freed = removed + 1, freed + info.size
    verb = "would remove" if dry_run else "removed"
    click.echo(f"{verb} {removed} answers ({freed / 1e6:.1f} MB) from {shelf}; kept {kept}")


class Server(BaseApplication):
    """gunicorn running `api.create_app()`, loaded once in the master (preload_app), with the settings of
    `api.serving.options` (threaded workers answering `/healthz` in their main thread, recycled by count and by
    memory, gunicorn's errors as problem+json, no shared control socket).

    Loading has every missing solution built (`start_solutions`): the master's background builder, whose child
    processes hold the memory a build takes, or the Celery workers. It also builds the request validator (api.spec)
    and answers two requests, so that no worker's first request (a health check) takes seconds to build them.
    """

    def __init__(self, options: dict[str, Any]):
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        from . import create_app
        from .spec import openapi

        app = create_app()
        openapi()
        with app.test_client() as client:  # what a process builds at its first requests, built once for every worker
            for path in ("/healthz", "/v1/modes"):
                client.get(path)
        solution_jobs.server = os.getpid()  # (this master: the background builder ends with it, not with a worker)
        start_solutions()
        if app.config["RATELIMIT_ENABLED"] and app.config["RATELIMIT_STORAGE_URI"].startswith("memory://") and \
                self.cfg.workers > 1:
            click.echo(f"rate limits are counted by each of the {self.cfg.workers} workers apart (no REDIS_URL): a "
                       "client may get up to that many budgets", err=True)
        return app


def start_solutions() -> None:
    """Have every missing solution built: by the Celery workers with `REDIS_URL`, else by the background builder (a
    child process, the base game first)."""
    try:
        solution_jobs.submit_missing()
    except QUEUE_ERRORS as e:
        click.echo(f"the job queue cannot be reached ({e}); solutions are built when it is asked again", err=True)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, type=int, show_default=True)
@click.option("--workers", default=2, type=click.IntRange(min=1), show_default=True)
@click.option("--threads", default=2, type=click.IntRange(min=1), show_default=True,
              help="Request threads per worker (each may hold the memory of a computed answer; `/healthz` needs none).")
@click.option("--timeout", default=None, type=click.IntRange(min=1),
              help="gunicorn's worker timeout, seconds; it must be above the application's deadline per request "
                   "(ZOMBIE_ODDS_REQUEST_DEADLINE, default 20 s). [default: the deadline + 30]")
@click.option("--max-requests", default=10000, type=click.IntRange(min=0), show_default=True,
              help="Replace a worker after this many requests (0: never).")
@click.option("--max-requests-jitter", default=1000, type=click.IntRange(min=0), show_default=True,
              help="Up to this many more, at random per worker, so that workers are not replaced together.")
@click.option("--max-worker-memory", default=1024, type=click.IntRange(min=1), show_default=True, metavar="MB",
              help="Replace a worker left above this much memory of its own by a request (the stored solutions it "
                   "maps are shared, not counted; it finishes its requests first).")
@click.option("--control-socket", default=None, metavar="PATH",
              help="gunicorn's control socket for this server (`gunicornc`). [default: none]")
def serve(host: str, port: int, workers: int, threads: int, timeout: int | None, max_requests: int,
          max_requests_jitter: int, max_worker_memory: int, control_socket: str | None) -> None:
    """Serve the HTTP API with gunicorn (api.serving says how)."""
    from .serving import options

    try:
        settings = options(host, port, workers, threads, timeout, max_requests, max_requests_jitter,
                           max_worker_memory, control_socket)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--timeout") from None
    Server(settings).run()


if __name__ == "__main__":  # (the background builder runs `python -m api.cli solutions build ...`)
    main()
