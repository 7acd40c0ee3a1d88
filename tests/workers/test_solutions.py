"""workers/solutions.py: stored turn solutions: a corrupted one is never served (moved aside, built again), a build
this machine cannot hold is not started and says what it needs, the memory available is the kernel's, and with
`REDIS_URL` a real Celery worker builds the solution a server asked for."""

from __future__ import annotations

import time

import pytest
from flask.testing import FlaskClient

from workers import solutions

REDIS_URL = "redis://127.0.0.1:6379/10"  # this module's own database (a worker listens there)


def test_a_corrupted_solution_is_never_served(client: FlaskClient, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOMBIE_ODDS_SOLUTIONS", str(tmp_path))
    solutions.build_and_store("original", "draw-then-recycle")
    folder = tmp_path / solutions.solution_key("original", "draw-then-recycle").name
    rolls = folder / "rolls.npy"
    raw = bytearray(rolls.read_bytes())
    raw[-3] ^= 0x40
    rolls.write_bytes(bytes(raw))
    response = client.get("/v1/odds?recycle=draw-then-recycle&footprints=green,red&brains=yellow")
    assert response.status_code == 503  # moved aside and built again, never read
    assert folder.with_name(folder.name + ".corrupt").is_dir()


def test_a_build_this_machine_cannot_hold_is_not_started_and_says_what_it_needs(
        client: FlaskClient, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build that takes more memory than is available is refused before it starts (the kernel would kill it
    midway): its job fails saying what it needs, and a question it would answer is a 503 that says so, asking for
    the build again (the memory may be there by then)."""
    monkeypatch.setenv("ZOMBIE_ODDS_SOLUTIONS", str(tmp_path))
    with pytest.raises(solutions.NotEnoughMemory, match=r"takes up to 6\.0 GiB .* may take 4\.0 GiB \(ZOMBIE"):
        solutions.build_and_store("direct-to-video-sequel", "before-draw", True)  # (tests/conftest.py's limit)
    monkeypatch.delenv("ZOMBIE_ODDS_BUILD_MEMORY")
    monkeypatch.setattr(solutions, "available_memory", lambda: 2**30)
    with pytest.raises(solutions.NotEnoughMemory, match=r"takes up to 6\.0 GiB .* has 1\.0 GiB available"):
        solutions.build_and_store("direct-to-video-sequel", "before-draw", True)
    assert not solutions.store().has_arrays(solutions.solution_key("direct-to-video-sequel", "before-draw", True))
    job = client.get("/v1/solutions/solution-direct-to-video-sequel-bus-before-draw-v1").get_json()
    assert job["state"] == "failed" and "6.0 GiB" in job["error"]
    asked: list[object] = []
    monkeypatch.setattr(solutions, "build_in_background", asked.append)  # (no child that would build it here)
    answer = client.get("/v1/odds?mode=direct-to-video-sequel&school_bus=true&footprints=green&brains=green,yellow")
    assert answer.status_code == 503 and answer.mimetype == "application/problem+json"
    assert "its last build failed" in answer.get_json()["detail"] and "6.0 GiB" in answer.get_json()["detail"]
    assert asked == [("direct-to-video-sequel", "before-draw", True)]


def test_available_memory_is_what_the_kernel_says() -> None:
    with open("/proc/meminfo") as f:
        total = int(next(line for line in f if line.startswith("MemTotal:")).split()[1]) * 1024
    assert 0 < solutions.available_memory() <= total


@pytest.fixture
def solutions_in_store(store_dir, monkeypatch):
    """Solutions kept in the store itself (their default), for the server and a worker started after this."""
    monkeypatch.delenv("ZOMBIE_ODDS_SOLUTIONS")


def test_a_real_worker_builds_a_missing_solution_the_api_asked_for(solutions_in_store, worker):
    """With REDIS_URL, a server missing a solution queues its build for the workers (503 meanwhile); a worker builds
    it into the shared store, and the server then answers from it."""
    from api import create_app
    from workers import solutions

    client = create_app({"TESTING": True}).test_client()
    url = "/v1/odds?mode=original&recycle=draw-then-recycle&footprints=green,red&brains=yellow"
    first = client.get(url)
    assert first.status_code == 503 and first.headers["Retry-After"]
    job = first.get_json()["job"]
    deadline = time.time() + 300
    while (state := client.get(job).get_json()["state"]) != "built":
        assert state in ("queued", "building") and time.time() < deadline, state
        assert worker.poll() is None, "the worker died"
        time.sleep(0.3)
    assert client.get(url).status_code == 200
    assert solutions.store().writes(solutions.solution_key("original", "draw-then-recycle")) == 1
