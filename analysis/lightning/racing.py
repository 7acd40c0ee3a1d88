"""The race: ``n`` players chase the same card, throwing at the same moments.

Each player uses the single-player optimal policy, so their numbers of throws ``T_1..T_n`` are
independent copies of ``T`` with survival function ``S(k) = P(T > k)`` and ``f(k) = S(k-1) - S(k)``.
Finishing on the same throw is a tie. Then, exactly,

    P(player i is the sole first) = sum_{k>=1} f(k) S(k)^(n-1)          (the same for every i)
    P(tie)                        = 1 - n * P(sole first)
    E[throws until someone matches] = E[min T_i] = sum_{k>=0} S(k)^n
    P(someone matched within k)   = 1 - S(k)^n

Exact infinite sums. ``S(k) = e Q^k 1`` for the keep-to-keep matrix ``Q`` of the policy, which is
triangular (``chain.py``), so its eigenvalues are the exact self-loop probabilities ``lambda`` of
the reachable keeps. ``S`` obeys a linear recurrence whose characteristic roots are among them:
first a valid annihilator is read off the transition graph (``_eigenvalues``), then the minimal
one is found by Berlekamp-Massey modulo a prime and verified exactly (``_minimal_multiplicities``),
giving roots ``lambda`` with multiplicities ``a(lambda)``. Beyond the zero root's multiplicity,
``S`` is an exponential polynomial in those roots, and the summands above are exponential
polynomials whose bases are the products ``mu`` of ``n`` roots, with degree below
``M(mu) = max(sum (a - 1)) + 1``. So a summand ``x(k)`` obeys the linear recurrence with
characteristic polynomial ``C(z) = prod_mu (z - mu)^M(mu) = sum_i c_i z^i`` and summing it gives
the closed form

    sum_{k>=k0} x(k) = [ sum_i c_i * sum_{j<i} x(k0 + j) ] / C(1).

The degree ``D = sum M(mu)`` grows like ``C(r + n - 1, n)`` in the number ``r`` of distinct
eigenvalues, and so does the size of the exact rational answer (its denominator is a product over
the poles). When ``D`` exceeds ``MAX_EXACT_DEGREE`` (or there are more than ``MAX_COMBINATIONS``
products to enumerate) the result is instead *certified*: the sums are
taken exactly up to a horizon ``K`` and the tails are bounded rigorously by

    sum_{k>K} f(k) S(k)^(n-1) <= S(K)^n,
    sum_{k>K} S(k)^n <= S(K)^(n-1) * E[(T - K)^+],

(``E[(T-K)^+]`` is exact: the unmatched mass per keep times the keep's exact value), so every
reported value is within ``error_bound`` (at most ``2**-100``) of the true one and
``exact`` is False.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations_with_replacement
from math import log2

from ..kept import kept
from .cards import Card, parse_card
from .chain import big_int
from .chase import WITHIN_HORIZON, Chase, solve_chase, survival_masses
from .tables import EMPTY, tables

__all__ = ["RaceAnalysis", "race", "MAX_EXACT_DEGREE", "CERTIFIED_ERROR"]

MAX_EXACT_DEGREE = 500
MAX_COMBINATIONS = 60000
CERTIFIED_ERROR = Fraction(1, 2**100)
_SIX6 = 6**6
_LOG2_6 = log2(6)


@dataclass(frozen=True)
class RaceAnalysis:
    """Race of ``players`` optimal players on ``card`` (see the module docstring).

    ``sole_winner[i]``: probability that player ``i + 1`` alone matches first (all equal by
    symmetry); ``tie``: probability that the first matching throw is shared; ``expected_throws``:
    E[min T_i]; ``someone_within[k-1]``: P(someone matched within k throws), k = 1..20 (always
    exact). ``exact`` tells whether the first three are exact rationals; otherwise each is within
    ``error_bound`` of the true value."""

    card: Card
    players: int
    sole_winner: tuple[Fraction, ...]
    tie: Fraction
    expected_throws: Fraction
    someone_within: tuple[Fraction, ...]
    exact: bool
    error_bound: Fraction


def _eigenvalues(chase: Chase) -> Counter[Fraction]:
    """Roots, with multiplicities, of a polynomial that annihilates ``S(k) = e Q^k 1``.

    For a triangular ``Q`` the entries of ``p(Q)`` are sums over paths of the path weight times
    the divided difference of ``p`` at the diagonal entries met on the path; that vanishes when
    every eigenvalue is a root of ``p`` at least as often as it occurs on any path. So the
    multiplicity of ``lambda`` is the largest number of keeps with self-loop ``lambda`` on a path
    from the empty keep (often far below the algebraic multiplicity)."""
    denom = tables().denom
    longest: dict[int, Counter[Fraction]] = {}
    for keep in chase.reach:  # next keeps come earlier in this order
        here: Counter[Fraction] = Counter()
        loop = 0
        for nxt, ways in zip(*chase.trans[keep]):
            if nxt == keep:
                loop += ways
            else:
                here |= longest[nxt]
        here[Fraction(loop, denom[keep])] += 1
        longest[keep] = here
    return longest[EMPTY]


_PRIME = 2**61 - 1


def _minimal_multiplicities(chase: Chase, eigen: Counter[Fraction]) -> Counter[Fraction]:
    """Multiplicities of the roots of the minimal recurrence of ``S`` (a divisor of the
    annihilator ``eigen`` from :func:`_eigenvalues`, often of lower degree because tie-breaking
    makes many keeps behave alike). Found with Berlekamp-Massey modulo a prime, then verified
    exactly; on any doubt ``eigen`` itself is returned, which is always valid."""
    order = sum(eigen.values())
    a, _ = _survival(chase, 2 * order)
    inv6 = pow(_SIX6, _PRIME - 2, _PRIME)
    seq = [int(x % _PRIME) * pow(inv6, k, _PRIME) % _PRIME for k, x in enumerate(a)]
    conn, length = _berlekamp_massey(seq)
    char = [0] * (length + 1)  # z^L * conn(1/z), ascending coefficients
    for i, c in enumerate(conn):
        char[length - i] = c
    found: Counter[Fraction] = Counter()
    for lam in eigen:
        root = lam.numerator * pow(lam.denominator, _PRIME - 2, _PRIME) % _PRIME
        while len(char) > 1:
            quotient, remainder = _divide_linear(char, root)
            if remainder:
                break
            char = quotient
            found[lam] += 1
    if sum(found.values()) != length or not _annihilates(found, a, order):
        return eigen
    return found


def _berlekamp_massey(seq: list[int]) -> tuple[list[int], int]:
    """Shortest recurrence s[k] + c1 s[k-1] + ... + cL s[k-L] = 0 modulo the prime."""
    conn, prev, length, shift, last = [1], [1], 0, 1, 1
    for k, value in enumerate(seq):
        d = value
        for i in range(1, length + 1):
            d = (d + conn[i] * seq[k - i]) % _PRIME
        if d == 0:
            shift += 1
            continue
        coef = d * pow(last, _PRIME - 2, _PRIME) % _PRIME
        saved = conn[:]
        conn = conn + [0] * max(0, len(prev) + shift - len(conn))
        for i, c in enumerate(prev):
            conn[i + shift] = (conn[i + shift] - coef * c) % _PRIME
        if 2 * length <= k:
            length, prev, last, shift = k + 1 - length, saved, d, 1
        else:
            shift += 1
    return conn[: length + 1] + [0] * max(0, length + 1 - len(conn)), length


def _divide_linear(poly: list[int], root: int) -> tuple[list[int], int]:
    """Synthetic division of an ascending-coefficient polynomial by (z - root), mod the prime."""
    quotient = [0] * (len(poly) - 1)
    carry = 0
    for i in range(len(poly) - 1, 0, -1):
        carry = (carry * root + poly[i]) % _PRIME
        quotient[i - 1] = carry
    return quotient, (carry * root + poly[0]) % _PRIME


def _integer_poly(mult: dict[Fraction, int]) -> list[int]:
    """Ascending integer coefficients of prod (q z - p)^m over roots p/q with multiplicity m."""
    poly = [big_int(1)]
    for root, m in mult.items():
        p, q = root.numerator, root.denominator
        for _ in range(m):
            nxt = [0] * (len(poly) + 1)
            for i, c in enumerate(poly):
                nxt[i] -= p * c
                nxt[i + 1] += q * c
            poly = nxt
    return poly


def _annihilates(mult: Counter[Fraction], a: list[int], order: int) -> bool:
    """Exact check that prod (z - root)^m annihilates S(k) = a[k] / 6**(6k) for all k.

    S obeys the annihilator from :func:`_eigenvalues` (degree ``order``), and so does the
    filtered sequence w = P(shift) S; hence w == 0 iff its first ``order`` terms vanish."""
    poly = _integer_poly(mult)
    degree = len(poly) - 1
    # w(k) * 6**(6(k + degree)) = sum_i c_i a[k+i] 6**(6(degree - i))
    weights = [c * 6 ** (6 * (degree - i)) for i, c in enumerate(poly)]
    return all(sum(w * a[k + i] for i, w in enumerate(weights)) == 0 for k in range(order))


def _char_poly(eigen: Counter[Fraction], n: int) -> list[int] | None:
    """Integer coefficients (ascending) of C(z) for n-fold products, or None if over budget.

    Eigenvalues are c / 6**m; a product is kept as the integer pair (c, m) with common factors 6
    stripped, which is canonical, so equal products are found without rational arithmetic."""
    nonzero = []
    for lam in eigen:
        if lam:
            m = 0
            while 6**m % lam.denominator:
                m += 1
            nonzero.append((lam.numerator * 6**m // lam.denominator, m, eigen[lam] - 1))
    bound = 1
    for i in range(n):  # C(r + n - 1, n) without building it
        bound = bound * (len(nonzero) + i) // (i + 1)
    if bound > MAX_COMBINATIONS:
        return None
    mult: dict[tuple[int, int], int] = {}
    for combo in combinations_with_replacement(nonzero, n):
        c, m, extra = 1, 0, 1
        for ci, mi, ei in combo:
            c, m, extra = c * ci, m + mi, extra + ei
        while m and c % 6 == 0:
            c, m = c // 6, m - 1
        if extra > mult.get((c, m), 0):
            mult[(c, m)] = extra
    if sum(mult.values()) > MAX_EXACT_DEGREE:
        return None
    return _integer_poly({Fraction(c, 6**m): k for (c, m), k in mult.items()})


def _closed_sum(terms: list[int], poly: list[int]) -> int:
    """Numerator N with sum_{k>=0} x(k) = N / (d * C(1)) for a sequence obeying the recurrence with
    characteristic polynomial ``poly``, given ``terms[j] = x(j) * d``, j = 0..D-1, for a common
    denominator ``d`` (see the module docstring)."""
    numerator = 0
    prefix = 0
    for i in range(1, len(poly)):
        prefix += terms[i - 1]
        numerator += poly[i] * prefix
    return numerator


def _survival(chase: Chase, horizon: int) -> tuple[list[int], dict[int, int]]:
    numerators = []
    for k, mass in enumerate(survival_masses(chase)):
        numerators.append(sum(mass.values()))
        if k == horizon:
            return numerators, mass
    raise AssertionError  # pragma: no cover


def _exact(chase: Chase, n: int) -> tuple[Fraction, Fraction] | None:
    eigen = _minimal_multiplicities(chase, _eigenvalues(chase))
    poly = _char_poly(eigen, n)
    if poly is None:
        return None
    start = eigen[Fraction(0)] + 1  # beyond the zero eigenvalue's Jordan block, and k - 1 too
    degree = len(poly) - 1
    last = start + degree - 1
    a, _ = _survival(chase, last)
    # Integer numerators over the common denominator 6**(6 n last):
    #   f(k) S(k)^(n-1) = (6^6 a[k-1] - a[k]) a[k]^(n-1) / 6^(6nk),   S(k)^n = a[k]^n / 6^(6nk).
    scale = [6 ** (6 * n * (last - k)) for k in range(last + 1)]
    sole = [0] + [(_SIX6 * a[k - 1] - a[k]) * a[k] ** (n - 1) * scale[k] for k in range(1, last + 1)]
    every = [a[k] ** n * scale[k] for k in range(last + 1)]
    c1 = sum(poly)
    denominator = 6 ** (6 * n * last) * c1
    p_sole = Fraction(int(sum(sole[1:start]) * c1 + _closed_sum(sole[start:], poly)), int(denominator))
    e_min = Fraction(int(sum(every[:start]) * c1 + _closed_sum(every[start:], poly)), int(denominator))
    return p_sole, e_min


def _certified(chase: Chase, n: int) -> tuple[Fraction, Fraction, Fraction]:
    """Exact partial sums to a horizon K plus rigorous tail bounds (module docstring)."""
    # Stop once n * log2 S(K) + log2(max W) <= log2(error / (4n)), with log2 S(K) estimated from
    # above by bit lengths; the bound actually reported is computed exactly afterwards.
    log_worst = log2(max(max(float(chase.values[k]) for k in chase.reach), 1.0))
    log_target = log2(float(CERTIFIED_ERROR) / (4 * n))
    sole_num = 0  # sum_k (6^6 A_{k-1} - A_k) A_k^(n-1) * 6^(6n(K-k)), over 6^(6nK)
    all_num = 1  # sum_k A_k^n * 6^(6n(K-k)), over 6^(6nK)
    previous = 1
    scale = 6 ** (6 * n)
    for k, mass in enumerate(survival_masses(chase)):
        if k == 0:
            continue
        ak = sum(mass.values())
        sole_num = sole_num * scale + (_SIX6 * previous - ak) * ak ** (n - 1)
        all_num = all_num * scale + ak**n
        previous = ak
        if ak == 0 or n * (ak.bit_length() - 6 * k * _LOG2_6) + log_worst <= log_target:
            denominator = 6 ** (6 * n * k)
            s_exact = Fraction(int(ak), 6 ** (6 * k))
            rest = sum((int(m) * chase.values[c] for c, m in mass.items()), Fraction(0)) / 6 ** (6 * k)
            tail = max(s_exact**n, s_exact ** (n - 1) * rest)
            return Fraction(int(sole_num), denominator), Fraction(int(all_num), denominator), tail
    raise AssertionError  # pragma: no cover


def _power_of_two_above(x: Fraction) -> Fraction:
    """The smallest 2**-j >= x (for 0 < x < 1): a readable rigorous error bound."""
    if x <= 0:
        return Fraction(0)
    return Fraction(1, 2 ** ((x.denominator // x.numerator).bit_length() - 1))


@kept("card")
def _race(text: str, n: int) -> RaceAnalysis:
    chase = solve_chase(parse_card(text))
    exact = _exact(chase, n)
    if exact is not None:
        (p_sole, e_min), error = exact, Fraction(0)
    else:
        p_sole, e_min, tail = _certified(chase, n)
        error = _power_of_two_above(n * tail)
    a, _ = _survival(chase, WITHIN_HORIZON)
    within = tuple(1 - Fraction(int(a[k]) ** n, 6 ** (6 * k * n)) for k in range(1, WITHIN_HORIZON + 1))
    return RaceAnalysis(
        card=chase.card,
        players=n,
        sole_winner=(p_sole,) * n,
        tie=1 - n * p_sole,
        expected_throws=e_min,
        someone_within=within,
        exact=exact is not None,
        error_bound=error,
    )


def race(card: Card | str, players: int) -> RaceAnalysis:
    """Race of ``players`` (2..6) optimal players on ``card``; cached per (card, players)."""
    if type(players) is not int or not 2 <= players <= 6:
        raise ValueError(f"a race has 2 to 6 players, got {players!r}")
    return _race(parse_card(card).text, players)
