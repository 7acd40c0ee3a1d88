"""A mode's whole School Bus turn solved once, as flat arrays (the bus twin of `solutions`).

`build` solves expected brains over every node of the mode's bus turn (`policy.bus_solve` over
`table.bus_table_for`: decision, chance, tyre-tracks and stopped nodes) and keeps, per score level, the
decisions that do not certainly stop, with their float values and the options within 1e-9 of their best
(`BusSolution.candidates`): every other decision stops, so its value is its score. That is all a value needs:

* a decision is worth its stored value, or its score (a stored decision's value is ``max(stop, actions)``);
* a tyre node is worth the best of its choices (decisions at the same score);
* a chance node (an action's roll) is worth ``sum p V(result, T + d)`` over its results, its loops included:
  a loop's decision ``h`` is worth ``max(c_h, x)`` with ``x`` the roll itself, which is the term the sweep's
  closed form (`policy.close_loops`) solves for, so the stored ``V(h)`` reads it back. Above its block's
  solved levels every result stops: ``(1 - q) T + m``.

So an answer is one roll's results read against stored values, and the turn's score distribution a flow
over the same arrays under the stored policy (stop where stopping is a candidate, else the first candidate
action; a tyre node gives up its best brain).

The bound, `within`, follows `solutions`: every value is a sum of at most ``m`` rounded products of earlier
values (a roll's results, its loops, two), within ``delta = (2 gamma_m + 2u) M`` of the sum of the exact
earlier values; a loop divides by ``1 - sum q`` (at most ``1 - q_max``); a chain of earlier values runs at
most ``L = (top + 1 + blocks |min_delta|) x layers`` links per pass of the sweep, and a pass reads the last
one's values at the rescues' targets, so ``passes x L`` in all. With rescues (cyclic blocks) the values read
across passes are within `BusSolution.cycle_error` of their fixed point (certified by the solver: its last pass
reads them raised by a gap and comes out no higher), which is added. A capped turn
(Santa's helmet) adds `solutions.CAP_EFFECT`.
"""

from __future__ import annotations

import numpy as np

from .dice import MODES
from .flow import Flow
from .kept import forget
from .objectives import ExpectedBrains
from .policy import bus_solve
from .position import BusState, Position
from .solutions import CAP_EFFECT, Stored, rounding
from .table import BUS_ACTIONS, CHANCE, DECISION, STOPPED, TYRE, bus_node_code, bus_table_for, spread

__all__ = ["StoredBusTurn", "build", "ACTION_NAMES"]

ACTION_NAMES = BUS_ACTIONS  # (as the table numbers them)


