"""Exact values and final-score distributions along a solved policy.

The float solution (policy.py) decides every action whose two values differ by more than
``MARGIN``; float error there is below 1e-12, so such decisions are certain. Exact rational
values are then computed lazily, by the same equations as policy.py but in exact arithmetic, only
for the states a question reaches, and memoised. Near-ties are settled by comparing the exact values,
and an exact tie is reported as a tie. Every probability is a product of hypergeometric and
multinomial factors whose primes are at most 13 (17 with a three-footprint die, larger only in
``1 - p`` closing a self-loop), but a long turn multiplies many: from Santa's turn start the values
have 5,000-bit denominators. Values are held as integers over one denominator per group of states
(`ExactTurn._fill`), so a sum costs no gcd (``gmpy2.mpq`` additions of that size spend 100 times
an addition's time on one).

School Bus (`ExactBusTurn`, over a `BusSolution`): the same, with every option of a decision (stop and
its actions), the loops of a chance node closed exactly (policy.py's formula, in rationals), and the
brain given up on tyre tracks chosen exactly. Where rescues with YIELD make a block cyclic, the values
of a strongly connected set of (node, score) pairs are solved together (policy iteration over exact
linear systems), and so is the flow of probability through it. Loops make a bus turn's fractions large
(4,384 digits from the base game's turn start), so its score distribution flows as residues modulo many
primes (a cyclic set's system solved modulo each) and is recovered exactly (`residues.py`).
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from fractions import Fraction

import gmpy2
import numpy as np
import scipy.sparse as sp
from gmpy2 import mpq, mpz
from scipy.sparse.csgraph import connected_components

from .kept import SIZES, kept
from .objectives import Objective
from .policy import CAP_MARGIN, BusSolution, Solution, bus_solve, solve
from .position import BusState, DiceState
from .residues import Residues, recovered
from .table import CHANCE, DECISION, STOPPED, TYRE

__all__ = ["ExactTurn", "exact_turn", "to_fraction", "fraction_text", "ExactBusTurn", "exact_bus_turn",
           "solve_exact"]

MARGIN = 1e-9
RESIDUES_FROM = 512  # bits: a larger value's score distribution flows as residues (`ExactTurn._forward`)
_CHOICE = ("stop", "roll", None)


def to_fraction(x: mpq) -> Fraction:
    return Fraction(int(x.numerator), int(x.denominator))


def fraction_text(x: Fraction) -> str:
    """``"p/q"``, whatever the size: a School Bus turn's fractions run to thousands of digits, past Python's
    limit on converting an int to text (gmpy2 writes them, in less than quadratic time)."""
    return f"{mpz(x.numerator).digits()}/{mpz(x.denominator).digits()}"


def _mpq(x: Fraction) -> mpq:
    return mpq(x.numerator, x.denominator)


class _Distributions:
    """The score distributions an exact engine has worked out, the most recent ``SIZES["distribution"]`` (each is a
    forward pass of its own, and a server is asked about the same positions again)."""

    def __init__(self) -> None:
        self._distributions: OrderedDict[tuple[int, int], dict[int, Fraction]] = OrderedDict()

    def score_distribution(self, roll: int, score: int) -> dict[int, Fraction]:
        """P(final turn score = k) if the player makes `roll` at `score` (a plain turn's state, rolled; a School
        Bus turn's chance node, one of a decision node's `actions`) and then follows the policy."""
        key = (roll, score)
        if key in self._distributions:
            self._distributions.move_to_end(key)
        else:
            self._distributions[key] = self._forward(roll, score)
            if len(self._distributions) > SIZES["distribution"]:
                self._distributions.popitem(last=False)
        return self._distributions[key]

    def _forward(self, roll: int, score: int) -> dict[int, Fraction]:
        raise NotImplementedError


class ExactTurn(_Distributions):
    """Exact roll and stop values, decisions and score distributions for one solved objective."""

    def __init__(self, solution: Solution):
        super().__init__()
        self.solution = solution
        table = solution.table
        # a roll's results as integers (ways over the state's denominator): a sum of ways times values is
        # divided once, and the results that stop add as integers
        self._ptr, self._delta = table.edge_ptr.tolist(), table.edge_delta.tolist()
        self._to, self._ways = table.edge_to.tolist(), table.edge_ways.tolist()
        self._den = table.denominator.tolist()
        self._loop_ways = table.loop_ways.tolist()
        self._loop = [mpq(w, d) for w, d in zip(self._loop_ways, self._den)]
        self._bust = [mpq(w, d) for w, d in zip(table.bust_ways.tolist(), self._den)]
        self._primes, self._own = _exponents(self._den, self._loop_ways)
        self._probabilities: dict[int, list[tuple[int, int, mpq]]] = {}  # `_edges`
        self._place = {}  # state -> (block, layer within the block)
        self._block, self._layer = np.empty(len(table), dtype=np.int64), np.empty(len(table), dtype=np.int64)
        for b, block in enumerate(table.blocks):
            for k, layer in enumerate(block):
                self._block[layer], self._layer[layer] = b, k
                for i in layer.tolist():
                    self._place[i] = (b, k)
        # Values are held as integers over their group's common denominator (`_fill`): no sum costs a gcd
        self._values: dict[tuple[int, int], tuple[mpz, int]] = {}  # (score, state) -> (D V, group), where it may roll
        self._groups: list[tuple[tuple[int, ...], mpz]] = []  # per group, D and the exponents of its primes
        self._ratios: dict[tuple[int, int], mpz] = {}  # (group, a group its results are in) -> the ratio of their Ds
        self._choice = self._choices().tobytes()  # indexed for every result visited: bytes read fastest
        self._rank, self._offsets = solution.rank.tolist(), solution.offsets.tolist()
        self._first = table.start if table.compulsory else -1  # the turn start: its roll is compulsory
        self._arrays = (table.edge_ptr, table.edge_delta, table.edge_to, table.edge_ways, solution.rank,
                        np.asarray(solution.offsets), np.frombuffer(self._choice, dtype=np.int8))

    def _choices(self) -> np.ndarray:
        """Per (score, state) the solution holds (`Solution.slot`, up to each state's bound): 1 roll, 0 stop
        (float-certain), 2 near-tie. A state not held at a score stops there (its bound proves it)."""
        sol, obj = self.solution, self.solution.objective
        grid = np.empty(len(sol.rolls), dtype=np.int8)
        for score in range(sol.top + 1):
            lo, hi = int(sol.offsets[score]), int(sol.offsets[score + 1])
            if obj.chooses:
                stop = float(obj.stop_value(score))
                margin = MARGIN * max(1.0, abs(stop))
                roll = sol.rolls[lo:hi]
                grid[lo:hi] = np.where(roll > stop + margin, 1, np.where(roll < stop - margin, 0, 2))
            else:  # a player who does not choose rolls wherever the objective does not stop it
                grid[lo:hi] = 1
            if obj.forces:
                grid[lo:hi][obj.forced(score, sol.table.shotguns[sol.order[:hi - lo]])] = 0
        return grid

    # -- values -------------------------------------------------------------------------------
    def stop(self, score: int) -> mpq:
        return mpq(self._stop_int(score))

    def _stop_int(self, score: int) -> int:
        """The stop value, an integer for every objective (reach: 0 or 1; otherwise the score)."""
        return self.solution.objective.stop_value(score)

    def _float_choice(self, i: int, score: int) -> str | None:
        """'roll' or 'stop' where the float solution is certain; None for a near-tie."""
        return _CHOICE[self._choice_code(i, score)]

    def _choice_code(self, i: int, score: int) -> int:
        """`_float_choice` as its code: 1 roll, 0 stop, 2 near-tie (this runs for every result visited)."""
        if score > self.solution.top:
            return 0
        if i == self._first:
            return 1
        k, lo = self._rank[i], self._offsets[score]  # Solution.slot, on lists
        return self._choice[lo + k] if k < self._offsets[score + 1] - lo else 0

    def _rests(self, members: list[tuple[int, int, list, int]], group: int | None) -> tuple[tuple[int, ...], mpz,
                                                                                            list]:
        """For pairs ``(score, state, needed, whole)`` (`_splits`) whose results' values are known, a common
        denominator D of their rests, the exponents of its primes, and each pair's ``D rest``.

        ``D rest = (sum_k ways_k * D V(j_k, T + d_k)) / den(i)``, an exact division: D is a multiple of every
        rest's denominator. A value's denominator divides ``den(i)`` (or ``den(i) - loop(i)``, closing a
        self-loop) times the lcm of its results' denominators, so per prime its exponent is at most the largest of
        the states' own (`_exponents`) plus the largest of the results' groups'. `group` names D for the ratios
        to the results' groups, which are kept (None: a D not kept)."""
        values, groups = self._values, self._groups
        ratios = self._ratios if group is not None else {}
        parts = {values[(s, j)][1] for _, _, needed, _ in members for s, j, _ in needed}
        own = [self._own[i] for _, i, _, _ in members]
        exps = [groups[g][0] for g in parts] or [(0,) * len(self._primes)]
        scale = tuple(map(sum, zip(map(max, zip(*own)), map(max, zip(*exps)))))
        D = _power(self._primes, scale)
        for g in parts:
            if (group, g) not in ratios:
                ratios[(group, g)] = gmpy2.divexact(D, groups[g][1])
        rests = []
        for _, i, needed, whole in members:
            total = whole * D
            for s, j, w in needed:
                v, g = values[(s, j)]
                total += w * v * ratios[(group, g)]
            rests.append(gmpy2.divexact(total, self._den[i]))
        return scale, D, rests

    def _splits(self, pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list]:
        """Per pair (state, score), its roll's results split: those where the policy may roll, whose exact values it
        needs (their scores, states and ways, pair after pair, and how many per pair), and the others' ways times
        their integer stop values, summed per pair.

        `_choice_code` and `_stop_int` on every result of the pairs at once (this runs for every pair reached)."""
        ptr, delta, to, ways, rank, offsets, choice = self._arrays
        top, first, stop = self.solution.top, self._first, self.solution.objective.stop_value
        i = np.array([p[0] for p in pairs], dtype=np.int64)
        a, n = ptr[i], ptr[i + 1] - ptr[i]
        ends = np.cumsum(n)
        owner = np.repeat(np.arange(len(pairs)), n)
        k = np.arange(int(ends[-1])) + np.repeat(a - (ends - n), n)  # the results, pair after pair
        s = delta[k] + np.array([p[1] for p in pairs], dtype=np.int64)[owner]
        j, w = to[k], ways[k]
        inside = s <= top
        level = np.minimum(s, top)
        place, lo = rank[j], offsets[level]
        held = inside & (place < offsets[level + 1] - lo)
        rolls = np.zeros(len(k), dtype=bool)
        rolls[held] = choice[lo[held] + place[held]] != 0
        if first >= 0:
            rolls |= inside & (j == first)
        worth = np.where(rolls, 0, w * stop(s))
        total = np.concatenate([[0], np.cumsum(worth)])
        wholes = (total[ends] - total[ends - n]).tolist()
        return s[rolls], j[rolls], w[rolls], np.bincount(owner[rolls], minlength=len(pairs)), wholes

    def _fill(self, i0: int, score0: int) -> None:
        """The exact value of every pair (i0, score0) needs, as integers over a common denominator per group.

        A turn's fractions run to thousands of bits, where a gcd costs 100 times an addition; with the values of
        a group held over one denominator D, a sum of them costs none (`_rests`). A group is a layer at a score
        level (its pairs need none of each other's values); once its values are known, D and they are divided by
        their gcd, so D is the group's least common denominator and every bound builds on the exact one.

        The pairs (i0, score0) needs are found breadth first (a whole frontier's results split at once,
        `_splits`), then valued group by group in the solvers' sweep order (blocks, score levels downwards,
        layers: every result before the pairs that need it).
        """
        values, groups = self._values, self._groups
        # the results each pair needs, laid end to end (score, state, ways; arrays, so that a whole turn's
        # millions take little memory), and per pair (state, score) where its own start, how many, its stop ways
        split: dict[tuple[int, int], tuple[int, int, int]] = {}
        chunks: list[tuple[np.ndarray, ...]] = []
        frontier, start = ([] if (score0, i0) in values else [(i0, score0)]), 0
        while frontier:
            s, j, w, counts, wholes = self._splits(frontier)
            chunks.append((s, j, w))
            ends = (np.cumsum(counts) + start).tolist()
            split.update(zip(frontier, zip(ends, counts.tolist(), wholes)))
            start = ends[-1]
            frontier = [key for key in dict.fromkeys(zip(j.tolist(), s.tolist()))
                        if (key[1], key[0]) not in values and key not in split]
        if not split:
            return
        results = [np.concatenate(c) for c in zip(*chunks)]
        del chunks
        pairs = np.array(list(split), dtype=np.int64)
        block, layer = self._block[pairs[:, 0]], self._layer[pairs[:, 0]]
        order = np.lexsort((layer, -pairs[:, 1], block))
        pairs, block, layer = pairs[order], block[order], layer[order]
        starts = np.flatnonzero(np.diff(pairs[:, 1]) | np.diff(block) | np.diff(layer)) + 1
        bounds = np.concatenate([[0], starts, [len(pairs)]]).tolist()
        keys = [tuple(pair) for pair in pairs.tolist()]
        for lo, hi in zip(bounds, bounds[1:]):
            ends, counts, wholes = zip(*[split.pop(key) for key in keys[lo:hi]])
            at = np.repeat(np.array(ends) - np.cumsum(counts), counts) + np.arange(sum(counts))
            needed = list(zip(*(r[at].tolist() for r in results)))
            cut = [0, *itertools.accumulate(counts)]
            members = [(score, i, needed[cut[m]:cut[m + 1]], wholes[m]) for m, (i, score) in enumerate(keys[lo:hi])]
            group = len(groups)
            scale, D, rests = self._rests(members, group)
            found = [self._value_from_rest(i, score, r, D) for (score, i, _, _), r in zip(members, rests)]
            common = gmpy2.gcd(D, *found)
            if common > 1:
                found = [gmpy2.divexact(v, common) for v in found]
                D = gmpy2.divexact(D, common)
                scale = tuple(e - int(gmpy2.remove(common, p)[1]) if e else 0 for e, p in zip(scale, self._primes))
            groups.append((scale, D))
            for (score, i, _, _), v in zip(members, found):
                values[(score, i)] = v, group

    def _value_from_rest(self, i: int, score: int, rest: mpz, D: mpz) -> mpz:
        """D V from D rest."""
        roll = self._roll_from_rest(i, score, rest, D)
        if self._float_choice(i, score) == "roll":
            return roll
        return max(roll, self._stop_int(score) * D)

    def _roll_from_rest(self, i: int, score: int, rest: mpz, D: mpz) -> mpz:
        """D roll from D rest: roll = r / (1 - p) if that is at least S (or the rule rolls here), else r + p * S."""
        loop = self._loop_ways[i]
        if not loop:
            return rest
        den, stop = self._den[i], self._stop_int(score) * D
        keep = gmpy2.divexact(rest * den, den - loop)
        choice = self._float_choice(i, score)
        if choice == "roll" or (choice is None and keep >= stop):
            return keep
        return rest + gmpy2.divexact(loop * stop, den)

    def roll(self, i: int, score: int) -> mpq:
        """Exact value of rolling now and then playing the objective's policy."""
        if (score, i) not in self._values:
            self._fill(i, score)
        s, j, w, _, [whole] = self._splits([(i, score)])
        _, D, [rest] = self._rests([(score, i, list(zip(s.tolist(), j.tolist(), w.tolist())), whole)], None)
        return mpq(self._roll_from_rest(i, score, rest, D), D)

    def decision(self, i: int, score: int) -> str:
        """'roll', 'stop' or 'tie' (exactly equal values). The empty turn must roll."""
        if i == self.solution.table.start and self.solution.table.compulsory:
            return "roll"
        choice = self._float_choice(i, score)
        if choice is not None:
            return choice
        roll, stop = self.roll(i, score), self.stop(score)
        return "tie" if roll == stop else ("roll" if roll > stop else "stop")

    def _rolls(self, i: int, score: int) -> bool:
        """The action the policy takes (ties stop: a player who is indifferent banks the brains)."""
        return self.decision(i, score) == "roll"

    # -- distributions ------------------------------------------------------------------------
    def _forward(self, i0: int, score0: int) -> dict[int, Fraction]:
        """P(final turn score = k) if the player rolls now and then follows the policy.

        Where the value of rolling is a fraction of more than `RESIDUES_FROM` bits (a long turn: Santa's turn
        start, 5,000), the masses are as large, and adding two costs a gcd of that size: they flow as residues
        (`_flow_residues`) modulo as many primes as twice the bits of the value's larger part, doubled until
        every fraction is recovered, checked, and the probabilities sum to 1 (`residues.recovered`, as
        `ExactBusTurn._forward`). Otherwise in rationals (`_flow_rationals`)."""
        if self._bits(i0, score0) <= RESIDUES_FROM:
            return self._flow_rationals(i0, score0)
        return self._flow_in_residues(i0, score0)

    def _bits(self, i: int, score: int) -> int:
        value = self.roll(i, score)
        return max(value.numerator.bit_length(), value.denominator.bit_length())

    def _flow_in_residues(self, i0: int, score0: int) -> dict[int, Fraction]:
        return recovered(lambda field: self._flow_residues(i0, score0, field), self.roll(i0, score0))

    def _first_of(self, key: tuple[int, int]) -> tuple[int, int]:
        """The order in which the flows take their pending (block, score) pairs (the largest first).

        The reverse of the solvers' sweep: blocks from last to first, score levels upwards (layers from
        last to first within). Where no roll lowers the score (no rescue: min_delta >= 0) score levels
        upwards, blocks from last to first within each, is as good an order (a roll leads to a higher score,
        or at the same score to an earlier block or layer, as the sweep needs) and far leaner: only the
        next ``max_delta`` levels wait, not every level of every block still to come (Santa's turn start:
        3.9 GB at its peak, 1 GB of it waiting masses)."""
        block, score = key
        return (-score, block) if self.solution.table.min_delta >= 0 else (block, -score)

    def _flow_rationals(self, i0: int, score0: int) -> dict[int, Fraction]:
        """Probability mass flows forward in the order `_first_of` gives, layers from last to first. A
        state the policy rolls from passes on its mass times ``1 / (1 - p)`` (the geometric series of its
        self-loop).
        """
        final: dict[int, mpq] = {}
        pending: dict[tuple[int, int], dict[int, dict[int, mpq]]] = {}  # (block, score) -> layer -> mass

        def spread(i: int, score: int, mass: mpq) -> None:
            p = self._loop[i]
            if p and self._rolls(i, score):
                mass = mass / (1 - p)
            elif p:  # the forced first roll came back to a position where the policy stops
                final[score] = final.get(score, mpq(0)) + mass * p
            if self._bust[i]:
                final[0] = final.get(0, mpq(0)) + mass * self._bust[i]
            for d, j, q in self._edges(i):
                b, k = self._place[j]
                here = pending.setdefault((b, score + d), {}).setdefault(k, {})
                here[j] = here.get(j, mpq(0)) + mass * q

        spread(i0, score0, mpq(1))
        while pending:
            key = max(pending, key=self._first_of)
            layers = pending[key]
            while layers:
                for i, mass in layers.pop(max(layers)).items():
                    if self._rolls(i, key[1]):
                        spread(i, key[1], mass)
                    else:
                        final[key[1]] = final.get(key[1], mpq(0)) + mass
            del pending[key]
        return {k: to_fraction(v) for k, v in sorted(final.items())}

    def _flow_residues(self, i0: int, score0: int, field: Residues) -> dict[int, Fraction] | None:
        """`_flow_rationals` in residues (None if `field`'s primes were too few), a layer at a time and as arrays:
        the masses waiting in a layer are summed per state (`_Waiting`), the states of it that roll do so
        together, one sparse product of their ways (`Table.ways`) and their masses, each over ``den - loop``
        (the self-loop closed at once: ``mass / (1 - loop / den) * ways / den``), and what arrives is sorted
        into the layers it waits in, a group at a time (Santa's turn start: 13.6 million masses arrive)."""
        t = self.solution.table
        n, ways, den, loop, bust = len(t), t.ways, t.denominator, t.loop_ways, t.bust_ways.astype(np.uint64)
        final: dict = {}
        pending: dict[tuple[int, int], dict[int, _Waiting]] = {}  # (block, score) -> layer -> masses waiting
        step = max(1, (2**32 - 1) // int(den.max()))  # states per product: the ways into one result stay below 2**32

        def end(score: int, mass: tuple[np.ndarray, int]) -> None:
            field.accumulate(final, score, mass)

        def roll(states: np.ndarray, masses: np.ndarray, score: int, closed: bool = True) -> None:
            z = field.divided(masses, den[states] - loop[states] if closed else den[states])
            if not closed and loop[states[0]]:  # the forced first roll came back to where the policy stops
                end(score, field.times(z[0], int(loop[states[0]])))
            if bust[states].any():
                end(0, field.combine(sp.csr_matrix(bust[states][None, :]), z)[0])
            targets, rows = field.arrivals(ways[states], z)
            d, j = np.divmod(targets, n)
            scores, blocks, layers = score + d + t.min_delta, self._block[j], self._layer[j]
            order = np.lexsort((layers, scores, blocks))
            keys = np.stack([blocks[order], scores[order], layers[order]])
            cuts = np.flatnonzero((keys[:, 1:] != keys[:, :-1]).any(axis=0)) + 1
            for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), len(order)]):
                b, s, k = keys[:, lo].tolist()
                waiting = pending.setdefault((b, s), {}).setdefault(k, _Waiting())
                waiting.add(j[order[lo:hi]], rows[order[lo:hi]], field)

        roll(np.array([i0]), field.one()[0][None, :], score0, closed=self._rolls(i0, score0))
        while pending:
            key = max(pending, key=self._first_of)
            layers, score = pending[key], key[1]
            while layers:
                states, masses = layers.pop(max(layers)).summed(field)
                rolls = self._rolls_at(states, score)
                if not rolls.all():
                    stops = masses[~rolls]
                    end(score, (stops.sum(axis=0, dtype=np.uint64), len(stops) << 31))
                states, masses = states[rolls], masses[rolls]
                for lo in range(0, len(states), step):
                    roll(states[lo:lo + step], masses[lo:lo + step], score)
            del pending[key]
        return field.fractions(dict(sorted(final.items())))

    def _rolls_at(self, states: np.ndarray, score: int) -> np.ndarray:
        """`_rolls` of many states at one score: the float solution's choices read at once (`_choice_code`),
        near-ties settled exactly one by one."""
        code = np.zeros(len(states), dtype=np.int8)
        if score <= self.solution.top:
            rank, offsets, choice = self._arrays[4:]
            lo, k = int(offsets[score]), rank[states]
            held = k < int(offsets[score + 1]) - lo
            code[held] = choice[lo + k[held]]
        out = code == 1
        for m in np.flatnonzero(code == 2).tolist():
            out[m] = self._rolls(int(states[m]), score)
        out[states == self._first] = True
        return out

    def _edges(self, i: int) -> list[tuple[int, int, mpq]]:
        """(delta, j, exact p) of every roll of state `i` but its self-loop (memoised: distributions read them)."""
        edges = self._probabilities.get(i)
        if edges is None:
            a, b, den = self._ptr[i], self._ptr[i + 1], self._den[i]
            edges = self._probabilities[i] = [(d, j, mpq(w, den)) for d, j, w in
                                              zip(self._delta[a:b], self._to[a:b], self._ways[a:b])]
        return edges


