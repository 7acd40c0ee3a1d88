"""analysis/game/advice.py: should I roll, by the probability of winning: the game situation checked field by field,
the decision read from the two-player solution (and, above every state's certain stop, rolling once by hand), from the
exact table of three players, and from the reduced model of more, with its measured error."""

from __future__ import annotations

import pytest

from analysis import Position, PositionError, next_roll
from analysis.game import GameSolution, solve_seats
from analysis.game.advice import check_scores, game_around, reduced_model_error, win_advice
from analysis.game.many import MEASURED
from analysis.game.seats import Final, Normal
from analysis.table import table_for

POSITION = Position(footprints=("green",), brains=("green", "yellow"), shotguns=("red",))


@pytest.mark.parametrize(("scores", "seat", "final_round", "field", "words"), [
    ([5], 1, None, "scores", "2 to 8 players"),
    ([0] * 9, 1, None, "scores", "2 to 8 players"),
    ([5, 9], None, None, "seat", "required"),
    ([5, 9], 3, None, "seat", "seats 1 to 2"),
    ([14, 3], 2, None, "scores", "the game is over"),
    ([14, 12], 1, None, "scores", "seat 2 plays the final turn"),
    ([5, 9], 1, True, "final_round", "nobody has 13"),
    ([5, 13], 2, False, "final_round", "the final round is on"),
    ([14, 3, 2], 1, None, "scores", "its turn does not come again"),
])
def test_a_situation_that_is_no_start_of_a_turn_names_the_field(scores, seat, final_round, field, words) -> None:
    with pytest.raises(PositionError) as info:
        check_scores(scores, seat, final_round)
    assert any(e.field == field and words in e.reason for e in info.value.errors), info.value.errors


def test_the_situation_is_a_seat_of_the_duel() -> None:
    """Two players: the seat as given; more: the mover against the leader, as seat 2 of the duel when it closes the
    round or must beat the leader, as seat 1 otherwise or opening a tie-break round."""
    normal = check_scores([10, 12], 1)
    assert (normal.mover, normal.other, normal.seat, normal.phase, normal.final_round) == (10, 12, 1, "normal", False)
    final = check_scores([5, 13], 2, True)
    assert (final.seat, final.phase, final.final_round) == (2, "beat", True)
    assert check_scores([4, 9, 2], 3).seat == 2 and check_scores([4, 9, 2], 2).seat == 1
    many = check_scores([4, 9, 2], 2)
    assert (many.mover, many.other, many.players, many.scores, many.player_seat) == (4, 9, 3, (4, 9, 2), 2)
    assert check_scores([5, 14, 13], 2).phase == "beat"  # below the leader at the goal: beat it
    assert check_scores([13, 13, 5], 1).phase == "tiebreak"


def test_the_decision_is_the_solution_s(game: GameSolution) -> None:
    scores = check_scores([10, 12], 1)
    advice = win_advice(game, POSITION, scores)
    d = game.decision(1, 10, 12, table_for("original").index[POSITION.state], POSITION.score)
    assert (advice.action, advice.roll, advice.stop) == (d.action, d.p_win_roll, d.p_win_stop)
    assert advice.cost == abs(d.p_win_roll - d.p_win_stop) and advice.model_error is None
    assert advice.turn_start == game.win_probability(1, 10, 12)
    start = win_advice(game, Position(), scores)
    assert start.cost is None and start.action == "roll" and start.roll == pytest.approx(start.turn_start, abs=1e-12)
    with pytest.raises(ValueError):
        win_advice(game, Position(recycle="draw-then-recycle"), scores)


def test_above_every_certain_stop_rolling_once_is_priced_by_hand(game: GameSolution) -> None:
    """Seat 2 at 5 against 9 with 9 brains this turn: stopping wins. Rolling once (no footprint dice can come back:
    one die in hand) wins unless it busts, and a bust hands seat 1 the move at 9 against 5."""
    position = Position(footprints=("red",), brains=("green",) * 6 + ("yellow",) * 3, shotguns=("red",))
    assert position.score == 9
    advice = win_advice(game, position, check_scores([5, 9], 2))
    bust = float(next_roll(position).bust)
    after_a_bust = 1 - game.win_probability(1, 9, 5)
    assert advice.action == "stop" and advice.stop == 1.0
    assert advice.roll == pytest.approx(1 - bust * (1 - after_a_bust), abs=1e-12)


