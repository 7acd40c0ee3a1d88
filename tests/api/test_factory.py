"""api/__init__.py: the application factory (`create_app`): configuration from its argument over the environment
over the defaults, the defaults under TESTING and in production, answers in the spec's key order, and CORS on /v1/.
"""

from __future__ import annotations

import json

import pytest
from flask.testing import FlaskClient

from api import create_app

WORKED = {"footprints": ["green", "red"], "brains": ["green"], "shotguns": ["red"], "banked": 0}


def test_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    assert create_app({"TESTING": True}).config["VALIDATE_RESPONSES"] is True
    assert create_app().config["VALIDATE_RESPONSES"] is False
    assert create_app().config["MAX_CONTENT_LENGTH"] == 16 * 1024
    monkeypatch.setenv("ZOMBIE_ODDS_VALIDATE_RESPONSES", "true")
    monkeypatch.setenv("ZOMBIE_ODDS_MAX_CONTENT_LENGTH", "1024")
    app = create_app()
    assert app.config["VALIDATE_RESPONSES"] is True and app.config["MAX_CONTENT_LENGTH"] == 1024
    assert create_app({"VALIDATE_RESPONSES": False}).config["VALIDATE_RESPONSES"] is False


def test_answers_wait_and_are_shared_in_production_not_under_testing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Production waits 8 s for an answer's job and shares an answer that took 1 s; TESTING does neither unless a
    test asks; the environment's JSON `null` turns either off."""
    testing, production = create_app({"TESTING": True}).config, create_app().config
    assert (testing["ANSWER_WAIT"], testing["SHARE_ANSWERS_AFTER"]) == (None, None)
    assert (production["ANSWER_WAIT"], production["SHARE_ANSWERS_AFTER"]) == (8.0, 1.0)
    assert create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 0}).config["SHARE_ANSWERS_AFTER"] == 0
    monkeypatch.setenv("ZOMBIE_ODDS_ANSWER_WAIT", "null")
    monkeypatch.setenv("ZOMBIE_ODDS_SHARE_ANSWERS_AFTER", "2.5")
    configured = create_app().config
    assert configured["ANSWER_WAIT"] is None and configured["SHARE_ANSWERS_AFTER"] == 2.5


def test_answers_keep_the_order_the_spec_documents(client: FlaskClient) -> None:
    """Flask sorts JSON keys by default; the factory keeps the views' order (the spec's: position first)."""
    body = client.get("/v1/odds?footprints=green,red&brains=green&shotguns=red").get_data(as_text=True)
    keys = list(json.loads(body))
    assert keys[0] == "position" and keys != sorted(keys)
    mode = json.loads(client.get("/v1/modes").get_data(as_text=True))["modes"][0]
    assert list(mode)[0] == "name"


def test_cors_lets_any_site_call_v1(client: FlaskClient) -> None:
    origin = {"Origin": "https://rules.example"}
    for response in (client.get("/v1/odds.txt?field=bust", headers=origin),
                     client.post("/v1/odds", json=WORKED, headers=origin),
                     client.get("/v1/odds?banked=-1", headers=origin)):  # errors are readable too
        assert response.headers["Access-Control-Allow-Origin"] == "*"
    preflight = client.options("/v1/odds", headers={**origin, "Access-Control-Request-Method": "POST",
                                                    "Access-Control-Request-Headers": "content-type"})
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == "*"
    assert {"GET", "POST"} <= set(preflight.headers["Access-Control-Allow-Methods"].split(", "))
    assert "content-type" in preflight.headers["Access-Control-Allow-Headers"].lower()
    assert "Access-Control-Allow-Origin" not in client.get("/healthz").headers
