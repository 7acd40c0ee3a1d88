"""Rate limits: one budget per client for the whole API, spreadsheets apart, shared by every gunicorn worker.

Off under TESTING (the rest of the suite makes thousands of requests); each test here turns it on.
The last test runs real gunicorn with two workers on Redis (db 13) and counts what gets through.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis
from flask.testing import FlaskClient

from api import create_app
from api.limits import EXEMPT_PATHS
from api.spec import load

REDIS_URL = "redis://127.0.0.1:6379/13"
GOOGLE = "Mozilla/5.0 (compatible; GoogleDocs; apps-spreadsheets; +http://docs.google.com)"
EXCEL = "Microsoft Office Excel 2014"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def limited(**config: object) -> FlaskClient:
    settings = {"TESTING": True, "RATELIMIT_ENABLED": True, "RATELIMIT_STORAGE_URI": "memory://", **config}
    return create_app(settings).test_client()


def test_off_under_testing(client: FlaskClient) -> None:
    answers = [client.get("/v1/modes") for _ in range(30)]
    assert {a.status_code for a in answers} == {200} and "X-RateLimit-Limit" not in answers[-1].headers


def test_over_its_limit_a_client_gets_a_429_problem_with_retry_after() -> None:
    client = limited(RATELIMIT_APPLICATION="3 per minute")
    answers = [client.get("/v1/modes") for _ in range(3)]
    assert [a.headers["X-RateLimit-Remaining"] for a in answers] == ["2", "1", "0"]
    assert {a.headers["X-RateLimit-Limit"] for a in answers} == {"3"}
    assert "Retry-After" not in answers[0].headers
    refused = client.get("/v1/modes")  # the answer is checked against openapi.yaml (TESTING): documented
    assert refused.status_code == 429 and refused.mimetype == "application/problem+json"
    assert refused.json["status"] == 429 and "3 per 1 minute" in refused.json["detail"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert 0 <= int(refused.headers["X-RateLimit-Reset"]) - time.time() <= 61
    assert "Retry-After" in refused.headers["Access-Control-Expose-Headers"]  # readable by the widget
    assert client.post("/v1/odds", json={}).status_code == 429  # one budget for the whole API


def test_spreadsheets_are_counted_apart_with_a_larger_budget() -> None:
    client = limited(RATELIMIT_APPLICATION="2 per minute", RATELIMIT_SPREADSHEET="5 per minute")
    assert [client.get("/v1/modes").status_code for _ in range(3)] == [200, 200, 429]
    sheets = [client.get("/v1/modes", headers={"User-Agent": GOOGLE}) for _ in range(3)]
    assert {a.status_code for a in sheets} == {200} and sheets[0].headers["X-RateLimit-Limit"] == "5"
    excel = [client.get("/v1/modes", headers={"User-Agent": EXCEL}).status_code for _ in range(3)]
    assert excel == [200, 200, 429]  # the same address's spreadsheets share their budget


def test_health_checks_and_preflights_are_never_limited() -> None:
    client = limited(RATELIMIT_APPLICATION="1 per minute")
    assert {client.get("/healthz").status_code for _ in range(5)} == {200}
    assert "X-RateLimit-Limit" not in client.get("/healthz").headers
    preflight = {"Origin": "https://rules.example", "Access-Control-Request-Method": "POST"}
    assert {client.options("/v1/odds", headers=preflight).status_code for _ in range(5)} == {200}


def test_with_its_storage_down_the_limiter_counts_in_memory_and_the_api_answers() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = limited(RATELIMIT_APPLICATION="2 per minute", RATELIMIT_STORAGE_URI=f"redis://127.0.0.1:{port}/0")
    assert [client.get("/v1/modes").status_code for _ in range(3)] == [200, 200, 429]


def test_every_operation_documents_429_but_the_exempt_ones() -> None:
    spec = load()[1]
    for path, item in spec["paths"].items():
        for method in METHODS:
            if method in item:
                documented = item[method]["responses"].get("429")
                if path in EXEMPT_PATHS:
                    assert documented is None, f"{method.upper()} {path} is never limited"
                else:
                    assert documented == {"$ref": "#/components/responses/TooManyRequests"}, f"{method.upper()} {path}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_gunicorn_workers_share_the_limit_in_redis(tmp_path: Path) -> None:
    store = redis.Redis.from_url(REDIS_URL)
    store.flushdb()
    port, log = free_port(), tmp_path / "access.log"
    env = {**os.environ, "ZOMBIE_ODDS_RATELIMIT_APPLICATION": "40 per minute",
           "ZOMBIE_ODDS_RATELIMIT_STORAGE_URI": REDIS_URL}
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-w", "2", "-b", f"127.0.0.1:{port}", "--access-logfile", str(log),
         "--access-logformat", "%(p)s %(s)s", "api:create_app()"], env=env, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"

    def status(path: str) -> int:
        try:
            with urllib.request.urlopen(url + path, timeout=30) as answer:
                return answer.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return 0

    try:
        deadline = time.monotonic() + 60
        while status("/healthz") != 200:  # exempt: counts nothing
            assert time.monotonic() < deadline and server.poll() is None, "gunicorn did not start"
            time.sleep(0.2)
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(status, ["/v1/modes"] * 100))
        assert answers.count(200) == 40 and answers.count(429) == 60, answers  # one count for both workers
        assert store.keys("LIMITS:LIMITER/zombie-odds/*")  # counted in Redis
        # The kernel may hand a burst to one worker: ask on until both have answered. A worker counting on
        # its own would let these through; with one count in Redis every one of them is refused.
        for _ in range(20):
            pids = {line.split()[0] for line in log.read_text().splitlines() if line.split()[1] in ("200", "429")}
            if len(pids) == 2:
                break
            with ThreadPoolExecutor(8) as pool:
                assert set(pool.map(status, ["/v1/modes"] * 16)) == {429}
        assert len(pids) == 2, "both workers answered"
    finally:
        server.terminate()
        server.wait(timeout=30)
        store.flushdb()


@pytest.mark.parametrize("exempt", sorted(EXEMPT_PATHS))
def test_exempt_paths_exist(exempt: str) -> None:
    assert exempt in load()[1]["paths"]
