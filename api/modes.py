"""/v1/modes: the game modes the API serves, with their dice and faces, from analysis' tables.

Clients (a rules website, a dice picker) learn from here which die names a position may use in
each mode, instead of hard-coding them, and what every face does: its brains and shotguns, its
effect, and each effect's rule (`analysis.dice.EFFECTS`), the rescues and the dice that stay out,
all rendered from analysis' data. The API serves the modes that openapi.yaml names (`ModeName`).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify

from analysis import EFFECTS, MODES, Mode

from . import spec

__all__ = ["bp", "describe", "served"]

bp = Blueprint("modes", __name__)


def describe(mode: Mode) -> dict[str, Any]:
    """A mode as the spec's `Mode` schema documents it."""
    counts = dict(mode.cup)
    effects = {f.effect for die in mode.dice for f in die.faces}
    return {
        "name": mode.name,
        "title": mode.title,
        "bust_at": mode.bust_at,
        "dice_per_roll": mode.dice_per_roll,
        "dice": [
            {
                "name": die.name,
                "colour": die.colour,
                "count": counts[die.name],
                "faces": [
                    {"name": f.name, "brains": f.brains, "shotguns": f.shotguns, "footprints": f.footprints,
                     "effect": f.effect}
                    for f in die.faces
                ],
                "face_counts": [{"name": f.name, "count": n} for f, n in die.distinct_faces],
                "stays_out": die.stays_out,
            }
            for die in mode.dice
        ],
        "effects": [{"name": e.name, "bust_bonus": e.bust_bonus, "converts": list(e.converts)}
                    for e in EFFECTS.values() if e.name in effects],
        "rescues": [{"rescuer": a, "rescued": b} for a, b in mode.rescues],
    }


def served() -> list[Mode]:
    """The modes openapi.yaml lets a request name, in analysis' order."""
    names = spec.load()[1]["components"]["schemas"]["ModeName"]["enum"]
    return [mode for name, mode in MODES.items() if name in names]


@bp.get("/v1/modes")
def get_modes() -> Response:
    return jsonify({"modes": [describe(mode) for mode in served()]})
