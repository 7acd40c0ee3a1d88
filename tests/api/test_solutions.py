"""api/solutions.py: /v1/solutions lists every stored turn solution (mode, recycle variant, School Bus or not) and
where its build stands; a question whose solution is missing is a 503 naming its job, followed to the end."""

from __future__ import annotations

import time

import pytest
from flask.testing import FlaskClient

from workers import solutions


def test_a_missing_solution_is_a_503_naming_its_job_until_it_is_built(client: FlaskClient, tmp_path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A server whose solution is not built answers 503 with Retry-After and the job; its background builder (a
    real child process) builds it; then the same question is answered."""
    monkeypatch.setenv("ZOMBIE_ODDS_SOLUTIONS", str(tmp_path))
    first = client.get("/v1/odds?footprints=green,red&brains=yellow")
    assert first.status_code == 503 and first.mimetype == "application/problem+json"
    assert int(first.headers["Retry-After"]) > 0
    job = first.get_json()["job"]
    assert job == "/v1/solutions/solution-original-before-draw-v1"
    deadline = time.monotonic() + 120
    while (state := client.get(job).get_json()["state"]) != "built":
        assert state in ("queued", "building") and time.monotonic() < deadline
        time.sleep(0.2)
    answered = client.get("/v1/odds?footprints=green,red&brains=yellow")
    assert answered.status_code == 200
    built = client.get(job).get_json()
    assert built["within"] > 0 and len(built["sha256"]) == 64 and built["states"] == 10766


def test_the_solutions_list_names_every_combination(client: FlaskClient) -> None:
    listed = client.get("/v1/solutions").get_json()["solutions"]
    assert {(s["mode"], s["recycle"], s["school_bus"]) for s in listed} == set(solutions.combinations())
    assert len(listed) == 16  # 4 modes x 2 variants x bus or not
    assert client.get("/v1/solutions/no-such-job").status_code == 404


def test_every_listed_job_is_its_own_page_never_cached(client: FlaskClient) -> None:
    listing = client.get("/v1/solutions")
    assert listing.headers["Cache-Control"] == "no-store"
    for listed in listing.get_json()["solutions"]:
        one = client.get(f"/v1/solutions/{listed['id']}")
        assert one.status_code == 200 and one.headers["Cache-Control"] == "no-store"
        assert one.get_json() == listed
        assert listed["id"] == solutions.job_id(listed["mode"], listed["recycle"], listed["school_bus"])
        assert ({"sha256", "states", "rolls", "top", "within"} <= set(listed)) == (listed["state"] == "built"), listed
