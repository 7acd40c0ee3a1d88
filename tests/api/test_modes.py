"""api/modes.py: /v1/modes lists the modes the API serves, each with its dice, their faces, effects and rescues, as
analysis' own data."""

from __future__ import annotations

from fractions import Fraction

from flask.testing import FlaskClient

from analysis import EFFECTS, MODES
from api.modes import served


def test_modes_list_every_die_and_face(client: FlaskClient) -> None:
    modes = client.get("/v1/modes").get_json()["modes"]
    assert [m["name"] for m in modes] == [m.name for m in served()]
    original = modes[0]
    assert original["bust_at"] == 3 and original["dice_per_roll"] == 3
    assert {d["name"]: d["count"] for d in original["dice"]} == {"green": 6, "yellow": 4, "red": 3}
    faces = {"green": (3, 1, 2), "yellow": (2, 2, 2), "red": (1, 3, 2)}  # brains, shotguns, footprints
    for die in original["dice"]:
        assert len(die["faces"]) == 6
        counts = tuple(sum(f[k] for f in die["faces"]) for k in ("brains", "shotguns", "footprints"))
        assert counts == faces[die["name"]]


def test_modes_are_analysis_data(client: FlaskClient) -> None:
    modes = {m["name"]: m for m in client.get("/v1/modes").get_json()["modes"]}
    assert list(modes) == list(MODES)
    for name, mode in MODES.items():
        served = modes[name]
        assert (served["title"], served["bust_at"], served["dice_per_roll"]) == (mode.title, mode.bust_at,
                                                                                 mode.dice_per_roll)
        assert [(d["name"], d["count"]) for d in served["dice"]] == list(mode.cup)
        for die, data in zip(mode.dice, served["dice"]):
            assert data["colour"] == die.colour and data["stays_out"] == die.stays_out
            assert [(f["name"], f["brains"], f["shotguns"], f["footprints"], f["effect"]) for f in data["faces"]] == [
                (f.name, f.brains, f.shotguns, f.footprints, f.effect) for f in die.faces]
            counts = {f["name"]: f["count"] for f in data["face_counts"]}
            assert sum(counts.values()) == len(die.faces)
            assert all(Fraction(n, len(die.faces)) == die.probability(face) for face, n in counts.items())
        shown = {f.effect for d in mode.dice for f in d.faces}
        assert served["effects"] == [{"name": e.name, "bust_bonus": e.bust_bonus, "converts": list(e.converts)}
                                     for e in EFFECTS.values() if e.name in shown]
        assert [(r["rescuer"], r["rescued"]) for r in served["rescues"]] == list(mode.rescues)