def _exponents(den: list[int], loop: list[int]) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """The primes of every state's roll and, per state, their exponents in ``lcm(den, den - loop)``: the factor a
    state's value may add to its results' denominators (``den`` for ``rest``, ``den - loop`` closing a self-loop)."""
    own = [math.lcm(d, d - w) if w else d for d, w in zip(den, loop)]
    factors = {f: _factor(f) for f in set(own)}
    primes = tuple(sorted({p for f in factors.values() for p in f}))
    vectors = {f: tuple(fs.get(p, 0) for p in primes) for f, fs in factors.items()}
    return primes, [vectors[f] for f in own]


def _factor(n: int) -> dict[int, int]:
    """Prime -> exponent (trial division: a roll's ways number in the millions at most)."""
    out, p = {}, 2
    while p * p <= n:
        while n % p == 0:
            out[p] = out.get(p, 0) + 1
            n //= p
        p += 1
    if n > 1:
        out[n] = out.get(n, 0) + 1
    return out


def _power(primes: tuple[int, ...], exps: list[int]) -> mpz:
    out = mpz(1)
    for p, e in zip(primes, exps):
        out *= mpz(p) ** e
    return out


def exact_turn(mode: str, recycle: str, objective: Objective, root: DiceState | None = None,
               margin: int = CAP_MARGIN) -> ExactTurn:
    """The exact values of one objective over a mode's table (cached as `policy.solve` caches its solutions)."""
    return (_exact_whole if root is None else _exact_rooted)(mode, recycle, objective, root, margin)


