"""/v1/odds from the stored solutions, and /v1/solutions: built by a real child process, mapped, never corrupt."""

from __future__ import annotations

import random
import time
from fractions import Fraction

import pytest
from flask.testing import FlaskClient

from analysis import MODES, Position, next_roll
from analysis.simulate import random_position
from api import answers
from workers import solutions


def query(position: Position) -> str:
    fields = {"mode": position.mode, "recycle": position.recycle, "banked": position.banked}
    for name in ("footprints", "brains", "shotguns", "double_brains", "double_shotguns", "effects", "kept_out"):
        if getattr(position, name):
            fields[name] = ",".join(getattr(position, name))
    return "&".join(f"{k}={v}" for k, v in fields.items())


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


def test_the_solutions_list_names_every_combination(client: FlaskClient) -> None:
    listed = client.get("/v1/solutions").get_json()["solutions"]
    assert {(s["mode"], s["recycle"], s["school_bus"]) for s in listed} == set(solutions.combinations())
    assert len(listed) == 16  # 4 modes x 2 variants x bus or not
    assert client.get("/v1/solutions/no-such-job").status_code == 404


@pytest.mark.parametrize("school_bus", [False, True])
def test_a_position_no_turn_reaches_is_a_422_naming_footprints(client: FlaskClient, school_bus: bool) -> None:
    """One footprint and one brain: the third die of the first roll is nowhere. The position's own checks let it
    through in a Double Feature mode; the stored solution has no such state: a 422 naming `footprints`, not a 500."""
    query = {"mode": "big-summer-action-movie", "footprints": "green", "brains": "green", "school_bus": school_bus}
    response = client.get("/v1/odds", query_string={k: str(v).lower() for k, v in query.items()})
    assert response.status_code == 422, response.get_json()
    assert [e["field"] for e in response.get_json()["errors"]] == ["footprints"]


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