def build(mode: str, recycle: str) -> tuple[dict, dict[str, np.ndarray]]:
    """Solve a mode's whole School Bus turn for expected brains: (meta, arrays), the meta as JSON values."""
    table = bus_table_for(mode, recycle)
    solution = bus_solve(mode, recycle, ExpectedBrains())
    forget("bus whole")  # (not kept: this build lets the solution, then the table, go as their arrays are made)
    vars(table).pop("layer_arrays", None)  # (the sweep's slices of the table, not stored: a gigabyte for the sequel)
    lengths = [len(a) for a in solution.candidate_nodes]
    candidates = {
        "cand_offsets": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        "cand_nodes": np.concatenate(solution.candidate_nodes).astype(np.int32),
        "cand_masks": np.concatenate(solution.candidate_masks).astype(np.int8),
        "cand_values": np.concatenate(solution.candidate_values),
    }
    top, tops, capped, passes, cycle_error = (solution.top, solution.tops, solution.capped, solution.passes,
                                              solution.cycle_error)
    del solution
    n = len(table)
    block = np.full(n, -1, dtype=np.int16)
    layer = np.zeros(n, dtype=np.int16)
    for b, layers in enumerate(table.blocks):
        for k, members in enumerate(layers):
            block[members], layer[members] = b, k
    lookup = np.lexsort((table.subs, table.dice_codes))
    den = table.den_ways.astype(np.float64)
    arrays = {
        "subs": table.subs.astype(np.int16),
        "sorted_codes": table.dice_codes[lookup],
        "lookup": lookup.astype(np.int32),
        "kind": table.kind,
        "can_stop": table.can_stop,
        "block": block,
        "layer": layer,
        "block_top": np.array(tops, dtype=np.int64),
        "act_ptr": table.act_ptr.astype(np.int64),
        "act_to": table.act_to.astype(np.int32),
        "act_name": table.act_name,
        "opt_ptr": table.opt_ptr.astype(np.int64),
        "opt_to": table.opt_to.astype(np.int32),
        "loop_ptr": table.loop_ptr.astype(np.int64),
        "loop_to": table.loop_to.astype(np.int32),
        "loop_p": _per_way(table.loop_ways, den, table.loop_ptr),
        "edge_ptr": table.edge_ptr,
        "edge_delta": table.edge_delta.astype(np.int8),
        "edge_to": table.edge_to.astype(np.int32, copy=False),
        "edge_p": _per_way(table.edge_ways, den, table.edge_ptr),
        "bust": table.bust_f,
        "gain": table.gain_f,
        **candidates,
    }
    del candidates
    results = np.diff(table.edge_ptr) + np.diff(arrays["loop_ptr"])
    top_value = max(float(np.abs(arrays["cand_values"]).max(initial=0.0)), top + table.max_delta)
    gamma, delta = rounding(int(results.max(initial=0)) + (table.max_delta - table.min_delta + 1) + 2, top_value)
    layers = sum(len(b) for b in table.blocks)
    links = (top + 1 + len(table.blocks) * -table.min_delta) * layers * passes
    loop_from = np.repeat(np.arange(n), np.diff(arrays["loop_ptr"]))
    loop_total = np.bincount(loop_from, weights=arrays["loop_p"], minlength=n)
    within = links * delta / (1 - float(loop_total.max(initial=0.0))) + cycle_error
    if capped:
        within += CAP_EFFECT
    meta = {"mode": mode, "recycle": recycle, "school_bus": True, "objective": "expected-brains", "nodes": n,
            "rolls": int(len(table.edge_to)), "top": top, "capped": capped, "passes": passes,
            "min_delta": table.min_delta, "within": within, "distribution_within": links * gamma}
    del table, results, loop_from, loop_total
    turn = StoredBusTurn(meta, arrays)
    start, bound = turn.score_distribution(int(arrays["act_to"][0]), 0)
    arrays["start_scores"] = np.array(list(start), dtype=np.int64)
    arrays["start_probabilities"] = np.array(list(start.values()))
    meta["start_within"] = bound
    return meta, arrays


