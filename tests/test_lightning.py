"""Tests for analysis.lightning: the card language, exact chase/race/bonus/points analyses, and
Monte Carlo cross-checks.

The exact values are checked against independent computations written here from scratch: closed
forms (all-even, six sixes), small Markov chains on "matching dice" (six of a kind, straight),
a full exact Bellman check (the claimed values admit no improving keep anywhere), and seeded
simulations on physical dice within 4 sigma (seeded, so they cannot flake).
"""

from __future__ import annotations

import importlib
import math
import random
from collections import Counter
from fractions import Fraction
from functools import cache
from itertools import combinations_with_replacement, product

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analysis.lightning.racing as race_module
from analysis.lightning import (
    CARD_GRAMMAR,
    CERTIFIED_ERROR,
    DECK,
    WITHIN_HORIZON,
    Card,
    CardError,
    advice,
    analyze,
    bonus_chase,
    parse_card,
    point_advice,
    point_rate,
    race,
    simulate_bonus,
    simulate_chase,
    simulate_points,
    simulate_race,
)

FACES = range(1, 7)
ROLLS = list(combinations_with_replacement(FACES, 6))


def multinomial(dice) -> int:
    """Number of ordered outcomes showing this multiset."""
    result = math.factorial(len(dice))
    for count in Counter(dice).values():
        result //= math.factorial(count)
    return result


def max_of_geometrics(q: Fraction, dice: int = 6) -> tuple[Fraction, Fraction]:
    """E[T] and E[T^2] for T = max of ``dice`` iid geometric(1 - q) throw counts.

    P(T > k) = 1 - (1 - q^k)^6 = sum_j C(6,j) (-1)^(j+1) q^(jk); sum_k q^(jk) = 1/(1-q^j) and
    sum_k (2k+1) x^k = (1+x)/(1-x)^2."""
    mean = second = Fraction(0)
    for j in range(1, dice + 1):
        sign = (-1) ** (j + 1) * math.comb(dice, j)
        x = q**j
        mean += sign / (1 - x)
        second += sign * (1 + x) / (1 - x) ** 2
    return mean, second


# ---------------------------------------------------------------------------------------------
# Strategies (to move to tests/strategies.py): dice, and cards paired with a reference predicate
# written independently of the library.


def _kind(n):
    return lambda d: max(Counter(d).values()) >= n


def _shape(parts):
    return lambda d: sorted(Counter(d).values(), reverse=True) == list(parts)


ATOMS = [
    ("kind:2", _kind(2)),
    ("kind:3", _kind(3)),
    ("kind:4", _kind(4)),
    ("kind:5", _kind(5)),
    ("kind:6", _kind(6)),
    ("two-triples", _shape((3, 3))),
    ("4+2", _shape((4, 2))),
    ("3+2+1", _shape((3, 2, 1))),
    ("2+2+2", _shape((2, 2, 2))),
    ("three-pairs", lambda d: sum(c // 2 for c in Counter(d).values()) >= 3),
    ("straight", lambda d: sorted(d) == [1, 2, 3, 4, 5, 6]),
    ("all-even", lambda d: all(x % 2 == 0 for x in d)),
    ("all-odd", lambda d: all(x % 2 == 1 for x in d)),
]

dice_strategy = st.lists(st.integers(1, 6), min_size=6, max_size=6)


@st.composite
def atom_strategy(draw):
    kind = draw(st.sampled_from(["fixed", "sum", "faces", "has"]))
    if kind == "fixed":
        return draw(st.sampled_from(ATOMS))
    if kind == "sum":
        lo = draw(st.integers(6, 36))
        hi = draw(st.integers(lo, 36))
        return f"sum:{lo}-{hi}", lambda d: lo <= sum(d) <= hi
    if kind == "faces":
        faces = draw(st.lists(st.integers(1, 6), min_size=6, max_size=6))
        return "faces:" + ",".join(map(str, faces)), lambda d: sorted(d) == sorted(faces)
    faces = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))
    need = Counter(faces)
    return "has:" + ",".join(map(str, faces)), lambda d: all(Counter(d)[f] >= c for f, c in need.items())


