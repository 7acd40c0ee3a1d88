"""What the HTTP tests read from answers: exact values, RFC 9457 problems and the fields they name, that an answer is no
bug, positions as query strings and back."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from http import HTTPStatus
from typing import Any

from analysis import Position


def fraction(text: str) -> Fraction:
    """Parse `p/q`, insisting that it is written reduced and with its denominator; through Decimal, which reads past
    int()'s 4,300 digits."""
    p, q = (int(Decimal(x)) for x in text.split("/"))
    value = Fraction(p, q)
    assert (value.numerator, value.denominator) == (p, q), f"{text[:40]} is not reduced"
    return value


def exact(item: dict[str, Any]) -> Fraction:
    value = fraction(item["exact"])
    assert item["value"] == float(value)
    return value


def problem(response: Any, status: int) -> dict[str, Any]:
    """Assert an RFC 9457 problem with `status`; return its body."""
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert body["type"] == "about:blank"
    assert body["title"] == HTTPStatus(status).phrase
    assert body["status"] == status
    assert body["detail"]
    return body


def no_bug(response: Any) -> None:
    """Assert an answer or a refusal, never a bug: below 500, and a refusal a problem."""
    assert response.status_code < 500, response.get_data(as_text=True)
    if response.status_code >= 400:
        problem(response, response.status_code)


def fields(body: dict[str, Any]) -> list[str]:
    return [e["field"] for e in body.get("errors", [])]


def query(body: dict[str, Any]) -> dict[str, Any]:
    """A JSON position as GET query parameters (piles comma-separated, booleans `true` / `false`)."""
    return {k: ",".join(v) if isinstance(v, list) else str(v).lower() if isinstance(v, bool) else v
            for k, v in body.items()}


def position_of(body: dict[str, Any]) -> Position:
    return Position(**{k: tuple(v) if isinstance(v, list) else v for k, v in body.items() if k != "objective"})
