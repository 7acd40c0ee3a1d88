"""api/reports.py: /v1/reports, the scheduled reports (workers/reports.py) listed, served as HTML (self-contained: it
loads nothing), CSV (every table, or one) and JSON, their charts as PNG and SVG, made now by POST in every mode and
variant (once per period and inputs); lists never cached; errors as problems."""

import base64
import csv
import io
import re
import time
from fractions import Fraction

import pytest

from analysis import MODES
from api import create_app
from workers import reports, tasks
from workers.store import Store

from ..workers.reporting import GROUP, stored_content, stored_table

pytestmark = pytest.mark.xdist_group(GROUP)  # (tests/workers/reporting.py)
SANTA = "santa-claus-meets-the-zombies"


store_dir = pytest.fixture(scope="module", name="store_dir")(stored_table)
content = pytest.fixture(scope="module", name="content")(stored_content)


def table(content, name):
    return next(t for t in content["tables"] if t["name"] == name)


@pytest.fixture
def client(store_dir, content):
    return create_app({"TESTING": True}).test_client()


def wait_for(client, location, seconds=120):
    deadline = time.time() + seconds
    while (job := client.get(location).get_json())["state"] in ("queued", "running") and time.time() < deadline:
        time.sleep(0.2)
    return job


def test_post_makes_one_report_and_serves_it(client, store_dir, content):
    response = client.post("/v1/reports", json={"mode": "original"})
    assert response.status_code == 202, response.get_json()
    job = wait_for(client, response.headers["Location"])
    assert job["state"] == "succeeded", job
    again = client.post("/v1/reports", json={"mode": "original"})  # same inputs, same period: no second copy
    assert again.status_code == 200 and again.get_json()["report"] == job["report"]
    key = reports.key_of(job["id"])
    assert Store(store_dir).writes(key) == 1

    page = client.get(job["report"])
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert page.headers["Content-Security-Policy"].startswith("default-src 'none'")
    html = page.get_data(as_text=True)
    assert '<meta name="viewport"' in html and html.count('src="data:image/svg+xml;base64,') == 2
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html), "an outside asset"
    assert not re.search(r"<(script|link|iframe)\b", html)
    assert "2.259149861" in html and "46.48%" in html
    for name in ("win_heatmap", "roll_stop_regions"):
        png = client.get(f"{job['report']}/charts/{name}.png")
        svg = client.get(f"{job['report']}/charts/{name}.svg")
        assert png.mimetype == "image/png" and png.data.startswith(b"\x89PNG")
        assert svg.mimetype == "image/svg+xml" and b"<svg" in svg.data
        assert base64.b64encode(svg.data).decode() in html  # the page shows the same picture
        assert f'href="{job["report"]}/charts/{name}.png"' in html
    assert client.get(f"{job['report']}/charts/p_win.png").status_code == 404

    data = client.get(job["report"] + "?format=json").get_json()
    assert data["content"] == content and data["table"]["sha256"]
    every = client.get(job["report"] + "?format=csv")
    assert every.mimetype == "text/csv"
    blocks = every.get_data(as_text=True).split("\r\n\r\n")
    assert [list(csv.reader(io.StringIO(b)))[0][1] for b in blocks if b] == [t["name"] for t in content["tables"]]
    one = list(csv.reader(io.StringIO(client.get(job["report"] + "?format=csv&table=bust_odds").text)))
    assert one[0] == table(content, "bust_odds")["columns"]
    assert [Fraction(r[4]) for r in one[1:]] == [Fraction(r[4]) for r in table(content, "bust_odds")["rows"]]
    assert float(one[1][5]) == table(content, "bust_odds")["rows"][0][5]

    listed = client.get("/v1/reports").get_json()["reports"]
    assert job["id"] in [r["id"] for r in listed]
    latest = client.get("/v1/reports/latest?mode=original&format=json")
    assert latest.headers["Content-Location"] == job["report"] and latest.get_json()["id"] == job["id"]