def test_three_players_are_answered_from_their_own_table() -> None:
    """A game to 5 brains: the spot the scores name (read in seat order from the mover's), its decision and every
    seat's chance from the start of the turn."""
    three = solve_seats(3, goal=5, cap=14)
    table = table_for("original")
    normal = check_scores([2, 1, 3], 2, goal=5, exact=True)  # seat 2 at 2, seat 3 at 1, seat 1 at 3
    advice = win_advice(three, POSITION, normal)
    spot = Normal((3, 2, 1), 1)
    d = three.decision(spot, table.index[POSITION.state], POSITION.score)
    assert (advice.action, advice.roll, advice.stop) == (d.action, d.p_win_roll, d.p_win_stop)
    assert advice.p_seats == tuple(three.values[spot]) and advice.turn_start == three.values[spot][1]
    final = check_scores([3, 6, 1], 3, goal=5, exact=True)  # seat 3 at 3, seat 1 at 6 (at the goal), seat 2 at 1
    assert final.phase == "final" and win_advice(three, POSITION, final).p_seats == tuple(
        three.values[Final(2, (3,), (0,))])


def test_more_players_by_the_reduced_model_carry_its_measured_error(game: GameSolution) -> None:
    scores = check_scores([4, 9, 2], 3)
    advice = win_advice(game, POSITION, scores)
    assert advice.model_error == MEASURED[("original", "before-draw", 3)]
    two = win_advice(game, POSITION, check_scores([4, 9], 2))  # the duel: seat 2 of it, the leader's score
    assert (advice.action, advice.roll, advice.stop) == (two.action, two.roll, two.stop)
    assert reduced_model_error(POSITION, check_scores([4, 9], 2)) is None
    sequel = Position(mode="direct-to-video-sequel", footprints=("green",), brains=("green", "yellow"))
    with pytest.raises(PositionError) as info:
        reduced_model_error(sequel, scores)
    assert info.value.errors[0].field == "scores"


def test_the_game_around_a_position_is_exact_where_its_table_is_solved() -> None:
    """Around a position, more players are answered exactly where the mode's table of that many is solved (three in
    every mode, four in the base game), by that table; more by the reduced model over the two-player table, where it
    was measured. Without a position (one at fault), the scores alone, as the reduced model reads them."""
    three = game_around(POSITION, [4, 9, 2], 2)
    assert three.exact and three.table_players == 3 and three == check_scores([4, 9, 2], 2, exact=True)
    assert game_around(POSITION, [4, 9, 2, 0], 2).table_players == 4
    five = game_around(POSITION, [4, 9, 2, 0, 1], 2)
    assert not five.exact and five.table_players == 2 and (five.mover, five.other) == (4, 9)
    assert game_around(POSITION, [4, 9], 2).table_players == 2
    sequel = Position(mode="direct-to-video-sequel", footprints=("green",), brains=("green", "yellow"))
    assert game_around(sequel, [4, 9, 2], 2).table_players == 3
    with pytest.raises(PositionError) as info:  # four players of the sequel: the reduced model, not measured there
        game_around(sequel, [4, 9, 2, 0], 2)
    assert [e.field for e in info.value.errors] == ["scores"]
    assert game_around(None, [4, 9, 2], 2) == check_scores([4, 9, 2], 2)
    bus = Position(footprints=("green",), brains=("green", "yellow"), school_bus=True)
    for scores in ([4, 9], [4, 9, 2]):  # the tables have no School Bus: refused, not answered as if it had none
        with pytest.raises(PositionError) as info:
            game_around(bus, scores, 2)
        assert [e.field for e in info.value.errors] == ["school_bus"]
