"""analysis/dice.py: rules as data, so that a mode made of existing dice is one row, served end to end."""

from __future__ import annotations

import time
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from analysis import MODES, Mode, Position, next_roll
from api import create_app, spec
from workers import solutions
from workers.tables import join, key_for_job

MINI = Mode("mini", "Zombie Dice for the impatient", (("green", 3), ("yellow", 2), ("red", 2)))


def test_every_mode_is_listed_by_the_spec_as_it_is_written() -> None:
    """openapi.yaml's one list of modes (`enum: &modes`, every other mode enum an alias of it) is the modes'."""
    written = spec.MODES_LIST.search(spec.SPEC_PATH.read_text(encoding="utf-8"))
    assert written is not None and written[0].split("[")[1].rstrip("]").split(", ") == list(MODES)


@pytest.fixture
def mini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FlaskClient]:
    """A server of a store of its own, after one row was added to `MODES` at run time."""
    monkeypatch.setitem(MODES, MINI.name, MINI)
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("ZOMBIE_ODDS_SOLUTIONS", str(tmp_path / "solutions"))
    monkeypatch.setenv("ZOMBIE_ODDS_EMBEDDED_TABLES", f"original,{MINI.name}")
    for cached in (spec.load, spec.openapi):  # the spec is read once per process: read it again with the new row
        cached.cache_clear()
    yield create_app({"TESTING": True}).test_client()
    for cached in (spec.load, spec.openapi):
        cached.cache_clear()


def test_a_mode_added_as_one_row_is_served_end_to_end(mini: FlaskClient) -> None:
    """Its dice, its solutions (built as every builder builds them), odds read from them with the next roll exact,
    and its full-game table computed as a job: no other file names the mode."""
    assert MINI.name in [m["name"] for m in mini.get("/v1/modes").get_json()["modes"]]
    listed = {(s["mode"], s["recycle"], s["school_bus"]): s for s in mini.get("/v1/solutions").get_json()["solutions"]}
    assert {c for c in listed if c[0] == MINI.name} == {(MINI.name, r, b) for r in ("before-draw", "draw-then-recycle")
                                                       for b in (False, True)}
    for bus in (False, True):
        solutions.build_and_store(MINI.name, "before-draw", bus)
        assert mini.get(f"/v1/solutions/{solutions.job_id(MINI.name, 'before-draw', bus)}").get_json()["state"] \
            == "built"

    asked = {"mode": MINI.name, "footprints": ["red"], "brains": ["green", "yellow"], "shotguns": ["red"]}
    r = mini.post("/v1/odds", json=asked)
    assert r.status_code == 200, r.get_json()
    answer = r.get_json()
    position = Position(mode=MINI.name, footprints=("red",), brains=("green", "yellow"), shotguns=("red",))
    exact = next_roll(position)
    assert Fraction(answer["next_roll"]["bust"]["exact"]) == exact.bust  # 1 red, 2 more from 2 green, 2 yellow
    assert answer["decision"]["action"] in ("roll", "stop", "tie")
    assert abs(sum(p["value"] for p in answer["turn"]["score_distribution"]) - 1) < 1e-9
    r = mini.post("/v1/odds", json={**asked, "school_bus": True})
    assert r.status_code == 200, r.get_json()

    first = mini.post(f"/v1/tables/{MINI.name}/jobs", json={"variant": "before-draw"})
    assert first.status_code == 202
    job, deadline = first.headers["Location"], time.time() + 300
    while (state := mini.get(job).get_json())["state"] in ("queued", "running") and time.time() < deadline:
        time.sleep(0.2)
    join(key_for_job(job.rsplit("/", 1)[1]))
    assert state["state"] == "succeeded", state
    table = mini.get(f"/v1/tables/{MINI.name}").get_json()
    assert 0.4 < table["p_first_player_wins"] < 0.6
    r = mini.get(f"/v1/odds?mode={MINI.name}&footprints=red&brains=green,yellow&shotguns=red&scores=5,9&seat=2")
    assert r.status_code == 200 and 0 < r.get_json()["decision"]["roll"]["value"] < 1
