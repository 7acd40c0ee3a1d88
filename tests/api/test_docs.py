"""api/docs.py: the contract served as written (/openapi.yaml), and /docs, Swagger UI working offline (/docs/ leads
there), its examples as Swagger UI uses them, in a real browser.

openapi.yaml is valid OpenAPI 3.1, and the copy /docs hands Swagger UI 4 valid 3.0. Swagger UI's "Try it out" fills in
every parameter of an operation at once (the first named example, else the parameter's example, else its schema's,
else its schema's default), so an operation's examples are one request, not a catalogue: each GET operation's must be
one the API answers (2xx). That is checked twice: quickly, by building that request the way Swagger UI 4 does and
asking the test client; and as a reader does it, in Debian's headless Chromium against a live server: open /docs at
the operation, "Try it out", "Execute", read the status Swagger UI shows. The server's store holds what a running
server would (the base game's two-player table, computed by its job, and a report), so that tables, heatmaps, jobs
and win probabilities are answered too. Screenshots of failures go to `test-output/docs/` (gitignored).
"""

from __future__ import annotations

import re
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from openapi_spec_validator import OpenAPIV30SpecValidator, OpenAPIV31SpecValidator

from api import docs, spec

from ..browser import WAIT, screenshot, wait_for
from ..responses import fields, problem

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "test-output" / "docs"

DOCUMENT = spec.load()[1]
GET_OPERATIONS = [(path, item["get"]) for path, item in DOCUMENT["paths"].items() if "get" in item]
# Operations whose example cannot be answered by a server other than the one that made it, with the status they
# get instead (documented). A report's id is its mode, variant, engine, night and a digest of its inputs (the table's
# sha256, the rules played): the examples name one made on 2026-11-29, which no other server has.
NOT_HERE = {"getAnswer": 404, "getReport": 404, "getReportChartPng": 404, "getReportChartSvg": 404, "getReportJob": 404}


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    return spec.resolve(DOCUMENT, node)


MISSING = object()


def swagger_value(parameter: dict[str, Any]) -> Any:
    """The value Swagger UI 4 fills in for a parameter (parameter-row.jsx, `setDefaultValue`), or MISSING."""
    schema = resolve(parameter.get("schema", {}))
    if parameter.get("examples"):
        return next(iter(parameter["examples"].values()))["value"]
    for source, key in ((parameter, "example"), (schema, "example"), (schema, "default")):
        if key in source:
            return source[key]
    return MISSING


def as_text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):  # style form, explode false
        return ",".join(as_text(v) for v in value)
    return str(value)


def example_request(path: str, operation: dict[str, Any]) -> str:
    """The URL "Try it out" requests with an operation's examples (an empty array, or no value, is left out)."""
    query = []
    for parameter in map(resolve, operation.get("parameters", [])):
        value = swagger_value(parameter)
        if value is MISSING or value == [] or value == "":
            assert not parameter.get("required"), f"{parameter['name']}: required, and no example"
            continue
        if parameter["in"] == "path":
            path = path.replace(f"{{{parameter['name']}}}", urllib.parse.quote(as_text(value), safe=""))
        else:
            query.append(f"{parameter['name']}={urllib.parse.quote(as_text(value), safe=',')}")
    return path + ("?" + "&".join(query) if query else "")


def test_spec_is_served_as_written(client: FlaskClient) -> None:
    response = client.get("/openapi.yaml")
    assert response.status_code == 200
    assert response.mimetype == "application/yaml"
    assert response.get_data(as_text=True) == spec.SPEC_PATH.read_text(encoding="utf-8")


def test_spec_is_valid_openapi_3_1_and_swagger_ui_4_can_render_it() -> None:
    OpenAPIV31SpecValidator(spec.load()[1]).validate()
    OpenAPIV30SpecValidator(docs.display_spec()).validate()  # what /docs hands Swagger UI 4