def _combine(children):
    def build(pair):
        (a_text, a_pred), (b_text, b_pred), op = pair
        if op == "&":
            return f"({a_text}) & ({b_text})", lambda d: a_pred(d) and b_pred(d)
        if op == "|":
            return f"({a_text}) | ({b_text})", lambda d: a_pred(d) or b_pred(d)
        return f"!({a_text})", lambda d: not a_pred(d)

    return st.tuples(children, children, st.sampled_from(["&", "|", "!"])).map(build)


card_with_predicate = st.recursive(atom_strategy(), _combine, max_leaves=4)


@cache
def solvable_cards() -> list[str]:
    """A fixed pool of varied cards whose analyses the property tests can afford."""
    return [card.text for card in DECK.values()] + ["kind:3", "has:1,2", "sum:18-24 | all-odd", "2+2+1+1"]


card_text_strategy = st.sampled_from(solvable_cards())


# ---------------------------------------------------------------------------------------------
# The card language


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("kind:4", "kind:4"),
        ("  KIND : 4 ", "kind:4"),
        ("3+3", "two-triples"),
        ("2+4", "4+2"),
        ("1+2+3", "3+2+1"),
        ("1+1+1+1+1+1", "straight"),
        ("sum:21-21", "sum:21"),
        ("sum: 20 - 25", "sum:20-25"),
        ("faces:6,5,3,2,1,1", "faces:1,1,2,3,5,6"),
        ("has:6, 6, 1", "has:1,6,6"),
        ("straight | kind:4", "kind:4 | straight"),
        ("kind:4 or straight or kind:4", "kind:4 | straight"),
        ("(all-even and sum:20-30)", "all-even & sum:20-30"),
        ("!!straight", "straight"),
        ("not (kind:4 | straight) & sum:20-30", "!(kind:4 | straight) & sum:20-30"),
        ("(kind:4 | straight) & all-even", "all-even & (kind:4 | straight)"),
        ("kind:2 | (kind:3 | (kind:4 | kind:2))", "kind:2 | kind:3 | kind:4"),
        ("three-pairs & !kind:4", "!kind:4 & three-pairs"),
    ],
)
def test_canonical_text_round_trips(text: str, canonical: str) -> None:
    card = parse_card(text)
    assert card.text == canonical
    assert Card(canonical).text == canonical
    assert parse_card(canonical) == card and hash(parse_card(canonical)) == hash(card)
    assert str(card) == canonical


def test_equal_cards_are_equal_values() -> None:
    assert Card("3+3") == Card("two-triples")
    assert len({Card("kind:4 | straight"), Card("straight|kind:4"), Card("kind:4")}) == 2
    assert parse_card(Card("kind:5")) == Card("kind:5")
    with pytest.raises(AttributeError):
        Card("kind:4").text = "kind:5"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty card"),
        ("   ", "empty card"),
        ("kind:7", "N from 2 to 6"),
        ("kind:1", "N from 2 to 6"),
        ("kind:x", "whole number"),
        ("sum:40-50", "can never be matched"),
        ("sum:25-20", "empty sum range"),
        ("sum:", "whole number"),
        ("faces:1,2,3", "exactly six faces"),
        ("faces:1,2,3,4,5,7", "a face is 1..6"),
        ("has:1,1,1,1,1,1,1", "at most six faces"),
        ("3+2", "add up to 6"),
        ("4+2+0", "at least 1"),
        ("flush", "unknown pattern"),
        ("color:red", "unknown pattern"),
        ("kind:4 &", "expected a pattern after '&'"),
        ("kind:4 | | straight", "expected a pattern"),
        ("(straight", "missing ')'"),
        ("straight)", "unbalanced ')'"),
        ("kind:4 straight", "expected '&', '|' or the end"),
        ("all-even & all-odd", "no roll of six dice can match"),
        ("straight & !straight", "no roll of six dice can match"),
        ("kind:4 # 2", "unexpected character"),
        ("x" * 300, "longer than"),
        ("(" * 40 + "straight" + ")" * 40, "nested more than"),
    ],
)
def test_invalid_cards_raise_card_error(text: str, reason: str) -> None:
    with pytest.raises(CardError) as info:
        parse_card(text)
    error = info.value
    assert isinstance(error, ValueError)
    assert reason in error.reason
    assert error.reason in str(error)
    if text.strip() and "never" not in reason and "no roll" not in reason:
        assert error.fragment  # says where


def test_non_text_card_is_rejected() -> None:
    with pytest.raises(CardError, match="written as text"):
        parse_card(42)  # type: ignore[arg-type]


