"""The embeddable calculator: its two routes, and the widget driven in a real headless Chromium.

The application runs on a real server on a loopback port; the test page that embeds the widget is
served by another server on another port, so the widget's calls to the API are cross-origin (CORS)
and the page's own strict Content-Security-Policy is in force. The browser is Debian's chromium
with its chromedriver; without them the browser tests are skipped, except in CI (`CI` set), where
they fail: `scripts/test` installs both. Screenshots go to `test-output/` (gitignored).
"""

from __future__ import annotations

import json
import re
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from api import embed

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "test-output"
WORKED = "footprints=green,red&brains=green&shotguns=red"  # README's worked example: bust 2/9, roll
WAIT = 30  # seconds; a generous bound for a loaded 2-core machine, not a timing assertion


# -- the routes, through the test client ----------------------------------------------------------


@pytest.mark.parametrize(("path", "mimetype"), [("/embed/calculator", "text/html"),
                                                ("/embed/widget.js", "text/javascript")])
def test_embed_routes_are_embeddable_cacheable_and_small(client: FlaskClient, path: str, mimetype: str) -> None:
    response = client.get(path)
    assert response.status_code == 200 and response.mimetype == mimetype
    assert "frame-ancestors *" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert "X-Frame-Options" not in response.headers
    assert response.cache_control.public and response.cache_control.max_age == embed.MAX_AGE
    assert len(response.data) < 12_000, "light on bytes"
    again = client.get(path, headers={"If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""
    assert client.get(path + "?v=2").data == response.data  # cache-busters are ignored


def test_the_calculator_page_has_no_external_asset_and_no_inline_script(client: FlaskClient) -> None:
    html = client.get("/embed/calculator").get_data(as_text=True)
    assert re.findall(r"<script[^>]*>", html) == ['<script src="widget.js" async>']
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    policy = client.get("/embed/calculator").headers["Content-Security-Policy"]
    assert "script-src 'self';" in policy and "unsafe-inline" not in policy


def test_the_widget_script_may_be_loaded_by_any_page(client: FlaskClient) -> None:
    response = client.get("/embed/widget.js", headers={"Origin": "https://rules.example"})
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert response.headers["Cross-Origin-Resource-Policy"] == "cross-origin"
    assert not re.search(r"\b(import|require)\s*\(|https?://", response.get_data(as_text=True).split("*/", 1)[1])


# -- a real browser -------------------------------------------------------------------------------


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site_url(server_url: str) -> Iterator[str]:
    """Another origin: a rules website that embeds the widget and frames the calculator, under a strict CSP."""
    policy = (f"default-src 'none'; script-src {server_url}; connect-src {server_url}; frame-src {server_url}; "
              "style-src 'none'")
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Rules</title>
<meta http-equiv="Content-Security-Policy" content="{policy}"></head>
<body><h1>Zombie Dice rules</h1>
<div data-zombie-odds></div><script src="{server_url}/embed/widget.js" async></script>
<iframe src="{server_url}/embed/calculator" title="Zombie Dice odds" width="640" height="520"></iframe>
</body></html>"""
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "rules.html").write_text(page, encoding="utf-8")
        server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=directory))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{server.server_port}/rules.html"
        server.shutdown()
        thread.join()
        server.server_close()


def fetch(url: str) -> tuple[int, dict[str, Any]]:
    """GET a JSON answer (or problem) from the real server, as the widget does."""
    try:
        with urllib.request.urlopen(url, timeout=WAIT) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def wait_for(driver: Any, condition: Callable[[], Any]) -> Any:
    from selenium.common.exceptions import NoSuchShadowRootException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    def attempt(_: Any) -> Any:
        try:
            return condition()
        except (NoSuchShadowRootException, StaleElementReferenceException):  # not mounted yet; re-rendered
            return False

    return WebDriverWait(driver, WAIT).until(attempt)


class Widget:
    """The widget as a reader sees it: its controls and the numbers it shows, in its shadow root."""

    def __init__(self, driver: Any):
        from selenium.webdriver.common.by import By

        self.driver, self.by = driver, By
        self.host = wait_for(driver, lambda: driver.find_element(By.CSS_SELECTOR, "[data-zombie-odds]"))
        self.root = wait_for(driver, lambda: self.host.shadow_root)

    def find(self, css: str) -> Any:
        return self.root.find_element(self.by.CSS_SELECTOR, css)

    def input(self, pile: str, die: str) -> Any:
        return self.find(f'input[name="{pile}.{die}"]')

    def text(self, css: str) -> str:
        return self.find(css).text

    def showing(self, exact: str) -> bool:
        """The results show the bust chance `exact` (so the answer for that position has arrived)."""
        results = self.find("[aria-live]")
        return results.is_displayed() and f"({exact})" in results.text

    def focused(self) -> str:
        return self.driver.execute_script("const a = arguments[0].shadowRoot.activeElement;"
                                          "return a && (a.name || a.textContent);", self.host)

    def check_against(self, answer: dict[str, Any]) -> None:
        """Every number shown is the API's answer, rounded as displayed."""
        roll, decision = answer["next_roll"], answer["decision"]
        assert self.text(".advice").split()[0].lower() == decision["action"]
        assert percent(self.text(".bust")) == pytest.approx(100 * roll["bust"]["value"], abs=0.051)
        assert float(self.text(".roll")) == pytest.approx(decision["roll"]["value"], abs=0.0051)
        assert float(self.text(".stop")) == pytest.approx(decision["stop"]["value"], abs=0.0051)
        rows = dict(re.fullmatch(r"(.+?) (?:< )?([0-9.]+) %", row.text).groups()
                    for row in self.find("table").find_elements(self.by.CSS_SELECTOR, "tr"))
        expected = {"Bust": roll["bust"]["value"]}
        for o in roll["outcomes"]:
            if len(answer["position"]["shotguns"]) + o["shotguns"] < 3:
                label = f"+{o['brains']} brain{'' if o['brains'] == 1 else 's'}"
                expected[label] = expected.get(label, 0) + o["value"]
        assert rows.keys() == expected.keys()
        for label, value in expected.items():
            assert float(rows[label]) == pytest.approx(100 * value, abs=0.051), label


def spin_up(driver: Any, field: Any) -> None:
    """Click the up arrow of a number input's spin button (the top of its right end)."""
    from selenium.webdriver.common.action_chains import ActionChains

    size = field.size
    ActionChains(driver).move_to_element(field).move_to_element_with_offset(
        field, size["width"] // 2 - 7, -size["height"] // 4).click().perform()


def percent(text: str) -> float:
    assert text.endswith(" %"), text
    return float(text.removesuffix(" %"))


def screenshot(driver: Any, name: str) -> None:
    OUTPUT.mkdir(exist_ok=True)
    driver.save_screenshot(str(OUTPUT / name))


def console_errors(driver: Any) -> list[str]:
    """Console errors of the page (a CSP violation, a failed fetch...), but for the favicon's 404 and the
    browser's note of each 422 (an impossible position, which the widget shows)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"
            and "favicon.ico" not in e["message"] and "status of 422" not in e["message"]]


def test_the_widget_on_another_site_shows_the_api_answers(browser: Any, site_url: str, server_url: str) -> None:
    browser.get(site_url)
    widget = Widget(browser)
    wait_for(browser, lambda: widget.showing("94/3861"))  # the start of a turn, via CORS
    assert widget.text(".advice").startswith("Roll")
    assert [o.text for o in widget.root.find_elements(widget.by.CSS_SELECTOR, "option")] == [
        m["title"] for m in fetch(f"{server_url}/v1/modes")[1]["modes"]]

    # The worked example, die by die: two footprint dice in hand, a green brain, a red shotgun.
    for pile, die in (("footprints", "green"), ("footprints", "red"), ("brains", "green"), ("shotguns", "red")):
        widget.input(pile, die).send_keys("\ue013")  # the Up arrow key, as on a spin button
    wait_for(browser, lambda: widget.showing("2/9"))
    widget.check_against(fetch(f"{server_url}/v1/odds?{WORKED}")[1])
    # The page's strict CSP (style-src 'none') does not stop the widget's own styles.
    weight = browser.execute_script("return getComputedStyle(arguments[0]).fontWeight", widget.find(".advice"))
    assert weight == "700"
    screenshot(browser, "embed-widget.png")

    # An impossible position: the API's own problem detail, nothing guessed.
    spin_up(browser, widget.input("shotguns", "red"))  # a mouse click on its up arrow: 2 red shotguns set aside
    assert widget.input("shotguns", "red").get_attribute("value") == "2"
    widget.input("shotguns", "yellow").send_keys("\ue013")  # 3 shotguns: the turn is over
    status, problem = fetch(f"{server_url}/v1/odds?footprints=green,red&brains=green&shotguns=yellow,red,red")
    assert status == 422
    wait_for(browser, lambda: widget.find(".err").is_displayed())
    assert widget.text(".err") == problem["detail"]
    assert not widget.find("[aria-live]").is_displayed()
    assert widget.input("shotguns", "red").get_attribute("aria-invalid") == "true"
    screenshot(browser, "embed-widget-problem.png")

    # A real click on "New turn": back to the start of a turn.
    widget.find("button").click()
    wait_for(browser, lambda: widget.showing("94/3861"))
    assert widget.input("shotguns", "red").get_attribute("aria-invalid") is None
    assert console_errors(browser) == []


def test_the_calculator_can_be_framed_by_another_site(browser: Any, site_url: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(site_url)
    browser.switch_to.frame(wait_for(browser, lambda: browser.find_element(By.TAG_NAME, "iframe")))
    try:
        widget = Widget(browser)
        wait_for(browser, lambda: widget.showing("94/3861"))
    finally:
        browser.switch_to.default_content()
    screenshot(browser, "embed-site.png")


def test_the_calculator_page_works_from_the_keyboard(browser: Any, server_url: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    browser.get(f"{server_url}/embed/calculator")
    widget = Widget(browser)
    wait_for(browser, lambda: widget.showing("94/3861"))
    assert browser.title == "Zombie Dice odds calculator"
    # The fields in tab order: mode, footprints x3, brains x3, shotguns x3, banked, New turn.
    order = ["mode"] + [f"{pile}.{die}" for pile in ("footprints", "brains", "shotguns")
                        for die in ("green", "yellow", "red")] + ["banked", "New turn"]

    def tab_to(name: str) -> None:
        current = widget.focused()
        steps = order.index(name) - (order.index(current) if current in order else -1)
        ActionChains(browser).send_keys(Keys.TAB * steps).perform()
        assert widget.focused() == name

    for name in ("footprints.green", "footprints.red", "brains.green", "shotguns.red"):
        tab_to(name)
        ActionChains(browser).send_keys(Keys.ARROW_UP).perform()
    wait_for(browser, lambda: widget.showing("2/9"))
    widget.check_against(fetch(f"{server_url}/v1/odds?{WORKED}")[1])
    screenshot(browser, "embed-calculator.png")

    tab_to("New turn")
    ActionChains(browser).send_keys(Keys.SPACE).perform()
    wait_for(browser, lambda: widget.showing("94/3861"))
    assert widget.input("footprints", "green").get_attribute("value") == "0"
    assert console_errors(browser) == []
