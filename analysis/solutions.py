"""A mode's whole turn solved once, as flat arrays: what every position of the mode is answered from.

`build` solves the expected-brains objective over every dice state a turn of the mode can reach
(`policy.solve` over `table.table_for`) and lays out, as named numpy arrays, everything an answer reads:
the roll values held per level (the solver's ragged layout, `policy.Solution`), each state's bust and gain
(the value of a roll above its held levels), and the table's rolls as CSR arrays with float probabilities
(the turn's score distribution flows over them). `StoredTurn` reads those arrays from any mapping, so the
workers store them once and every server process maps the same files read-only.

Why floats: the values are ratios of integers of thousands of digits, and the decision only needs to know
on which side of the stop value a roll lies. Every value carries a certified bound, `within`:

* A roll at (state, score) is ``r = (sum_k p_k W_k + sum_d s_d S(T + d)) / (1 - p)``: at most ``m`` products
  of a rounded probability (relative error u = 2^-53) and an earlier value, summed in floating point.
  Given exact earlier values, the computed ``r`` is within ``delta = (2 gamma_m + 2u) M`` of the exact one,
  where ``gamma_m = m u / (1 - m u)`` (Higham, *Accuracy and Stability of Numerical Algorithms*, 3.1),
  ``m`` the most results of one roll plus the levels a roll spans plus two, and ``M`` bounds every value
  (the top level plus the largest gain of a roll).
* An earlier value's error passes on at most once per roll: the weights ``p_k`` sum to at most ``1 - q - p``
  and the self-loop divides by ``1 - p``, so ``E(x) <= delta / (1 - p) + max E(successor)``; ``max(S, r)`` does
  not increase an error, and a stop value is exact. The rolls of a turn go, in the solver's order, to an
  earlier block, a higher level or an earlier layer, so a chain of rolls has at most
  ``L = (top + 1 + blocks |min_delta|) x layers`` links, and every value is within ``L delta / (1 - p_max)``.
* A capped table (a state that cannot bust: Santa's helmet) stops every state above ``top``; the cap moves
  no value at a score up to the bound by more than 1e-12 (tests/analysis/test_policy.py solves it twice as far),
  which is added.

The decision compares the roll with the exact stop value: ``roll`` or ``stop`` where they differ by more
than the bound, ``tie`` where the bound cannot tell them apart. The score distribution is that of the float
policy (roll where the float roll value beats the stop value, ties stop, as exact.py's policy), flowing in
floats (`flow.turn_flow`, compiled); masses below `flow.PRUNE` are dropped and added to its bound, with the rounding
of ``L`` steps. The turn start's distribution (the longest flow, and the question asked most) is worked out by
`build` and stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .dice import MODES
from .flow import ring_size, turn_flow
from .objectives import ExpectedBrains
from .policy import solve
from .position import DiceState, Position
from .table import spread, state_code, table_for

__all__ = ["Stored", "StoredTurn", "build", "decide", "rounding", "spread", "CAP_EFFECT", "UNIT"]

UNIT = 2.0 ** -53
CAP_EFFECT = 1e-12  # the most a cap moves a value (module docstring)


def build(mode: str, recycle: str) -> tuple[dict, dict[str, np.ndarray]]:
    """Solve a mode's whole turn for expected brains: (meta, arrays), the meta as JSON values."""
    table = table_for(mode, recycle)
    solution = solve(mode, recycle, ExpectedBrains())
    n = len(table)
    block = np.empty(n, dtype=np.int8)
    layer = np.empty(n, dtype=np.int8)
    for b, layers in enumerate(table.blocks):
        for k, members in enumerate(layers):
            block[members], layer[members] = b, k
    code_order = np.argsort(table.codes, kind="stable")
    arrays = {
        "codes": table.codes,
        "sorted_codes": table.codes[code_order],
        "code_order": code_order,
        "order": solution.order,
        "rank": solution.rank,
        "offsets": solution.offsets,
        "rolls": solution.rolls,
        "bust": table.bust_f,
        "gain": table.gain_f,
        "loop": table.self_loop_f,
        "edge_ptr": table.edge_ptr,
        "edge_delta": table.edge_delta.astype(np.int8),
        "edge_to": table.edge_to.astype(np.int32),
        "edge_p": table.edge_ways / table.denominator[table.edge_from],
        "block": block,
        "layer": layer,
    }
    most_results = int(np.diff(table.edge_ptr).max(initial=0))
    top_value = max(float(np.abs(solution.rolls).max(initial=0.0)), solution.top + table.max_delta)
    gamma, delta = rounding(most_results + (table.max_delta - table.min_delta + 1) + 2, top_value)
    links = (solution.top + 1 + len(table.blocks) * -table.min_delta) * sum(len(b) for b in table.blocks)
    within = links * delta / (1 - float(table.self_loop_f.max(initial=0.0))) + (CAP_EFFECT if solution.capped else 0)
    meta = {"mode": mode, "recycle": recycle, "objective": "expected-brains", "states": n,
            "rolls": int(len(table.edge_to)), "top": solution.top, "capped": solution.capped,
            "compulsory": bool(table.compulsory), "min_delta": table.min_delta, "within": within,
            "distribution_within": links * gamma}
    # the turn start's distribution, the question asked most and the longest flow: worked out once, here
    start, bound = StoredTurn(meta, arrays).score_distribution(0, 0)
    arrays["start_scores"] = np.array(list(start), dtype=np.int64)
    arrays["start_probabilities"] = np.array(list(start.values()))
    meta["start_within"] = bound
    return meta, arrays


