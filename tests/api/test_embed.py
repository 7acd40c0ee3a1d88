"""api/embed.py: the embeddable calculator, its two routes, and the widget driven in a real headless Chromium.

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

ROOT = Path(__file__).resolve().parents[2]
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
    assert len(response.data) < 24_000, "light on bytes"
    again = client.get(path, headers={"If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""
    assert client.get(path + "?_=2").data == response.data  # the cache-buster `_` (openapi.yaml's info) is taken
    assert client.get(path + "?v=2").status_code == 422  # another unknown parameter is refused, as everywhere


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

    def set(self, name: str, value: Any) -> None:
        """Set a control by its name as a reader would (a count typed, a box ticked, a radio or option chosen),
        with the events the widget listens to."""
        self.driver.execute_script(
            """const [host, name, value] = arguments;
            const all = [...host.shadowRoot.querySelectorAll(`[name="${name}"]`)];
            const c = all.find((c) => c.type !== "radio" || c.value === String(value));
            if (!c) throw new Error("no control " + name);
            if (c.type === "checkbox" || c.type === "radio") c.checked = c.type === "radio" || !!value;
            else c.value = String(value);
            for (const kind of ["input", "change"]) c.dispatchEvent(new Event(kind, { bubbles: true }));""",
            self.host, name, value)

    def settled(self) -> bool:
        """The widget shows an answer (or a problem) and is not waiting for one."""
        return self.find("[aria-live]").get_attribute("aria-busy") is None and not self.find(".pending").is_displayed()

    def actions(self) -> list[tuple[str, str]]:
        """The rows of the "Every choice" table: each action and its value as shown."""
        return [(row.get_attribute("data-action"), row.find_elements(self.by.CSS_SELECTOR, "td")[0].text)
                for row in self.root.find_elements(self.by.CSS_SELECTOR, "table.actions tr[data-action]")]

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
                    for row in self.find("table.odds").find_elements(self.by.CSS_SELECTOR, "tr"))
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
    assert [o.text for o in widget.root.find_elements(widget.by.CSS_SELECTOR, "select[name=mode] option")] == [
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
    # The fields in tab order: mode, footprints x3, brains x3, shotguns x3, banked, the School Bus, the aim, New turn.
    order = ["mode"] + [f"{pile}.{die}" for pile in ("footprints", "brains", "shotguns")
                        for die in ("green", "yellow", "red")] + ["banked", "school_bus", "aim", "New turn"]

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


# -- every mode, the School Bus, a pending answer, a 503 ------------------------------------------------------------

# A position per mode, as the widget's controls (`double_brains.hunk`: Hunk's double brain in the brain pile) and as
# the equivalent /v1/odds query (openapi.yaml's request examples).
POSITIONS = {
    "original": ({"footprints.green": 1, "footprints.red": 1, "brains.green": 1, "shotguns.red": 1}, WORKED),
    "big-summer-action-movie": (
        {"footprints.hottie": 1, "double_brains.hunk": 1, "brains.green": 1, "shotguns.red": 2},
        "footprints=hottie&brains=green,hunk&double_brains=hunk&shotguns=red,red"),
    "santa-claus-meets-the-zombies": (
        {"footprints.red": 1, "brains.yellow": 1, "brains.green": 1, "shotguns.red": 2, "shotguns.yellow": 1,
         "effects.helmet": True}, "footprints=red&brains=yellow,green&shotguns=red,red,yellow&effects=helmet"),
    "santa-kept-out": (
        {"footprints.green": 1, "footprints.red": 1, "brains.yellow": 1, "shotguns.red": 2, "kept_out.santa": True,
         "banked": 10}, "footprints=green,red&brains=yellow&shotguns=red,red&kept_out=santa&banked=10"),
    "direct-to-video-sequel": (
        {"footprints.hottie": 1, "double_brains.santa": 1, "brains.yellow": 1, "shotguns.red": 2},
        "footprints=hottie&brains=santa,yellow&double_brains=santa&shotguns=red,red"),
}


def show_position(widget: Any, mode: str, fields: dict[str, Any]) -> None:
    widget.set("mode", mode)
    wait_for(widget.driver, lambda: widget.root.find_elements(widget.by.CSS_SELECTOR, f'[name="{next(iter(fields))}"]'))
    for name, value in fields.items():
        widget.set(name, value)


def value_text(item: dict[str, Any], objective: str = "expected-brains") -> str:
    return f"{100 * item['value']:.1f} %" if objective != "expected-brains" else format(round(item["value"], 2), "g")


@pytest.mark.parametrize("name", POSITIONS)
def test_every_mode_is_described_and_answered(browser: Any, server_url: str, name: str) -> None:
    """Each mode's own controls (double faces, Santa's effects and being kept out) describe a position, and the
    widget shows the API's answer for it: the advice, the bust chance, every action's value."""
    fields, query = POSITIONS[name]
    mode = name if name != "santa-kept-out" else "santa-claus-meets-the-zombies"
    status, answer = fetch(f"{server_url}/v1/odds?mode={mode}&{query}")
    assert status == 200, answer
    browser.get(f"{server_url}/embed/calculator")
    widget = Widget(browser)
    wait_for(browser, lambda: widget.showing("94/3861"))
    show_position(widget, mode, fields)
    wait_for(browser, lambda: widget.settled() and widget.showing(answer["next_roll"]["bust"]["exact"]))
    decision = answer["decision"]
    assert widget.text(".advice").startswith({"roll": "Roll", "stop": "Stop", "tie": "Either"}[decision["action"]])
    assert widget.text(".roll") == value_text(decision["roll"]) and widget.text(".stop") == value_text(decision["stop"])
    special = {"double_brains", "double_shotguns", "effects", "kept_out"}
    names = {c.get_attribute("name").split(".")[0] for c in widget.root.find_elements(widget.by.CSS_SELECTOR, "input")
             if c.is_displayed()}
    if mode == "original":
        assert not names & special  # only the controls of the mode
        assert "actions" not in decision
    else:
        assert names & special
        assert widget.actions() == [(a["action"], value_text(a["value"])) for a in decision["actions"]]
    screenshot(browser, f"embed-{name}.png")
    assert console_errors(browser) == []


def test_a_school_bus_position_shows_its_actions(browser: Any, server_url: str) -> None:
    """The bus controls appear only with the bus; riding it, the choices are stop, stay and get off, each with its
    value and its roll's bust chance; before boarding, board is one of them."""
    browser.get(f"{server_url}/embed/calculator")
    widget = Widget(browser)
    wait_for(browser, lambda: widget.showing("94/3861"))
    assert not widget.find('[name="riding"], [name="bus"]').is_displayed()
    fields = {"footprints.green": 1, "brains.green": 1, "brains.yellow": 1, "brains.red": 1, "shotguns.red": 1,
              "shotguns.yellow": 1}
    for name, value in fields.items():
        widget.set(name, value)
    widget.set("school_bus", True)
    assert widget.find('[name="bus"]').is_displayed() and widget.find('[name="bus_brains"]').is_displayed()
    widget.set("bus", "riding")
    position = "school_bus=true&footprints=green&brains=green,yellow,red&shotguns=red,yellow"
    status, riding = fetch(f"{server_url}/v1/odds?{position}&riding=true")
    assert status == 200, riding
    wait_for(browser, lambda: widget.settled() and widget.actions())
    assert [a for a, _ in widget.actions()] == ["stop", "stay", "get-off"]
    assert widget.actions() == [(a["action"], value_text(a["value"])) for a in riding["decision"]["actions"]]
    assert widget.text(".advice") == "Stop"
    assert "Get off the bus" in widget.text("table.actions") and "Stay on the bus" in widget.text("table.actions")
    screenshot(browser, "embed-school-bus-riding.png")

    widget.set("bus", "")  # not boarded yet: board is a choice
    status, before = fetch(f"{server_url}/v1/odds?{position}")
    wait_for(browser, lambda: widget.settled() and "board" in dict(widget.actions()))
    assert widget.actions() == [(a["action"], value_text(a["value"])) for a in before["decision"]["actions"]]
    widget.set("school_bus", False)
    wait_for(browser, lambda: widget.settled() and not widget.actions())
    assert not widget.find('[name="bus"]').is_displayed()
    assert console_errors(browser) == []


