"""api/answers.py: an answer is computed by a job where it takes long, never for long by a request: one no stored
solution holds, and one read from a stored solution whose score distribution flows long."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import api.answers
from api import create_app

# (an objective that no stored solution answers: expected brains is read from one, never computed here)
BODY = {"footprints": ["green", "red"], "brains": ["green"], "shotguns": ["red"], "objective": "reach:3"}


def test_a_long_answer_is_a_job_its_503_names_then_serves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `ANSWER_WAIT` the request is a 503 with Retry-After naming the job; the job goes on, stores the answer,
    and serves it, as the question asked again does (in any process sharing the store), computed once."""
    from workers.store import Store

    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    expected = create_app({"TESTING": True}).test_client().post("/v1/odds", json=BODY).get_json()  # (not stored)
    compute, release, calls = api.answers.compute, threading.Event(), []

    def slow(*args):  # a solve that outlasts the request's wait, until the test lets it end
        calls.append(args)
        assert release.wait(60)
        return compute(*args)

    monkeypatch.setattr(api.answers, "compute", slow)
    client = create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 0, "ANSWER_WAIT": 0.2}).test_client()
    first = client.post("/v1/odds", json=BODY)
    assert first.status_code == 503 and first.headers["Retry-After"] == str(api.answers.RETRY_AFTER)
    job = first.get_json()["job"]
    assert job.startswith("/v1/answers/answer--original--") and job.rsplit("/", 1)[1] in first.get_json()["detail"]
    assert client.get(job).status_code == 503  # still computing
    assert client.post("/v1/odds", json=BODY).status_code == 503  # asked again meanwhile: the same job waited for
    release.set()
    deadline = time.time() + 60
    while (done := client.get(job)).status_code == 503 and time.time() < deadline:
        time.sleep(0.05)
    assert done.status_code == 200 and done.get_json() == expected
    assert client.post("/v1/odds", json=BODY).get_json() == expected
    monkeypatch.setattr(api.answers, "compute", lambda *args: pytest.fail("computed again"))
    other = create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 0, "ANSWER_WAIT": 0.2}).test_client()
    assert other.post("/v1/odds", json=BODY).get_json() == expected
    assert len(calls) == 1 and Store(tmp_path).writes(api.answers.answer_key(*_question())) == 1


def test_a_long_flow_from_a_stored_solution_is_a_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An answer read from the mode's stored solution is lookups, but its score distribution is a flow over the rest
    of the turn (seconds early in the longest turns): past `ANSWER_WAIT`, a 503 naming the job, which stores it
    (under its own name: a float answer, not the one solved for the question)."""
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    question = {key: value for key, value in BODY.items() if key != "objective"}  # expected brains: stored
    expected = create_app({"TESTING": True}).test_client().post("/v1/odds", json=question).get_json()
    assert "within" in expected["turn"]  # (read from the stored solution, in floats)
    answer_from, release = api.answers.answer_from, threading.Event()

    def slow(*args, **kwargs):
        assert release.wait(60)
        return answer_from(*args, **kwargs)

    monkeypatch.setattr(api.answers, "answer_from", slow)
    api.answers.from_solution.cache_clear()
    client = create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 0, "ANSWER_WAIT": 0.2}).test_client()
    first = client.post("/v1/odds", json=question)
    assert first.status_code == 503, first.get_json()
    release.set()
    deadline, job = time.time() + 60, first.get_json()["job"]
    while (done := client.get(job)).status_code == 503 and time.time() < deadline:
        time.sleep(0.05)
    assert done.status_code == 200 and done.get_json() == expected
    position, _ = _question()
    assert job.rsplit("/", 1)[1] == api.answers.answer_key(position, "expected-brains", stored=True).name
    assert api.answers.answer_key(position, "expected-brains") != api.answers.answer_key(position, "expected-brains",
                                                                                            stored=True)


def _question():
    from analysis import Position
    return Position(footprints=("green", "red"), brains=("green",), shotguns=("red",)), "reach:3"


def test_a_quick_answer_is_given_by_the_request_and_not_stored(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from workers.store import Store

    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    client = create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 30, "ANSWER_WAIT": 20}).test_client()
    r = client.post("/v1/odds", json=BODY)
    assert r.status_code == 200 and r.get_json()["decision"]["objective"] == "reach:3"
    assert api.answers.answer_key(*_question()) not in Store(tmp_path)


def test_an_answer_no_job_computes_is_not_found(client) -> None:
    r = client.get("/v1/answers/answer--original--before-draw--p1--v1--" + "0" * 40)
    assert r.status_code == 404 and "ask the question again" in r.get_json()["detail"]
    assert client.get("/v1/answers/answer--no--such").status_code == 404


def test_an_answer_job_gives_freed_memory_back_as_it_ends(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    given: list[bool] = []
    monkeypatch.setattr(api.answers, "give_back", lambda: given.append(True))
    client = create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 0, "ANSWER_WAIT": 30}).test_client()
    assert client.get("/v1/odds?objective=reach:2&footprints=green&brains=green&shotguns=red").status_code == 200
    for _ in range(100):  # (the job's thread gives back, then ends, as the request reads its answer)
        if not api.answers.running():
            break
        time.sleep(0.05)
    assert given == [True]
