"""The game review (analysis/review.py, api/review.py): whole games played with physical dice, reviewed.

Games are played with analysis.simulate's physical dice (a cup, a hand, two piles) and written down
as a scorekeeper would; the review replays them through analysis.roll and prices every decision. The
two-player table is solved once per run (`tests.games.solved_game`) and stored in a temporary store.
Double Feature games are played with the simulation's own rules of the expansion (rescues, Santa),
an implementation independent of roll.py's, and replayed position by position.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from flask.testing import FlaskClient

from analysis import MODES, Position, odds
from analysis.exact import exact_turn
from analysis.game import GameSolution, policy_table
from analysis.game.play import dice_state_index, fresh_turn
from analysis.objectives import ExpectedBrains
from analysis.review import MISTAKE_TOL, GameLog, LogError, replay, review
from analysis.simulate import Turn, _busted, _double_feature_effects, _settle, _take_dice, roll_once
from analysis.table import table_for
from api.review import MAX_SOLVES, unpriced
from workers.shared import store
from workers.tasks import table_key

from .games import solved_game

GOAL = 13
# chooser(seat, scores at the start of the turn, dice state index, turn total) -> True to roll again
Chooser = Callable[[int, tuple[int, ...], int, int], bool]


def logged_roll(turn: Turn, rng: random.Random) -> list[dict[str, str]]:
    """Roll the physical dice once and write down what every die rolled showed."""
    brains, shotguns, banked = len(turn.brains), len(turn.shotguns), turn.banked
    roll_once(turn, rng)
    new_brains = turn.brains if turn.banked != banked else turn.brains[brains:]  # a recycling empties the pile
    faces = [(d, "footprints") for d in turn.hand] + [(d, "brain") for d in new_brains]
    dice = [{"colour": d, "face": f} for d, f in faces + [(d, "shotgun") for d in turn.shotguns[shotguns:]]]
    rng.shuffle(dice)
    return dice


def play_log(choose: Chooser, rng: random.Random, names: tuple[str, ...] = ("Ann", "Bob"),
             recycle: str = "before-draw") -> dict:
    """A whole game to its end (RULES.md: the round is completed, tied leaders play tie-break rounds)."""
    scores, order, turns = [0] * len(names), list(range(len(names))), []
    while True:
        for seat in order:
            turn = fresh_turn("original", recycle)
            rolls = [{"dice": logged_roll(turn, rng)}]
            while not turn.bust:
                if not choose(seat, tuple(scores), dice_state_index(turn), turn.score):
                    rolls[-1]["then"] = "stop"
                    break
                rolls.append({"dice": logged_roll(turn, rng)})
            scores[seat] += turn.score
            turns.append({"player": names[seat], "rolls": rolls})
        if max(scores) >= GOAL:
            best = max(scores[s] for s in order)
            order = [s for s in order if scores[s] == best]
            if len(order) == 1:
                return {"mode": "original", "recycle": recycle, "players": list(names), "turns": turns}


@pytest.fixture(scope="module")
def solution() -> GameSolution:
    return solved_game("original")


@pytest.fixture(scope="module")
def table_dir(solution: GameSolution, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A store holding the two-player table, as the workers would leave it."""
    root = tmp_path_factory.mktemp("store")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOMBIE_ODDS_STORE", str(root))
        store().put(table_key("original", "before-draw", 2), solution.to_dict())
    return root


@pytest.fixture
def with_table(table_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(table_dir))


@pytest.fixture
def without_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOMBIE_ODDS_STORE", str(tmp_path))


def optimal(solution: GameSolution) -> Chooser:
    """The optimal two-player policy, from the batched decisions of analysis.game.play (not from
    `GameSolution.decision`, which the review uses)."""
    table = policy_table(solution)

    def choose(seat: int, scores: tuple[int, ...], state: int, total: int) -> bool:
        return table(seat + 1, scores[seat], scores[1 - seat], state, total)

    return choose


