"""analysis/game/seats.py: exact play for any number of players.

The end-of-game rules one spot at a time; the two-player solve against duel.py's; small games of three and four
players (a lower goal, a lower cap: seconds, not minutes) against games played with physical dice by the
independent simulator of analysis.game.many, every seat following the solution; and the cap's effect.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from analysis.game import seats
from analysis.game.kernel import kernel_for
from analysis.game.many import play_many
from analysis.game.rules import rule_win_probability
from analysis.game.seats import (
    Final,
    Game,
    Normal,
    SeatsPolicy,
    SeatsSolution,
    Tie,
    cap_error,
    seats_layers,
    solve_seats,
    solve_unit,
    spot_for,
)
from analysis.game.units import exact_players
from analysis.table import table_for

from ...games import solved_game


def agrees_with_play(solution: SeatsSolution, games: int, seed: int) -> bool:
    """Whether each seat's frequency of wins in `games` games with physical dice (every seat following `solution`)
    is within 4 standard errors of the solution's P(seat wins)."""
    n, policy, rng = solution.game.n, SeatsPolicy(solution), random.Random(seed)
    wins = np.zeros(n)
    for _ in range(games):
        wins[play_many(n, policy, rng, solution.mode, solution.recycle, solution.game.goal,
                       on_turn=policy.on_turn)] += 1
    p = np.array(solution.p_seat_wins)
    return bool(np.abs(wins / games - p).max() < 4 * np.sqrt(p * (1 - p) / games).max())


# -- the rules of the end of the game ---------------------------------------------------------------------
def test_a_turn_below_the_goal_passes_the_move_on():
    game = Game(3)
    assert game.after(Normal((4, 7, 2), 1), 5) == Normal((4, 12, 2), 2)
    assert game.after(Normal((4, 7, 2), 2), 0) == Normal((4, 7, 2), 0)  # a bust or a stop at 0: the same scores


def test_reaching_the_goal_starts_the_final_round_unless_the_round_is_complete():
    game = Game(3)
    assert game.after(Normal((10, 7, 2), 0), 5) == Final(1, (8, 13), (0,))
    assert game.after(Normal((10, 7, 2), 1), 6) == Final(2, (11,), (1,))
    assert game.after(Normal((10, 7, 2), 2), 11) == 2  # the last seat of the round: nobody else plays


def test_the_final_round_beats_ties_or_falls_short():
    game = Game(3)
    assert game.after(Final(1, (8, 13), (0,)), 9) == Final(2, (14,), (1,))  # one ahead: seat 2 must beat 14
    assert game.after(Final(1, (8, 13), (0,)), 8) == Final(2, (13,), (0, 1))
    assert game.after(Final(1, (8, 13), (0,)), 3) == Final(2, (13,), (0,))
    assert game.after(Final(2, (13,), (0, 1)), 13) == Tie((0, 1, 2), 0, 0, ())
    assert game.after(Final(2, (13,), (0, 1)), 2) == Tie((0, 1), 0, 0, ())
    assert game.after(Final(2, (13,), (0,)), 14) == 2


def test_a_seat_beyond_the_cap_is_not_asked():
    game = Game(3, cap=10)
    assert game.after(Normal((12, 0, 1), 0), 1) == 0  # both others 12 or 13 behind
    assert game.after(Normal((12, 0, 5), 0), 1) == Final(2, (8,), (0,))  # seat 1 is skipped, seat 2 plays


def test_a_tie_break_round_repeats_among_the_seats_still_level():
    game = Game(3)
    assert game.after(Tie((0, 1, 2), 0, 0, ()), 4) == Tie((0, 1, 2), 1, 4, (0,))
    assert game.after(Tie((0, 1, 2), 1, 4, (0,)), 4) == Tie((0, 1, 2), 2, 4, (0, 1))
    assert game.after(Tie((0, 1, 2), 2, 4, (0, 1)), 4) == Tie((0, 1, 2), 0, 0, ())
    assert game.after(Tie((0, 1, 2), 2, 4, (0, 1)), 0) == Tie((0, 1), 0, 0, ())
    assert game.after(Tie((0, 2), 1, 4, (0,)), 5) == 2