def _exact_turn(mode: str, recycle: str, objective: Objective, root: DiceState | None, margin: int) -> ExactTurn:
    return ExactTurn(solve(mode, recycle, objective, root, margin))


_exact_whole, _exact_rooted = kept("whole")(_exact_turn), kept("rooted")(_exact_turn)


# -- School Bus ----------------------------------------------------------------------------------------
Pair = tuple[int, int]  # (node, score)


def solve_exact(rows: dict, rhs: dict) -> dict:
    """Solve ``x_v - sum_w rows[v][w] x_w = rhs[v]`` exactly (sparse Gaussian elimination, in order)."""
    order = list(rows)
    a = {v: {w: -c for w, c in rows[v].items()} for v in order}
    for v in order:
        a[v][v] = a[v].get(v, mpq(0)) + 1
    b = {v: rhs.get(v, mpq(0)) for v in order}
    place = {v: k for k, v in enumerate(order)}
    holders: dict = {}  # column w -> the rows with an entry in it (fill-in included): the rows a pivot meets
    for u in order:
        for w in a[u]:
            holders.setdefault(w, set()).add(u)
    for k, v in enumerate(order):
        pivot = a[v][v]
        for u in [u for u in holders.get(v, ()) if place[u] > k]:
            f = a[u].get(v)
            if f:
                f = f / pivot
                for w, c in a[v].items():
                    a[u][w] = a[u].get(w, mpq(0)) - f * c
                    holders.setdefault(w, set()).add(u)
                b[u] -= f * b[v]
                del a[u][v]
    x: dict = {}
    for v in reversed(order):
        x[v] = (b[v] - sum((c * x[w] for w, c in a[v].items() if w != v), mpq(0))) / a[v][v]
    return x


