"""api/answers.py: the answer of a position and objective, read from the mode's stored solution (positions reached by
play and after a recycle, in every mode; one value without a score distribution; exact values where they fit a
request) or computed; shared through the store by every worker, computed once when two ask at once; and computed by
a job where it takes long, never for long by a request: one no stored solution holds, and one read from a stored
solution whose score distribution flows long."""

from __future__ import annotations

import random
import threading
import time
from fractions import Fraction
from pathlib import Path

import pytest
from flask.testing import FlaskClient

import api.answers
from analysis import MODES, ExpectedBrains, Position, Reach, next_roll
from analysis.simulate import random_position
from api import answers, create_app
from api.errors import ApiError

# (an objective that no stored solution answers: expected brains is read from one, never computed here)
BODY = {"footprints": ["green", "red"], "brains": ["green"], "shotguns": ["red"], "objective": "reach:3"}


def query(position: Position) -> str:
    fields = {"mode": position.mode, "recycle": position.recycle, "banked": position.banked}
    for name in ("footprints", "brains", "shotguns", "double_brains", "double_shotguns", "effects", "kept_out"):
        if getattr(position, name):
            fields[name] = ",".join(getattr(position, name))
    return "&".join(f"{k}={v}" for k, v in fields.items())


def test_the_request_s_objective_is_read_once_as_its_type() -> None:
    """position_from parses the objective into its type, which the answer then takes as it is; a 422 names the
    position's faults, then the objective's."""
    position, objective = answers.position_from(BODY)
    assert position == Position(footprints=("green", "red"), brains=("green",), shotguns=("red",))
    assert objective == Reach(3) and answers.position_from({})[1] == ExpectedBrains()
    with pytest.raises(ApiError) as info:
        answers.position_from({"shotguns": ["red"] * 3, "objective": "rule:0,1"})
    assert info.value.status == 422 and [e.field for e in info.value.errors] == ["shotguns", "objective"]
    assert answers.read_position({"shotguns": ["red"] * 3})[0] is None


@pytest.mark.parametrize("mode", list(MODES))
def test_positions_reached_by_play_are_answered_from_the_stored_solution(client: FlaskClient, mode: str,
                                                                         sequel_solutions: object) -> None:
    rng = random.Random(7)
    for _ in range(25):
        position = random_position(mode, rng, recycle=rng.choice(["before-draw", "draw-then-recycle"]))
        response = client.get(f"/v1/odds?{query(position)}")
        assert response.status_code == 200, response.get_json()
        body = response.get_json()
        exact = next_roll(position)
        assert body["next_roll"]["bust"]["exact"] == f"{exact.bust.numerator}/{exact.bust.denominator}"
        roll = body["decision"]["roll"]
        assert set(roll) == {"value", "within"} and roll["within"] > 0
        distribution = body["turn"]["score_distribution"]
        assert abs(sum(p["value"] for p in distribution) - 1) <= body["turn"]["within"]
        assert body["decision"]["action"] in ("roll", "stop", "tie")


@pytest.mark.parametrize("bus", [False, True])
def test_one_value_answers_flow_no_score_distribution(client: FlaskClient, monkeypatch: pytest.MonkeyPatch,
                                                      bus: bool) -> None:
    """`/v1/advice.txt` and `/v1/odds.txt` show one value: read from the stored solution, they take no score
    distribution, the one part of an answer that is not a lookup (seconds early in a long turn). `/v1/odds` has it."""
    from analysis.bus_solutions import StoredBusTurn
    from analysis.solutions import StoredTurn

    flows = []
    for turn in (StoredTurn, StoredBusTurn):
        def counted(*args: object, flow=turn.score_distribution) -> object:
            flows.append(args)
            return flow(*args)
        monkeypatch.setattr(turn, "score_distribution", counted)
    answers.from_solution.cache_clear()  # (stored answers are memoised)
    position = "mode=santa-claus-meets-the-zombies&footprints=yellow&brains=green,red&shotguns=green"
    position += "&school_bus=true&bus_brains=1&riding=true" if bus else ""
    assert client.get(f"/v1/advice.txt?{position}").status_code == 200
    values = {field: float(client.get(f"/v1/odds.txt?{position}&field={field}").text) for field in ("roll", "stop")}
    assert flows == []
    expected = client.get(f"/v1/odds?{position}").get_json()
    assert len(flows) == 1 and expected["turn"]["score_distribution"]
    assert client.get(f"/v1/advice.txt?{position}").text == expected["decision"]["action"]
    assert values == {field: expected["decision"][field]["value"] for field in ("roll", "stop")}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("recycle", ["before-draw", "draw-then-recycle"])
def test_positions_after_a_recycle_are_answered(client: FlaskClient, mode: str, recycle: str,
                                               sequel_solutions: object) -> None:
    """The cup ran out: the brain dice went back and their brains were noted (`banked`)."""
    rng = random.Random(3)
    for _ in range(2000):
        position = random_position(mode, rng, recycle=recycle, go_on=0.97)
        if position.banked:
            break
    else:
        pytest.fail("no recycle in 2000 turns")
    response = client.get(f"/v1/odds?{query(position)}")
    assert response.status_code == 200, response.get_json()
    assert Fraction(response.get_json()["next_roll"]["bust"]["exact"]) == next_roll(position).bust


