"""What the analysis keeps in memory between questions: one owner, and one size, per kind of turn.

Answering a question about a turn builds its table, then its solution, then (where asked) its exact values, each
from the one before, and keeps each one so that the next question about the same turn reads it instead. Turns come
in four kinds, kept apart because they differ in size and in how often they are asked about again:

* a *whole* turn (a mode's, from its start, per recycle variant and objective): few, asked about again and again,
  so every one is kept (at most 4 modes x 2 variants per objective);
* a *rooted* turn (the states one position can still reach, for the questions no stored solution answers): one per
  position, rarely asked about twice, and large (up to 4.4 GB with the School Bus and its exact values), so only the
  last few are kept: a server answering many positions does not keep every table it built;
* each of these with the School Bus, whose turns are ten times larger.

Table, solution and exact values of one kind share its size (`SIZES`), so that a kept solution's table is kept too.
`forget` drops what a kind keeps (a process building every stored solution would otherwise keep them all).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

__all__ = ["SIZES", "kept", "forget"]

# How many turns of each kind are kept, per step (table, solution, exact values).
SIZES = {"whole": 64, "rooted": 2, "bus whole": 16, "bus rooted": 1}

F = TypeVar("F", bound=Callable)
_owned: dict[str, list] = {kind: [] for kind in SIZES}


def kept(kind: str) -> Callable[[F], F]:
    """Decorate a step that builds a turn of `kind`: its last ``SIZES[kind]`` results are kept."""
    def keep(build: F) -> F:
        cached = lru_cache(maxsize=SIZES[kind])(build)
        _owned[kind].append(cached)
        return cached  # type: ignore[return-value]
    return keep


def forget(*kinds: str) -> None:
    """Drop every turn kept of these kinds (all kinds if none is named)."""
    for kind in kinds or tuple(SIZES):
        for cached in _owned[kind]:
            cached.cache_clear()