@pytest.fixture(scope="module")
def optimal_game(solution: GameSolution) -> dict:
    return play_log(optimal(solution), random.Random(5))


@pytest.fixture(scope="module")
def timid_game(solution: GameSolution) -> dict:
    """Ann plays optimally; Bob always stops after the first roll of his turn."""
    best = optimal(solution)
    return play_log(lambda seat, scores, state, total: seat == 0 and best(seat, scores, state, total),
                    random.Random(11))


# -- analysis.review ----------------------------------------------------------------------------------


def test_an_optimal_game_costs_nothing(optimal_game: dict, solution: GameSolution) -> None:
    r = review(GameLog.from_dict(optimal_game), solution)
    assert r.measure == "win-probability" and r.reason == ""
    assert r.replay.finished and r.replay.scores[r.replay.winner] >= GOAL
    assert len(r.decisions) > 10
    assert all(d.cost < MISTAKE_TOL and not d.mistake for d in r.decisions)
    assert [t.mistakes for t in r.totals] == [0, 0]
    assert sum(t.decisions for t in r.totals) == len(r.decisions)
    assert sum(t.turns for t in r.totals) == len(optimal_game["turns"])


def test_a_bad_choice_costs_the_difference_of_win_probability(timid_game: dict, solution: GameSolution) -> None:
    r = review(GameLog.from_dict(timid_game), solution)
    ann, bob = r.totals
    assert ann.mistakes == 0 and bob.mistakes > 0 and bob.cost > 0.05
    for d in r.decisions:
        step = d.step
        expected = solution.decision(step.seat + 1, step.scores[step.seat], step.scores[1 - step.seat],
                                     table_for("original").index[step.position.state], step.position.score)
        assert (d.best, d.roll, d.stop) == expected
        if step.seat == 1:
            assert d.chosen == "stop"
            assert d.cost == (expected.p_win_roll - expected.p_win_stop if expected.action == "roll" else 0.0)
    assert bob.cost == sum(d.cost for d in r.decisions if d.step.seat == 1)


def test_without_a_table_the_measure_is_expected_brains(timid_game: dict) -> None:
    r = review(GameLog.from_dict(timid_game), None, "no table here")
    assert r.measure == "expected-brains" and r.reason == "no table here"
    exact = exact_turn("original", "before-draw", ExpectedBrains())
    for d in r.decisions:
        assert d.best == exact.decision(table_for("original").index[d.step.position.state], d.step.position.score)
        assert d.cost >= 0 and d.mistake == (d.cost > MISTAKE_TOL)
    # the values are analysis.odds' own, checked on one decision with a shotgun (cheap to compute exactly)
    d = next(d for d in r.decisions if d.step.position.shotguns and d.step.position.score)
    decision = odds(d.step.position, "expected-brains").decision
    assert d.roll == pytest.approx(float(decision.roll), abs=1e-9)
    assert d.stop == float(decision.stop)


def test_an_expected_brains_player_costs_nothing_without_a_table() -> None:
    exact = exact_turn("original", "before-draw", ExpectedBrains())
    log = play_log(lambda seat, scores, state, total: exact.decision(state, total) == "roll", random.Random(3),
                   names=("Ann", "Bob", "Cy"))
    r = review(GameLog.from_dict(log))
    assert r.measure == "expected-brains" and r.reason.startswith("3 players")
    assert len(r.decisions) > 10 and all(d.cost == 0 for d in r.decisions)
    assert r.replay.finished and [t.name for t in r.totals] == ["Ann", "Bob", "Cy"]


def recycling_turn(fifth: list[tuple[str, str]], recycle: str) -> dict:
    """Twelve brains in four rolls (one red die left in the cup), then a fifth roll: the cup runs out."""
    rolls = [[("green", "brain")] * 3, [("green", "brain")] * 3, [("yellow", "brain")] * 3,
             [("yellow", "brain"), ("red", "brain"), ("red", "brain")], fifth]
    return {"recycle": recycle, "players": 2, "turns": [{"player": 1, "rolls": [
        {"dice": [{"colour": c, "face": f} for c, f in dice]} for dice in rolls]}]}


