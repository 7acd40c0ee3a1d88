"""api/landing.py: / says what this server is and links the API's browsable pages, each one a GET of the contract
answered without parameters, under the strict policy of api/security.py; in a real browser too (Debian's headless
Chromium: skipped outside CI without it). Screenshots of failures go to `test-output/landing/` (gitignored).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from flask.testing import FlaskClient
from markupsafe import escape

from api import landing, spec

from ..browser import screenshot, wait_for

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "test-output" / "landing"

DOCUMENT = spec.load()[1]


def test_the_page_lists_every_link_in_order_each_a_get_answered_without_parameters(client: FlaskClient) -> None:
    page = client.get("/").get_data(as_text=True)
    listed = re.findall(r'<li><a href="([^"]+)"><code>\1</code></a>: (.*)</li>', page)
    assert listed == [(path, str(escape(what))) for path, what in landing.LINKS]
    info = DOCUMENT["info"]
    assert f"<h1>{info['title']} <span class=\"version\">{info['version']}</span></h1>" in page
    for path, _ in landing.LINKS:
        assert "get" in DOCUMENT["paths"][path], path
        assert client.get(path).status_code == 200, path


def test_the_landing_page_says_what_this_is_and_links_every_page(browser: Any, server_url: str,
                                                               client: FlaskClient) -> None:
    from selenium.webdriver.common.by import By

    browser.get_log("browser")  # (the console so far: other pages')
    browser.get(server_url + "/")
    assert browser.title.startswith("zombie-odds")
    assert "Zombie Dice" in browser.find_element(By.TAG_NAME, "p").text
    links = {a.get_attribute("href").removeprefix(server_url): a.text
             for a in browser.find_elements(By.CSS_SELECTOR, "main a")}
    assert set(links) == {path for path, _ in landing.LINKS} >= {
        "/docs", "/embed/calculator", "/v1/modes", "/v1/tables", "/v1/reports", "/v1/solutions", "/openapi.yaml"}
    for path in links:
        assert client.get(path).status_code == 200, path
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    if errors:
        screenshot(browser, OUTPUT, "landing.png")
    assert errors == []
    browser.find_element(By.LINK_TEXT, "/docs").click()
    wait_for(browser, lambda: browser.find_element(By.CSS_SELECTOR, "#swagger-ui .info .title"))
    assert browser.current_url == server_url + "/docs"


def test_the_landing_page_and_the_redirect_are_in_the_contract(client: FlaskClient) -> None:
    paths = DOCUMENT["paths"]
    assert paths["/"]["get"]["tags"] == paths["/docs/"]["get"]["tags"] == ["service"]
    page = client.get("/")
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]  # api/security.py's, no inline script
    assert "<script" not in page.get_data(as_text=True)
