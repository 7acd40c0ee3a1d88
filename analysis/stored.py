"""Which stored solutions there are: one per mode, recycle variant and School Bus or not.

The modes are `dice.MODES`, read when asked (`combinations`): a mode added there is stored like the others.

`build` makes one (`solutions.build` without the bus, `bus_solutions.build` with it) and `open_turn` reads one back
from its arrays, whichever it is: the workers store what `build` returns and the server answers from what `open_turn`
returns, both without knowing which kind of turn it is. Either kind is a `turn.TurnSolution`, the questions
`odds.answer_from` asks of every solved turn; a plain turn's one action is ``roll``, its node's own roll.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import bus_solutions, solutions
from .dice import MODES
from .position import RECYCLE_VARIANTS

__all__ = ["combinations", "build", "build_memory", "open_turn", "AnyStoredTurn"]

# The most memory one build takes, measured (bench/README.md): the sequel's School Bus turn has 3.8 million nodes and
# 66 million rolls, whose sweep keeps a window of score levels of every node (5 GiB at most); every other build takes
# under 2.5 GB.
BUILD_MEMORY = {("direct-to-video-sequel", True): 6 * 2**30}
DEFAULT_BUILD_MEMORY = 5 * 2**29


def combinations() -> tuple[tuple[str, str, bool], ...]:
    """Every stored solution, (mode, recycle, school_bus): the base game first, the School Bus after every mode
    without it."""
    return tuple((mode, recycle, bus) for bus in (False, True) for mode in MODES for recycle in RECYCLE_VARIANTS)


def build_memory(mode: str, school_bus: bool) -> int:
    """Bytes of memory the build of (mode, School Bus) takes at its peak, a measured upper bound."""
    return BUILD_MEMORY.get((mode, school_bus), DEFAULT_BUILD_MEMORY)


AnyStoredTurn = solutions.StoredTurn | bus_solutions.StoredBusTurn


def build(mode: str, recycle: str, school_bus: bool) -> tuple[dict, dict[str, np.ndarray]]:
    """Solve one combination's whole turn for expected brains: (meta, arrays), the meta as JSON values."""
    return (bus_solutions if school_bus else solutions).build(mode, recycle)


def open_turn(meta: Mapping, arrays: Mapping[str, np.ndarray]) -> AnyStoredTurn:
    """The stored solution `build` made, read from its arrays."""
    return (bus_solutions.StoredBusTurn if meta.get("school_bus") else solutions.StoredTurn)(meta, arrays)