def test_a_pending_answer_says_so_at_once(browser: Any, server_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """While an answer is computed the old one is greyed out, a spinner says it is working, and the result region
    is aria-busy; then the new answer replaces it."""
    from api import odds

    browser.get(f"{server_url}/embed/calculator")
    widget = Widget(browser)
    wait_for(browser, lambda: widget.showing("94/3861"))
    release = threading.Event()
    answer_for = odds.answer_for

    def slow(values: Any) -> dict[str, Any]:
        release.wait(WAIT)
        return answer_for(values)

    monkeypatch.setattr(odds, "answer_for", slow)
    for name in ("footprints.green", "footprints.red", "brains.green", "shotguns.red"):
        widget.set(name, 1)
    results = widget.find("[aria-live]")
    assert results.get_attribute("aria-busy") == "true"  # at once, before the request is even sent
    assert widget.find(".pending").is_displayed() and "Working out the odds" in widget.text(".pending")
    assert "busy" in results.get_attribute("class") and widget.showing("94/3861")  # the old answer, greyed

    def greyed() -> bool:  # by a 0.2 s transition of its opacity
        return float(browser.execute_script("return getComputedStyle(arguments[0]).opacity", results)) < 0.5

    wait_for(browser, greyed)
    screenshot(browser, "embed-pending.png")
    release.set()
    wait_for(browser, lambda: widget.settled() and widget.showing("2/9"))
    assert "busy" not in results.get_attribute("class")
    assert console_errors(browser) == []


def test_a_503_says_so_and_retries_after_retry_after(browser: Any, site_url: str, server_url: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """On another origin: a 503 (a stored solution not built yet) shows its detail and when it will ask again,
    and the widget asks again after `Retry-After` seconds by itself, and shows the answer."""
    from api import odds
    from api.errors import ApiError

    browser.get(site_url)
    widget = Widget(browser)
    wait_for(browser, lambda: widget.showing("94/3861"))
    answer_for, calls, built = odds.answer_for, [], []

    def not_yet(values: Any) -> dict[str, Any]:  # 503 until the test has seen the message (whichever request it was)
        calls.append(values)
        if not built:
            raise ApiError(503, "the solution of mode santa-claus-meets-the-zombies (before-draw) is not built yet "
                                "(job running); ask again in 15 s", headers={"Retry-After": "2"})
        return answer_for(values)

    monkeypatch.setattr(odds, "answer_for", not_yet)
    widget.set("mode", "santa-claus-meets-the-zombies")
    wait_for(browser, lambda: widget.find(".err").is_displayed())
    message = widget.text(".err")
    assert message.startswith("Not ready yet: the solution of mode santa-claus-meets-the-zombies")
    assert message.endswith("Trying again in 2 s.")  # Retry-After, read across origins
    assert widget.find("[aria-live]").get_attribute("aria-busy") == "true"
    assert not widget.find("[aria-live]").is_displayed()
    screenshot(browser, "embed-503.png")
    built.append(True)
    wait_for(browser, lambda: widget.settled() and widget.find("[aria-live]").is_displayed())
    assert len(calls) >= 2 and not widget.find(".err").is_displayed()
    assert widget.text(".advice").startswith("Roll")
    assert [e for e in console_errors(browser) if "status of 503" not in e] == []