def test_grammar_is_documented() -> None:
    for word in ("kind:", "two-triples", "three-pairs", "straight", "all-even", "sum:", "faces:", "has:"):
        assert word in CARD_GRAMMAR


@settings(max_examples=150, deadline=None)
@given(card_with_predicate, st.lists(dice_strategy, min_size=1, max_size=20))
def test_generated_cards_match_reference_semantics(pair, rolls) -> None:
    text, predicate = pair
    if not any(predicate(roll) for roll in ROLLS):
        with pytest.raises(CardError, match="no roll"):
            parse_card(text)
        return
    card = parse_card(text)
    assert parse_card(card.text) == card  # canonical form is a fixed point
    for roll in rolls + ROLLS[::37]:
        assert card.matches(roll) == predicate(roll)
        assert parse_card(card.text).matches(roll) == predicate(roll)


@pytest.mark.parametrize("dice", [[1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6, 1], [0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 7]])
def test_invalid_dice_raise_value_error(dice) -> None:
    with pytest.raises(ValueError):
        advice("kind:4", dice)
    with pytest.raises(ValueError):
        Card("kind:4").matches(dice)


def test_bool_is_not_a_die() -> None:
    with pytest.raises(ValueError):
        Card("kind:4").matches([True, 1, 1, 1, 2, 3])


def test_deck_covers_every_pattern() -> None:
    texts = " ".join(card.text for card in DECK.values())
    for piece in ("kind:", "two-triples", "three-pairs", "4+2", "3+2+1", "straight", "all-even", "all-odd"):
        assert piece in texts
    for piece in ("sum:", "faces:", "has:", " & ", " | ", "!"):
        assert piece in texts
    assert all(isinstance(card, Card) for card in DECK.values())
    with pytest.raises(TypeError):
        DECK["new"] = Card("kind:4")  # type: ignore[index]


# ---------------------------------------------------------------------------------------------
# Exact single-player values, checked against independent computations


def test_all_even_is_six_independent_geometrics() -> None:
    result = analyze("all-even")
    half = Fraction(1, 2)
    assert result.within == tuple((1 - half**k) ** 6 for k in range(1, WITHIN_HORIZON + 1))
    mean, second = max_of_geometrics(half)
    assert result.expected_throws == mean
    assert result.variance == second - mean**2
    tip = advice("all-even", [5, 2, 3, 6, 1, 4])
    assert tip.keep == (2, 4, 6) and tip.reroll == (1, 3, 5)


@pytest.mark.parametrize("text", ["faces:6,6,6,6,6,6", "sum:36", "has:6,6,6,6,6,6", "kind:6 & has:6"])
def test_six_sixes_closed_form(text: str) -> None:
    result = analyze(text)
    q = Fraction(5, 6)
    mean, second = max_of_geometrics(q)
    assert result.expected_throws == mean
    assert result.variance == second - mean**2
    assert result.within == tuple((1 - q**k) ** 6 for k in range(1, WITHIN_HORIZON + 1))


def _chain_expectation(next_counts) -> Fraction:
    """E[throws] for a chain on j = 0..6 "useful dice" (6 = done) that never decreases:
    ``next_counts(j)`` gives {j': ways} out of 6**(6-j); j = 0 is the empty start."""
    value = {6: Fraction(0)}
    for j in range(5, -1, -1):
        counts = next_counts(j)
        total = 6 ** (6 - j)
        stay = counts.get(j, 0)
        value[j] = (total + sum(w * value[k] for k, w in counts.items() if k != j)) / (total - stay)
    return value[0]


def test_six_of_a_kind_matches_count_chain() -> None:
    """Keep the most common face: j = dice showing it. From j kept dice of face 1 (j >= 1) roll
    6 - j dice; the new count is max(j + rolled ones, the largest other count rolled)."""

    @cache
    def step(j: int) -> dict[int, int]:
        counts: Counter[int] = Counter()
        for rolled in product(FACES, repeat=6 - j):
            c = Counter(rolled)
            best = max([c[1] + j] + [c[f] for f in range(2, 7)]) if j else max(c.values())
            counts[best] += 1
        return dict(counts)

    expected = _chain_expectation(step)
    assert analyze("kind:6").expected_throws == expected
    tip = advice("kind:6", [3, 5, 3, 5, 1, 2])
    assert tip.keep in {(3, 3), (5, 5)} and set(tip.equally_good) | {tip.keep} == {(3, 3), (5, 5)}


