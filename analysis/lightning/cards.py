"""Goal cards for Lightning Dice, written in a small pattern language.

The published card list is not available, so a card is written as a short text and analysed from
that text. Grammar (``&`` binds tighter than ``|``; ``!`` binds tightest; keywords ``and``, ``or``,
``not`` are accepted for the symbols; case and spaces around ``: , - +`` do not matter)::

    card    := expr
    expr    := term  { "|" term }                 any of the terms holds
    term    := factor { "&" factor }              all of the factors hold
    factor  := "!" factor | "(" expr ")" | atom    "!" negates
    atom    := "kind:" N                           at least N dice show one face, N = 2..6
             | "two-triples"                       exactly 3+3 (alias of the shape 3+3)
             | "three-pairs"                       at least three pairs: sum of count//2 >= 3,
                                                   so 4+2, 2+2+2 and six of a kind qualify
             | P "+" P { "+" P }                   exact shape: the face counts, largest first,
                                                   are exactly the parts (which sum to 6),
                                                   e.g. 4+2, 3+2+1, 2+2+2, 5+1
             | "straight"                          1 2 3 4 5 6 (the shape 1+1+1+1+1+1)
             | "all-even" | "all-odd"              every die even / every die odd
             | "sum:" A [ "-" B ]                  A <= sum of the six dice <= B (B = A if absent)
             | "faces:" F "," F "," F "," F "," F "," F
                                                   exactly this multiset of six faces
             | "has:" F { "," F }                  contains this multiset of 1 to 6 faces

The canonical text (``Card.text``) writes atoms in canonical form (``3+3`` becomes
``two-triples``, ``1+1+1+1+1+1`` becomes ``straight``, face lists are sorted, ``sum:A-A`` becomes
``sum:A``), flattens and sorts the operands of ``&`` and ``|`` and drops duplicates, removes double
negation, and parenthesises only where needed. Two cards are equal iff their canonical texts are.

Invalid input raises :class:`CardError` (a ``ValueError``) carrying a human-readable ``reason``
and the offending ``fragment``, so an HTTP layer can answer 422 with both. A card that no roll of
six dice can match (``sum:40-50``, ``all-even & all-odd``) is invalid too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations_with_replacement

from ..kept import kept

__all__ = ["Card", "CardError", "parse_card", "dice_counts", "MAX_CARD_LENGTH"]

MAX_CARD_LENGTH = 200
MAX_DEPTH = 16
FACES = (1, 2, 3, 4, 5, 6)

# The 462 multisets of six dice as face-count vectors, used to reject unmatchable cards.
_ALL_COUNTS = tuple(tuple(roll.count(f) for f in FACES) for roll in combinations_with_replacement(FACES, 6))


class CardError(ValueError):
    """An invalid goal card. ``reason`` says what is wrong, ``fragment`` where."""

    def __init__(self, reason: str, fragment: str = "", text: str = "", position: int | None = None):
        self.reason = reason
        self.fragment = fragment
        self.text = text
        self.position = position
        where = f" (at {fragment!r})" if fragment else ""
        super().__init__(f"invalid card {text!r}: {reason}{where}")


def dice_counts(dice: Iterable[int]) -> tuple[int, ...]:
    """Validate six dice and return how many show each face 1..6.

    Raises ``ValueError`` (not ``CardError``: the card is fine, the dice are not)."""
    try:
        roll = tuple(dice)
    except TypeError:
        raise ValueError("dice must be a sequence of six integers 1..6") from None
    if len(roll) != 6:
        raise ValueError(f"expected 6 dice, got {len(roll)}")
    for d in roll:
        if type(d) is not int or not 1 <= d <= 6:  # bool is rejected on purpose
            raise ValueError(f"a die shows 1..6, got {d!r}")
    return tuple(roll.count(f) for f in FACES)


# ---------------------------------------------------------------------------------------------
# Syntax tree. Every node is a frozen value with `test(counts) -> bool` and a canonical `text`.


@dataclass(frozen=True)
class _Kind:
    n: int
    prec = 3

    def test(self, c: tuple[int, ...]) -> bool:
        return max(c) >= self.n

    @property
    def text(self) -> str:
        return f"kind:{self.n}"


@dataclass(frozen=True)
class _Shape:
    parts: tuple[int, ...]  # descending, sums to 6, at least two parts
    prec = 3

    def test(self, c: tuple[int, ...]) -> bool:
        return tuple(sorted((x for x in c if x), reverse=True)) == self.parts

    @property
    def text(self) -> str:
        if self.parts == (3, 3):
            return "two-triples"
        if self.parts == (1,) * 6:
            return "straight"
        return "+".join(map(str, self.parts))


@dataclass(frozen=True)
class _ThreePairs:
    prec = 3

    def test(self, c: tuple[int, ...]) -> bool:
        return sum(x // 2 for x in c) >= 3

    @property
    def text(self) -> str:
        return "three-pairs"


@dataclass(frozen=True)
class _Parity:
    even: bool
    prec = 3

    def test(self, c: tuple[int, ...]) -> bool:
        first = 0 if self.even else 1  # index (face - 1) of the first face of the wrong parity
        return not any(c[first::2])

    @property
    def text(self) -> str:
        return "all-even" if self.even else "all-odd"


@dataclass(frozen=True)
class _Sum:
    lo: int
    hi: int
    prec = 3

    def test(self, c: tuple[int, ...]) -> bool:
        return self.lo <= sum(f * x for f, x in zip(FACES, c)) <= self.hi

    @property
    def text(self) -> str:
        return f"sum:{self.lo}" if self.lo == self.hi else f"sum:{self.lo}-{self.hi}"


@dataclass(frozen=True)
class _Faces:
    counts: tuple[int, ...]
    exact: bool  # True: exactly this multiset (faces:), False: contains it (has:)
    prec = 3

    def test(self, c: tuple[int, ...]) -> bool:
        if self.exact:
            return c == self.counts
        return all(x >= y for x, y in zip(c, self.counts))

    @property
    def text(self) -> str:
        faces = ",".join(str(f) for f, x in zip(FACES, self.counts) for _ in range(x))
        return ("faces:" if self.exact else "has:") + faces


@dataclass(frozen=True)
class _Not:
    item: object
    prec = 2

    def test(self, c: tuple[int, ...]) -> bool:
        return not self.item.test(c)  # type: ignore[attr-defined]

    @property
    def text(self) -> str:
        inner = self.item.text  # type: ignore[attr-defined]
        return "!" + (inner if self.item.prec >= 2 else f"({inner})")  # type: ignore[attr-defined]


@dataclass(frozen=True)
class _And:
    items: tuple[object, ...]
    prec = 1

    def test(self, c: tuple[int, ...]) -> bool:
        return all(i.test(c) for i in self.items)  # type: ignore[attr-defined]

    @property
    def text(self) -> str:
        return " & ".join(i.text if i.prec >= 1 else f"({i.text})" for i in self.items)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class _Or:
    items: tuple[object, ...]
    prec = 0

    def test(self, c: tuple[int, ...]) -> bool:
        return any(i.test(c) for i in self.items)  # type: ignore[attr-defined]

    @property
    def text(self) -> str:
        return " | ".join(i.text for i in self.items)  # type: ignore[attr-defined]


def _combine(cls: type, items: list) -> object:
    """Flatten nested operators of the same kind, sort by canonical text, drop duplicates."""
    flat: dict[str, object] = {}
    for item in items:
        for sub in item.items if isinstance(item, cls) else (item,):
            flat.setdefault(sub.text, sub)
    if len(flat) == 1:
        return next(iter(flat.values()))
    return cls(tuple(flat[k] for k in sorted(flat)))


# ---------------------------------------------------------------------------------------------
# Tokenizer and recursive-descent parser.

_TOKEN = re.compile(r"\s*(?:(?P<op>[()&|!])|(?P<atom>[a-z0-9]+(?:\s*[:,+\-]\s*[a-z0-9]+)*\s*:?))")
_KEYWORDS = {"and": "&", "or": "|", "not": "!"}


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []  # (kind, value, position)
        low = text.lower()
        pos = 0
        while pos < len(low):
            if low[pos:].isspace():
                break
            m = _TOKEN.match(low, pos)
            if not m or m.end() == pos:
                start = pos + (len(low[pos:]) - len(low[pos:].lstrip()))
                self.fail("unexpected character", text[start : start + 1], start)
            assert m is not None
            if m.group("op"):
                self.tokens.append(("op", m.group("op"), m.start("op")))
            else:
                atom = re.sub(r"\s+", "", m.group("atom"))
                kind = "op" if atom in _KEYWORDS else "atom"
                self.tokens.append((kind, _KEYWORDS.get(atom, atom), m.start("atom")))
            pos = m.end()
        self.i = 0

    def fail(self, reason: str, fragment: str = "", position: int | None = None) -> None:
        raise CardError(reason, fragment, self.text, position)

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def parse(self) -> object:
        if not self.tokens:
            self.fail("empty card: write a pattern such as 'kind:4' or 'straight'")
        node = self.expr(0)
        tok = self.peek()
        if tok is not None:
            what = "unbalanced ')'" if tok[1] == ")" else "expected '&', '|' or the end of the card"
            self.fail(what, self.original(tok), tok[2])
        return node

    def original(self, tok: tuple[str, str, int]) -> str:
        start = tok[2]
        m = _TOKEN.match(self.text.lower(), start)
        end = m.end() if m else start + 1
        return self.text[start:end].strip()

    def expr(self, depth: int) -> object:
        items = [self.term(depth)]
        while (tok := self.peek()) is not None and tok[1] == "|":
            self.i += 1
            items.append(self.term(depth))
        return _combine(_Or, items)

    def term(self, depth: int) -> object:
        items = [self.factor(depth)]
        while (tok := self.peek()) is not None and tok[1] == "&":
            self.i += 1
            items.append(self.factor(depth))
        return _combine(_And, items)

    def factor(self, depth: int) -> object:
        tok = self.peek()
        if depth > MAX_DEPTH:
            at = tok[2] if tok else len(self.text)
            self.fail(f"nested more than {MAX_DEPTH} levels deep", self.text[at : at + 30], at)
        if tok is None:
            prev = self.tokens[self.i - 1]
            self.fail(f"expected a pattern after {prev[1]!r}", self.original(prev), prev[2])
        assert tok is not None
        kind, value, pos = tok
        self.i += 1
        if value == "!":
            inner = self.factor(depth + 1)
            return inner.item if isinstance(inner, _Not) else _Not(inner)
        if value == "(":
            node = self.expr(depth + 1)
            close = self.peek()
            if close is None or close[1] != ")":
                self.fail("unbalanced '(': missing ')'", self.text[pos:].strip(), pos)
            self.i += 1
            return node
        if kind == "op":
            self.fail(f"expected a pattern, found {value!r}", value, pos)
        return self.atom(value, self.original(tok), pos)

    # -- atoms -----------------------------------------------------------------------------
    def atom(self, atom: str, fragment: str, pos: int) -> object:
        def bad(reason: str) -> None:
            self.fail(reason, fragment, pos)

        def integer(s: str, what: str) -> int:
            if not s.isdigit() or len(s) > 3:
                bad(f"{what} must be a whole number, got {s!r}")
            return int(s)

        def faces(s: str, what: str) -> tuple[int, ...]:
            if not s:
                bad(f"{what} needs a comma-separated list of faces 1..6")
            values = [integer(x, "a face") for x in s.split(",")]
            for v in values:
                if not 1 <= v <= 6:
                    bad(f"a face is 1..6, got {v}")
            return tuple(values.count(f) for f in FACES)

        simple = {
            "two-triples": _Shape((3, 3)),
            "three-pairs": _ThreePairs(),
            "straight": _Shape((1,) * 6),
            "all-even": _Parity(True),
            "all-odd": _Parity(False),
        }
        if atom in simple:
            return simple[atom]
        name, colon, arg = atom.partition(":")
        if colon:
            if name == "kind":
                n = integer(arg, "kind:N")
                if not 2 <= n <= 6:
                    bad(f"kind:N needs N from 2 to 6, got {n}")
                return _Kind(n)
            if name == "sum":
                lo_s, dash, hi_s = arg.partition("-")
                lo = integer(lo_s, "a sum")
                hi = integer(hi_s, "a sum") if dash else lo
                if lo > hi:
                    bad(f"empty sum range: {lo} is above {hi}")
                if hi < 6 or lo > 36:
                    bad(f"six dice sum to 6..36, so sum:{arg} can never be matched")
                return _Sum(lo, hi)
            if name == "faces":
                counts = faces(arg, "faces:")
                if sum(counts) != 6:
                    bad(f"faces: lists exactly six faces, got {sum(counts)}")
                return _Faces(counts, exact=True)
            if name == "has":
                counts = faces(arg, "has:")
                if sum(counts) > 6:
                    bad(f"has: lists at most six faces, got {sum(counts)}")
                return _Faces(counts, exact=False)
            bad(f"unknown pattern {name + ':'!r}; known: kind:, sum:, faces:, has:")
        if "+" in atom:
            parts = [integer(p, "a shape part") for p in atom.split("+")]
            if any(p < 1 for p in parts):
                bad("shape parts are at least 1")
            if sum(parts) != 6:
                bad(f"shape parts must add up to 6 dice, got {sum(parts)}")
            return _Shape(tuple(sorted(parts, reverse=True)))
        bad(
            "unknown pattern; known: kind:N, two-triples, three-pairs, 4+2 (any shape), "
            "straight, all-even, all-odd, sum:A-B, faces:..., has:..."
        )
        raise AssertionError  # pragma: no cover


def _parse_node(text: object) -> object:
    if not isinstance(text, str):
        raise CardError("a card is written as text", repr(text)[:40], repr(text)[:40])
    if not text.isascii():
        bad = next(ch for ch in text if not ch.isascii())
        raise CardError("card text is plain ASCII", bad, text[:40], text.index(bad))
    if len(text) > MAX_CARD_LENGTH:
        raise CardError(f"card text longer than {MAX_CARD_LENGTH} characters", text[:40] + "...", text[:40])
    node = _Parser(text).parse()
    mask = bytes(node.test(c) for c in _ALL_COUNTS)  # type: ignore[attr-defined]
    if not any(mask):
        raise CardError("no roll of six dice can match this card", text.strip(), text)
    return node


@dataclass(frozen=True)
class Card:
    """A goal card: an immutable value identified by its canonical ``text``.

    ``Card("Kind:4 | STRAIGHT")`` parses and canonicalises (``text == "kind:4 | straight"``);
    invalid text raises :class:`CardError`. ``matches(dice)`` evaluates the pattern directly on
    six dice (it does not use the solver's tables, so simulations can rely on it).
    """

    text: str
    _node: object = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        node = _parse_node(self.text)
        object.__setattr__(self, "_node", node)
        object.__setattr__(self, "text", node.text)  # type: ignore[attr-defined]

    def matches(self, dice: Iterable[int]) -> bool:
        """True iff the six ``dice`` satisfy the card (``ValueError`` for invalid dice)."""
        return self._node.test(dice_counts(dice))  # type: ignore[attr-defined]

    def matches_counts(self, counts: tuple[int, ...]) -> bool:
        """Like :meth:`matches` for a face-count vector (how many dice show 1..6), unchecked."""
        return self._node.test(counts)  # type: ignore[attr-defined]

    def __str__(self) -> str:
        return self.text


@kept("card text")
def _parse_cached(text: str) -> Card:
    return Card(text)


def parse_card(text: str | Card) -> Card:
    """Parse card text (or pass a :class:`Card` through). Raises :class:`CardError`."""
    if isinstance(text, Card):
        return text
    if not isinstance(text, str):
        raise CardError("a card is written as text", repr(text)[:40], repr(text)[:40])
    return _parse_cached(text)
