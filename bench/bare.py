"""A bare Flask endpoint: the baseline bench_http.py compares /v1/odds with, on the same server settings."""

from flask import Flask

app = Flask(__name__)


@app.get("/bare")
def bare() -> dict:
    return {"status": "ok"}
