"""api/health.py: /healthz answers `ok`, and is never held to a request's deadline (api.deadline)."""

from __future__ import annotations

import time

from flask.testing import FlaskClient

from api import create_app


def test_health(client: FlaskClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok"}


def test_a_slow_health_check_has_no_deadline(warm: None) -> None:
    """A check slower than `REQUEST_DEADLINE` is still answered `ok`; any other request that slow is a 503."""
    app = create_app({"TESTING": True})
    healthz, modes = app.view_functions["health.healthz"], app.view_functions["modes.get_modes"]

    def slow(view):
        def wrapped():
            end = time.monotonic() + 1.5
            while time.monotonic() < end:  # (busy: the deadline's exception lands in running Python code)
                sum(range(1000))
            return view()
        return wrapped

    app.view_functions["health.healthz"], app.view_functions["modes.get_modes"] = slow(healthz), slow(modes)
    client = app.test_client()
    app.config["REQUEST_DEADLINE"] = 1
    answer = client.get("/healthz")
    assert answer.status_code == 200 and answer.get_json() == {"status": "ok"}
    assert client.get("/v1/modes").status_code == 503