class ExactBusTurn(_Distributions):
    """Exact values of every option, decisions, tyre-tracks choices and score distributions, for one
    objective solved over a `BusTable`, computed lazily along the solved policy (module docstring)."""

    def __init__(self, solution: BusSolution):
        super().__init__()
        self.solution = solution
        self.table = table = solution.table
        self._p: dict[int, tuple] = {}
        self._values: dict[Pair, mpq] = {}
        self._place = {}
        for b, block in enumerate(table.blocks):
            for k, layer in enumerate(block):
                for i in layer.tolist():
                    self._place[i] = (b, k)
        # per level, decision node -> bitmask of its candidate options (absent: stop alone)
        self._candidates = [dict(zip(a.tolist(), m.tolist()))
                            for a, m in zip(solution.candidate_nodes, solution.candidate_masks)]
        self._choices: dict[Pair, int] = {}
        self._stops: dict[int, mpq] = {}
        self._kind, self._can_stop, self._top = table.kind.tolist(), table.can_stop.tolist(), solution.top  # (lists:
        # `_known` runs for every result of every roll the values reach, millions of times from a turn's start)

    def stop(self, score: int) -> mpq:
        if score not in self._stops:
            self._stops[score] = mpq(self.solution.objective.stop_value(score))
        return self._stops[score]

    def _mask(self, i: int, score: int) -> int:
        return self._candidates[score].get(i, 1) if 0 <= score <= self._top else 1

    def _edges(self, c: int) -> tuple[tuple, tuple]:
        """A chance node's edges (delta, node, p) and loops (node, p), exact (memoised)."""
        if c not in self._p:
            t, den = self.table, self.table.denominator[c]
            self._p[c] = (tuple((d, j, mpq(w, den)) for d, j, w in t.edges[c]),
                          tuple((h, mpq(w, den)) for h, w in t.loops[c]))
        return self._p[c]

    def options(self, i: int, score: int) -> list[tuple[str, int]]:
        """A decision node's options that may be best here: ("stop", -1) and (action, chance node)."""
        mask = self._mask(i, score)
        if not self.table.can_stop[i] and mask == 1:  # the compulsory first roll, above the solved levels
            mask = (2 << len(self.table.actions[i])) - 2
        out = [("stop", -1)] if mask & 1 else []
        return out + [(a, c) for k, (a, c) in enumerate(self.table.actions[i]) if mask & (2 << k)]

    def _policy_stops(self, i: int, score: int) -> bool:
        """Is node `i` a decision whose only candidate at `score` is to stop (the policy stops there)?"""
        return self._kind[i] == DECISION and self._can_stop[i] and self._mask(i, score) == 1

    def _known(self, i: int, score: int) -> mpq | None:
        """The value of (i, score) without computing anything, or None."""
        value = self._values.get((i, score))
        if value is not None:
            return value
        if self._kind[i] == STOPPED or self._policy_stops(i, score):
            return self.stop(score)
        return None

    def _deps(self, i: int, score: int) -> list[Pair]:
        kind = self.table.kind[i]
        if kind == DECISION:
            return [(c, score) for a, c in self.options(i, score) if a != "stop"]
        if kind == TYRE:
            return [(o, score) for _, o in self.table.options[i]]
        deps = [(j, score + d) for d, j, _ in self.table.edges[i]]
        for h, _ in self.table.loops[i]:
            deps += [(c, score) for a, c in self.options(h, score) if a != "stop" and c != i]
        return deps

    def _evaluate(self, i: int, score: int) -> mpq:
        """The value of (i, score) from its dependencies' values (all known)."""
        kind = self.table.kind[i]
        if kind == DECISION:
            return max(self.stop(score) if a == "stop" else self._known(c, score)
                       for a, c in self.options(i, score))
        if kind == TYRE:
            return max(self._known(o, score) for _, o in self.table.options[i])
        # rest = sum of ways * value over the roll's results, / denominator: a result whose value was not
        # computed stops there (every dependency is known by now), and stop values are integers, summed as such
        values, computed, stops, den = self._values, mpq(0), 0, self.table.denominator[i]
        for d, j, w in self.table.edges[i]:
            value = values.get((j, score + d))
            if value is None:
                stops += w * int(self.stop(score + d))
            else:
                computed += value * w
        loops = tuple((h, mpq(w, den)) for h, w in self.table.loops[i])
        return self._close(i, score, (computed + stops) / den, loops)

    def _close(self, i: int, score: int, rest: mpq, loops: tuple) -> mpq:
        """The loops of chance node i closed exactly (policy.close_loops): x = r + sum q max(c, x)."""
        if not loops:
            return rest
        always, pieces = mpq(0), []
        for h, q in loops:
            alternatives = [self.stop(score) if a == "stop" else self._known(c, score)
                            for a, c in self.options(h, score) if c != i]
            if not any(c == i for _, c in self.options(h, score)):
                rest += q * max(alternatives)  # h never rolls i again here
            elif alternatives:
                pieces.append((max(alternatives), q))
            else:
                always += q
        pieces.sort(key=lambda cq: cq[0])
        above = sum((q * c for c, q in pieces), mpq(0))
        below = always
        best = (rest + above) / (1 - below)
        for c, q in pieces:
            above -= q * c
            below += q
            best = max(best, (rest + above) / (1 - below))
        return best

    def value(self, i: int, score: int) -> mpq:
        """The exact value of node `i` at `score` under the objective's policy (Tarjan's order over the
        pairs it needs, so that a cycle, which only rescues with YIELD make, is solved as one)."""
        known = self._known(i, score)
        if known is not None:
            return known
        counter = 0
        number: dict[Pair, int] = {}
        low: dict[Pair, int] = {}
        stack: list[Pair] = []
        on_stack: set[Pair] = set()

        def push(v: Pair) -> None:
            nonlocal counter
            number[v] = low[v] = counter
            counter += 1
            stack.append(v)
            on_stack.add(v)
            work.append((v, iter(self._deps(*v))))

        work: list = []
        push((i, score))
        while work:
            v, deps = work[-1]
            for w in deps:
                if self._known(*w) is not None:
                    continue
                if w not in number:
                    push(w)
                    break
                if w in on_stack:
                    low[v] = min(low[v], number[w])
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
                if low[v] == number[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) == 1:  # (a pair never needs itself: rolls lead to decisions)
                        self._values[v] = self._evaluate(*v)
                    else:
                        self._solve_component(component)
        return self._values[(i, score)]

    # -- cycles (rescues with YIELD) ------------------------------------------------------------------
    def _form(self, w: Pair, inside: set) -> tuple[mpq, dict]:
        """The value of pair `w` as a linear form (constant, {unknown: coefficient})."""
        return (mpq(0), {w: mpq(1)}) if w in inside else (self._known(*w), {})

    def _option_forms(self, i: int, score: int, inside: set) -> list[tuple[mpq, dict]]:
        """The candidate options of decision or tyre node `i` as linear forms."""
        if self.table.kind[i] == TYRE:
            return [self._form((o, score), inside) for _, o in self.table.options[i]]
        return [(self.stop(score), {}) if a == "stop" else self._form((c, score), inside)
                for a, c in self.options(i, score)]

    def _solve_component(self, component: list[Pair]) -> None:
        """Values of a strongly connected set of pairs (only rescues with YIELD make one): policy
        iteration, each policy an exact linear system, until no choice is strictly improved. The choices
        are each decision's and tyre node's option, and each loop successor's (it may roll the chance
        node again, or not)."""
        inside = set(component)
        points: dict = {}  # choice point -> (its options as forms, coefficient, the pair whose row it is in)
        rows: dict[Pair, dict] = {v: {} for v in component}
        consts: dict[Pair, mpq] = {v: mpq(0) for v in component}
        for v in component:
            i, score = v
            if self.table.kind[i] == CHANCE:
                edges, loops = self._edges(i)
                for d, j, p in edges:
                    c0, coef = self._form((j, score + d), inside)
                    consts[v] += p * c0
                    for w, a in coef.items():
                        rows[v][w] = rows[v].get(w, mpq(0)) + p * a
                for h, q in loops:
                    points[(v, h)] = (self._option_forms(h, score, inside), q, v)
            else:
                points[v] = (self._option_forms(i, score, inside), mpq(1), v)
        choice = {point: 0 for point in points}
        while True:
            a_rows = {v: dict(row) for v, row in rows.items()}
            rhs = dict(consts)
            for point, (forms, q, v) in points.items():
                c0, coef = forms[choice[point]]
                rhs[v] += q * c0
                for w, a in coef.items():
                    a_rows[v][w] = a_rows[v].get(w, mpq(0)) + q * a
            x = solve_exact(a_rows, rhs)
            improved = False
            for point, (forms, _, _) in points.items():
                values = [c0 + sum((a * x[w] for w, a in coef.items()), mpq(0)) for c0, coef in forms]
                k = values.index(max(values))
                if values[k] > values[choice[point]]:
                    choice[point], improved = k, True
            if not improved:
                self._values.update(x)
                return

    # -- decisions ------------------------------------------------------------------------------------
    def action_values(self, i: int, score: int) -> dict[str, mpq]:
        """Every legal option of decision node `i` at `score` with its exact value."""
        out = {"stop": self.stop(score)} if self.table.can_stop[i] else {}
        for a, c in self.table.actions[i]:
            out[a] = self.value(c, score)
        return out

    def best(self, i: int, score: int) -> str:
        """The policy's action: the best option (exactly), stop on a tie with it, else the first in order."""
        options = self.options(i, score)
        if len(options) == 1:
            return options[0][0]
        values = {a: self.stop(score) if a == "stop" else self.value(c, score) for a, c in options}
        top = max(values.values())
        return next(a for a, v in values.items() if v == top)

    def decision(self, i: int, score: int) -> str:
        """The best option, or ``tie`` when two options share the best value exactly."""
        options = self.options(i, score)
        if len(options) == 1:
            return options[0][0]
        values = [self.stop(score) if a == "stop" else self.value(c, score) for a, c in options]
        top = max(values)
        return "tie" if values.count(top) > 1 else options[values.index(top)][0]

    def give_up(self, i: int, score: int) -> str:
        """Tyre node `i` at `score`: the brain the policy gives up (the first of the best)."""
        values = [self.value(o, score) for _, o in self.table.options[i]]
        return self.table.options[i][values.index(max(values))][0]

    def _choice(self, i: int, score: int) -> int:
        """The node the policy goes to from decision or tyre node `i` (-1: stop; memoised)."""
        key = (i, score)
        if key not in self._choices:
            if self.table.kind[i] == TYRE:
                values = [self.value(o, score) for _, o in self.table.options[i]]
                self._choices[key] = self.table.options[i][values.index(max(values))][1]
            else:
                a = self.best(i, score)
                self._choices[key] = -1 if a == "stop" else dict(self.table.actions[i])[a]
        return self._choices[key]

    # -- distributions --------------------------------------------------------------------------------
    def _forward(self, c0: int, score0: int) -> dict[int, Fraction]:
        """P(final turn score = k) from chance node `c0` at `score0` under the policy.

        A bus turn's masses are rationals of thousands of digits, so an acyclic table flows them as residues
        (`_flow_residues`) modulo as many primes as twice the bits of the value's larger part (the
        distribution's fractions are about as large as the value they average), and twice that again until
        every fraction is recovered, checked, and the probabilities sum to 1. A cyclic block (rescues with
        YIELD) is flowed through its strongly connected components, each a small linear system solved in the
        same residues (`_block_residues`). `_flow_rationals` is the same flow in exact rationals (the
        reference the tests hold this one to)."""
        return recovered(lambda field: self._flow_residues(c0, score0, field), self.value(c0, score0))

    def _flow_rationals(self, c0: int, score0: int) -> dict[int, Fraction]:
        """Probability mass forward from chance node `c0` in the reverse of the sweep's order: blocks from
        last to first, levels upwards, layers from last to first; a chance node's loops pass its mass on
        at once (its throughput is the mass over ``1 - sum`` of the loops that roll it again); a cyclic
        block is solved as a whole (`_forward_block`)."""
        final: dict[int, mpq] = {}
        pending: dict[tuple[int, int], dict[int, dict[int, mpq]]] = {}  # (block, score) -> layer -> mass
        t = self.table

        def add(i: int, score: int, mass: mpq) -> None:
            if i < 0 or t.kind[i] == STOPPED:
                final[score] = final.get(score, mpq(0)) + mass
                return
            b, k = self._place[i]
            here = pending.setdefault((b, score), {}).setdefault(k, {})
            here[i] = here.get(i, mpq(0)) + mass

        def decide(i: int, score: int, mass: mpq) -> None:
            if self._policy_stops(i, score):
                final[score] = final.get(score, mpq(0)) + mass
            else:
                add(self._choice(i, score), score, mass)

        def spread(c: int, score: int, mass: mpq) -> None:
            edges, loops = self._edges(c)
            back = sum((q for h, q in loops if self._choice(h, score) == c), mpq(0))
            mass = mass / (1 - back) if back else mass
            for h, q in loops:
                if self._choice(h, score) != c:
                    decide(h, score, mass * q)
            for d, j, p in edges:
                add(j, score + d, mass * p)
            busted = mpq(t.bust[c], t.denominator[c])
            if busted:
                final[0] = final.get(0, mpq(0)) + mass * busted

        add(c0, score0, mpq(1))
        while pending:
            key = max(pending, key=lambda bs: (bs[0], -bs[1]))
            if t.cyclic[key[0]]:
                self._forward_block(key[0], pending, add, decide, spread)
                continue
            layers = pending[key]
            while layers:
                for i, mass in layers.pop(max(layers)).items():
                    if t.kind[i] == CHANCE:
                        spread(i, key[1], mass)
                    else:
                        decide(i, key[1], mass)
            del pending[key]
        return {k: to_fraction(v) for k, v in sorted(final.items())}

    def _flow_residues(self, c0: int, score0: int, field: Residues) -> dict[int, Fraction] | None:
        """`_flow_rationals` in residues (None if `field`'s primes were too few), a layer at a time (a cyclic
        block: `_block_residues`): the chance nodes of a layer roll together, as one sparse product of their ways
        (`BusTable.ways`) and their masses, each over ``den - back`` (its roll's denominator less the ways of
        the loops that roll it again, so the loops are closed at once: ``mass / (1 - back / den) * ways /
        den``)."""
        final: dict = {}
        pending: dict[tuple[int, int], dict[int, dict]] = {}  # (block, score) -> layer -> node -> mass
        t = self.table
        n1, ways = len(t) + 1, t.ways

        def add(i: int, score: int, mass) -> None:
            if i < 0 or t.kind[i] == STOPPED:
                here, i = final, score
            else:
                b, k = self._place[i]
                here = pending.setdefault((b, score), {}).setdefault(k, {})
            field.accumulate(here, i, mass)

        def decide(i: int, score: int, mass) -> None:
            if self._policy_stops(i, score):
                add(-1, score, mass)
            else:
                add(self._choice(i, score), score, mass)

        def roll(chance: list[int], masses: list, score: int) -> None:
            loops = [self._loops_at(c, score) for c in chance]
            z = field.over(masses, [divisor for divisor, _ in loops])
            for (_, others), row in zip(loops, z):
                for h, w in others:
                    decide(h, score, field.times(row, w))
            bust = np.array([t.bust[c] for c in chance], dtype=np.uint64)
            if bust.any():
                add(-1, 0, field.combine(sp.csr_matrix(bust[None, :]), z)[0])
            for target, mass in field.results(ways[chance], z):
                d, j = divmod(target, n1)
                add(j, score + d + t.min_delta, mass)

        add(c0, score0, field.one())
        while pending:
            key = max(pending, key=lambda bs: (bs[0], -bs[1]))
            if t.cyclic[key[0]]:
                self._block_residues(key[0], pending, field, add)
                continue
            layers = pending[key]
            while layers:
                chance, masses = [], []
                for i, mass in layers.pop(max(layers)).items():
                    if t.kind[i] == CHANCE:
                        chance.append(i)
                        masses.append(mass)
                    else:
                        decide(i, key[1], mass)
                if chance:
                    roll(chance, masses, key[1])
            del pending[key]
        return field.fractions(dict(sorted(final.items())))

    def _loops_at(self, c: int, score: int) -> tuple[int, list[tuple[int, int]]]:
        """Chance node `c`'s loops at `score`: its divisor, the denominator less the ways of the loops whose
        decision rolls `c` again (closed at once: ``mass / (1 - back / den)``), and the other loops (decision,
        ways), whose decision rolls something else."""
        back, others = 0, []
        for h, w in self.table.loops[c]:
            if self._choice(h, score) == c:
                back += w
            else:
                others.append((h, w))
        return self.table.denominator[c] - back, others

    def _block_residues(self, b: int, pending: dict, field: Residues, add) -> None:
        """The mass entering cyclic block `b` (at every score), through it in residues.

        The (node, score) pairs it reaches inside the block under the policy are numbered, and their moves
        (results, loops that roll another option, the policy's choices) are counted in ways over each pair's
        divisor (a chance node's denominator less its loops that roll it again, closed at once as in
        `_flow_residues`; 1 for a decision). Cycles (a rescue with YIELD, back to a lower score) are the
        graph's strongly connected components, each small: they are taken in topological levels, a
        component's throughputs ``x = m + M x`` solved as one system (`Residues.solve`), a level's pairs then
        passing their mass on together as one sparse product."""
        t = self.table
        entering = _taken(b, pending)
        pairs = list(entering)
        number = {v: n for n, v in enumerate(pairs)}
        outside: dict[Pair, int] = {}  # a move's target out of the block (node or -1 for the turn's end, score)
        divisors, inner, outer = [], [], []  # (pair, pair or outside target, ways)
        for u, (i, score) in enumerate(pairs):  # (pairs grows as the loop goes)
            if t.kind[i] == CHANCE:
                divisor, others = self._loops_at(i, score)
                moves = [(j, score + d, w) for d, j, w in t.edges[i]] + [(h, score, w) for h, w in others]
                if t.bust[i]:
                    moves.append((-1, 0, t.bust[i]))
                divisors.append(divisor)
            else:
                moves = [(-1 if self._policy_stops(i, score) else self._choice(i, score), score, 1)]
                divisors.append(1)
            for j, s, w in moves:
                if j >= 0 and t.kind[j] != STOPPED and self._place[j][0] == b:
                    v = number.setdefault((j, s), len(pairs))
                    if v == len(pairs):
                        pairs.append((j, s))
                    inner.append((u, v, w))
                else:
                    outer.append((u, outside.setdefault((j, s), len(outside)), w))
        n = len(pairs)
        u, v, w = np.array(inner, dtype=np.int64).reshape(-1, 3).T
        count, label = connected_components(sp.csr_matrix((np.ones(len(u)), (u, v)), shape=(n, n)), connection="strong")
        across = label[u] != label[v]
        cyclic = np.zeros(count, dtype=bool)
        cyclic[label[u[~across]]] = True  # components with a move inside them (a single pair may loop to itself)
        level = _levels(count, label[u[across]], label[v[across]])[label]
        moves = sp.csr_matrix((w[across], (u[across], v[across])), shape=(n, n))
        o = np.array(outer, dtype=np.int64).reshape(-1, 3).T
        leaving, targets = sp.csr_matrix((o[2], (o[0], o[1])), shape=(n, len(outside))), list(outside)
        within: dict[int, list] = {}  # cyclic component -> [(u, v, ways)] inside it
        for a, c, ways in zip(u[~across].tolist(), v[~across].tolist(), w[~across].tolist()):
            within.setdefault(int(label[a]), []).append((a, c, ways))
        rolls = (t.kind[[i for i, _ in pairs]] == CHANCE).tolist()
        mass = dict(enumerate(entering.values()))  # pair number -> mass arrived so far
        zero = (np.zeros(len(field.p), dtype=np.uint64), 0)

        def throughputs(members: list[int]) -> np.ndarray:
            """A chunk's pairs: each one's mass over its divisor, reduced rows in `members`' order. A cyclic
            component's masses are first solved as ``x = m + M x`` (M: its moves inside it, ways / divisor),
            over its chance pairs alone: a decision's (or a tyre choice's) one move is inside the component, so
            its mass only passes on, to the chance pair it leads to, and nothing leaves it."""
            x = {m: field.own(mass.pop(m, zero))[0] % field.p for m in members}
            for c in {int(label[m]) for m in members if cyclic[label[m]]}:
                onward = {src: dst for src, dst, _ in within[c] if not rolls[src]}
                ends = {}
                for m in (m for m in members if label[m] == c):
                    ends[m] = m
                    while not rolls[ends[m]]:
                        ends[m] = onward[ends[m]]
                at = {m: k for k, m in enumerate(m for m in ends if rolls[m])}
                a = np.zeros((len(at), len(at), len(field.p)), dtype=np.uint64)
                a[range(len(at)), range(len(at))] = 1
                b = np.zeros((len(at), len(field.p)), dtype=np.uint64)
                for m, e in ends.items():
                    b[at[e]] = (b[at[e]] + x[m]) % field.p
                for src, dst, ways in within[c]:
                    if rolls[src]:
                        step = np.uint64(ways) * field.inverse(divisors[src]) % field.p
                        a[at[ends[dst]], at[src]] = (a[at[ends[dst]], at[src]] + field.p - step) % field.p
                solved = field.solve(a, b)
                for m in ends:
                    x[m] = solved[at[m]] if rolls[m] else zero[0]
            return field.over([(x[m], 2**31) for m in members], [divisors[m] for m in members])

        for members in _chunks(level, label):
            rows = throughputs(members)
            for pair, m in field.results(moves[members], rows):
                field.accumulate(mass, pair, m)
            for e, m in field.results(leaving[members], rows):
                add(*targets[e], m)

    def _forward_block(self, b: int, pending: dict, add, decide, spread) -> None:
        """The mass entering cyclic block `b`, through it exactly: the pairs it can reach inside the block
        under the policy, their throughputs ``t = m + P^T t`` solved as one sparse system, then passed on."""
        t = self.table
        entering = _taken(b, pending)
        inflow: dict[Pair, dict[Pair, mpq]] = {}  # v -> {u: P(u -> v)}
        out: dict[Pair, list] = {}  # u -> [(w outside the block or a final score, p)]
        seen, todo = set(entering), list(entering)
        while todo:
            u = todo.pop()
            i, score = u
            moves: list[tuple[int, int, mpq]] = []  # (node or -1 for stop, score, p)
            if t.kind[i] == CHANCE:
                edges, loops = self._edges(i)
                moves += [(j, score + d, p) for d, j, p in edges]
                moves += [(h, score, q) for h, q in loops]
                if t.bust[i]:
                    moves.append((-2, 0, mpq(t.bust[i], t.denominator[i])))
            elif self._policy_stops(i, score):
                moves.append((-1, score, mpq(1)))
            else:
                moves.append((self._choice(i, score), score, mpq(1)))
            out[u] = []
            for j, s2, p in moves:
                if j >= 0 and t.kind[j] != STOPPED and self._place[j][0] == b:
                    inflow.setdefault((j, s2), {})[u] = p
                    if (j, s2) not in seen:
                        seen.add((j, s2))
                        todo.append((j, s2))
                else:
                    out[u].append((j, s2, p))
        rows = {v: inflow.get(v, {}) for v in sorted(seen, key=lambda v: (v[1], -self._place[v[0]][1]))}
        through = solve_exact(rows, entering)
        for u, moves in out.items():
            for j, s2, p in moves:
                if j == -2:
                    add(-1, 0, through[u] * p)
                else:
                    add(j, s2, through[u] * p)


