"""A built-in example deck: one or more cards for every pattern of the card language.

The published card list is not available; these are illustrative goal cards, named for display.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .cards import Card

__all__ = ["DECK"]

_CARDS = {
    "Four of a Kind": "kind:4",
    "Five of a Kind": "kind:5",
    "Lightning Strike": "kind:6",
    "Two Triples": "two-triples",
    "Three Pairs": "three-pairs",
    "Four and Two": "4+2",
    "Triple, Pair and One": "3+2+1",
    "Straight": "straight",
    "All Even": "all-even",
    "All Odd": "all-odd",
    "High Roller": "sum:30-36",
    "Low Roller": "sum:6-12",
    "Bullseye": "sum:21",
    "Lucky Hand": "faces:1,1,2,3,5,6",
    "Boxcars": "has:6,6,6",
    "Even Keel": "all-even & sum:20-30",
    "Either Way": "kind:4 | straight",
    "Odd Triple": "kind:3 & all-odd",
    "Pairs Without Quads": "three-pairs & !kind:4",
}

#: Card name -> card, in a fixed order; read-only.
DECK: Mapping[str, Card] = MappingProxyType({name: Card(text) for name, text in _CARDS.items()})