def test_running_out_of_dice_follows_the_variant() -> None:
    three_greens = [("green", "brain"), ("green", "footprints"), ("green", "shotgun")]
    log = recycling_turn(three_greens, "before-draw")
    log["turns"][0]["rolls"][-1]["then"] = "stop"
    steps = replay(GameLog.from_dict(log)).steps
    assert steps[-1].position == Position(footprints=("green",), brains=("green",), shotguns=("green",), banked=12)
    assert replay(GameLog.from_dict(log)).scores == (13, 0)
    # draw-then-recycle: the last red die of the cup is taken first
    with pytest.raises(LogError) as e:
        replay(GameLog.from_dict({**log, "recycle": "draw-then-recycle"}))
    assert e.value.errors[0].field == "turns[0].rolls[4].dice" and "draw-then-recycle" in e.value.errors[0].reason
    log = recycling_turn([("red", "brain"), ("green", "footprints"), ("green", "shotgun")], "draw-then-recycle")
    log["turns"][0]["rolls"][-1]["then"] = "stop"
    assert replay(GameLog.from_dict(log)).steps[-1].position.banked == 12


def test_tied_leaders_play_a_tie_break(solution: GameSolution) -> None:
    """Ann and Bob both end at 13: a tie-break round (Ann busts, Bob stops at 1); every phase of the
    two-player game is priced (the normal game, Bob's final turn, the tie-break round)."""
    thirteen = recycling_turn([("green", "brain"), ("green", "footprints"), ("green", "shotgun")], "before-draw")
    thirteen = thirteen["turns"][0]
    thirteen["rolls"][-1]["then"] = "stop"
    bust = {"dice": [{"colour": "red", "face": "shotgun"}] * 3}
    one = {"dice": [{"colour": "green", "face": "brain"}, {"colour": "red", "face": "shotgun"},
                    {"colour": "yellow", "face": "shotgun"}], "then": "stop"}
    turns = [{**thirteen, "player": p} for p in ("Ann", "Bob")]
    turns += [{"player": "Ann", "rolls": [bust]}, {"player": "Bob", "rolls": [one]}]
    log = GameLog.from_dict({"players": ["Ann", "Bob"], "turns": turns})
    r = review(log, solution)
    assert r.replay.finished and r.replay.winner == 1 and r.replay.scores == (13, 14)
    assert [d.step.scores for d in r.decisions][-1] == (13, 13)
    assert r.decisions[-1].stop == 1.0  # Bob wins by stopping with one brain
    with pytest.raises(LogError) as e:
        replay(GameLog.from_dict({"players": ["Ann", "Bob"], "turns": turns[:2] + turns[3:]}))
    assert e.value.errors[0].field == "turns[2].player"


# -- POST /v1/review ----------------------------------------------------------------------------------


def test_the_api_reviews_with_the_stored_table(client: FlaskClient, with_table: None, timid_game: dict,
                                               solution: GameSolution) -> None:
    response = client.post("/v1/review", json=timid_game)
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["measure"] == "win-probability" and "reason" not in body
    assert body["table"]["key"] == table_key("original", "before-draw", 2).name
    assert body["finished"] and body["winner"] == "Ann"
    expected = review(GameLog.from_dict(timid_game), solution)
    assert [p["cost"] for p in body["players"]] == [t.cost for t in expected.totals]
    assert [d["cost"] for d in body["decisions"]] == [d.cost for d in expected.decisions]
    assert body["decisions"][0]["turn"] == 0 and body["decisions"][0]["player"] == "Ann"


def test_the_api_says_why_it_uses_expected_brains(client: FlaskClient, without_table: None, timid_game: dict) -> None:
    body = client.post("/v1/review", json=timid_game).get_json()
    assert body["measure"] == "expected-brains"
    assert body["reason"].startswith("no two-player table for original (before-draw) in the store yet")
    assert "table" not in body