def _per_way(ways: np.ndarray, den: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Each CSR item's probability, its ways over its row's denominator (divided in place: the sequel's 66 million
    rolls take half a gigabyte as floats)."""
    out = np.repeat(den, np.diff(ptr))
    return np.divide(ways, out, out=out)


class StoredBusTurn(Stored):
    """A stored School Bus solution (`build`)."""

    def node(self, position: Position) -> int | None:
        """The decision node of a position (`index`), as every stored turn names its nodes."""
        return self.index(position.bus_state)

    def index(self, state: BusState) -> int | None:
        """The decision node of a bus position, or None if no turn of the mode reaches it."""
        a = self.arrays
        code, sub = bus_node_code(MODES[self.meta["mode"]], state)
        lo, hi = np.searchsorted(a["sorted_codes"], [code, code + 1])
        for k in range(int(lo), int(hi)):
            i = int(a["lookup"][k])
            if int(a["subs"][i]) == sub:
                return i
        return None

    def actions(self, i: int) -> dict[str, int]:
        """The legal actions of decision node `i` but stop: name -> the chance node it rolls."""
        a = self.arrays
        lo, hi = int(a["act_ptr"][i]), int(a["act_ptr"][i + 1])
        return {ACTION_NAMES[int(k)]: int(j) for k, j in zip(a["act_name"][lo:hi], a["act_to"][lo:hi])}

    def can_stop(self, i: int) -> bool:
        return bool(self.arrays["can_stop"][i])

    # -- values -------------------------------------------------------------------------------------------
    def _candidates(self, nodes: np.ndarray, score: int) -> tuple[np.ndarray, np.ndarray]:
        """(whether each node is a candidate at `score`, its place in the candidate arrays)."""
        a = self.arrays
        if not 0 <= score <= self.meta["top"]:
            return np.zeros(len(nodes), dtype=bool), np.zeros(len(nodes), dtype=np.int64)
        lo, hi = int(a["cand_offsets"][score]), int(a["cand_offsets"][score + 1])
        here = a["cand_nodes"][lo:hi]
        k = np.searchsorted(here, nodes.astype(here.dtype))  # (in the array's own type: else numpy copies it)
        found = k < hi - lo
        found[found] = a["cand_nodes"][lo + k[found]] == nodes[found]
        return found, lo + k

    def values(self, nodes: np.ndarray, score: int) -> np.ndarray:
        """The value of each of `nodes` (decisions, tyre nodes, the stopped node) at `score`."""
        a = self.arrays
        kind = a["kind"][nodes]
        out = np.full(len(nodes), float(score))  # a decision that stops, the stopped node
        found, k = self._candidates(nodes, score)
        out[found] = a["cand_values"][k[found]]
        for r in np.flatnonzero((kind == DECISION) & ~found & ~a["can_stop"][nodes]).tolist():
            out[r] = max(self.chance_value(c, score) for c in self.actions(int(nodes[r])).values())
        tyre = kind == TYRE
        if tyre.any():
            out[tyre] = self._options(nodes[tyre], score)[2]
        return out

    def _options(self, tyre: np.ndarray, score: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Tyre nodes' choices, those of each in order: (each choice's tyre node, as a place in `tyre`; its decision
        node; per tyre node the best choice's value; each choice's value)."""
        a = self.arrays
        at = spread(a["opt_ptr"], tyre)
        owner = np.repeat(np.arange(len(tyre)), a["opt_ptr"][tyre + 1] - a["opt_ptr"][tyre])
        options = a["opt_to"][at].astype(np.int64)
        worth = self.values(options, score)
        best = np.full(len(tyre), -np.inf)
        np.maximum.at(best, owner, worth)
        return owner, options, best, worth

    def _best_options(self, tyre: np.ndarray, score: int) -> np.ndarray:
        """Per tyre node, the decision node of its best choice (the first of the best)."""
        owner, options, best, worth = self._options(tyre, score)
        top = np.flatnonzero(worth == best[owner])
        first = top[np.unique(owner[top], return_index=True)[1]]
        return options[first]

    def chance_value(self, c: int, score: int) -> float:
        """The value of rolling chance node `c` at `score` and then playing on by the policy."""
        a = self.arrays
        if score > int(a["block_top"][a["block"][c]]):  # above its block's solved levels every result stops
            return float((1.0 - a["bust"][c]) * score + a["gain"][c])
        lo, hi = int(a["edge_ptr"][c]), int(a["edge_ptr"][c + 1])
        to, delta, p = a["edge_to"][lo:hi], a["edge_delta"][lo:hi].astype(np.int64), a["edge_p"][lo:hi]
        total = 0.0
        for d in np.unique(delta).tolist():
            pick = delta == d
            total += float(p[pick] @ self.values(to[pick], score + d))
        lo, hi = int(a["loop_ptr"][c]), int(a["loop_ptr"][c + 1])
        if hi > lo:
            total += float(a["loop_p"][lo:hi] @ self.values(a["loop_to"][lo:hi], score))
        return total

    def action_values(self, i: int, score: int) -> dict[str, float]:
        """Every legal option of decision node `i` at `score` (``stop`` where it may) -> its value."""
        out = {"stop": float(score)} if self.can_stop(i) else {}
        out.update({name: self.chance_value(c, score) for name, c in self.actions(i).items()})
        return out

    # -- the policy and the score distribution -------------------------------------------------------------
    def policy(self, nodes: np.ndarray, score: int) -> np.ndarray:
        """Per decision node, the chance node the policy rolls at `score`, or -1 where it stops (stopping where
        it is a candidate; else the first candidate action)."""
        a = self.arrays
        found, k = self._candidates(nodes, score)
        out = np.full(len(nodes), -1, dtype=np.int64)
        mask = a["cand_masks"][k[found]].astype(np.int64)
        rolls = (mask & 1) == 0
        first = np.where(mask & 2, 0, 1)
        hit = np.flatnonzero(found)[rolls]
        out[hit] = a["act_to"][a["act_ptr"][nodes[hit]] + first[rolls]]
        for r in np.flatnonzero(~found & ~a["can_stop"][nodes]).tolist():  # the compulsory roll above `top`
            acts = self.actions(int(nodes[r]))
            out[r] = max(acts.values(), key=lambda c: self.chance_value(c, score))
        return out

    def score_distribution(self, c0: int, score0: int) -> tuple[dict[int, float], float]:
        """P(final turn score = k) if the player rolls chance node `c0` now and then follows the policy, and its
        bound. The masses flow in the reverse of the sweep's order (as `solutions.StoredTurn`'s); a loop whose
        decision rolls the same node again closes as a geometric series."""
        a = self.arrays
        if (c0, score0) == (int(a["act_to"][0]), 0) and "start_scores" in a:
            return dict(zip(a["start_scores"].tolist(), a["start_probabilities"].tolist())), self.meta["start_within"]
        kind = a["kind"]
        flow = Flow(a["block"], a["layer"], int(self.meta["min_delta"]) < 0)

        def push(nodes: np.ndarray, scores: np.ndarray, masses: np.ndarray) -> None:
            stopped = kind[nodes] == STOPPED  # the bus showed STOP: the turn ends there
            for score, mass in zip(scores[stopped].tolist(), masses[stopped].tolist()):
                flow.end(score, mass)
            flow.push(nodes[~stopped], scores[~stopped], masses[~stopped])

        def roll(c: np.ndarray, masses: np.ndarray, score: int) -> None:
            loops = spread(a["loop_ptr"], c)
            owner = np.repeat(np.arange(len(c)), a["loop_ptr"][c + 1] - a["loop_ptr"][c])
            h, q = a["loop_to"][loops].astype(np.int64), a["loop_p"][loops]
            again = self.policy(h, score) == c[owner]
            masses = masses / (1.0 - np.bincount(owner[again], weights=q[again], minlength=len(c)))
            flow.end(0, float(masses @ a["bust"][c]))
            push(h[~again], np.full(int((~again).sum()), score), masses[owner[~again]] * q[~again])
            edges = spread(a["edge_ptr"], c)
            push(a["edge_to"][edges].astype(np.int64), score + a["edge_delta"][edges].astype(np.int64),
                 np.repeat(masses, a["edge_ptr"][c + 1] - a["edge_ptr"][c]) * a["edge_p"][edges])

        roll(np.array([c0]), np.ones(1), score0)
        for score, nodes, masses in flow:
            here = np.full(len(nodes), score, dtype=np.int64)
            kinds = kind[nodes]
            pick = kinds == DECISION
            if pick.any():
                choice = self.policy(nodes[pick], score)
                stops = choice < 0
                flow.end(score, float(masses[pick][stops].sum()))
                push(choice[~stops], here[pick][~stops], masses[pick][~stops])
            pick = kinds == TYRE
            if pick.any():
                push(self._best_options(nodes[pick], score), here[pick], masses[pick])
            pick = kinds == CHANCE
            if pick.any():
                roll(nodes[pick], masses[pick], score)
        return flow.final(), flow.dropped + float(self.meta["distribution_within"])