def test_straight_matches_distinct_face_chain() -> None:
    """Keep one die of every face showing: j = distinct faces; rolling 6 - j dice adds the number
    of distinct missing faces among them."""

    @cache
    def step(j: int) -> dict[int, int]:
        missing = set(range(j + 1, 7))  # by symmetry, faces 1..j are held
        counts: Counter[int] = Counter()
        for rolled in product(FACES, repeat=6 - j):
            counts[j + len(missing & set(rolled))] += 1
        return dict(counts)

    assert analyze("straight").expected_throws == _chain_expectation(step)
    assert advice("straight", [1, 1, 2, 2, 6, 6]).keep == (1, 2, 6)


def test_faces_card_first_throw_and_policy() -> None:
    result = analyze("faces:1,1,2,3,5,6")
    assert result.within[0] == Fraction(multinomial((1, 1, 2, 3, 5, 6)), 6**6)
    assert advice("faces:1,1,2,3,5,6", [1, 2, 3, 4, 5, 6]).keep == (1, 2, 3, 5, 6)
    done = advice("faces:1,1,2,3,5,6", [6, 5, 3, 2, 1, 1])
    assert done.matched and done.expected_throws_left == 0 and done.keep == (1, 1, 2, 3, 5, 6)
    # Keeping 2 3 5 6 and chasing two 1s costs 96/11 > E[from nothing]: reroll everything.
    assert advice("faces:1,1,2,3,5,6", [2, 2, 3, 3, 5, 6]).keep == ()
    assert result.expected_throws < Fraction(96, 11)


def _bellman_q(card: Card, value_of_state: dict) -> dict:
    """Q(K) = 1 + E[value after one throw from keep K], for every keep of 0..5 dice."""
    q = {}
    for size in range(6):
        for keep in combinations_with_replacement(FACES, size):
            total = 6 ** (6 - size)
            acc = Fraction(0)
            for rolled in combinations_with_replacement(FACES, 6 - size):
                acc += multinomial(rolled) * value_of_state[tuple(sorted(keep + rolled))]
            q[keep] = 1 + acc / total
    return q


def _sub_multisets(roll):
    counts = Counter(roll)
    faces = sorted(counts)
    for choice in product(*(range(counts[f] + 1) for f in faces)):
        keep = tuple(f for f, c in zip(faces, choice) for _ in range(c))
        if len(keep) < 6:
            yield keep


@pytest.mark.parametrize("text", ["kind:4", "faces:1,1,2,3,5,6", "sum:20-25", "kind:4 | straight", "3+2+1"])
def test_claimed_values_satisfy_bellman_optimality_exactly(text: str) -> None:
    """The values advice() reports solve the optimality equations exactly: every keep's claimed
    value is its one-step lookahead, and no legal keep of any roll is strictly better. With a
    positive cost per throw the solution of these equations is unique, so they are optimal."""
    card = parse_card(text)
    claimed = {roll: advice(card, roll) for roll in ROLLS}
    value = {roll: tip.expected_throws_left for roll, tip in claimed.items()}
    q = _bellman_q(card, value)
    for roll, tip in claimed.items():
        assert tip.matched == card.matches(roll)
        if tip.matched:
            assert value[roll] == 0
            continue
        best = min(q[k] for k in _sub_multisets(roll))
        assert q[tip.keep] == value[roll] == best
        for other in tip.equally_good:
            assert q[other] == best
    assert analyze(card).expected_throws == q[()]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(card_text_strategy, dice_strategy, st.randoms(use_true_random=False))
def test_advice_is_a_legal_keep(text: str, dice, rnd) -> None:
    tip = advice(text, dice)
    shuffled = list(dice)
    rnd.shuffle(shuffled)
    assert advice(text, shuffled) == tip
    assert tip.dice == tuple(sorted(dice))
    assert Counter(tip.keep) + Counter(tip.reroll) == Counter(dice)
    assert tip.matched == parse_card(text).matches(dice)
    if tip.matched:
        assert tip.expected_throws_left == 0 and tip.reroll == ()
    else:
        assert len(tip.keep) <= 5
        assert 1 <= tip.expected_throws_left <= analyze(text).expected_throws