def test_exact_values_where_they_fit_a_request_and_a_422_naming_exact_elsewhere(client: FlaskClient) -> None:
    base = "footprints=green,red&brains=green&shotguns=red"
    floats = client.get(f"/v1/odds?{base}").get_json()
    exact = client.get(f"/v1/odds?{base}&exact=true").get_json()
    assert set(exact["decision"]["roll"]) == {"exact", "value"}
    assert abs(exact["decision"]["roll"]["value"] - floats["decision"]["roll"]["value"]) \
        <= floats["decision"]["roll"]["within"]
    assert exact["decision"]["action"] == floats["decision"]["action"]
    refused = client.get("/v1/odds?mode=santa-claus-meets-the-zombies&footprints=green,yellow&brains=green&exact=true")
    assert refused.status_code == 422 and refused.get_json()["errors"][0]["field"] == "exact"
    posted = client.post("/v1/odds", json={"footprints": ["green", "red"], "brains": ["green"], "shotguns": ["red"],
                                           "exact": True})
    assert posted.status_code == 200 and posted.get_json() == exact


@pytest.mark.parametrize("school_bus", [False, True])
def test_a_position_no_turn_reaches_is_a_422_naming_footprints(client: FlaskClient, school_bus: bool) -> None:
    """One footprint and one brain: the third die of the first roll is nowhere. The position's own checks let it
    through in a Double Feature mode; the stored solution has no such state: a 422 naming `footprints`, not a 500."""
    query = {"mode": "big-summer-action-movie", "footprints": "green", "brains": "green", "school_bus": school_bus}
    response = client.get("/v1/odds", query_string={k: str(v).lower() for k, v in query.items()})
    assert response.status_code == 422, response.get_json()
    assert [e["field"] for e in response.get_json()["errors"]] == ["footprints"]


# -- shared by every worker, computed once -------------------------------------------------------


def test_two_workers_asked_one_answer_at_once_compute_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second worker asked for an answer another is computing waits on the answer's lock and serves what the
    first stored, instead of computing it again (a Santa turn start: 4 to 20 minutes and GBs each)."""
    import threading

    import api.answers

    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    compute, calls, started = api.answers.compute, [], threading.Event()

    def slow(*args: object) -> object:
        calls.append(args)
        started.set()
        time.sleep(0.5)  # long enough for the second worker to ask meanwhile
        return compute(*args)

    monkeypatch.setattr(api.answers, "compute", slow)
    workers = [create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 0}).test_client() for _ in range(2)]
    answers: list[dict] = []
    # (an objective that no stored solution answers: expected brains is read from one, never computed here)
    body = {"footprints": ["green", "yellow"], "brains": ["red"], "shotguns": ["yellow"], "objective": "reach:3"}
    first = threading.Thread(target=lambda: answers.append(workers[0].post("/v1/odds", json=body).json))
    first.start()
    assert started.wait(30)
    answers.append(workers[1].post("/v1/odds", json=body).json)
    first.join()
    assert len(calls) == 1 and answers[0] == answers[1] and answers[0]["decision"]["action"] in ("roll", "stop")
    assert list((tmp_path / "locks").iterdir()) == []


def test_a_slow_answer_is_stored_for_every_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gunicorn's workers each keep their own caches: an answer that took `SHARE_ANSWERS_AFTER` seconds is put
    in the store, and another worker (another app, which cannot compute) serves it in every form; a copy that
    fails its checksum is moved aside and computed again; a quicker answer is not stored."""
    import api.answers
    from analysis import Position
    from workers.store import Store

    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))
    # (an objective that no stored solution answers: expected brains is read from one, never computed here)
    store, query = Store(tmp_path), "footprints=green,red&brains=green&shotguns=red&objective=reach:3"
    key = api.answers.answer_key(Position(footprints=("green", "red"), brains=("green",), shotguns=("red",)), Reach(3))
    expected = create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 0}).test_client().get(f"/v1/odds?{query}").json
    assert store.get(key)[0] == expected and store.writes(key) == 1

    compute = api.answers.compute
    monkeypatch.setattr(api.answers, "compute", lambda *args: pytest.fail("computed again"))
    other = create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 0}).test_client()
    assert other.post("/v1/odds", json={"footprints": ["green", "red"], "brains": ["green"],
                                        "shotguns": ["red"], "objective": "reach:3"}).json == expected
    assert other.get(f"/v1/odds.txt?{query}&field=bust&exact=true").text == expected["next_roll"]["bust"]["exact"]
    assert other.get(f"/v1/odds?{query}&format=csv").status_code == 200

    (tmp_path / f"{key.name}.json").write_text("{}")
    monkeypatch.setattr(api.answers, "compute", compute)
    assert other.get(f"/v1/odds?{query}").json == expected
    assert (tmp_path / f"{key.name}.corrupt").exists() and store.get(key)[0] == expected and store.writes(key) == 2

    slow_only = create_app({"TESTING": True, "SHARE_ANSWERS_AFTER": 60}).test_client()
    assert slow_only.get(f"/v1/odds?{query.replace('reach:3', 'reach:2')}").status_code == 200
    assert store.get(api.answers.answer_key(Position(footprints=("green", "red"), brains=("green",),
                                                  shotguns=("red",)), Reach(2))) is None


# -- long answers are jobs ------------------------------------------------------------------------


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
    assert job.rsplit("/", 1)[1] == api.answers.answer_key(position, ExpectedBrains(), stored=True).name
    assert api.answers.answer_key(position, ExpectedBrains()) != api.answers.answer_key(position, ExpectedBrains(),
                                                                                          stored=True)


def _question():
    from analysis import Position
    return Position(footprints=("green", "red"), brains=("green",), shotguns=("red",)), Reach(3)


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
    assert given == [True]  # (the job gives back before it ends: the request had its answer from the ended job)
