"""What the analysis keeps in memory between questions: one owner, and one size, per kind of result.

Answering a question builds results from results (a turn's table, then its solution, then its exact values; a roll's
results from a dice state; a game's kernel, then its solution; a Lightning Dice card's chase, then its analysis) and
keeps each, so that the next question asking for the same one reads it instead. A function whose results are kept is
decorated ``kept(kind)``: its last ``SIZES[kind]`` results are kept, and `forget` drops them. The steps of one kind
share its size, so that a kept result's sources are kept with it (a kept solution's table, a kept analysis's chase).

Turns come in four kinds, kept apart because they differ in size and in how often they are asked about again:

* a *whole* turn (a mode's, from its start, per recycle variant and objective): few, asked about again and again,
  so every one is kept (at most 4 modes x 2 variants per objective);
* a *rooted* turn (the states one position can still reach, for the questions no stored solution answers): one per
  position, rarely asked about twice, and large (up to 4.4 GB with the School Bus and its exact values), so only the
  last few are kept: a server answering many positions does not keep every table it built;
* each of these with the School Bus, whose turns are ten times larger.

The other kinds are sized by the same two questions, how large and how often asked again (`SIZES`, a line each).
The game kinds' sizes hold every result the service asks for (a two-player game's for 4 modes x 2 variants; the
layers of 12 tables of more players, at 2 splits) and more than a test process asks for (counted in a run of the
suite): a game's result takes seconds to minutes, and none is pushed out.

Three kinds are kept inside the result they belong to, not by `kept`, and go with it: an exact turn's score
distributions, a game solution's sweeps, a seats solution's sweeps (a cache of the module's would keep alive every
turn it was asked about, a rooted one's gigabytes with it); forgetting an exact turn forgets its distributions.

Tables computed once from the rules alone stay plain ``functools.cache``: a mode's faces and the rolls of its dice
(roll.py, and table.py's arrays of them, a hundred or so per mode), the bus die's faces, the residues' primes,
Lightning Dice's tables of six dice. They are few and finite, every table search or answer reads them, and none is
worth forgetting.

`forget` drops what some kinds keep (a process building every stored solution would otherwise keep them all; the
tests drop the `TURNS` between groups).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

__all__ = ["SIZES", "TURNS", "kept", "forget"]

# How many results of each kind are kept, per step, and why that many.
SIZES = {
    "whole": 64,  # a whole turn (table, solution, exact values): few, asked again and again: all of them
    "rooted": 2,  # a turn rooted at a position: large, rarely asked twice
    "bus whole": 16,  # a whole School Bus turn: ten times a whole turn
    "bus rooted": 1,  # a rooted School Bus turn: up to 4.4 GB with its exact values
    "dice state": 4096,  # a roll from one dice state (roll.py): a server asked about every position would keep all
    "pile": 256,  # a Double Feature roll against one brain pile (roll.py): up to megabytes each
    "distribution": 4096,  # a score distribution, inside its exact turn (exact.py): a forward pass each
    "game": 16,  # a two-player game's kernel, solution, policy, rules' odds (game/): 8 served, 5 in a test process
    "game sweep": 16,  # a column's sweep, inside its game solution (game/solution.py): as large as a seats sweep
    "seats": 32,  # a game of more players' layers and spots (game/seats.py): 24 served, 14 in a test process
    "seats sweep": 8,  # a spot's sweep, inside its seats solution (game/seats.py): about 20 MB each in the base game
    "card": 256,  # a Lightning Dice card's chase and what is derived from it (lightning/): well under a second each
    "card text": 1024,  # a card parsed from its text (lightning/cards.py): small
}

TURNS = ("whole", "rooted", "bus whole", "bus rooted")  # the four kinds of turn above

F = TypeVar("F", bound=Callable)
_owned: dict[str, list] = {kind: [] for kind in SIZES}


def kept(kind: str) -> Callable[[F], F]:
    """Decorate a step that builds a result of `kind`: its last ``SIZES[kind]`` results are kept."""
    def keep(build: F) -> F:
        cached = lru_cache(maxsize=SIZES[kind])(build)
        _owned[kind].append(cached)
        return cached  # type: ignore[return-value]
    return keep


def forget(*kinds: str) -> None:
    """Drop every result kept of these kinds (all kinds if none is named)."""
    for kind in kinds or tuple(SIZES):
        for cached in _owned[kind]:
            cached.cache_clear()