def test_errors_are_problems(client):
    assert client.get("/v1/reports/latest?mode=santa-claus-meets-the-zombies").status_code == 404
    assert client.get("/v1/reports/original--before-draw--p2--v1--20000101-000000-000000000000").status_code == 404
    for bad in ("..", "..%2F..%2Fetc%2Fpasswd", "table--original--before-draw--p2--v1", "x" * 300):
        assert client.get(f"/v1/reports/{bad}").status_code == 404
    assert client.get("/v1/reports/jobs/nothing").status_code == 404
    assert client.post("/v1/reports", json={"mode": "chess"}).status_code == 422
    assert client.get("/v1/reports?mode=chess").status_code == 422


def test_lists_change_over_time_despite_the_answer_cache(store_dir, content):
    client = create_app({"TESTING": True, "RESPONSE_CACHE_SIZE": 64}).test_client()
    before = {r["id"] for r in client.get("/v1/reports").get_json()["reports"]}
    made = tasks.build_report.apply(("direct-to-video-sequel", "before-draw", "20200102-030000")).get()
    after = {r["id"] for r in client.get("/v1/reports").get_json()["reports"]}
    assert after - before == {made["id"]}
    latest = client.get("/v1/reports/latest?mode=direct-to-video-sequel")
    assert latest.status_code == 200 and "Missing." in latest.get_data(as_text=True)
    doc = reports.load(made["id"])
    assert "POST /v1/tables/direct-to-video-sequel/jobs" in doc["notes"][0]
    assert {s["id"] for s in doc["content"]["sections"] if s["status"] == "missing"} == {"turn", "policy", "game",
                                                                                         "rules"}


def test_post_takes_every_mode_and_variant(client, monkeypatch):
    """Outside ZOMBIE_ODDS_REPORT_SOLVE_MODES a report is made in moments, says why its heavy sections are
    missing, and starts no table job (whose memory this server does not spend)."""
    monkeypatch.setenv("ZOMBIE_ODDS_REPORT_SOLVE_MODES", "original")
    submitted = []
    monkeypatch.setattr(reports.tables, "submit", lambda *a: submitted.append(a))
    for mode, variant in ((SANTA, "before-draw"), ("big-summer-action-movie", "draw-then-recycle")):
        response = client.post("/v1/reports", json={"mode": mode, "variant": variant})
        assert response.status_code == 202, response.get_json()
        job = wait_for(client, response.headers["Location"])
        assert job["state"] == "succeeded" and job["mode"] == mode and job["variant"] == variant, job
        doc = client.get(job["report"] + "?format=json").get_json()
        status = {s["id"]: s for s in doc["content"]["sections"]}
        assert status["bust"]["status"] == "ok"
        for name in ("turn", "policy", "game", "rules"):
            assert status[name]["status"] == "missing" and "ZOMBIE_ODDS_REPORT_SOLVE_MODES" in status[name]["reason"]
        assert "no job was started" in doc["notes"][0]
        page = client.get(job["report"]).get_data(as_text=True)
        assert page.count("<strong>Missing.</strong>") == 4
        latest = client.get(f"/v1/reports/latest?mode={mode}&variant={variant}")
        assert latest.status_code == 200 and latest.headers["Content-Location"] == job["report"]
        assert client.get(f"{job['report']}/charts/win_heatmap.png").status_code == 404
    assert submitted == []


def test_the_spec_names_every_mode_for_reports():
    from api import spec

    schemas = spec.load()[1]["components"]["schemas"]
    assert schemas["ReportMode"]["enum"] == schemas["ReportModeDefault"]["enum"] == list(MODES)
    assert schemas["ReportRequest"]["properties"]["mode"] == {"$ref": "#/components/schemas/ReportMode"}
    assert re.fullmatch(schemas["ReportId"]["pattern"], "original--before-draw--p2--v1--20261129-030000-959562a34aaf")
