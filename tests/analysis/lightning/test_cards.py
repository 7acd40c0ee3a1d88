"""analysis/lightning/cards.py: the card language: canonical text, errors that say what and where, and the meaning of
generated cards against reference predicates written independently of the library."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.lightning import CARD_GRAMMAR, Card, CardError, advice, parse_card

from ...strategies import six_dice
from .rolls import ROLLS


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
        faces = draw(six_dice())
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


# a card's text, with a predicate of a roll that means what the text says, written here independently of the library
card_with_predicate = st.recursive(atom_strategy(), _combine, max_leaves=4)


@settings(max_examples=150, deadline=None)
@given(card_with_predicate, st.lists(six_dice(), min_size=1, max_size=20))
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
