"""Every error the API returns is an RFC 9457 problem, built by `problem` and nothing else.

Views and hooks raise `ApiError` (or let Flask raise an `HTTPException`); the handlers registered
here turn both into `application/problem+json`, so a client parses one error shape whatever went
wrong. Anything else is a bug: it is logged with its traceback and answered with a bare 500 that
reveals nothing of the server.

A problem lists at most `MAX_ERRORS` fields at fault, the first ones found, and counts the rest in
`errors_omitted`; its `detail` is cut to `MAX_DETAIL` characters. Schema validation stops looking after
`MAX_FAULTS` faults (api.faults), so a body of 16 KiB of wrong items costs no more to refuse than a valid
one costs to answer, and the refusal stays a few kilobytes whatever was sent. Every 503 says when to ask
again (`Retry-After`, `RETRY_AFTER` seconds unless the error sets its own).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from http import HTTPStatus

from flask import Flask, Response, current_app, jsonify
from werkzeug.exceptions import HTTPException

from analysis import FieldError

__all__ = ["ApiError", "FieldError", "MAX_ERRORS", "MAX_FAULTS", "problem", "register"]

PROBLEM_JSON = "application/problem+json"
MAX_ERRORS = 20  # fields listed in a problem's `errors`; the rest are counted in `errors_omitted`
MAX_FAULTS = 100  # schema validation (api.faults) stops looking after this many faults
MAX_DETAIL = 1000  # characters of `detail`
RETRY_AFTER = "30"  # seconds, for a 503 that sets no Retry-After of its own (a job queue that cannot be reached)


def problem(
    status: int,
    detail: str,
    errors: Iterable[FieldError] = (),
    headers: Mapping[str, str] | None = None,
    extensions: Mapping[str, object] | None = None,
) -> Response:
    """An RFC 9457 problem response: type, title, status, detail, and `errors` when fields are at fault.

    The type is `about:blank`, so the title is the HTTP status phrase (RFC 9457 section 4.2.1);
    the `errors` extension names each field at fault so that a form can point at it (the first `MAX_ERRORS`;
    `errors_omitted` counts the others); `extensions`
    adds other members (links a client can follow, such as the job computing a missing table).
    """
    body: dict[str, object] = {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
    }
    errors = list(errors)
    if errors:
        body["errors"] = [{"field": e.field, "reason": e.reason} for e in errors[:MAX_ERRORS]]
    if len(errors) > MAX_ERRORS:
        body["errors_omitted"] = len(errors) - MAX_ERRORS
    if len(detail) > MAX_DETAIL:  # (a detail naming every fault would echo the request back)
        cut = detail.rfind("; ", 0, MAX_DETAIL - 60)
        body["detail"] = detail[:cut if cut > 0 else MAX_DETAIL - 60] + "; ... (the first faults only: see `errors`)"
    body.update(extensions or {})
    response = jsonify(body)
    response.status_code = status
    response.mimetype = PROBLEM_JSON
    response.headers.update(headers or {})
    if status == 503 and "Retry-After" not in response.headers:
        response.headers["Retry-After"] = RETRY_AFTER
    return response


class ApiError(Exception):
    """A client error found by the API: its status, a one-line detail, and the fields at fault (and
    for some, headers such as `Retry-After` and extension members: see `problem`)."""

    def __init__(self, status: int, detail: str, errors: Iterable[FieldError] = (),
                 headers: Mapping[str, str] | None = None, extensions: Mapping[str, object] | None = None):
        super().__init__(detail)
        self.status, self.detail, self.errors = status, detail, list(errors)
        self.headers, self.extensions = dict(headers or {}), dict(extensions or {})


def _api_error(e: ApiError) -> Response:
    return problem(e.status, e.detail, e.errors, e.headers, e.extensions)


def _http_error(e: HTTPException) -> Response:
    """Routing and protocol errors (404, 405, 413, ...) keep their status and `Allow` header."""
    status = e.code or 500
    headers = {k: v for k, v in e.get_headers() if k == "Allow"}
    return problem(status, e.description or HTTPStatus(status).description, headers=headers)


def _bug(e: Exception) -> Response:
    """The catch-all: a bug, never a client's fault. Log it whole; tell the client nothing more."""
    current_app.logger.exception("unhandled error: %s", e)
    return problem(500, "internal error; it has been logged")


def register(app: Flask) -> None:
    app.register_error_handler(ApiError, _api_error)
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(Exception, _bug)