def test_docs_work_offline(client: FlaskClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert "/docs/swagger-ui-bundle.js" in html and "/docs/swagger-ui.css" in html
    assert not re.search(r"(src|href)=\"(https?:)?//", html), "a CDN or any other host"
    for asset, mimetype in docs.ASSETS.items():
        response = client.get(f"/docs/{asset}")
        assert response.status_code == 200 and response.mimetype == mimetype
        assert len(response.data) > 10_000
    assert fields(problem(client.get("/docs/index.html"), 404)) == ["asset"]


@pytest.fixture(scope="module")
def served_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The store a running server has: the base game's two-player table, computed by its job in this process (so
    the job is known too), and a report of that mode (without rule games: seconds)."""
    from workers import reports
    from workers.tables import join, submit

    root = tmp_path_factory.mktemp("store")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOMBIE_ODDS_STORE", str(root))
        mp.setenv("ZOMBIE_ODDS_REPORT_RULES", "")
        for name in ("REDIS_URL", "ZOMBIE_ODDS_REPORT_SCHEDULE", "ZOMBIE_ODDS_EMBEDDED_TABLES"):
            mp.delenv(name, raising=False)
        job = submit("original", "before-draw", 2)
        join(job.key)
        reports.build_report("original")
        yield root


@pytest.mark.parametrize(("path", "operation"), GET_OPERATIONS, ids=[op["operationId"] for _, op in GET_OPERATIONS])
def test_every_get_operation_s_examples_make_one_request_it_answers(client: FlaskClient, served_store: Path,
                                                                    path: str, operation: dict[str, Any]) -> None:
    url = example_request(path, operation)
    response = client.get(url)
    expected = NOT_HERE.get(operation["operationId"])
    if expected is not None:
        assert response.status_code == expected, (url, response.get_data(as_text=True)[:500])
        assert str(expected) in operation["responses"]
    else:
        assert 200 <= response.status_code < 400, (url, response.get_data(as_text=True)[:500])


def test_optional_parameters_have_no_example_that_breaks_the_request() -> None:
    """The game parameters of /v1/odds and friends have no example (given alone, `seat` or `final_round` would ask
    for a win probability without `scores`): their schemas are `Seat`, `Scores` and `FinalRound` without it."""
    parameters, schemas = DOCUMENT["components"]["parameters"], DOCUMENT["components"]["schemas"]
    for name, schema in (("scores", "Scores"), ("seat", "Seat"), ("final_round", "FinalRound")):
        documented = {k: v for k, v in schemas[schema].items() if k not in ("description", "example")}
        assert parameters[name]["schema"] == documented and "example" not in parameters[name]


# -- in the browser -------------------------------------------------------------------------------


def click_until(driver: Any, block: Any, css: str, done: str) -> None:
    """Click the operation's button `css` until the operation shows `done` (CSS). Swagger UI animates the operation
    open and renders the page around it meanwhile: a click can land elsewhere (and collapse the operation), so
    the operation is opened again and the click repeated until it takes."""
    from selenium.common.exceptions import TimeoutException, WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    deadline = time.monotonic() + WAIT
    while True:
        try:
            if block.find_elements(By.CSS_SELECTOR, done):
                return
            if "is-open" not in block.get_attribute("class").split():  # collapsed by a click that missed
                block.find_element(By.CSS_SELECTOR, ".opblock-summary-control").click()
            button = WebDriverWait(driver, 5).until(lambda _: block.find_element(By.CSS_SELECTOR, css))
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
            button.click()
            WebDriverWait(driver, 5).until(lambda _: block.find_elements(By.CSS_SELECTOR, done))
            return
        except (TimeoutException, WebDriverException):
            if time.monotonic() > deadline:
                raise


def try_it_out(driver: Any, server_url: str, tag: str, operation_id: str) -> tuple[str, str, str]:
    """Open /docs at the operation, "Try it out", "Execute": (status shown, request URL shown, response shown)."""
    from selenium.webdriver.common.by import By

    if not driver.current_url.startswith(f"{server_url}/docs"):  # one page for every operation: it loads slowly
        driver.get(f"{server_url}/docs")
    block = wait_for(driver, lambda: driver.find_element(By.ID, f"operations-{tag}-{operation_id}"))
    try:
        click_until(driver, block, ".try-out__btn:not(.cancel)", ".execute")  # (opening the operation first)
        click_until(driver, block, ".execute", ".loading-container, .live-responses-table")
        status = wait_for(driver, lambda: block.find_element(
            By.CSS_SELECTOR, ".live-responses-table tbody .response-col_status").text)
        shown = block.find_elements(By.CSS_SELECTOR, ".request-url pre")
        answer = block.find_elements(By.CSS_SELECTOR, ".live-responses-table tbody .response-col_description")
        result = status, shown[0].text if shown else "?", answer[0].text[:500] if answer else ""
        summary = block.find_element(By.CSS_SELECTOR, ".opblock-summary-control")
        driver.execute_script("arguments[0].click()", summary)  # closed again: the page stays light
        return result
    except Exception:
        screenshot(driver, OUTPUT, f"{operation_id}.png")
        driver.get("about:blank")  # the next operation on a fresh page
        raise


@pytest.mark.parametrize(("path", "operation"), GET_OPERATIONS, ids=[op["operationId"] for _, op in GET_OPERATIONS])
def test_try_it_out_then_execute_is_answered(browser: Any, server_url: str, served_store: Path, path: str,
                                            operation: dict[str, Any]) -> None:
    operation_id = operation["operationId"]
    status, url, answer = try_it_out(browser, server_url, operation["tags"][0], operation_id)
    code = int(status.split()[0]) if re.match(r"\d{3}\b", status) else None
    expected = NOT_HERE.get(operation_id)
    if expected is not None and code == expected:
        return
    if code is None or not 200 <= code < 300:
        where = screenshot(browser, OUTPUT, f"{operation_id}.png")
        pytest.fail(f"{path}: Swagger UI shows {status!r} (expected {expected or '2xx'}) for {url}\n{answer}\n"
                    f"screenshot: {where}")


def test_docs_with_a_slash_leads_to_docs(browser: Any, server_url: str, client: FlaskClient) -> None:
    from selenium.webdriver.common.by import By

    response = client.get("/docs/?_=1")
    assert response.status_code == 308 and response.headers["Location"] == "/docs?_=1"
    assert client.get("/docs/?x=1").status_code == 422  # as everywhere: `_` is the one undeclared parameter
    browser.get(server_url + "/docs/")
    wait_for(browser, lambda: browser.find_element(By.CSS_SELECTOR, "#swagger-ui .info .title"))
    assert browser.current_url == server_url + "/docs"
