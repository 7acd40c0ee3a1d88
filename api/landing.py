"""/: what this server is, in two sentences, and where to go from here (the API's browsable pages and lists)."""

from __future__ import annotations

from flask import Blueprint, render_template_string

from . import spec

__all__ = ["bp", "LINKS"]

bp = Blueprint("landing", __name__)

# (path, what a reader finds there): every one a GET of openapi.yaml answered 200 without parameters.
LINKS = (
    ("/docs", "the API, operation by operation, with “Try it out” (Swagger UI)"),
    ("/embed/calculator", "the odds calculator, as a page any website can frame"),
    ("/v1/modes", "the game modes, their dice and every face (JSON)"),
    ("/v1/tables", "the full-game win-probability tables computed so far (JSON)"),
    ("/v1/reports", "the reports made so far, newest first (JSON; each report is also a web page)"),
    ("/v1/solutions", "each mode's stored turn solution, from which odds are read, and where its build stands (JSON)"),
    ("/openapi.yaml", "the contract of this API (OpenAPI)"),
)

PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{{ info.title }}: exact odds for Zombie Dice</title>
  <link rel="icon" href="data:,">
  <style>
    body { font: 1rem/1.5 system-ui, sans-serif; max-width: 42rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
    h1 { font-size: 1.6rem; margin-bottom: 0.25rem; }
    .version { color: #666; font-size: 0.9rem; }
    li { margin: 0.3rem 0; }
    code { font-size: 0.95em; }
  </style>
</head>
<body>
  <main>
    <h1>{{ info.title }} <span class="version">{{ info.version }}</span></h1>
    <p>Exact odds for the dice game Zombie Dice, in the base game and the modes of Zombie Dice 2: Double
      Feature (with or without the School Bus): the chance that the next roll busts, whether to roll or stop,
      the turn's final score and the chance of winning the game.
      This server answers over HTTP, as JSON for apps, as plain text and CSV for spreadsheets, and as a
      calculator that any web page can embed.</p>
    <ul>
    {%- for path, what in links %}
      <li><a href="{{ path }}"><code>{{ path }}</code></a>: {{ what }}</li>
    {%- endfor %}
    </ul>
  </main>
</body>
</html>
"""


@bp.get("/")
def page() -> str:
    return render_template_string(PAGE, info=spec.load()[1]["info"], links=LINKS)