def test_csv_has_one_row_per_decision(client: FlaskClient, without_table: None, timid_game: dict) -> None:
    as_json = client.post("/v1/review", json=timid_game).get_json()
    for response in (client.post("/v1/review?format=csv", json=timid_game),
                     client.post("/v1/review", json=timid_game, headers={"Accept": "text/csv"})):
        assert response.status_code == 200 and response.mimetype == "text/csv"
        rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
        assert len(rows) == len(as_json["decisions"])
        first, d = rows[0], as_json["decisions"][0]
        assert (first["turn"], first["player"], first["chosen"], first["best"]) == ("0", "Ann", d["chosen"], d["best"])
        assert float(first["cost"]) == d["cost"] and first["measure"] == "expected-brains"
    assert client.post("/v1/review?format=json", json=timid_game, headers={"Accept": "text/csv"}).is_json


def test_a_whole_game_fits_in_the_body_limit(client: FlaskClient, without_table: None, optimal_game: dict) -> None:
    """The review takes up to 256 KiB (the rest of the API 16 KiB); padded here with insignificant whitespace."""
    text = json.dumps(optimal_game)
    for size, status in ((200 * 1024, 200), (256 * 1024 + 1, 413)):
        body = text[:-1] + " " * (size - len(text)) + "}"
        assert len(body) == size
        assert client.post("/v1/review", data=body, content_type="application/json").status_code == status
    assert client.post("/v1/odds", data=" " * 17 * 1024 + "{}", content_type="application/json").status_code == 413


def short_game() -> dict:
    """Ann: red footprints, two green brains, then a red brain, a red shotgun and red footprints; stops."""
    return {"players": ["Ann", "Bob"], "turns": [
        {"player": "Ann", "rolls": [
            {"dice": [{"colour": "red", "face": "footprints"}, {"colour": "green", "face": "brain"},
                      {"colour": "green", "face": "brain"}]},
            {"dice": [{"colour": "red", "face": "brain"}, {"colour": "red", "face": "shotgun"},
                      {"colour": "red", "face": "footprints"}], "then": "stop"}]},
        {"player": "Bob", "rolls": [
            {"dice": [{"colour": "yellow", "face": "shotgun"}, {"colour": "red", "face": "shotgun"},
                      {"colour": "red", "face": "shotgun"}]}]}]}


def rejected(client: FlaskClient, log: dict) -> tuple[str, str]:
    response = client.post("/v1/review", json=log)
    assert response.status_code == 422 and response.mimetype == "application/problem+json"
    error = response.get_json()["errors"][0]
    return error["field"], error["reason"]


def test_a_short_valid_game(client: FlaskClient, without_table: None) -> None:
    body = client.post("/v1/review", json=short_game()).get_json()
    assert not body["finished"] and "winner" not in body
    assert [(p["score"], p["turns"], p["decisions"]) for p in body["players"]] == [(3, 1, 2), (0, 1, 0)]


def test_impossible_rolls_name_the_turn_and_roll(client: FlaskClient, without_table: None) -> None:
    red = {"colour": "red", "face": "brain"}
    log = short_game()
    log["turns"][0]["rolls"][1]["dice"].append(red)
    field, reason = rejected(client, log)
    assert field == "turns[0].rolls[1].dice" and reason.startswith("4 dice listed")
    log = short_game()
    del log["turns"][0]["rolls"][1]["dice"][0]
    field, reason = rejected(client, log)
    assert field == "turns[0].rolls[1].dice" and reason.startswith("2 dice listed")
    log = short_game()  # a red footprint die in hand, and three red dice more: the cup has two
    log["turns"][0]["rolls"][1]["dice"][1] = red
    log["turns"][0]["rolls"][1]["dice"][2] = red
    log["turns"][0]["rolls"][1]["dice"][0] = red
    log["turns"][0]["rolls"][0]["dice"][1] = red
    field, reason = rejected(client, log)
    assert field == "turns[0].rolls[1].dice" and "the cup holds" in reason and "red" in reason
    log = short_game()  # the red footprint die is not rerolled
    log["turns"][0]["rolls"][1]["dice"] = [{"colour": "green", "face": "brain"}] * 3
    field, reason = rejected(client, log)
    assert field == "turns[0].rolls[1].dice" and "lacks 1 red" in reason