class _Waiting:
    """The masses that wait in one layer at one score (`ExactTurn._flow_residues`): arrays of states and their
    reduced rows (32 bits), kept as they arrive and summed per state when the layer is taken, or sooner when they
    have doubled since they were last summed (a state reached from many layers waits once)."""

    def __init__(self) -> None:
        self.states: list[np.ndarray] = []
        self.rows: list[np.ndarray] = []
        self.count = self.last = 0

    def add(self, states: np.ndarray, rows: np.ndarray, field: Residues) -> None:
        self.states.append(states)
        self.rows.append(rows.astype(np.uint32))
        self.count += len(states)
        if self.count > 2 * self.last + 4096:
            states, rows = self.summed(field)
            self.states, self.rows, self.count = [states], [rows.astype(np.uint32)], len(states)
            self.last = self.count

    def summed(self, field: Residues) -> tuple[np.ndarray, np.ndarray]:
        """The states (sorted) and the sum of each one's masses, reduced."""
        return field.summed(np.concatenate(self.states), np.concatenate(self.rows))


def _taken(b: int, pending: dict) -> dict:
    """The masses waiting in block `b` (``pending``: (block, score) -> layer -> node -> mass) at every score,
    taken out of `pending`, by (node, score)."""
    return {(i, key[1]): mass for key in [k for k in pending if k[0] == b] for layer in pending.pop(key).values()
            for i, mass in layer.items()}


