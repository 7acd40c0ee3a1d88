"""/embed: the odds calculator for rules websites, as an iframe page and as a script tag.

- `GET /embed/widget.js`: vanilla JavaScript that renders the calculator into every
  `<div data-zombie-odds>` of the page that loads it, and asks `/v1/odds` and `/v1/modes` of the API
  that served it (cross-origin, which the API's CORS headers allow).
- `GET /embed/calculator`: a page that is nothing but that widget, for an `<iframe>`.

Both are files under `static/embed/`, read once per process and served with an ETag (a reload costs
a 304), a Content-Security-Policy that lets any site frame or load them and lets the page run only
its own script (its one inline `<style>` allowed by hash), and `nosniff`.

The widget runs on other origins, where a browser hides every response header not exposed by CORS: so
`/v1/*` answers expose `Retry-After`, which the widget waits for before asking again after a 503 (a
stored solution or table still being built).
"""

from __future__ import annotations

import base64
import hashlib
import re
from functools import cache
from pathlib import Path

from flask import Blueprint, Response, request

__all__ = ["bp", "EMBED_DIR"]

bp = Blueprint("embed", __name__)

EMBED_DIR = Path(__file__).parent / "static" / "embed"
MAX_AGE = 3600  # an hour: a new version reaches embedding pages within the hour; ETags make reloads cheap


@cache
def _file(name: str) -> bytes:
    return (EMBED_DIR / name).read_bytes()


@cache
def calculator_csp() -> str:
    """The page may run its own script, style itself with its one inline `<style>`, call its own API."""
    style = re.search(rb"<style>(.*?)</style>", _file("calculator.html"), re.S)[1]
    digest = base64.b64encode(hashlib.sha256(style).digest()).decode()
    return ("default-src 'none'; script-src 'self'; connect-src 'self'; "
            f"style-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'; frame-ancestors *")


def _serve(name: str, mimetype: str, csp: str) -> Response:
    response = Response(_file(name), mimetype=mimetype)
    response.headers["Content-Security-Policy"] = csp
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.cache_control.public = True
    response.cache_control.max_age = MAX_AGE
    response.add_etag()
    return response.make_conditional(request)


@bp.after_app_request
def expose_retry_after(response: Response) -> Response:
    exposed = ", ".join(response.headers.getlist("Access-Control-Expose-Headers"))
    if request.path.startswith("/v1/") and "Retry-After" not in exposed:
        response.headers.add("Access-Control-Expose-Headers", "Retry-After")
    return response


@bp.get("/embed/calculator")
def calculator() -> Response:
    return _serve("calculator.html", "text/html", calculator_csp())


@bp.get("/embed/widget.js")
def widget() -> Response:
    response = _serve("widget.js", "text/javascript", "default-src 'none'; frame-ancestors *")
    # Any page may load it, also with `crossorigin` and Subresource Integrity, or under COEP.
    response.headers["Access-Control-Allow-Origin"] = "*"
    response.headers["Cross-Origin-Resource-Policy"] = "cross-origin"
    return response