def test_turns_out_of_order_or_after_the_end_are_refused(client: FlaskClient, without_table: None,
                                                         optimal_game: dict) -> None:
    log = short_game()
    log["turns"][1]["player"] = "Ann"
    assert rejected(client, log)[0] == "turns[1].player"
    log["turns"][1]["player"] = "Cy"
    assert rejected(client, log) == ("turns[1].player", "'Cy' is not a player: it is Bob's turn")
    log["turns"][1]["player"] = 2  # a seat number is fine
    assert client.post("/v1/review", json=log).status_code == 200
    late = copy.deepcopy(optimal_game)
    late["turns"].append(short_game()["turns"][0])
    field, reason = rejected(client, late)
    assert field == f"turns[{len(optimal_game['turns'])}]" and reason.startswith("the game is over")


def test_choices_must_agree_with_the_rolls(client: FlaskClient, without_table: None) -> None:
    log = short_game()
    del log["turns"][0]["rolls"][1]["then"]
    assert rejected(client, log)[0] == "turns[0].rolls[1].then"
    log["turns"][0]["rolls"][0]["then"] = "stop"
    assert rejected(client, log)[0] == "turns[0].rolls[1]"
    log = short_game()
    log["turns"][1]["rolls"][0]["then"] = "stop"  # a bust leaves no choice
    assert rejected(client, log)[0] == "turns[1].rolls[0].then"
    log = short_game()
    log["turns"][1]["rolls"].append(log["turns"][0]["rolls"][0])
    assert rejected(client, log)[0] == "turns[1].rolls[1]"


# -- Double Feature logs ---------------------------------------------------------------------------------

DOUBLE_FEATURE = ("big-summer-action-movie", "santa-claus-meets-the-zombies", "direct-to-video-sequel")
SPEC_LOG = yaml.safe_load(Path(__file__).resolve().parent.parent.joinpath("openapi.yaml").read_text())["paths"][
    "/v1/review"]["post"]["requestBody"]["content"]["application/json"]["examples"]["direct-to-video-sequel"]["value"]


def die(colour: str, face: str) -> dict[str, str]:
    return {"colour": colour, "face": face}


def logged_df_roll(turn: Turn, rng: random.Random, seen: Counter) -> list[dict[str, str]]:
    """Roll once with analysis.simulate's physical Double Feature dice (its own rescues, drink, helmet,
    recycling: written from the rules' text, not roll.py's steps) and write down every face shown."""
    mode = MODES[turn.mode]
    banked, pile = turn.banked, list(turn.brains)
    dice = _take_dice(turn, rng, mode.dice_per_roll - len(turn.hand))
    rolled = [(d, rng.choice(mode.dice[mode.index(d)].faces).name) for d in dice]
    _settle(turn, _double_feature_effects(turn, rolled))
    turn.bust = _busted(turn)
    seen["rescue"] += turn.banked == banked and any(d not in turn.brains for d in pile)
    seen.update(f for _, f in rolled)
    seen["recycling"] += turn.banked != banked
    seen["kept out"] += bool(turn.kept_out)
    logged = [die(d, f) for d, f in rolled]
    rng.shuffle(logged)
    return logged


