"""analysis/dice.py: the dice and modes as data (faces, cups, the School Bus die), so that a mode made of existing dice
is one row, served end to end."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient

from analysis import MODES, Mode, Position, next_roll
from analysis.dice import (
    BRAIN,
    BUS,
    DICE,
    DOUBLE_BRAIN,
    DOUBLE_SHOTGUN,
    ENERGY_DRINK,
    FOOTPRINTS,
    GIFT,
    HELMET,
    SHOTGUN,
)
from api import create_app, spec
from api.cli import main
from workers import solutions
from workers.tables import join, key_for_job

BSAM, SANTA, DTV = "big-summer-action-movie", "santa-claus-meets-the-zombies", "direct-to-video-sequel"
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
    """Its dice, its solutions (built as every builder builds them), odds read from them with the next roll exact (on
    the command line too, where it is a choice of --mode), and its full-game table computed as a job: no other file
    names the mode."""
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
    command = CliRunner().invoke(main, ["odds", "--mode", MINI.name, "--footprints", "red", "--brains", "green,yellow",
                                        "--shotguns", "red", "--json"])
    assert command.exit_code == 0, command.output
    assert json.loads(command.output) == answer
    assert f"|{MINI.name}]" in CliRunner().invoke(main, ["odds", "--help"]).output
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


# -- the dice of each mode -------------------------------------------------------------------------------------------
def test_special_dice_faces():
    hunk, hottie, santa = DICE["hunk"], DICE["hottie"], DICE["santa"]
    assert hunk.face_probabilities == {FOOTPRINTS: Fraction(2, 6), SHOTGUN: Fraction(2, 6),
                                       DOUBLE_SHOTGUN: Fraction(1, 6), DOUBLE_BRAIN: Fraction(1, 6)}
    assert hottie.face_probabilities == {FOOTPRINTS: Fraction(3, 6), SHOTGUN: Fraction(2, 6), BRAIN: Fraction(1, 6)}
    assert set(santa.faces) == {BRAIN, SHOTGUN, FOOTPRINTS, GIFT, ENERGY_DRINK, HELMET}
    assert santa.stays_out and not hunk.stays_out


@pytest.mark.parametrize(("mode", "cup"), [
    ("original", {"green": 6, "yellow": 4, "red": 3}),
    (BSAM, {"green": 6, "yellow": 2, "red": 3, "hunk": 1, "hottie": 1}),
    (SANTA, {"green": 5, "yellow": 4, "red": 3, "santa": 1}),
    (DTV, {"green": 5, "yellow": 2, "red": 3, "hunk": 1, "hottie": 1, "santa": 1}),
])
def test_mode_cups(mode, cup):
    assert dict(MODES[mode].cup) == cup and MODES[mode].total_dice == 13
    assert MODES[mode].plain == (mode == "original")
    assert Position(mode=mode).cup == cup


def test_bus_die_faces():
    p = BUS.face_probabilities
    assert len(BUS.faces) == 12 and sum(p.values()) == 1
    assert sum(q for f, q in p.items() if f.brains and not f.shotguns) == Fraction(4, 12)
    assert sum(f.brains * q for f, q in p.items()) == Fraction(1 + 1 + 2 + 3 + 1 + 2, 12)
    assert sum(f.shotguns * q for f, q in p.items()) == Fraction(1 + 2 + 1 + 1, 12)
    assert {f.effect for f in BUS.faces if f.effect} == {"stop", "yield", "dead-end", "tyre-tracks"}
    assert "bus" not in MODES["original"].die_names  # it never goes into the cup
