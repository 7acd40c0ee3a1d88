"""analysis/review.py: whole games played with physical dice, reviewed.

Games are played with analysis.simulate's physical dice (a cup, a hand, two piles) and written down
as a scorekeeper would; the review replays them through analysis.roll and prices every decision. The
two-player table is solved once per run (`tests.games.solved_game`). Double Feature games are played with the
simulation's own rules of the expansion (rescues, Santa), an implementation independent of roll.py's, and replayed
position by position.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from analysis import MODES, Position, odds
from analysis.exact import exact_turn
from analysis.game import GameSolution
from analysis.objectives import ExpectedBrains
from analysis.review import MISTAKE_TOL, GameLog, LogError, replay, review
from analysis.simulate import Turn, _busted, _double_feature_effects, _settle, _take_dice
from analysis.table import table_for

from ..games import solved_game
from . import game_logs
from .game_logs import GOAL, SPEC_LOG, die, play_log


@pytest.fixture(scope="module")
def solution() -> GameSolution:
    return solved_game("original")


optimal_game = pytest.fixture(scope="module", name="optimal_game")(game_logs.optimal_game)
timid_game = pytest.fixture(scope="module", name="timid_game")(game_logs.timid_game)


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


# -- Double Feature logs ---------------------------------------------------------------------------------------------
DOUBLE_FEATURE = ("big-summer-action-movie", "santa-claus-meets-the-zombies", "direct-to-video-sequel")


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
