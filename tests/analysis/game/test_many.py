"""analysis/game/many.py: three to eight players by the reduced model ("duel the leader"): exact for two players, its
table by hand, and against games of physical dice (the errors bench/bench_many.py measured), in the base game and a
Double Feature mode."""

from __future__ import annotations

import itertools

import pytest

from analysis.game.many import MEASURED, check_reduced_model, estimate_reduced, reduced_table, reduced_win_probability

G = 13
DF = "big-summer-action-movie"


def test_reduced_model_is_exact_for_two_players(game):
    assert estimate_reduced(game, 2) == pytest.approx([game.p_first_player_wins, 1 - game.p_first_player_wins])


def test_reduced_model_against_simulation(game):
    """Three and five players following the reduced model (physical dice, seeded). Measured errors of
    the estimate over 20,000 games (standard error ~0.003): at most 0.013 for three players, 0.023 for
    five (analysis/game/many.py lists 3 to 8): the advantage of playing later grows along the seat
    order, which the normalised duel values grant only the last seat. Asserted here on fewer games:
    within 0.035 + 4 standard errors per seat, and the last seat wins more often than the first."""
    for n, games in ((3, 6000), (5, 4000)):
        check = check_reduced_model(game, n, games, seed=n)
        assert sum(check.simulated) == pytest.approx(1)
        assert max(abs(e) for e in check.errors) < 0.035 + 4 * max(check.standard_error)
        assert check.simulated[-1] > check.simulated[0]
        assert sum(c.turns for c in check.calibration) == check.turns > games * n
        measured = MEASURED[("original", "before-draw", n)]
        if (games, n) == (measured.games, measured.seed):  # the very run bench/bench_many.py measured
            # the same games: equal up to the solver's last bits (a different summation order moves them)
            assert check.bias == pytest.approx(measured.bias, abs=1e-12)
            assert check.table_error() == pytest.approx(measured.calibration_error, abs=1e-12)
        else:
            assert abs(check.bias - measured.bias) < 0.02
        # the table's calibration (the earlier normalisation d / (d + (n - 1)(1 - d)) measured bias -0.077
        # and -0.101, calibration error 0.099 and 0.249 for 3 and 5 players in bench/bench_many.py's games)
        assert abs(check.bias) < 0.04 and check.table_error() < 0.1


def test_the_reduced_table_is_the_duel_for_two_players(game):
    """Two players: the duel's own values; more players: in (0, 1), less for the mover closing the round,
    and for a followed mover from four players on (before, it may gain: the leader has then more likely
    played already this round, 1, 3/4, 2/3 for 2, 3, 4 players, and W2 > W1 behind a leader near the goal)."""
    for m, leader in [(0, 0), (5, 9), (12, 3), (12, 12), (0, 10)]:
        for last, seat in ((False, 1), (True, 2)):
            assert reduced_win_probability(game, 2, m, leader, last) == pytest.approx(
                game.win_probability(seat, m, leader), abs=1e-15)
            chances = [reduced_win_probability(game, n, m, leader, last) for n in range(2, 9)]
            assert all(0 < p < 1 for p in chances) and chances[2:] == sorted(chances[2:], reverse=True)
            assert not last or chances == sorted(chances, reverse=True)


def test_the_reduced_table_by_hand(game):
    """The Luce odds r = (1 - d) / d of each opponent's duel, the others' scores uniform on 0..L, summed
    over every combination of them (the model's integral is checked against it). Three players: closing
    the round, everyone has played (W2); followed, one player after the mover (the leader or not, half
    each) or two (both), each half the time. Five players closing the round: three others, W2."""
    def r(seat: int, m: int, x: int) -> float:
        d = game.win_probability(seat, m, x)
        return (1 - d) / d

    def mean(seats: tuple[int, ...], m: int, leader: int, lead_seat: int) -> float:
        combos = list(itertools.product(range(leader + 1), repeat=len(seats)))
        return sum(1 / (1 + r(lead_seat, m, leader) + sum(r(s, m, x) for s, x in zip(seats, xs)))
                   for xs in combos) / len(combos)

    for m, leader in [(0, 0), (4, 7), (11, 5), (2, 12), (12, 12)]:
        followed = 0.25 * mean((2,), m, leader, 1) + 0.25 * mean((1,), m, leader, 2) + 0.5 * mean((1,), m, leader, 1)
        assert reduced_win_probability(game, 3, m, leader, True) == pytest.approx(mean((2,), m, leader, 2), rel=1e-11)
        assert reduced_win_probability(game, 3, m, leader, False) == pytest.approx(followed, rel=1e-11)
        assert reduced_win_probability(game, 5, m, leader, True) == pytest.approx(mean((2, 2, 2), m, leader, 2),
                                                                                  rel=1e-11)
    grids = reduced_table(game, 4)
    assert grids["last"][5][9] == reduced_win_probability(game, 4, 5, 9, True) and len(grids["followed"]) == G
    with pytest.raises(ValueError):
        reduced_win_probability(game, 9, 0, 0, False)


def test_the_reduced_model_plays_a_double_feature_mode(df_game):
    """N players with Hunk and Hottie (the simulation maps a physical turn to its dice state by its whole
    `DiceState`): the model's errors on a few hundred games are of the order bench/bench_many.py measured."""
    check = check_reduced_model(df_game, 3, 300, seed=11)
    assert sum(check.simulated) == pytest.approx(1) and check.turns > 900
    measured = MEASURED[(DF, "before-draw", 3)]
    assert abs(check.bias - measured.bias) < 0.04
    assert max(abs(e) for e in check.errors) < 0.035 + 4 * max(check.standard_error)