# -- the solve ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("recycle", ["before-draw", "draw-then-recycle"])
def test_two_players_are_the_duel(recycle: str):
    """The same game as duel.py's two-player solve, by the general equations: equal to rounding, at every start of a
    turn the two-player table holds (the normal game, seat 2's final turn against each lead, the tie-break round)."""
    duel, seats = solved_game("original", recycle), solve_seats(2, recycle=recycle)
    for a in range(13):
        for b in range(13):
            assert seats.values[Normal((a, b), 0)][0] == pytest.approx(duel.seat1[a][b], abs=1e-12)
            assert seats.values[Normal((a, b), 1)][1] == pytest.approx(duel.seat2[b][a], abs=1e-12)
    for d in range(1, duel.cap + 1):  # every lead up to the cap
        assert seats.values[Final(1, (d,), (0,))][1] == pytest.approx(duel.final[d], abs=1e-12)
    assert seats.values[Tie((0, 1), 0, 0, ())][0] == pytest.approx(duel.tiebreak, abs=1e-12)
    assert seats.p_seat_wins[0] == pytest.approx(duel.p_first_player_wins, abs=1e-12)


def test_units_in_any_split_give_the_same_values_bit_for_bit(three):
    """The layers' units, three per layer and each solved from the values of the earlier layers alone (as a worker
    would), give every value of the solve exactly: the tie-break rounds' passes split like the rest of the game, and
    no two units of a layer write the same value."""
    layers = seats_layers(3, goal=5, cap=14, split=3)
    kinds = [layer[0].kind for layer in layers]
    assert kinds[:4] == ["pass", "restart", "pass", "tie"]  # the round of two seats: all its spots can lead back
    assert [len(layer) for layer in layers[:4]] == [3, 1, 3, 1] and layers[3][0].items == ((0, 1), (0, 2), (1, 2))
    assert kinds[4:kinds.index("final")] == ["settle", "pass", "pass", "restart", "pass", "pass", "tie"]  # (three)
    assert max(len(layer) for layer in layers) == 3
    known: dict = {}
    for layer in layers:
        results = [solve_unit(unit, known) for unit in layer]
        assert sum(map(len, results)) == len(set().union(*results))
        for result in results:
            known.update(result)
    assert seats.values_only(known).keys() == three.values.keys()
    assert all(known[s].tobytes() == three.values[s].tobytes() for s in three.values)


@pytest.mark.parametrize("rules, units", [
    ((), [[((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))], [((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3))],
          [((0, 1, 2, 3),)]]),
    (((1, "stop-at:2"),), [[((0, 1),), ((0, 2), (0, 3), (2, 3)), ((1, 2), (1, 3))],
                           [((0, 1, 2), (0, 1, 3)), ((0, 2, 3),), ((1, 2, 3),)], [((0, 1, 2, 3),)]]),
], ids=["optimal", "seat-1-stops-at-2"])
def test_a_tie_break_round_is_solved_once_for_the_sets_of_seats_that_play_it_alike(rules, units):
    """Four players: one round up to its seats' names (six pairs, four threes, the four seats; with seat 1 on a rule,
    the sets with it in the same place apart), its layers side by side with those of the other rounds of as many
    seats, the first set solved and the others renamed in the round's last unit: bit for bit the values of each set's
    round solved on its own."""
    layers = seats_layers(4, goal=3, cap=9, rules=rules)
    rounds = layers[:max(k for k, layer in enumerate(layers) if layer[0].kind == "tie") + 1]
    assert [[unit.items for unit in layer] for layer in rounds if layer[0].kind == "tie"] == units
    renamed: dict = {}
    for layer in rounds:
        for result in [solve_unit(unit, renamed) for unit in layer]:
            renamed.update(result)
    alone: dict = {}
    game = Game(4, 3, 9)
    levels = game.levels + kernel_for("original", "before-draw").max_delta + 1
    def unit(kind: str, items: tuple) -> seats.SeatsUnit:
        return seats.SeatsUnit(4, "original", "before-draw", 3, 9, kind, items, rules)
    for named in (named for layer in units for sets in layer for named in sets):  # (smaller rounds first)
        for layer in seats._round_layers(seats._round(game, named, levels), [named], 1, unit):
            alone.update(solve_unit(layer[0], alone))
    renamed, alone = seats.values_only(renamed), seats.values_only(alone)
    assert renamed.keys() == alone.keys()
    assert all(renamed[s].tobytes() == alone[s].tobytes() for s in alone)


