"""An in-process cache of whole GET answers, so that a position asked again costs a dictionary lookup.

Every GET under /v1/ is a pure function of its route and the spec's own query parameters: the same
position always gets the same bytes. The key is exactly that, so the cache-buster that spreadsheets
add (`_=123`, undeclared) still hits; any other undeclared parameter is refused before the lookup
(api.spec.check_query). Only answers that passed through every check are kept (200, after validation
and CORS), in an LRU of `RESPONSE_CACHE_SIZE` entries (0 turns it off; off by default under TESTING,
where each request should run every check). A view whose answer changes over time (a job's status,
a listing, a stored table that may be recomputed) is marked `@uncached` and never kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import cache

from flask import Flask, Response, current_app, g, request

from . import spec

__all__ = ["install", "uncached"]

_lock = threading.Lock()


def install(app: Flask) -> None:
    app.config.setdefault("RESPONSE_CACHE_SIZE", 0 if app.testing else 512)
    app.extensions["response_cache"] = OrderedDict()
    app.before_request(_lookup)  # registered before the spec's validation, so a hit skips it
    app.after_request(_remember)  # and after it runs last: the answer was checked and has its headers


def uncached(view: Callable[..., Response]) -> Callable[..., Response]:
    """Mark a view whose answer changes over time: the cache never keeps it."""
    view.uncached = True  # type: ignore[attr-defined]
    return view


@cache
def _known(rule: str) -> tuple[str, ...]:
    return tuple(sorted(spec.parameter_names(rule)))


def _key() -> tuple | None:
    if request.method != "GET" or request.url_rule is None or not request.path.startswith("/v1/"):
        return None
    if not current_app.config["RESPONSE_CACHE_SIZE"]:
        return None
    if getattr(current_app.view_functions.get(request.endpoint), "uncached", False):
        return None
    names = _known(request.url_rule.rule)
    return request.path, tuple((k, tuple(request.args.getlist(k))) for k in names if k in request.args)


def _lookup() -> Response | None:
    g.cache_key = key = _key()
    if key is None:
        return None
    entries = current_app.extensions["response_cache"]
    with _lock:
        hit = entries.get(key)
        if hit is not None:
            entries.move_to_end(key)
    if hit is None:
        return None
    g.cache_hit = True
    status, headers, body = hit
    return Response(body, status, headers)


def _remember(response: Response) -> Response:
    key = g.get("cache_key")
    if key is None or g.get("cache_hit") or response.status_code != 200 or response.direct_passthrough:
        return response
    entries = current_app.extensions["response_cache"]
    with _lock:
        entries[key] = (response.status_code, list(response.headers.items()), response.get_data())
        while len(entries) > current_app.config["RESPONSE_CACHE_SIZE"]:
            entries.popitem(last=False)
    return response
