"""Celery tasks: thin calls into analysis.game, composed into one graph per table.

A two-player table is solved layer by layer (`analysis.game.game_layers`): the units of a layer
(independent score pairs) run in parallel on any worker as the header of a chord, and the chord's
body, `advance`, joins them and starts the next layer's chord with everything known so far; after the
last layer it stores the table atomically. Progress (layers done / total) and the outcome are recorded
under the job's own id in the result backend, so `AsyncResult(job_id)` answers for the whole graph.
Every task is pure given its arguments (idempotent), acknowledged late (a killed worker's task is
redelivered), and retried only for transient faults (the broker or the disk briefly unavailable).
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from celery import chord, current_app, group, shared_task
from celery.result import AsyncResult
from kombu.exceptions import OperationalError

from analysis.game import WorkUnit, assemble, game_layers, merge, solve_layer

from .store import Key, Store

__all__ = ["solve_unit", "advance", "start_table_job", "store", "table_key", "job_status"]

TRANSIENT = (OperationalError, ConnectionError, TimeoutError)
RETRY = {"autoretry_for": TRANSIENT, "retry_backoff": True, "max_retries": 5, "acks_late": True}


def store() -> Store:
    """The store shared by the API and every worker (`ZOMBIE_ODDS_STORE`, default ./var/store)."""
    return Store(os.environ.get("ZOMBIE_ODDS_STORE", "var/store"))


def table_key(mode: str, variant: str, players: int) -> Key:
    return Key("table", mode, variant, players)


@shared_task(**RETRY)
def solve_unit(known: dict[str, Any], unit: dict[str, Any]) -> dict[str, Any]:
    """Solve one unit of a layer given every earlier layer's values; returns them plus this unit's."""
    return merge(known, solve_layer(WorkUnit.from_dict(unit), known))


def _join(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Join the units of one layer: each result holds the earlier layers too, so keep each pair once."""
    pairs = {}
    out: dict[str, Any] = {}
    for result in results:
        for a, b, x, y in result.get("pairs", []):
            pairs[(a, b)] = [a, b, x, y]
        if "tiebreak" in result:
            out["tiebreak"], out["final"] = result["tiebreak"], result["final"]
    out["pairs"] = sorted(pairs.values())
    return out


def _record(job_id: str, state: str, meta: dict[str, Any]) -> None:
    current_app.backend.store_result(job_id, meta, state)


@shared_task(**RETRY)
def advance(results: list[dict[str, Any]], job: dict[str, Any], layer: int) -> dict[str, Any]:
    """Layer `layer - 1` is done: join it, then start layer `layer`, or store the table after the last."""
    known = _join(results)
    layers = game_layers(job["mode"], job["variant"], job["split"])
    if layer < len(layers):
        _record(job["id"], "PROGRESS", {"done": layer, "total": len(layers) + 1, **_describe(job)})
        _launch(job, layers, layer, known)
        return {"layer": layer}
    solution = assemble(job["mode"], job["variant"], [known])
    key = table_key(job["mode"], job["variant"], job["players"])
    digest = store().put(key, solution.to_dict())
    summary = {"done": len(layers) + 1, "total": len(layers) + 1, **_describe(job), "key": key.name,
               "sha256": digest, "p_first_player_wins": solution.p_first_player_wins}
    _record(job["id"], "SUCCESS", summary)
    return summary


def _describe(job: dict[str, Any]) -> dict[str, Any]:
    return {"mode": job["mode"], "variant": job["variant"], "players": job["players"]}


def _launch(job: dict[str, Any], layers: list[list[WorkUnit]], layer: int, known: dict[str, Any]) -> None:
    units = group(solve_unit.s(known, unit.to_dict()) for unit in layers[layer])
    chord(units, advance.s(job, layer + 1)).apply_async()


def start_table_job(mode: str, variant: str = "before-draw", players: int = 2, split: int = 2,
                    job_id: str | None = None) -> str:
    """Start computing one table; returns the job id to follow with `job_status`."""
    if players != 2:
        raise ValueError("only two-player tables are computed by workers so far")
    job = {"id": job_id or str(uuid.uuid4()), "mode": mode, "variant": variant, "players": players, "split": split}
    layers = game_layers(mode, variant, split)
    _record(job["id"], "PROGRESS", {"done": 0, "total": len(layers) + 1, **_describe(job)})
    _launch(job, layers, 0, {})
    return job["id"]


def job_status(job_id: str) -> tuple[str, dict[str, Any]]:
    """(state, meta) of a table job: PROGRESS with done/total, SUCCESS with the stored table, or FAILURE."""
    result = AsyncResult(job_id, app=current_app)
    meta = result.info if isinstance(result.info, dict) else {"error": str(result.info)}
    return result.state, meta