def _chunks(level: np.ndarray, label: np.ndarray, size: int = 2048) -> list[list[int]]:
    """Vertices by level, in chunks of about `size` (a component's vertices in one chunk): a chunk's masses
    are rolled together, and a whole level's at once would hold thousands of rows of residues at a time."""
    order = np.lexsort((label, level))
    lv, lb = level[order], label[order]
    starts = np.flatnonzero((lv[1:] != lv[:-1]) | (lb[1:] != lb[:-1])) + 1
    out, begin = [], 0
    for cut in [*starts.tolist(), len(order)]:
        if cut == len(order) or lv[cut] != lv[begin] or cut - begin >= size:
            out.append(order[begin:cut].tolist())
            begin = cut
    return out


def _levels(count: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Topological levels of a directed acyclic graph on `count` vertices (edges src -> dst): 0 for a vertex no
    edge enters, else one more than the highest level of those its edges come from (Kahn, a level at a time)."""
    graph = sp.csr_matrix((np.ones(len(src), dtype=np.int64), (src, dst)), shape=(count, count))
    graph.sum_duplicates()
    indegree = np.diff(graph.tocsc().indptr)
    level = np.zeros(count, dtype=np.int64)
    frontier, k = np.flatnonzero(indegree == 0), 0
    while frontier.size:
        level[frontier] = k
        after = graph[frontier].indices
        np.subtract.at(indegree, after, 1)
        frontier, k = np.unique(after[indegree[after] == 0]), k + 1
    return level


def exact_bus_turn(mode: str, recycle: str, objective: Objective, root: BusState | None = None,
                   margin: int = CAP_MARGIN) -> ExactBusTurn:
    """The exact values of one objective over a bus table (cached as `policy.bus_solve` caches its solutions,
    however the arguments are passed)."""
    return (_exact_bus_whole if root is None else _exact_bus_rooted)(mode, recycle, objective, root, margin)


def _exact_bus_turn(mode: str, recycle: str, objective: Objective, root: BusState | None, margin: int,
                    ) -> ExactBusTurn:
    return ExactBusTurn(bus_solve(mode, recycle, objective, root, margin))


_exact_bus_whole, _exact_bus_rooted = kept("bus whole")(_exact_bus_turn), kept("bus rooted")(_exact_bus_turn)
