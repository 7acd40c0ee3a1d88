"""Security headers: every answer is `nosniff` and sends no referrer; an HTML page gets a strict policy.

An HTML page that sets no Content-Security-Policy of its own (Swagger UI at /docs) may load only this
server's files, run only scripts marked with the nonce of its request (`csp_nonce()` in a template),
and be framed only by this server's own pages (`frame-ancestors 'self'`, and X-Frame-Options for old
browsers). Pages made to be embedded elsewhere (the /embed widget) or that load nothing at all (the
reports) set their own policy, which is left alone.
"""

from __future__ import annotations

import secrets

from flask import Flask, Response, g

__all__ = ["install", "csp_nonce", "HTML_POLICY"]

HTML_POLICY = ("default-src 'self'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; "
               "base-uri 'none'; form-action 'self'; frame-ancestors 'self'")


def csp_nonce() -> str:
    """This request's nonce for inline scripts: `<script nonce="{{ csp_nonce() }}">`."""
    if "csp_nonce" not in g:
        g.csp_nonce = secrets.token_urlsafe(16)
    return g.csp_nonce


def install(app: Flask) -> None:
    """Install after api/cache.py: a cached page keeps the policy (and nonce) it was rendered with."""
    app.jinja_env.globals["csp_nonce"] = csp_nonce
    app.after_request(_headers)


def _headers(response: Response) -> Response:
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    if response.mimetype == "text/html" and "Content-Security-Policy" not in response.headers:
        response.headers["Content-Security-Policy"] = HTML_POLICY.format(nonce=csp_nonce())
        response.headers.setdefault("X-Frame-Options", "SAMEORIGIN")
    return response