def play_df_log(mode: str, recycle: str, rng: random.Random, seen: Counter) -> tuple[dict, list, tuple[int, ...]]:
    """A whole two-player game with physical dice, by a bold random policy (it runs out of dice at times):
    the log, the simulation's position after every roll (None on a bust) and the final scores."""
    scores, order, turns, positions = [0, 0], [0, 1], [], []
    while True:
        for seat in order:
            turn = Turn(mode, [d for d, n in MODES[mode].cup for _ in range(n)], recycle=recycle)
            rolls = [{"dice": logged_df_roll(turn, rng, seen)}]
            positions.append(None if turn.bust else turn.position())
            while not turn.bust:
                left = (4 if turn.helmet else 3) - len(turn.shotguns) - len(turn.double_shotguns)
                if rng.random() > (0.3 if left == 1 else 0.93):
                    rolls[-1]["then"] = "stop"
                    break
                rolls.append({"dice": logged_df_roll(turn, rng, seen)})
                positions.append(None if turn.bust else turn.position())
            scores[seat] += turn.score
            turns.append({"player": ("Ann", "Bob")[seat], "rolls": rolls})
        if max(scores) >= GOAL:
            best = max(scores[s] for s in order)
            order = [s for s in order if scores[s] == best]
            if len(order) == 1:
                return {"mode": mode, "recycle": recycle, "players": ["Ann", "Bob"], "turns": turns}, positions, tuple(
                    scores)


def test_double_feature_games_replay_as_the_physical_dice_played_them() -> None:
    """Every position the replay builds (by roll.py's steps) is the one the independent simulation reached,
    in every mode and variant, over games that rescue, drink, wear the helmet and run out of dice."""
    seen: Counter = Counter()
    for mode in DOUBLE_FEATURE:
        for recycle in ("before-draw", "draw-then-recycle"):
            for seed in range(8):
                log, positions, scores = play_df_log(mode, recycle, random.Random(seed), seen)
                played = replay(GameLog.from_dict(log))
                assert [s.position for s in played.steps] == positions, (mode, recycle, seed)
                assert played.scores == scores and played.finished
    for feature in ("rescue", "recycling", "kept out", "double-brain", "double-shotgun", "energy-drink", "helmet"):
        assert seen[feature] > 0, (feature, seen)


def steps(mode: str, *rolls: list[dict[str, str]], then: str | None = "stop") -> list:
    """The replayed steps of a one-turn log (the player stops after the last roll, unless `then` is None)."""
    turn = {"player": 1, "rolls": [{"dice": dice} for dice in rolls]}
    if then:
        turn["rolls"][-1]["then"] = then
    return list(replay(GameLog.from_dict({"mode": mode, "players": 2, "turns": [turn]})).steps)


def test_the_expansion_rules_act_on_the_logged_faces() -> None:
    bsam, santa = "big-summer-action-movie", "santa-claus-meets-the-zombies"
    # the same roll: Hottie's shotgun sends Hunk's double brain back into the cup (no brain from it)
    (step,) = steps(bsam, [die("hunk", "double-brain"), die("hottie", "shotgun"), die("green", "brain")])
    assert step.position == Position(bsam, brains=("green",), shotguns=("hottie",))
    assert step.position.cup["hunk"] == 1
    # ... which may then be drawn again, and Hunk's double shotgun counts two: the third shotgun busts
    first, second = steps(bsam, [die("hunk", "double-brain"), die("hottie", "shotgun"), die("green", "brain")],
                          [die("hunk", "double-shotgun"), die("red", "footprints"), die("yellow", "brain")], then=None)
    assert second.position is None and second.then is None
    # Santa's energy drink: from that roll on, green footprints are brains (written either way)
    for face in ("footprints", "brain"):
        (step,) = steps(santa, [die("santa", "energy-drink"), die("green", face), die("yellow", "brain")])
        assert step.position == Position(santa, brains=("green", "yellow"), effects=("energy-drink",))
    # the helmet: three shotguns do not bust, and Santa, set aside, cannot be rolled again this turn
    a, b = steps(santa, [die("santa", "helmet"), die("red", "shotgun"), die("red", "shotgun")],
                 [die("red", "shotgun"), die("green", "brain"), die("green", "footprints")])
    assert b.position == Position(santa, footprints=("green",), brains=("green",), shotguns=("red",) * 3,
                                  effects=("helmet",))
    # the specification's own example: a rescue, the helmet, Santa's gift; scores recomputed
    played = replay(GameLog.from_dict(SPEC_LOG))
    assert played.scores == (2, 3)
    rescued = played.steps[1].position
    assert "hunk" not in rescued.brains and rescued.score == 1 and rescued.effects == ("helmet",)
    assert played.steps[3].position.double_brains == ("santa",)


