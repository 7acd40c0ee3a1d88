"""Rate limits: Flask-Limiter, counted in Redis so that every gunicorn worker (and every server) shares them.

Each client (its IP address: behind a reverse proxy, set `TRUSTED_PROXIES` to the number of proxies in
front, so that the address is read from `X-Forwarded-For`) has one budget for the whole API,
`RATELIMIT_APPLICATION` (default 600 per minute). Spreadsheets are another kind of client: Google
Sheets fetches `IMPORTDATA` URLs from Google's servers for every user at once, and Excel recalculates
whole columns of `WEBSERVICE` calls together, so requests whose User-Agent is Google's fetcher or
Microsoft Office's are counted apart, per address, against `RATELIMIT_SPREADSHEET` (default 6000 per
minute). `/healthz` (load balancers) and CORS preflights are never limited.

Every limited answer says where the client stands (`X-RateLimit-Limit`, `X-RateLimit-Remaining`,
`X-RateLimit-Reset`: the Unix time the window ends); a refused one is a 429 problem with
`Retry-After` (seconds). The counters live at `RATELIMIT_STORAGE_URI` (default: `REDIS_URL` when set,
else this process's memory). If Redis goes away, each process falls back to counting in memory and
goes back to Redis when it returns: the API keeps answering. Off under TESTING unless turned on.
"""

from __future__ import annotations

import math
import os
import re
import time

from flask import Flask, Response, current_app, request
from flask_limiter import Limiter, RateLimitExceeded
from werkzeug.middleware.proxy_fix import ProxyFix

from .errors import problem

__all__ = ["EXEMPT_PATHS", "install", "is_spreadsheet"]

EXEMPT_PATHS = frozenset({"/healthz"})
SPREADSHEET_AGENTS = re.compile(r"GoogleDocs|apps-spreadsheets|Google-Apps-Script|ms-office|MSOffice|Microsoft Office"
                                r"|Excel", re.IGNORECASE)
HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After")


def is_spreadsheet() -> bool:
    """A spreadsheet's fetcher (Google Sheets, Apps Script, Excel or another Office application)?"""
    return bool(SPREADSHEET_AGENTS.search(request.headers.get("User-Agent", "")))


def _client() -> str:
    address = request.remote_addr or "unknown"
    return f"sheets:{address}" if is_spreadsheet() else address


def _limit() -> str:
    return current_app.config["RATELIMIT_SPREADSHEET" if is_spreadsheet() else "RATELIMIT_APPLICATION"]


def _exempt() -> bool:
    return request.path in EXEMPT_PATHS or request.method == "OPTIONS"


def install(app: Flask) -> None:
    """Limit every request; install before any other hook, so that cached answers count too."""
    config = app.config
    config.setdefault("RATELIMIT_ENABLED", not app.testing)
    config.setdefault("RATELIMIT_STORAGE_URI", os.environ.get("REDIS_URL") or "memory://")
    config.setdefault("RATELIMIT_APPLICATION", "600 per minute")
    config.setdefault("RATELIMIT_SPREADSHEET", "6000 per minute")
    config.setdefault("RATELIMIT_KEY_PREFIX", "zombie-odds")
    config.setdefault("RATELIMIT_IN_MEMORY_FALLBACK_ENABLED", True)  # Redis down: count in memory
    config.setdefault("RATELIMIT_SWALLOW_ERRORS", True)  # and never answer 500 because of the limiter
    proxies = int(config.get("TRUSTED_PROXIES", 0))
    if proxies:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=proxies)
    limiter = Limiter(_client, application_limits=[_limit], headers_enabled=False)
    limiter.request_filter(_exempt)
    limiter.init_app(app)
    if limiter.enabled:
        app.extensions["rate_limiter"] = limiter
        app.register_error_handler(RateLimitExceeded, _too_many)
        app.after_request(_headers)


def _too_many(e: RateLimitExceeded) -> Response:
    """The 429 problem, with its headers already (the spec's check of the answer runs before `_headers`)."""
    kind = "spreadsheet" if is_spreadsheet() else "client"
    return problem(429, f"too many requests: the limit is {e.limit.limit} per {kind}; retry after the number of "
                        "seconds in Retry-After", headers=_where_the_client_stands(refused=True))


def _headers(response: Response) -> Response:
    """Where the client stands, on every limited answer (added last: a cached answer is counted afresh)."""
    response.headers.update(_where_the_client_stands(response.status_code == 429))
    if request.path.startswith("/v1/"):  # let cross-origin pages (the widget) read them
        response.headers.add("Access-Control-Expose-Headers", ", ".join(HEADERS))
    return response


def _where_the_client_stands(refused: bool) -> dict[str, str]:
    current = current_app.extensions["rate_limiter"].current_limit
    if current is None:
        return {}
    try:
        reset, remaining = current.window  # when the window ends (Unix time), requests left in it
    except Exception:  # the counters' storage went away mid-request: the answer matters more
        return {}
    headers = {"X-RateLimit-Limit": str(current.limit.amount), "X-RateLimit-Remaining": str(max(0, remaining)),
               "X-RateLimit-Reset": str(math.ceil(reset))}
    if refused:
        headers["Retry-After"] = str(max(1, math.ceil(reset - time.time())))
    return headers