@dataclass(frozen=True, eq=False)
class Stored:
    """A stored solution, with or without the School Bus: its meta (JSON values) and its arrays, from any mapping
    of names to arrays (memory-mapped files), every value within the bound its meta states."""

    meta: Mapping
    arrays: Mapping[str, np.ndarray]

    @property
    def within(self) -> float:
        """The bound on ``|float - exact|`` of every value (module docstring)."""
        return float(self.meta["within"])

    def decision(self, i: int, score: int, values: dict[str, float]) -> str:
        """The best of node `i`'s action `values` at `score`, or ``tie`` where the bound cannot separate two
        (`decide`)."""
        return decide(values, self.within)


class StoredTurn(Stored):
    """A stored solution (`build`): the plain turn's."""

    def node(self, position: Position) -> int | None:
        """The state of a position (`index`), as every stored turn names its nodes."""
        return self.index(position.state)

    def index(self, state: DiceState) -> int | None:
        """The number of a dice state, or None if no turn of the mode reaches it."""
        a = self.arrays
        code = state_code(MODES[self.meta["mode"]], state)
        k = int(np.searchsorted(a["sorted_codes"], code))
        if k == len(a["sorted_codes"]) or int(a["sorted_codes"][k]) != code:
            return None
        return int(a["code_order"][k])

    def _slot(self, i: int, score: int) -> int:
        if not 0 <= score <= self.meta["top"]:
            return -1
        a = self.arrays
        k, lo = int(a["rank"][i]), int(a["offsets"][score])
        return lo + k if k < int(a["offsets"][score + 1]) - lo else -1

    def roll(self, i: int, score: int) -> float:
        """The value of rolling at (state `i`, `score`) and then playing on optimally."""
        k = self._slot(i, score)
        if k >= 0:
            return float(self.arrays["rolls"][k])
        a = self.arrays
        return float((1.0 - a["bust"][i]) * score + a["gain"][i])  # above its bound every result stops

    def rolls_at(self, states: np.ndarray, score: int) -> np.ndarray:
        """Whether the policy rolls at each of `states` at `score` (ties stop; the empty turn always rolls)."""
        a = self.arrays
        out = np.zeros(len(states), dtype=bool)
        if 0 <= score <= self.meta["top"]:
            lo, k = int(a["offsets"][score]), a["rank"][states]
            held = k < int(a["offsets"][score + 1]) - lo
            out[held] = a["rolls"][lo + k[held]] > score
        if self.meta["compulsory"]:
            out[states == 0] = True
        return out

    def actions(self, i: int) -> dict[str, int]:
        """The one action but stop, ``roll``, and what it rolls: the state's own roll (`StoredBusTurn.actions`)."""
        return {"roll": i}

    def action_values(self, i: int, score: int) -> dict[str, float]:
        """``roll`` and ``stop`` at (state `i`, `score`) -> their values; ``roll`` alone at the start of a turn (the
        empty state at score 0), where it is compulsory."""
        roll = self.roll(i, score)
        if (i, score) == (0, 0) and self.meta["compulsory"]:
            return {"roll": roll}
        return {"roll": roll, "stop": float(score)}

    @cached_property
    def max_delta(self) -> int:
        """The most brains one roll adds."""
        return int(self.arrays["edge_delta"].max(initial=0))

    @cached_property
    def _flow(self) -> tuple:
        """`flow.turn_flow`'s arguments that do not depend on the question, in its order."""
        a, m = self.arrays, self.meta
        ring = ring_size(int(a["block"].max(initial=0)) + 1, int(m["min_delta"]), self.max_delta)
        return (a["edge_ptr"], a["edge_to"], a["edge_delta"], a["edge_p"], a["bust"], a["loop"],
                a["rank"], a["offsets"], a["rolls"], int(m["top"]), bool(m["compulsory"]), ring)

    def score_distribution(self, i0: int, score0: int) -> tuple[dict[int, float], float]:
        """P(final turn score = k) if the player rolls now and then follows the policy, and its bound.

        A forward flow of probability under the stored policy (`flow.turn_flow`), in floats: masses below
        `flow.PRUNE` are dropped and counted in the bound, with the rounding of ``L`` steps."""
        a = self.arrays
        if (i0, score0) == (0, 0) and "start_scores" in a:
            return dict(zip(a["start_scores"].tolist(), a["start_probabilities"].tolist())), self.meta["start_within"]
        ended = np.zeros(max(int(self.meta["top"]), score0) + self.max_delta + 1)
        closed = bool(self.rolls_at(np.array([i0]), score0)[0])
        dropped = turn_flow(i0, score0, closed, *self._flow, ended)
        return ({int(k): float(ended[k]) for k in np.flatnonzero(ended > 0)},
                dropped + float(self.meta["distribution_within"]))


def decide(values: dict[str, float], within: float) -> str:
    """The best of the actions' `values` (floats within `within` of the exact ones; ``stop``'s exact), or ``tie``
    where the bound cannot separate it from another: one bound against ``stop``, two between floats."""
    best = max(values, key=values.get)
    for name, v in values.items():
        if name != best and values[best] - v <= within * (1 if "stop" in (name, best) else 2):
            return "tie"
    return best


def rounding(terms: int, top_value: float) -> tuple[float, float]:
    """(gamma_m, delta) of the module docstring: a sum of `terms` rounded products of values at most `top_value`
    is within ``delta = (2 gamma_m + 2u) M`` of the exact sum of the exact earlier values."""
    gamma = terms * UNIT / (1 - terms * UNIT)
    return gamma, (2 * gamma + 2 * UNIT) * top_value