@settings(max_examples=30, deadline=None)
@given(card_text_strategy)
def test_throw_distribution_properties(text: str) -> None:
    result = analyze(text)
    card = result.card
    first = Fraction(sum(multinomial(r) for r in ROLLS if card.matches(r)), 6**6)
    assert result.within[0] == first
    assert len(result.within) == WITHIN_HORIZON
    assert all(0 < a <= b <= 1 for a, b in zip(result.within, result.within[1:]))
    # Keeping nothing each time needs 1/first throws on average; the optimum is no worse, and
    # E[T] = sum_k P(T > k) is at least its first 20 terms.
    assert 1 <= result.expected_throws <= 1 / first
    assert result.expected_throws >= 1 + sum(1 - w for w in result.within[:-1])
    assert result.variance >= 0
    assert result.verified_optimal
    assert result.policy_summary and result.keeps_used >= 1


# ---------------------------------------------------------------------------------------------
# The race


def _all_even_race(players: int) -> tuple[Fraction, Fraction]:
    """P(sole first) and E[min] for all-even by inclusion-exclusion: S(k) = sum_j b_j 2^(-jk),
    f(k) = sum_j a_j 2^(-jk) (k >= 1), and sum over k of a product of such terms is geometric."""
    b = {j: -math.comb(6, j) * (-1) ** j for j in range(1, 7)}
    a = {j: math.comb(6, j) * (-1) ** j * (1 - 2**j) for j in range(1, 7)}
    sole = Fraction(0)
    for js in product(range(1, 7), repeat=players):
        coef = a[js[0]] * math.prod(b[j] for j in js[1:])
        sole += Fraction(coef, 2 ** sum(js) - 1)  # sum_{k>=1} x^k = x/(1-x), x = 2^-s
    mean = Fraction(0)
    for js in product(range(1, 7), repeat=players):
        mean += math.prod(b[j] for j in js) / (1 - Fraction(1, 2 ** sum(js)))
    return sole, mean


@pytest.mark.parametrize("players", [2, 3])
def test_race_all_even_closed_form(players: int) -> None:
    result = race("all-even", players)
    sole, mean = _all_even_race(players)
    assert result.exact and result.error_bound == 0
    assert result.sole_winner == (sole,) * players
    assert result.tie == 1 - players * sole
    assert result.expected_throws == mean
    survival = [1 - w for w in analyze("all-even").within]
    assert result.someone_within == tuple(1 - s**players for s in survival)


@pytest.mark.parametrize(
    ("text", "players"),
    [("kind:6", 2), ("straight", 3), ("sum:30-36", 4), ("three-pairs", 6), ("3+2+1", 2), ("faces:1,1,2,3,5,6", 3)],
)
def test_race_exact_within_certified_bounds(monkeypatch, text: str, players: int) -> None:
    """The closed-form sums agree with rigorous partial sums plus tail bounds."""
    exact = race(text, players)
    assert exact.exact
    monkeypatch.setattr(race_module, "MAX_EXACT_DEGREE", 0)
    certified = race_module._race.__wrapped__(parse_card(text).text, players)
    assert not certified.exact and 0 < certified.error_bound <= CERTIFIED_ERROR
    for field in ("tie", "expected_throws"):
        assert abs(getattr(exact, field) - getattr(certified, field)) <= certified.error_bound
    assert abs(exact.sole_winner[0] - certified.sole_winner[0]) <= certified.error_bound
    assert exact.someone_within == certified.someone_within


@settings(max_examples=12, deadline=None)
@given(card_text_strategy, st.integers(2, 4))
def test_race_properties(text: str, players: int) -> None:
    result = race(text, players)
    single = analyze(text)
    assert result.players == players and len(result.sole_winner) == players
    assert players * result.sole_winner[0] + result.tie == 1
    assert 0 <= result.tie <= 1 and 0 < result.sole_winner[0] < Fraction(1, players) + result.error_bound
    assert 1 <= result.expected_throws <= single.expected_throws
    assert all(a >= b for a, b in zip(result.someone_within, single.within))
    assert all(a <= b for a, b in zip(result.someone_within, result.someone_within[1:]))


def test_race_more_players_end_sooner() -> None:
    values = [race("kind:4", n) for n in range(2, 7)]
    assert all(a.expected_throws > b.expected_throws for a, b in zip(values, values[1:]))
    assert all(a.tie < b.tie for a, b in zip(values, values[1:]))


