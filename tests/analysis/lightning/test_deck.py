"""analysis/lightning/deck.py: the example deck covers every pattern of the card language, and is read-only."""

from __future__ import annotations

import pytest

from analysis.lightning import DECK, Card


def test_deck_covers_every_pattern() -> None:
    texts = " ".join(card.text for card in DECK.values())
    for piece in ("kind:", "two-triples", "three-pairs", "4+2", "3+2+1", "straight", "all-even", "all-odd"):
        assert piece in texts
    for piece in ("sum:", "faces:", "has:", " & ", " | ", "!"):
        assert piece in texts
    assert all(isinstance(card, Card) for card in DECK.values())
    with pytest.raises(TypeError):
        DECK["new"] = Card("kind:4")  # type: ignore[index]
