"""Rate limits: one budget per client for the whole API, counted in what requests cost the server.

Each client (its IP address: behind a reverse proxy, set `TRUSTED_PROXIES` to the number of proxies in
front, so that the address is read from `X-Forwarded-For`) has one budget, `RATELIMIT_APPLICATION`
(default 6000 per minute), whatever it says it is: a User-Agent is no credential, and spreadsheets fit
in the budget because their answers are cached. A request costs 1, plus 1 for each full
`RATELIMIT_COST_UNIT` (default 0.01 s) of server time it took: an answer from the response cache (well
under a millisecond) costs 1, a position solved for this request more, a request stopped at its
deadline (api.deadline, 20 s) 2001. The first unit is counted when the request arrives (a client over
its budget is refused before anything else runs: the 429 is cheaper than a cached answer), the rest
when it has been answered.

Never limited: `/healthz` (load balancers), CORS preflights, and by default clients on the server's own
machine (a loopback address, 127.0.0.0/8 or ::1, on a request without `X-Forwarded-For` or `Forwarded`:
a reverse proxy on the same machine adds them, so its clients stay limited). `RATELIMIT_EXEMPT_LOOPBACK`
false limits those too (the load bench does, to measure the limiter).

Every limited answer says where the client stands (`X-RateLimit-Limit`, `X-RateLimit-Remaining`,
`X-RateLimit-Reset`: the Unix time the window ends); a refused one is a 429 problem with `Retry-After`
(seconds). The counters live at `RATELIMIT_STORAGE_URI` (default: `REDIS_URL` when set, so that every
gunicorn worker and every server share them; else this process's memory: each gunicorn worker then
counts apart, and a client of a server with N workers may get up to N budgets, the default being sized
so that one is enough for a client playing at full speed). If Redis goes away, the process counts in
memory meanwhile and tries Redis again every `FALLBACK_SECONDS`: the API keeps answering. Off under
TESTING unless turned on.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import math
import os
import threading
import time
from functools import cache

from flask import Flask, Response, current_app, g, request
from limits import RateLimitItem, parse
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import FixedWindowRateLimiter
from werkzeug.middleware.proxy_fix import ProxyFix

__all__ = ["EXEMPT_PATHS", "Limits", "install"]

EXEMPT_PATHS = frozenset({"/healthz"})
HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After")
FALLBACK_SECONDS = 30.0
PROXY_HEADERS = ("X-Forwarded-For", "Forwarded")
log = logging.getLogger(__name__)


class Limits:
    """The budget (`item`), its counters (`storage`, or memory while the storage is down) and the key prefix."""

    def __init__(self, limit: str, uri: str, prefix: str, unit: float, exempt_loopback: bool):
        self.item: RateLimitItem = parse(limit)
        self.uri, self.prefix, self.unit, self.exempt_loopback = uri, prefix, unit, exempt_loopback
        self._shared: FixedWindowRateLimiter | None = None
        self._memory = FixedWindowRateLimiter(MemoryStorage())
        self._down_until = 0.0
        self._lock = threading.Lock()
        # The 429's body, made once: refusing costs less than answering from the cache.
        self.refusal = json.dumps({
            "type": "about:blank", "title": "Too Many Requests", "status": 429,
            "detail": f"too many requests: the limit is {self.item.amount} per {self.item.multiples} "
                      f"{self.item.GRANULARITY.name} per client; retry after the number of seconds in Retry-After",
        }).encode()

    def _limiter(self) -> FixedWindowRateLimiter:
        if self._shared is None:
            with self._lock:
                if self._shared is None:
                    self._shared = FixedWindowRateLimiter(storage_from_string(self.uri))
        return self._shared

    def hit(self, client: str, cost: int) -> tuple[bool, int, float]:
        """Count `cost` for `client`: (within the budget, requests remaining, when the window ends (Unix time))."""
        if not self.uri.startswith("memory://") and time.monotonic() >= self._down_until:
            try:
                return self._count(self._limiter(), client, cost)
            except Exception as e:  # the storage went away: count in memory meanwhile (the answer matters more)
                log.warning("rate limits: %s cannot be reached (%s); counting in this process for %d s",
                            self.uri, type(e).__name__, FALLBACK_SECONDS)
                self._down_until = time.monotonic() + FALLBACK_SECONDS
        return self._count(self._memory, client, cost)

    def _count(self, limiter: FixedWindowRateLimiter, client: str, cost: int) -> tuple[bool, int, float]:
        """The fixed window's count after adding `cost`, and when it ends: two calls to the storage (`limits`'
        `hit` then `get_window_stats` would make three)."""
        key = self.item.key_for(self.prefix, client)
        count = limiter.storage.incr(key, self.item.get_expiry(), amount=cost)
        return count <= self.item.amount, max(0, self.item.amount - count), limiter.storage.get_expiry(key)


def install(app: Flask) -> None:
    """Limit every request; install before any other hook, so that cached answers count too."""
    config = app.config
    config.setdefault("RATELIMIT_ENABLED", not app.testing)
    config.setdefault("RATELIMIT_STORAGE_URI", os.environ.get("REDIS_URL") or "memory://")
    config.setdefault("RATELIMIT_APPLICATION", "6000 per minute")
    config.setdefault("RATELIMIT_COST_UNIT", 0.01)  # seconds of server time per unit of cost after the first
    config.setdefault("RATELIMIT_EXEMPT_LOOPBACK", True)
    config.setdefault("RATELIMIT_KEY_PREFIX", "zombie-odds")
    proxies = int(config.get("TRUSTED_PROXIES", 0))
    if proxies:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=proxies)  # type: ignore[method-assign]
    if not config["RATELIMIT_ENABLED"]:
        return
    app.extensions["rate_limits"] = Limits(config["RATELIMIT_APPLICATION"], config["RATELIMIT_STORAGE_URI"],
                                           config["RATELIMIT_KEY_PREFIX"], float(config["RATELIMIT_COST_UNIT"]),
                                           bool(config["RATELIMIT_EXEMPT_LOOPBACK"]))
    app.before_request(_check)
    app.after_request(_charge)


@cache
def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _exempt(limits: Limits) -> bool:
    if request.path in EXEMPT_PATHS or request.method == "OPTIONS":
        return True
    return (limits.exempt_loopback and _loopback(request.remote_addr or "")
            and not any(h in request.headers for h in PROXY_HEADERS))


def _check() -> Response | None:
    """Before anything else: count the request's first unit, and refuse it if the budget is spent."""
    limits: Limits = current_app.extensions["rate_limits"]
    if _exempt(limits):
        return None
    client = request.remote_addr or "unknown"
    g.rate_limit = (client, time.perf_counter())
    allowed, remaining, reset = limits.hit(client, 1)
    g.rate_limit_state = (remaining, reset)
    if allowed:
        return None
    g.rate_limit = None  # nothing more to charge
    # (with its headers already: the spec's check of the answer, under TESTING, runs before `_charge`)
    return Response(limits.refusal, 429, mimetype="application/problem+json", headers={
        "Retry-After": str(max(1, math.ceil(reset - time.time()))), "X-RateLimit-Limit": str(limits.item.amount),
        "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(math.ceil(reset))})


def _charge(response: Response) -> Response:
    """After the answer (registered first, so it runs last): charge the server time it took, and say where the
    client stands."""
    state = g.get("rate_limit_state")
    if state is None:
        return response
    limits: Limits = current_app.extensions["rate_limits"]
    charge = g.get("rate_limit")
    if charge is not None and limits.unit > 0:
        client, start = charge
        extra = int((time.perf_counter() - start) / limits.unit)
        if extra:
            _, remaining, reset = limits.hit(client, extra)
            state = (remaining, reset)
    remaining, reset = state
    response.headers.update({"X-RateLimit-Limit": str(limits.item.amount), "X-RateLimit-Remaining": str(remaining),
                             "X-RateLimit-Reset": str(math.ceil(reset))})
    if request.path.startswith("/v1/"):  # let cross-origin pages (the widget) read them
        response.headers.add("Access-Control-Expose-Headers", ", ".join(HEADERS))
    return response