def test_race_rejects_bad_player_counts() -> None:
    for bad in (1, 7, 2.0, True):
        with pytest.raises(ValueError):
            race("kind:4", bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Bonus, Thunder and points


def test_bonus_all_even_closed_form() -> None:
    """Six 1s can only come while nothing is kept, i.e. while every throw so far was all odd:
    p = q / (1 - r) with q = 6^-6 (six 1s) and r = 2^-6 - 6^-6 (all odd, not six 1s)."""
    q = Fraction(1, 6**6)
    r = Fraction(1, 2**6) - q
    result = bonus_chase("all-even", 1)
    assert result.p_pass == q / (1 - r)
    assert not result.also_matches
    assert result.expected_passes == result.p_pass / (1 - result.p_pass)


def test_bonus_when_six_of_the_number_is_the_card() -> None:
    result = bonus_chase("sum:36", 6)
    assert result.p_pass == 1 and result.also_matches and result.expected_passes == 1
    assert bonus_chase("kind:6", 1).also_matches
    with pytest.raises(ValueError):
        bonus_chase("kind:6", 7)


def test_points_for_six_of_a_kind() -> None:
    """With six players every match of kind:6 is also a Bonus or Thunder: 3 points per card."""
    rate = point_rate("kind:6", 6)
    assert rate.card_policy_gain == 3 / analyze("kind:6").expected_throws
    assert rate.best_gain == rate.card_policy_gain
    two = point_rate("kind:6", 2)
    assert two.best_gain > two.card_policy_gain  # chasing 1s and 2s pays
    assert two.best_gain == two.best_card_points + two.best_bonus_points


@settings(max_examples=12, deadline=None)
@given(card_text_strategy, st.integers(2, 6))
def test_points_policy_is_never_worse(text: str, players: int) -> None:
    rate = point_rate(text, players)
    assert rate.best_gain >= rate.card_policy_gain > 0
    assert rate.best_card_points > 0 and rate.best_bonus_points >= 0
    if rate.changed_states == 0:  # the card policy is greedy for the optimal bias: gain-optimal
        assert rate.best_gain == rate.card_policy_gain


def test_point_advice_is_legal() -> None:
    for roll in ROLLS[::11]:
        keep = point_advice("three-pairs", roll, 6)
        assert not Counter(keep) - Counter(roll) and len(keep) <= 5


# ---------------------------------------------------------------------------------------------
# Monte Carlo cross-checks (seeded: deterministic), all within 4 sigma


def _close(estimate: float, exact: Fraction | float, sigma: float) -> bool:
    return abs(estimate - float(exact)) <= 4 * sigma + 1e-12


@pytest.mark.parametrize(("text", "trials"), [("kind:4", 6000), ("faces:1,1,2,3,5,6", 2500), ("sum:20-25", 5000)])
def test_simulated_throws_match_exact(text: str, trials: int) -> None:
    result = analyze(text)
    samples = simulate_chase(text, trials, seed=20240611)
    mean = sum(samples) / trials
    assert _close(mean, result.expected_throws, math.sqrt(float(result.variance) / trials))
    for k in (1, 2, 3, 5, 8, 13):
        p = float(result.within[k - 1])
        share = sum(s <= k for s in samples) / trials
        assert _close(share, p, math.sqrt(max(p * (1 - p), 1e-9) / trials))


@pytest.mark.parametrize(("text", "players", "trials"), [("kind:4", 3, 4000), ("straight", 2, 2500)])
def test_simulated_race_matches_exact(text: str, players: int, trials: int) -> None:
    result = race(text, players)
    outcomes = simulate_race(text, players, trials, seed=7)
    for who in range(players):
        p = float(result.sole_winner[who])
        share = sum(w == (who,) for _, w in outcomes) / trials
        assert _close(share, p, math.sqrt(p * (1 - p) / trials))
    p_tie = float(result.tie)
    share = sum(len(w) > 1 for _, w in outcomes) / trials
    assert _close(share, p_tie, math.sqrt(p_tie * (1 - p_tie) / trials))
    throws = [t for t, _ in outcomes]
    mean = sum(throws) / trials
    var = sum((t - mean) ** 2 for t in throws) / (trials - 1)
    assert _close(mean, result.expected_throws, math.sqrt(var / trials))


@pytest.mark.parametrize(
    ("text", "number", "trials"), [("kind:6", 1, 1500), ("kind:4", 2, 4000), ("all-even", 2, 6000), ("5+1", 1, 5000)]
)
def test_simulated_bonus_matches_exact(text: str, number: int, trials: int) -> None:
    result = bonus_chase(text, number)
    assert result.also_matches == (text != "5+1")  # 5+1: six 1s are a pass but no match
    passes = simulate_bonus(text, number, trials, seed=99)
    p = float(result.p_pass)
    share = sum(n > 0 for n in passes) / trials
    assert _close(share, p, math.sqrt(max(p * (1 - p), 1e-6) / trials))
    mean = sum(passes) / trials
    var = sum((n - mean) ** 2 for n in passes) / (trials - 1)
    assert _close(mean, result.expected_passes, math.sqrt(max(var, 1e-6) / trials))


@pytest.mark.parametrize(
    ("text", "players", "best"), [("three-pairs", 6, True), ("kind:6", 2, True), ("kind:6", 2, False)]
)
def test_simulated_points_match_exact_gain(text: str, players: int, best: bool) -> None:
    """Renewal-reward ratio estimator; delta-method standard error from the iid cycles."""
    rate = point_rate(text, players)
    exact = rate.best_gain if best else rate.card_policy_gain
    cycles = simulate_points(text, players, 40000, seed=5, best=best)
    n = len(cycles)
    points = sum(p for p, _ in cycles)
    throws = sum(t for _, t in cycles)
    gain = points / throws
    mean_len = throws / n
    residual = sum((p - gain * t) ** 2 for p, t in cycles) / (n - 1)
    assert _close(gain, exact, math.sqrt(residual / n) / mean_len)


def test_simulation_is_seeded() -> None:
    assert simulate_chase("kind:4", 50, seed=1) == simulate_chase("kind:4", 50, seed=1)
    assert simulate_race("kind:4", 2, 20, seed=3) == simulate_race("kind:4", 2, 20, seed=3)
    rng = random.Random(0)
    assert isinstance(rng.random(), float)


# ---------------------------------------------------------------------------------------------
# The exact fallbacks: exact policy iteration repairs any float trouble


def test_exact_policy_iteration_from_a_poor_start(monkeypatch) -> None:
    """Pretend the float solver only managed "keep nothing": exact policy iteration must still
    reach the optimal values, in more than one round."""
    chase_module = importlib.import_module("analysis.lightning.chase")
    text = "faces:1,1,2,3,5,6"
    good = chase_module.solve_chase(parse_card(text))

    def naive(matched):
        tab = importlib.import_module("analysis.lightning.tables").tables()
        p = tab.prob @ matched
        return 1.0 + (1.0 - p) / p[0]

    monkeypatch.setattr(chase_module, "_float_values", naive)
    repaired = chase_module._solve.__wrapped__(text)
    assert repaired.exact_rounds > 1
    assert repaired.values == good.values
    assert (repaired.policy == good.policy).all()


def test_exact_policy_iteration_recovers_from_an_improper_start(monkeypatch) -> None:
    """Rank "keep five 3s" best: a player holding them can never show two 6s (nor, with two
    players, score a Thunder), so the greedy policy is improper. The solvers must notice and
    restart from a proper policy."""
    chase_module = importlib.import_module("analysis.lightning.chase")
    bonus_module = importlib.import_module("analysis.lightning.bonus")
    tables_module = importlib.import_module("analysis.lightning.tables")
    text = "has:6,6"
    good = chase_module.solve_chase(parse_card(text))
    good_rate = point_rate(text, 2)
    trap = tables_module.KEEP_INDEX[(3, 3, 3, 3, 3)]
    seen = []
    original = chase_module.back_substitute

    def spy(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        except ArithmeticError:
            seen.append(True)
            raise

    monkeypatch.setattr(chase_module, "back_substitute", spy)
    values = np.arange(462.0)
    values[trap] = -1.0
    monkeypatch.setattr(chase_module, "_float_values", lambda matched: values)
    assert chase_module._solve.__wrapped__(text).values == good.values
    assert seen
    bias = -np.arange(462.0)
    bias[trap] = 1e9
    monkeypatch.setattr(bonus_module, "_float_gain_policy", lambda chase, points, renew: bias)
    monkeypatch.setattr(bonus_module, "back_substitute", spy)
    seen.clear()
    rate, _ = bonus_module._points.__wrapped__(text, 2)
    assert rate == good_rate
    assert seen
