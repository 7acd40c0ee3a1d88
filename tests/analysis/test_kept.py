"""analysis/kept.py: one owner, one size per kind of result kept."""

from __future__ import annotations

import importlib

from analysis import exact, kept, policy, table
from analysis.kept import SIZES

from ..test_imports import modules


def test_a_kind_keeps_its_last_turns_only_and_forgets_them_on_demand() -> None:
    built: list[int] = []

    @kept.kept("rooted")
    def build(root: int) -> list[int]:
        built.append(root)
        return [root]

    first = build(0)
    assert build(0) is first
    for root in range(1, SIZES["rooted"] + 1):
        build(root)
    assert build(0) is not first  # pushed out by the later ones
    again = build(0)
    kept.forget("whole")  # another kind: nothing of this one is dropped
    assert build(0) is again
    kept.forget("rooted")
    assert build(0) is not again
    assert built == [0, *range(1, SIZES["rooted"] + 1), 0, 0]


def test_every_step_of_a_kind_is_kept_with_the_same_size() -> None:
    """A kept solution's table is kept too: table, solution and exact values of one kind share its size."""
    steps = {"whole": (table._whole_table, policy._solve_whole, exact._exact_whole),
             "rooted": (table._rooted_table, policy._solve_rooted, exact._exact_rooted),
             "bus whole": (table._bus_whole, policy._bus_solve_whole, exact._exact_bus_whole),
             "bus rooted": (table._bus_rooted, policy._bus_solve_rooted, exact._exact_bus_rooted)}
    for kind, cached in steps.items():
        assert {c.cache_parameters()["maxsize"] for c in cached} == {SIZES[kind]}
        assert all(c in kept._owned[kind] for c in cached)


def test_every_cache_of_the_analysis_with_a_size_is_kept_here() -> None:
    """A cache with a size keeps results: it is kept.py's, so that its size is one of `SIZES` and `forget` reaches it
    (a table computed once from the rules stays an unbounded `functools.cache`)."""
    caches = {f"{name}.{attr}": value for name in modules() if name.startswith("analysis.")
              for attr, value in vars(importlib.import_module(name)).items() if hasattr(value, "cache_parameters")}
    owned = {id(c) for steps in kept._owned.values() for c in steps}
    assert len(owned & {id(c) for c in caches.values()}) > 20  # (the walk finds the caches kept here)
    assert [name for name, c in caches.items() if c.cache_parameters()["maxsize"] and id(c) not in owned] == []
