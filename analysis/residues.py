"""Exact rationals computed modulo many primes at once, then recovered.

Why: the probability that flows through a School Bus turn is a rational of thousands of digits at
every node (each loop of a chance node divides by its own ``1 - back``), and adding two such
fractions costs a gcd of that size. Modulo a prime ``p`` below 2**31 every operation is one machine
multiply, so a computation that only adds, multiplies and divides by integers is run on vectors of
residues modulo ``K`` primes at once (numpy), and each result ``x`` is recovered from its residues:
the Chinese remainder theorem gives ``r = x mod M`` (``M`` the product of the primes), and rational
reconstruction (Wang: the extended Euclidean algorithm on ``M`` and ``r``, stopped halfway) gives the
unique ``a / b`` with ``|a|, b <= sqrt(M / 2)`` and ``a = b r (mod M)``, which is ``x`` whenever
``x``'s numerator and denominator are that small.

Nothing is guessed: `Residues.fractions` checks every recovered fraction against primes kept out of
``M`` (a wrong one passes a check with probability below 2**-30 per prime) and returns None when one
fails, or when no fraction within the bound exists; the caller then doubles ``K``.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import cache

import gmpy2
import numpy as np
import scipy.sparse as sp
from gmpy2 import mpq, mpz

__all__ = ["Residues", "reconstruct", "recovered"]

CHECKS = 4  # primes outside M, each result checked against them
LIMIT = 2**64  # an unreduced residue stays below this
_FIRST = 2**30  # primes between 2**30 and 2**31: a product of two residues fits in 63 bits


@cache
def _primes(k: int) -> tuple[int, ...]:
    out, p = [], _FIRST
    for _ in range(k):
        p = int(gmpy2.next_prime(p))
        out.append(p)
    return tuple(out)


def reconstruct(r: int, m: int) -> Fraction | None:
    """The fraction ``a / b`` with ``a = b r (mod m)`` and ``|a|, b <= sqrt(m / 2)``, if there is one (it is
    then unique); None otherwise."""
    bound = gmpy2.isqrt(mpz(m) // 2)
    r0, r1, t0, t1 = mpz(m), mpz(r) % m, mpz(0), mpz(1)
    while r1 > bound:
        q = r0 // r1
        r0, r1 = r1, r0 - q * r1
        t0, t1 = t1, t0 - q * t1
    if t1 == 0 or abs(t1) > bound or gmpy2.gcd(r1, t1) != 1:
        return None
    return Fraction(int(r1 if t1 > 0 else -r1), int(abs(t1)))


def recovered(flow: Callable[[Residues], dict | None], value: Fraction | mpq) -> dict:
    """The probabilities `flow` computes in residues (None: too few primes), recovered exactly: modulo as many
    primes as twice the bits of `value`'s larger part (a distribution's fractions are about as large as the
    value it averages), doubled until every fraction is recovered, checked, and they sum to 1. A linear system
    singular modulo one of the primes (`Residues.solve`: its determinant, a nonzero rational, has that prime in
    its numerator) is run again modulo primes further on."""
    k = 4 + (2 * max(value.numerator.bit_length(), value.denominator.bit_length()) + 31) // 30  # primes above 2**30
    skip = 0
    while True:
        try:
            out = flow(Residues(k, skip))
        except ZeroDivisionError:
            skip += k + CHECKS
            continue
        if out is not None and sum(out.values()) == 1:
            return out
        k *= 2


class Residues:
    """Arithmetic on vectors of residues modulo `k` primes plus `CHECKS` check primes (numpy arrays).

    A value is a pair ``(vector, bound)``: the vector's entries are congruent to the value's residues and
    at most ``bound``. Sums and products by counts of ways are left unreduced while the bound stays below
    2**64 (a modulo costs ten times a multiply), so a roll's results cost one multiply-add per prime each."""

    def __init__(self, k: int, skip: int = 0):
        self.k = k
        self.primes = _primes(skip + k + CHECKS)[skip:]  # (`skip`: past primes that made a system singular)
        self.p = np.array(self.primes, dtype=np.uint64)
        self._inverses: dict[int, np.ndarray] = {}

    def one(self) -> tuple[np.ndarray, int]:
        return np.ones(len(self.primes), dtype=np.uint64), 2

    def inverse(self, n: int) -> np.ndarray:
        """``1 / n`` modulo every prime (`n` is an integer no prime divides: a count of ways below 2**30)."""
        if n not in self._inverses:
            if not 0 < n < _FIRST:
                raise ValueError(f"{n} ways: not invertible modulo primes above 2**30")
            self._inverses[n] = np.array([pow(n, -1, p) for p in self.primes], dtype=np.uint64)
        return self._inverses[n]

    def _reduced(self, x: tuple[np.ndarray, int]) -> np.ndarray:
        return x[0] % self.p if x[1] > _FIRST else x[0]

    def add(self, x: tuple[np.ndarray, int], y: tuple[np.ndarray, int]) -> tuple[np.ndarray, int]:
        """``x + y``, in `x`'s array when it owns a 64-bit one: `x` is consumed (an accumulator; none other
        holds it)."""
        if x[1] + y[1] >= LIMIT:
            x, y = (self._reduced(x), 2**31), (self._reduced(y), 2**31)
        if x[0].base is None and x[0].dtype == np.uint64:
            return np.add(x[0], y[0], out=x[0]), x[1] + y[1]
        return np.add(x[0], y[0], dtype=np.uint64), x[1] + y[1]

    def own(self, x: tuple[np.ndarray, int]) -> tuple[np.ndarray, int]:
        """`x` in an array of its own: a row of a larger array (which would keep all of it alive) is copied,
        reduced to 32 bits (half the memory of a value waiting to be added to or rolled)."""
        return x if x[0].base is None else ((x[0] % self.p).astype(np.uint32), 2**31)

    def accumulate(self, into: dict, key: object, mass: tuple[np.ndarray, int]) -> None:
        """``into[key] += mass``, the entry created (in an array of its own) if missing."""
        old = into.get(key)
        into[key] = self.own(mass) if old is None else self.add(old, mass)

    def over(self, masses: list[tuple[np.ndarray, int]], divisors: list[int]) -> np.ndarray:
        """Rows ``mass / divisor``, reduced (entries below 2**31)."""
        return self.divided(np.stack([m[0] for m in masses]), np.asarray(divisors, dtype=np.int64))

    def divided(self, rows: np.ndarray, divisors: np.ndarray) -> np.ndarray:
        """Rows ``row / divisor`` (each row's entries below 2**64), reduced: each distinct divisor inverted once."""
        distinct, which = np.unique(divisors, return_inverse=True)
        inverses = np.stack([self.inverse(int(d)) for d in distinct.tolist()])
        return (rows % self.p * inverses[which]) % self.p

    def summed(self, keys: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows of each distinct key summed (rows below 2**32, fewer than 2**32 of them): the keys, sorted,
        and their sums, reduced."""
        distinct, which = np.unique(keys, return_inverse=True)
        if len(distinct) == len(keys):
            order = np.argsort(keys, kind="stable")
            return keys[order], rows[order] % self.p
        ones = np.ones(len(keys), dtype=np.uint64)
        add = sp.csr_matrix((ones, (which, np.arange(len(keys)))), shape=(len(distinct), len(keys)))
        return distinct, (add @ rows.astype(np.uint64)) % self.p

    def invert(self, x: np.ndarray) -> np.ndarray:
        """``1 / x`` modulo every prime, lane by lane (reduced `x`, no lane 0): ``x ** (p - 2)`` (Fermat), by
        squaring."""
        out, e = np.ones_like(x), self.p - np.uint64(2)
        while True:
            odd = (e & np.uint64(1)).astype(bool)
            out = np.where(odd, out * x % self.p, out)
            e = e >> np.uint64(1)
            if not e.any():
                return out
            x = x * x % self.p

    def solve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``x`` with ``a x = b`` modulo every prime: `a` (n, n, lanes) and `b` (n, lanes), reduced. Gauss-Jordan
        elimination, the pivot of each column chosen per prime (the first row with a nonzero entry there);
        ZeroDivisionError if `a` is singular modulo one of the primes."""
        a, b, p = a.copy(), b.copy(), self.p
        n, lanes = len(b), np.arange(len(self.p))
        for k in range(n):
            nonzero = a[k:, k] != 0
            if not nonzero.any(axis=0).all():
                raise ZeroDivisionError("a linear system singular modulo one of the primes")
            r = k + nonzero.argmax(axis=0)
            if (r != k).any():  # swap rows k and r, prime by prime
                top, first = a[k].copy(), b[k].copy()
                a[k], b[k] = a[r, :, lanes].T, b[r, lanes]
                a[r, :, lanes], b[r, lanes] = top.T, first
            inverse = self.invert(a[k, k])
            a[k], b[k] = a[k] * inverse % p, b[k] * inverse % p
            f = p - a[:, k]  # each row less f times row k (row k itself: its own factor is cleared below)
            f[k] = 0
            a = (a + f[:, None, :] * a[k][None]) % p
            b = (b + f * b[k]) % p
        return b

    @staticmethod
    def times(row: np.ndarray, ways: int) -> tuple[np.ndarray, int]:
        """``row * ways`` (a reduced row, `ways` below 2**32), unreduced."""
        return row * np.uint64(ways), ways << 31

    @staticmethod
    def combine(ways: sp.csr_matrix, rows: np.ndarray) -> list[tuple[np.ndarray, int]]:
        """``ways @ rows``, one value per row of `ways` (integer counts below 2**32 in all per row) and
        reduced `rows`: the results of a layer's rolls, each target's sum over the nodes rolled."""
        totals = np.asarray(ways.sum(axis=1, dtype=np.uint64)).ravel().tolist()
        if max(totals, default=0) >= 2**32:
            raise ValueError("ways into one value pass 2**32: residues would overflow")
        return [(row, total << 31) for row, total in zip(ways.astype(np.uint64) @ rows, totals)]

    @staticmethod
    def results(ways: sp.csr_matrix, rows: np.ndarray) -> list[tuple[int, tuple[np.ndarray, int]]]:
        """Rolling the nodes of `ways`' rows together, their reduced masses `rows` (in the same order): per
        column any of them reaches, the column and the mass arriving there (its sum over the nodes rolled)."""
        targets, w = _arriving(ways)
        return list(zip(targets.tolist(), Residues.combine(w, rows)))

    def arrivals(self, ways: sp.csr_matrix, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`results` as arrays: the columns reached (sorted) and the masses arriving there, reduced."""
        targets, w = _arriving(ways)
        if w.nnz and w.sum(axis=1, dtype=np.uint64).max() >= 2**32:
            raise ValueError("ways into one value pass 2**32: residues would overflow")
        return targets, (w.astype(np.uint64) @ rows) % self.p

    def fractions(self, values: dict) -> dict | None:
        """Every value recovered as a `Fraction` (same keys), or None if `k` primes were too few."""
        primes, k = self.primes[:self.k], self.k
        m = mpz(1)
        for p in primes:
            m *= p
        basis = [(m // p) * pow(int(m // p % p), -1, p) for p in primes]  # CRT: r = sum x_i * basis_i mod m
        checks = self.primes[k:]
        out: dict = {}
        known: list[int] = []  # denominators found so far: results of one computation share most of them
        bound = gmpy2.isqrt(m // 2)
        for key, x in values.items():
            residues = (x[0] % self.p).tolist()
            r = sum((mpz(a) * b for a, b in zip(residues[:k], basis)), mpz(0)) % m
            value = None
            for b in known[-4:]:
                a = r * b % m
                a = a - m if a > m // 2 else a
                if abs(a) <= bound:
                    value = Fraction(int(a), b)
                    break
            if value is None:
                value = reconstruct(int(r), int(m))
                if value is None:
                    return None
                known.append(value.denominator)
            for p, a in zip(checks, residues[k:]):
                if (value.numerator - value.denominator * a) % p:
                    return None
            out[key] = value
        return out


def _arriving(ways: sp.csr_matrix) -> tuple[np.ndarray, sp.csr_matrix]:
    """The columns `ways` reaches (sorted), and per column its ways from each row: `ways` transposed, its empty
    columns dropped."""
    sub = ways.tocoo()
    targets, col = np.unique(sub.col, return_inverse=True)
    return targets, sp.csr_matrix((sub.data, (col, sub.row)), shape=(len(targets), ways.shape[0]))
