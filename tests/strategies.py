"""Hypothesis strategies shared by the test modules, and the settings their fuzzed HTTP requests share."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st

from analysis import MODES, Position, PositionError
from analysis.lightning import DECK
from analysis.position import banked_reachable

DIE_NAMES = {name: mode.die_names for name, mode in MODES.items()}


@st.composite
def positions(draw, mode: str = "original", recycle: str | None = None, banked: bool = True) -> Position:
    """Any reachable mid-turn position of `mode` (structurally valid dice, reachable banked brains)."""
    m = MODES[mode]
    counts = m.counts
    hand = draw(st.tuples(*(st.integers(0, min(3, n)) for n in counts)).filter(lambda h: sum(h) <= 3))
    shots = draw(st.tuples(*(st.integers(0, min(2, n - h)) for n, h in zip(counts, hand)))
                 .filter(lambda s: sum(s) <= 2))
    brains = draw(st.tuples(*(st.integers(0, n - h - s) for n, h, s in zip(counts, hand, shots))))
    out = sum(hand) + sum(shots) + sum(brains)
    assume(out == 0 or out >= 3)
    noted = 0
    if banked and out and draw(st.booleans()):
        noted = draw(st.integers(0, 60).filter(
            lambda n: banked_reachable(n, sum(shots), out, m.total_dice, m.dice_per_roll)))

    def names(c: tuple[int, ...]) -> tuple[str, ...]:
        return tuple(d for d, n in zip(m.die_names, c) for _ in range(n))

    variant = recycle or draw(st.sampled_from(["before-draw", "draw-then-recycle"]))
    return Position(mode, names(hand), names(brains), names(shots), noted, variant)


@st.composite
def reachable_positions(draw, table, banked: int = 0) -> Position:
    """A position whose dice state is one of `table`'s (any mode, Double Feature included)."""
    state = draw(st.sampled_from(table.states))
    try:
        return Position.from_state(table.mode, state, banked, table.recycle)
    except PositionError:  # e.g. Santa kept out by a recycling needs noted brains
        assume(False)


def fractions(bits: int = 64) -> st.SearchStrategy:
    """Rationals whose numerator and denominator have at most `bits` bits (signed)."""
    return st.builds(Fraction, st.integers(-(2**bits) + 1, 2**bits - 1), st.integers(1, 2**bits - 1))


def six_dice() -> st.SearchStrategy[list[int]]:
    """A throw of six Lightning Dice, in any order."""
    return st.lists(st.integers(1, 6), min_size=6, max_size=6)


def card_texts() -> st.SearchStrategy[str]:
    """Lightning Dice cards whose analyses a property test can afford: the deck's and a few more."""
    more = ["kind:3", "has:1,2", "sum:18-24 | all-odd", "2+2+1+1"]
    return st.sampled_from([card.text for card in DECK.values()] + more)


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # fuzzed requests