@pytest.mark.parametrize(("rolls", "field", "words"), [
    ([[die("green", "double-brain"), die("red", "shotgun"), die("red", "brain")]], "turns[0].rolls[0].dice[0].face",
     "no 'double-brain' face"),
    ([[die("hunk", "double-brain"), die("green", "footprints"), die("red", "shotgun")],
      [die("green", "brain"), die("hunk", "shotgun"), die("red", "brain")]], "turns[0].rolls[1].dice",
     "the cup holds"),
    ([[die("hottie", "footprints"), die("green", "brain"), die("green", "brain")],
      [die("green", "brain"), die("yellow", "brain"), die("red", "brain")]], "turns[0].rolls[1].dice",
     "lacks 1 hottie"),
    ([[die("red", "shotgun"), die("hunk", "double-shotgun"), die("green", "brain")],
      [die("green", "brain"), die("green", "brain"), die("green", "brain")]], "turns[0].rolls[1]", "busted"),
])
def test_impossible_double_feature_rolls_name_the_turn_and_roll(rolls: list, field: str, words: str) -> None:
    with pytest.raises(LogError) as e:
        steps("big-summer-action-movie", *rolls)
    assert e.value.errors[0].field == field and words in e.value.errors[0].reason, e.value.errors


def test_santa_set_aside_is_not_rolled_again() -> None:
    with pytest.raises(LogError) as e:
        steps("santa-claus-meets-the-zombies",
              [die("santa", "helmet"), die("green", "footprints"), die("red", "brain")],
              [die("green", "brain"), die("santa", "brain"), die("red", "brain")])
    assert e.value.errors[0].field == "turns[0].rolls[1].dice"
    assert "(santa set aside for the rest of the turn)" in e.value.errors[0].reason


def test_double_feature_decisions_are_solved_near_a_bust_only(client: FlaskClient, without_table: None) -> None:
    """Expected brains per decision, solved over its own turn where the API's bound allows (the one decision
    one shotgun from a bust here: analysis.odds' values), the others unpriced with the reason."""
    r = review(GameLog.from_dict(SPEC_LOG), unpriced=unpriced, max_solves=MAX_SOLVES)
    assert r.measure == "expected-brains"
    assert [bool(d.unpriced) for d in r.decisions] == [True, True, False, True]
    assert all(d.unpriced.startswith("not solved: ") and d.cost is None and not d.mistake for d in r.decisions
               if d.unpriced)
    d = r.decisions[2]
    decision = odds(d.step.position, "expected-brains").decision
    assert (d.best, d.chosen, d.cost) == (decision.action, "stop", 0.0) == ("stop", "stop", 0.0)
    assert d.roll == pytest.approx(float(decision.roll), abs=1e-9) and d.stop == float(decision.stop)
    assert [(t.decisions, t.unpriced) for t in r.totals] == [(3, 2), (1, 1)]
    # at most max_solves tables: with none allowed every decision is unpriced, and says why
    bounded = review(GameLog.from_dict(SPEC_LOG), unpriced=unpriced, max_solves=0)
    assert "its limit" in bounded.decisions[2].unpriced and bounded.decisions[2].best is None
    # over HTTP: the same, documented fields; the CSV adds the expansion's columns
    body = client.post("/v1/review", json=SPEC_LOG).get_json()
    assert body["measure"] == "expected-brains" and "direct-to-video-sequel" in body["reason"]
    priced = body["decisions"][2]
    assert priced["best"] == "stop" and priced["values"]["roll"] == d.roll and priced["position"]["effects"] == [
        "helmet"]
    assert "unpriced" in body["decisions"][0] and "cost" not in body["decisions"][0]
    assert [p["unpriced"] for p in body["players"]] == [2, 1]
    rows = list(csv.DictReader(io.StringIO(client.post("/v1/review?format=csv", json=SPEC_LOG).get_data(as_text=True))))
    assert [row["unpriced"] == "" for row in rows] == [False, False, True, False]
    assert rows[2]["effects"] == "helmet" and rows[0]["double_brains"] == "hunk" and rows[0]["cost"] == ""