def test_a_sweep_groups_columns_within_its_bytes_but_never_fewer_numbers_than_sweep_numbers():
    """Columns go in groups within `SWEEP_BYTES`, and where a turn is so large that few columns fit (the sequel's), a
    group still carries `SWEEP_NUMBERS` numbers a state: the sweep's time is mostly per roll, not per number."""
    tops, m = np.full((2, 30), 10), 3  # a column is (10 + 1 + 3) levels x n states x 8 bytes x m numbers
    def sizes(n: int) -> list[int]:
        chunks = seats._chunks(SimpleNamespace(n=n, max_delta=3), tops, m)
        assert sorted(np.concatenate(chunks).tolist()) == list(range(30))
        return [len(c) for c in chunks]
    assert sizes(1000) == [30]
    assert sizes(seats.SWEEP_BYTES // (14 * 8 * m * 12)) == [12, 12, 6]  # twelve columns fill the bytes
    per_group = -(-seats.SWEEP_NUMBERS // m)  # (columns enough to carry SWEEP_NUMBERS numbers)
    assert sizes(seats.SWEEP_BYTES // 8) == [per_group] * (30 // per_group) + [30 % per_group] * (30 % per_group > 0)


def test_every_start_of_a_turn_sums_to_one(three):
    for spot, values in three.values.items():
        assert values.sum() == pytest.approx(1, abs=1e-12), spot
        assert (values >= -1e-12).all() and (values <= 1 + 1e-12).all(), spot
        if isinstance(spot, Tie):
            assert all(values[j] == 0 for j in range(3) if j not in spot.seats), spot


def test_three_players_against_physical_dice(three):
    """12,000 games of three players to 5 brains, each seat's frequency of wins within 4 standard errors of the
    solution's P(seat wins); a later seat wins more often (it sees what it must beat)."""
    assert agrees_with_play(three, 12_000, seed=3)
    p = three.p_seat_wins
    assert p[0] < p[1] < p[2]


def test_four_players_against_physical_dice():
    """6,000 games of four players to 3 brains: four-way tie-breaks and final rounds of three seats."""
    four = solve_seats(4, goal=3, cap=9)
    assert agrees_with_play(four, 6_000, seed=4)
    assert Tie((0, 1, 2, 3), 0, 0, ()) in four.values


def test_three_players_of_a_double_feature_mode_against_physical_dice():
    """6,000 games of three players of Santa Claus Meets the Zombies to 3 brains: the Santa die, its helmet and its
    energy drink, in the solve and in the simulator's play alike."""
    santa = solve_seats(3, "santa-claus-meets-the-zombies", goal=3, cap=6)
    assert agrees_with_play(santa, 6_000, seed=5)


def test_a_score_tuple_that_does_not_settle_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """A solve that cannot finish says which score tuples' policies did not settle (where to look next)."""
    values: dict = {}
    for layer in seats_layers(3, goal=3, cap=6):
        if layer[0].kind == "normal":
            monkeypatch.setattr(seats, "MAX_ITERATIONS", 1)  # one step: no tuple can have been checked yet
        for unit in layer:
            try:
                values.update(solve_unit(unit, values))
            except ArithmeticError as e:
                assert str(e) == "1 score tuples did not converge in 1 steps: (2, 2, 2)"
                return
    pytest.fail("every score tuple settled in one step")


@pytest.mark.parametrize("recorded, mixing", [("four_players_cycle.json", {1, 2}), ("five_players_cycle.json", {2, 3}),
                                              ("four_players_three_policies.json", {0, 3})])
def test_movers_whose_best_answers_chase_each_other_mix_two_policies(recorded: str, mixing: set[int]):
    """Where policy iteration went round, as solves met it (each step's p and a, recorded): four players of the base
    game at 5, 6, 9, 3 brains, movers 1 and 2 each switching between two policies; five players to 4 brains at 0, 1,
    1, 3, 1, movers 1, 2 and 3; four players of draw-then-recycle at 8, 0, 5, 0, mover 0 between two policies and
    mover 3 among three (it mixes its second and third). No profile met is an equilibrium: in each, a mover gains by
    switching. `_mixed`'s vectors are one: no mover gains by another policy it met at its own c, and every mover's
    vector is its turn's outcome (a mixture of two of its policies, its weight in [0, 1]) around the cycle; here the
    `mixing` movers mix, the others play one policy."""
    data = json.loads((Path(__file__).parent / recorded).read_text())
    steps = [(np.array(step["p"]), np.array(step["a"])) for step in data["steps"]]
    n = data["game"]["players"]
    met = [list({float(p[m]): a[m] for p, a in steps}.items()) for m in range(n)]

    def gain(x: np.ndarray, m: int) -> float:  # what mover m gains by its best policy at c = x[m + 1][m]
        return max(a[m] + p * x[(m + 1) % n, m] for p, a in met[m]) - x[m, m]

    for p, a in steps:
        x = seats._around(a, p)
        assert max(gain(x, m) for m in range(n)) > 1e-11  # (1e-11 to 1e-8: far above rounding)
    x = seats._mixed(steps)
    for m in range(n):
        assert abs(gain(x, m)) < 1e-13
        fits = []  # (how far x[m] is from the mixture of policies i and j, its weight)
        for (p0, a0), (p1, a1) in itertools.combinations_with_replacement(met[m], 2):
            rest = x[m] - a0 - p0 * x[(m + 1) % n]  # = w (a1 - a0 + (p1 - p0) x[m + 1]) for the mixture's weight w
            step = a1 - a0 + (p1 - p0) * x[(m + 1) % n]
            w = float(rest @ step / (step @ step)) if step.any() else 0.0
            fits.append((np.abs(rest - w * step).max(), w))
        error, w = min(fits)
        assert error < 1e-13
        assert 1e-9 < w < 1 - 1e-9 if m in mixing else min(abs(w), abs(w - 1)) < 1e-9


def test_a_whole_solve_whose_movers_mix_converges_and_agrees_with_play(monkeypatch: pytest.MonkeyPatch):
    """Five players of draw-then-recycle to 4 brains (cap 8), the smallest game found whose movers mix (at one score
    tuple): the solve meets policies that go round, `_mixed` answers each time, and the solve converges; and the
    values agree with games played with physical dice, every seat following the solution (a mixing mover plays one
    of its two policies, worth the same to it)."""
    mixed, answers = seats._mixed, []

    def recorded(steps: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray | None:
        answers.append(mixed(steps))
        return answers[-1]

    monkeypatch.setattr(seats, "_mixed", recorded)
    solution = solve_seats(5, recycle="draw-then-recycle", goal=4, cap=8)
    assert answers and all(x is not None for x in answers)
    assert agrees_with_play(solution, 3_000, seed=11)


def test_a_seat_that_follows_a_rule_is_evaluated_exactly(three):
    """Seat 0 stops at 2 brains whatever the scores, the others maximise against it: the exact values of that game
    (policy evaluation) against 8,000 games with physical dice; the rule wins less than the optimal seat would."""
    ruled = solve_seats(3, goal=5, cap=14, rules=((0, "stop-at:2"),))
    assert agrees_with_play(ruled, 8_000, seed=5)
    assert ruled.p_seat_wins[0] < three.p_seat_wins[0] - 0.1


def test_two_players_with_a_rule_are_rules_py_s_best_response_game():
    """rules.py's policy evaluation of a rule against the best response to it (the second seat follows the rule)."""
    ruled = solve_seats(2, rules=((1, "stop-at:6"),))
    assert ruled.p_seat_wins[1] == pytest.approx(rule_win_probability("stop-at:6", 2, opponent="best-response"),
                                                 abs=1e-12)


def test_only_stop_at_rules_for_more_than_two_players():
    with pytest.raises(ValueError, match="stop-at"):
        solve_seats(3, goal=3, rules=((1, "ahead-by:2"),))


def test_a_larger_cap_moves_no_value_by_more_than_the_chance_of_scoring_past_the_cap(three):
    """A seat taken not to catch up from beyond the cap could only have done so by scoring more than `cap` brains in
    one turn, at best F[cap] (duel.py: the chance of beating a lead of `cap`): with a larger cap no value moves by
    more than that once per other seat (measured: about F[cap + 1])."""
    larger = solve_seats(3, goal=5, cap=20)
    diff = max(np.abs(three.values[s] - larger.values[s]).max() for s in three.values if s in larger.values)
    assert 0 < diff < 2 * solved_game("original", "before-draw").final[14]


@pytest.mark.parametrize("mode, recycle", [("original", "before-draw"), ("original", "draw-then-recycle"),
                                           ("big-summer-action-movie", "before-draw"),
                                           ("santa-claus-meets-the-zombies", "before-draw")])
def test_the_cap_moves_no_value_of_a_computed_table_by_1e_9(mode: str, recycle: str):
    """Every table of three or more players computed for the mode (13 brains to win, cap 48): the cap's bound (the
    test above holds the values to it) is below 1e-9. (The sequel's, whose turn takes a minute to build, is 2.8e-11
    for three players: bench/README.md.)"""
    players = [n for n in exact_players(mode) if n >= 3]
    assert players and all(0 < cap_error(mode, recycle, n) < 1e-9 for n in players)


def test_scores_name_one_start_of_a_turn():
    """Nobody at the goal: the normal game; the mover below it and someone at it: the final round; the mover at it: a
    tie-break round among the seats at its score or more (those after it not played yet)."""
    game = Game(3, goal=5, cap=14)
    assert spot_for(game, (2, 3, 1), 1) == Normal((2, 3, 1), 1)
    assert spot_for(game, (7, 3, 4), 1) == Final(1, (4, 3), (0,))
    assert spot_for(game, (6, 6, 2), 2) == Final(2, (4,), (0, 1))
    assert spot_for(game, (5, 5, 5), 0) == Tie((0, 1, 2), 0, 0, ())
    assert spot_for(game, (7, 5, 5), 1) == Tie((0, 1, 2), 1, 2, (0,))
    assert spot_for(game, (6, 3, 5), 2) == Tie((0, 2), 1, 1, (0,))
    for scores, mover in [((5, 3, 6), 0), ((5, 3, 1), 0), ((6, 2, 7), 1), ((6, 2, 1), 0), ((30, 2, 1), 1)]:
        with pytest.raises(ValueError):
            spot_for(game, scores, mover)


def test_a_decision_mid_turn_is_the_solve_s(three):
    """`decision` sweeps one spot's column: its roll at the start of a turn is the spot's value, and its decisions are
    those the batched sweep of `rolls` made."""
    table, kernel = table_for("original", "before-draw"), kernel_for("original", "before-draw")
    for spot in [Normal((2, 3, 1), 1), Final(2, (3,), (0,)), Tie((0, 2), 1, 2, (0,))]:
        mover = three.game.mover(spot)
        start = three.decision(spot, table.start, 0)
        assert start.action == "roll" and start.p_win_roll == pytest.approx(three.values[spot][mover], abs=1e-12)
        for state in range(0, len(table.states), 97):
            for total in (1, 3, 6):
                if state != table.start and total >= kernel.least[kernel.where[state]]:
                    d = three.decision(spot, state, total)
                    assert (d.action == "roll") == three.rolls(spot, state, total) or d.action == "tie"
