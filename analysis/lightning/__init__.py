"""Lightning Dice: exact odds for racing to match a goal card with six dice (RULES.md section 4).

Pure mathematics: no Flask, no Celery, no I/O. Everything is exact (``fractions.Fraction``)
unless a result says otherwise (``RaceAnalysis.exact``).

- ``parse_card(text)`` / ``Card(text)``: goal cards in a small pattern language (grammar in
  ``CARD_GRAMMAR`` and in ``cards.py``); invalid text raises ``CardError`` (a ``ValueError``
  with ``reason`` and ``fragment``, for an HTTP 422). ``DECK`` holds named example cards.
- ``analyze(card)``: the optimal keep/reroll policy (an MDP over the 462 multisets of six dice,
  found in floats, evaluated and verified optimal exactly), the expected number of throws, its
  variance and P(matched within k throws), k = 1..20.
- ``advice(card, dice)``: the best dice to keep and the expected throws left (a lookup).
- ``race(card, players)``: P(sole first), P(tie) and E[throws until someone matches].
- ``bonus_chase(card, number)``: P(passing through six ``number``s while chasing the card).
- ``point_rate(card, players)`` / ``point_advice``: the points-per-throw optimal policy with
  Bonus (+1), Thunder (+1 for the chaser, by convention) and the card (+2).
- ``simulate_*``: seeded Monte Carlo on physical dice, an independent cross-check.

Results are cached per canonical card text; a cold ``analyze`` takes well under a second.
"""

from .bonus import BonusChase, PointRate, bonus_chase, point_advice, point_rate
from .cards import Card, CardError, parse_card
from .chase import WITHIN_HORIZON, Advice, CardAnalysis, advice, analyze
from .deck import DECK
from .racing import CERTIFIED_ERROR, RaceAnalysis, race
from .simulate import simulate_bonus, simulate_chase, simulate_points, simulate_race

CARD_GRAMMAR = """\
card    := expr
expr    := term { "|" term }                any of the terms holds ("or" works too)
term    := factor { "&" factor }            all of the factors hold ("and")
factor  := "!" factor | "(" expr ")" | atom   "!" negates ("not")
atom    := "kind:" N                        at least N dice show one face, N = 2..6
         | "two-triples"                    exactly 3+3
         | "three-pairs"                    at least three pairs (4+2, 2+2+2, six of a kind count)
         | P "+" P { "+" P }                exact shape: face counts largest first, parts sum to 6
         | "straight"                       1 2 3 4 5 6
         | "all-even" | "all-odd"
         | "sum:" A [ "-" B ]               A <= sum of the dice <= B (6..36)
         | "faces:" F,F,F,F,F,F             exactly this multiset of six faces
         | "has:" F{,F}                     contains this multiset (1 to 6 faces)
"""

__all__ = [
    "Advice",
    "BonusChase",
    "CARD_GRAMMAR",
    "CERTIFIED_ERROR",
    "Card",
    "CardAnalysis",
    "CardError",
    "DECK",
    "PointRate",
    "RaceAnalysis",
    "WITHIN_HORIZON",
    "advice",
    "analyze",
    "bonus_chase",
    "parse_card",
    "point_advice",
    "point_rate",
    "race",
    "simulate_bonus",
    "simulate_chase",
    "simulate_points",
    "simulate_race",
]
