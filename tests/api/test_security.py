"""api/security.py: security headers, nosniff everywhere, a strict policy on HTML pages, embeddable pages left to
their own.

Swagger UI (/docs) runs an inline script: the page marks it with the request's nonce, and a real
headless Chromium shows that the page still works under the policy (no CSP violation in its console).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from flask.testing import FlaskClient

ROOT = Path(__file__).resolve().parents[2]
NOT_OURS = {".git", ".venv", "var", "test-output", "__pycache__", ".ruff_cache", ".pytest_cache", "build", "dist"}
SECRETS = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----"  # keys
    r"|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36}|xox[baprs]-[A-Za-z0-9-]{10,}"  # cloud and chat tokens
    r"|redis://[^\s:@/]*:[^\s@/]+@"  # a password in a Redis URL
    r"""|(?i:(?:password|passwd|secret|api_?key|token)\s*[:=]\s*["'][^"'\s]{8,}["'])"""  # a credential assigned
)


def test_no_secret_in_the_repository() -> None:
    """Configuration comes from the environment (README, Configuration): nothing secret is committed."""
    found = []
    for path in ROOT.rglob("*"):
        if path.is_file() and not NOT_OURS & set(path.relative_to(ROOT).parts[:-1]) and path.stat().st_size < 2**20:
            text = path.read_text(errors="ignore")
            found += [f"{path.relative_to(ROOT)}: {m[0][:40]}" for m in SECRETS.finditer(text)]
    assert not found, found


def test_every_answer_is_nosniff_and_sends_no_referrer(client: FlaskClient) -> None:
    for path in ("/v1/modes", "/healthz", "/openapi.yaml", "/v1/odds?shotguns=red,red,red", "/nowhere"):
        answer = client.get(path)
        assert answer.headers["X-Content-Type-Options"] == "nosniff", path
        assert answer.headers["Referrer-Policy"] == "no-referrer", path
        assert "Content-Security-Policy" not in answer.headers or path.startswith("/embed"), path


def test_the_docs_page_may_run_only_its_own_nonce_and_be_framed_only_here(client: FlaskClient) -> None:
    first, second = client.get("/docs"), client.get("/docs")
    policy = first.headers["Content-Security-Policy"]
    nonce = re.search(r"'nonce-([A-Za-z0-9_-]{16,})'", policy)[1]
    assert f'<script nonce="{nonce}">' in first.text  # the inline script, and only it, carries the nonce
    assert first.text.count("<script") == 2 and f'nonce="{nonce}"' not in second.text  # fresh per request
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["frame-ancestors"] == "'self'" and first.headers["X-Frame-Options"] == "SAMEORIGIN"
    assert directives["default-src"] == "'self'" and directives["object-src"] == "'none'"
    assert "unsafe-inline" not in directives["script-src"] and "unsafe-eval" not in directives["script-src"]


def test_embeddable_pages_keep_their_own_policy(client: FlaskClient) -> None:
    answer = client.get("/embed/calculator")
    assert "frame-ancestors *" in answer.headers["Content-Security-Policy"]
    assert "X-Frame-Options" not in answer.headers  # it would forbid what the policy allows


def test_swagger_ui_works_under_its_policy(browser: Any, server_url: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{server_url}/docs")
    title = WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".swagger-ui .info .title"))
    assert title[0].text.startswith("zombie-odds")
    assert browser.find_elements(By.CSS_SELECTOR, ".opblock")  # the operations are listed
    problems = [e["message"] for e in browser.get_log("browser")
                if e["level"] == "SEVERE" and "favicon.ico" not in e["message"]]
    assert not problems, problems  # a blocked script or style would be reported here
