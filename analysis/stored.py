"""Which stored solutions there are: one per mode, recycle variant and School Bus or not, but those in `UNSOLVED`.

The modes are `dice.MODES`, read when asked (`combinations`): a mode added there is stored like the others.

`build` makes one (`solutions.build` without the bus, `bus_solutions.build` with it) and `open_turn` reads one back
from its arrays, whichever it is: the workers store what `build` returns and the server answers from what `open_turn`
returns, both without knowing which kind of turn it is. Either kind answers the same questions (`odds.stored_odds`
asks them): a position's node (`node`), its actions but stop and what each rolls (`actions`), every legal action's
value (`action_values`), nodes' values (`values`) and the score distribution of rolling one (`score_distribution`);
a plain turn's one action is ``roll``, its node's own roll.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import bus_solutions, solutions
from .dice import MODES
from .position import RECYCLE_VARIANTS

__all__ = ["combinations", "UNSOLVED", "build", "open_turn", "AnyStoredTurn"]

# (mode, School Bus) whose whole turn is not solved here, and why: their positions are solved for the request, exactly
# near the end of a turn.
UNSOLVED = {("direct-to-video-sequel", True): "its School Bus turn's table alone passes 10 GB (over 4 million nodes)"}


def combinations() -> tuple[tuple[str, str, bool], ...]:
    """Every stored solution, (mode, recycle, school_bus): the base game first, the School Bus after every mode
    without it."""
    return tuple((mode, recycle, bus) for bus in (False, True) for mode in MODES for recycle in RECYCLE_VARIANTS
                 if (mode, bus) not in UNSOLVED)

AnyStoredTurn = solutions.StoredTurn | bus_solutions.StoredBusTurn


def build(mode: str, recycle: str, school_bus: bool) -> tuple[dict, dict[str, np.ndarray]]:
    """Solve one combination's whole turn for expected brains: (meta, arrays), the meta as JSON values."""
    if (mode, school_bus) in UNSOLVED:
        raise ValueError(f"{mode} with the School Bus has no stored solution: {UNSOLVED[mode, school_bus]}")
    return (bus_solutions if school_bus else solutions).build(mode, recycle)


def open_turn(meta: Mapping, arrays: Mapping[str, np.ndarray]) -> AnyStoredTurn:
    """The stored solution `build` made, read from its arrays."""
    return (bus_solutions.StoredBusTurn if meta.get("school_bus") else solutions.StoredTurn)(meta, arrays)
