"""The contract, served: /openapi.yaml as written, and /docs, Swagger UI working offline (/docs/ leads there).

Swagger UI's files come from the swagger-ui-bundle package and are served by this application,
so the page needs no CDN. That package ships Swagger UI 4, which renders OpenAPI 3.0 but refuses
3.1 documents; openapi.yaml is written in the subset that both versions share (tests check it), so
the page hands Swagger UI a copy labelled 3.0.3. The contract itself stays /openapi.yaml.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, redirect, render_template_string, request, send_from_directory, url_for
from swagger_ui_bundle import swagger_ui_path

from . import spec

__all__ = ["bp", "display_spec"]

bp = Blueprint("docs", __name__)

ASSETS = {"swagger-ui.css": "text/css", "swagger-ui-bundle.js": "text/javascript"}

PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{{ spec.info.title }} {{ spec.info.version }}</title>
  <link rel="stylesheet" href="{{ url_for('docs.asset', asset='swagger-ui.css') }}">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="{{ url_for('docs.asset', asset='swagger-ui-bundle.js') }}"></script>
  <script nonce="{{ csp_nonce() }}">
    window.ui = SwaggerUIBundle({
      spec: {{ spec|tojson }},
      dom_id: "#swagger-ui",
      deepLinking: true,
      syntaxHighlight: {activated: false},  // answers as plain text: highlighting the spec's own 200 KB takes seconds
      presets: [SwaggerUIBundle.presets.apis],
      layout: "BaseLayout",
    });
  </script>
</body>
</html>
"""


def display_spec() -> dict[str, Any]:
    """openapi.yaml as Swagger UI 4 accepts it: the same document, labelled 3.0.3."""
    return {**spec.load()[1], "openapi": "3.0.3"}


@bp.get("/openapi.yaml")
def openapi_yaml() -> Response:
    return Response(spec.load()[0], mimetype="application/yaml")


@bp.get("/docs")
def page() -> str:
    return render_template_string(PAGE, spec=display_spec())


@bp.get("/docs/")
def slash() -> Response:
    """The address people type, and tools append: a permanent redirect to /docs (the cache-buster `_` kept)."""
    return redirect(url_for("docs.page", **request.args), 308)


@bp.get("/docs/<asset>")
def asset(asset: str) -> Response:
    # The spec's enum already refused any other name (404) before this view runs.
    return send_from_directory(swagger_ui_path, asset, mimetype=ASSETS[asset], max_age=86400)