def test_an_impossible_double_feature_log_is_a_422(client: FlaskClient, without_table: None) -> None:
    log = copy.deepcopy(SPEC_LOG)
    log["turns"][1]["rolls"][0]["dice"][0]["face"] = "helmet"  # a green die has no helmet
    assert rejected(client, log) == ("turns[1].rolls[0].dice[0].face", "a green die has no 'helmet' face")
    log = copy.deepcopy(SPEC_LOG)
    log["turns"][0]["rolls"][2]["dice"][0] = die("santa", "brain")  # Santa is set aside by his helmet
    field, reason = rejected(client, log)
    assert field == "turns[0].rolls[2].dice" and "santa" in reason


# -- issue 27: a review CSV is no formula, and an invalid game log is refused cheaply --------------------------------

FORMULAS = ['=HYPERLINK("http://x.example","go")', "+1+1", "-2+3", "@SUM(A1:A2)", "\tTAB", "\rCR"]


@pytest.mark.parametrize("name", FORMULAS)
def test_a_player_name_that_looks_like_a_formula_is_written_as_text(client: FlaskClient, without_table: None,
                                                                    name: str) -> None:
    """Item 7: `=HYPERLINK(...)` as a player's name was written to the CSV as sent: a spreadsheet opening it runs
    it. A cell starting with `= + - @`, a tab or a carriage return gets a `'` first (OWASP's advice); JSON keeps
    the name."""
    log = short_game()
    log["players"][0] = log["turns"][0]["player"] = name
    response = client.post("/v1/review?format=csv", json=log)
    assert response.status_code == 200, response.get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True), newline="")))
    assert rows and {row["player"] for row in rows} == {"'" + name}
    assert client.post("/v1/review", json=log).get_json()["decisions"][0]["player"] == name


def test_an_ordinary_name_is_written_as_it_is(client: FlaskClient, without_table: None) -> None:
    log = short_game()
    log["players"][0] = log["turns"][0]["player"] = "Ann-Marie O'Neil (+1)"
    rows = list(csv.DictReader(io.StringIO(client.post("/v1/review?format=csv", json=log).get_data(as_text=True))))
    assert {row["player"] for row in rows} == {"Ann-Marie O'Neil (+1)"}


def test_an_invalid_game_log_of_256_kib_is_refused_in_a_few_kilobytes(client: FlaskClient, without_table: None) -> None:
    """Item 6: an invalid 256 KiB game log took 4.4 s to refuse, and the refusal listed every fault. Validation now
    stops at the first 100 faults; the problem lists 20 and counts the rest (`errors_omitted`: 80, it stopped)."""
    bad = {"player": 1, "rolls": [{"dice": [{"colour": "red", "face": "banana"}] * 3}]}
    log = {"players": 2, "turns": [dict(bad, player=k % 2 + 1) for k in range(1700)]}
    body = json.dumps(log)
    assert 240 * 1024 < len(body) <= 256 * 1024
    response = client.post("/v1/review", data=body, content_type="application/json")
    assert response.status_code == 422 and response.mimetype == "application/problem+json"
    problem = response.get_json()
    assert len(response.data) < 10_000, len(response.data)
    assert len(problem["errors"]) == 20 and problem["errors_omitted"] == 80
    assert problem["errors"][0]["field"] == "turns[0].rolls[0].dice[0].face"
