"""analysis/game/duel.py: the equations of two optimal players: which turn a start of a turn is, both seats' values
summing to one along the optimal decisions, the positions skipped as certain stops, and the cap's effect."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.game import CAP, GOAL, solve_game
from analysis.game.duel import certain_tops, pairs_of, phase, solve_total, stop_values
from analysis.game.kernel import kernel_for, sweep

G = 13


def test_both_seats_sum_to_one_at_every_start_of_turn(game):
    """Along the optimal decisions, the probability that the *other* player wins, computed from its own
    stop values ``1 - S(T)``, is ``1 - W`` at every start of a turn: no probability is lost or created
    by the turn's outcomes (busts, self-loops, levels above the tops)."""
    kernel = kernel_for(game.mode, game.recycle)
    v = game.values
    specs = [spec for t in range(2 * G - 1) for a, b in pairs_of(t) for spec in ((1, a, b), (2, b, a))]
    specs += [(2, 0, G + d) for d in range(1, 20)] + [(2, G, G), (1, G, G)]
    worst = 0.0
    for chunk in range(0, len(specs), 40):
        cols = specs[chunk:chunk + 40]
        tops = np.array([certain_tops(kernel, v, *c) for c in cols]).T
        levels = int(tops.max()) + 1 + kernel.max_delta
        stop = np.stack([stop_values(v, *c, levels) for c in cols], axis=1)
        mine = sweep(kernel, stop, tops, full=True)
        theirs = sweep(kernel, 1 - stop, tops, policy=mine.rolls.astype(np.int8))
        worst = max(worst, np.abs(mine.start[0] + theirs.start[0] - 1).max())
        for c, spec in enumerate(cols):
            assert mine.start[0, c] == pytest.approx(game.win_probability(*spec), abs=1e-11)
    assert worst < 1e-12


def test_cap_effect_is_below_1e_9(game):
    """Re-solving with 12 more levels of deficit moves no value by more than 1e-9 (nor than the bound)."""
    wider = solve_game(game.mode, game.recycle, CAP + 12)
    assert game.cap_error < 1e-9
    diff = max(np.abs(np.array(game.seat1) - np.array(wider.seat1)).max(),
               np.abs(np.array(game.seat2) - np.array(wider.seat2)).max(),
               np.abs(np.array(game.final) - np.array(wider.final[: CAP + 1])).max(),
               abs(game.tiebreak - wider.tiebreak))
    assert diff <= game.cap_error + 1e-13 and diff < 1e-9


def test_skipped_positions_are_exact(game):
    """Seat 1's positions proven to stop (duel.certain_tops) are not computed; computing every level up
    to the cap instead gives the same pairs (up to rounding)."""
    kernel = kernel_for(game.mode, game.recycle)
    v = game.values

    class Everywhere:  # optimises (-1) at every level up to the cap
        def fix(self, kernel, seat, mover, other):
            tops = certain_tops(kernel, v, seat, mover, other)
            if seat == 1:
                tops = np.full_like(tops, other - mover + v.cap)
            return tops, np.full((tops.max() + 1, kernel.n), -1, dtype=np.int8)

    everywhere = Everywhere()
    for (a, b), (x, y, _) in solve_total(kernel, v, [(5, 9), (12, 2)], (everywhere, everywhere)).items():
        assert (x, y) == pytest.approx((v.w1[a, b], v.w2[b, a]), abs=1e-13)


def test_a_start_of_a_turn_is_a_normal_turn_a_turn_to_beat_or_a_tie_break() -> None:
    assert pairs_of(3) == [(0, 3), (1, 2), (2, 1), (3, 0)]
    assert pairs_of(2 * GOAL - 2) == [(GOAL - 1, GOAL - 1)] and pairs_of(2 * GOAL - 1) == []
    assert phase(GOAL, 1, 12, 12) == phase(GOAL, 2, 0, 12) == "normal"
    assert phase(GOAL, 2, 5, 13) == "beat"  # seat 2's final turn, 8 behind
    assert phase(GOAL, 2, 14, 14) == "beat"  # its turn of a tie-break round, after seat 1 scored 0
    assert phase(GOAL, 1, 14, 14) == "tiebreak"
    for seat, mover, other in [(2, 14, 3), (1, 14, 12), (1, 3, 14), (3, 0, 0), (1, -1, 0)]:
        with pytest.raises(ValueError):
            phase(GOAL, seat, mover, other)


@pytest.mark.parametrize(("seat", "mover", "other"), [(1, 5, 9), (1, 12, 3), (2, 9, 5), (2, 3, 12), (2, 5, 13),
                                                      (2, 14, 14), (1, 14, 14)])
def test_stop_values_are_the_win_probabilities_of_the_turn_that_follows(game, seat, mover, other) -> None:
    """S(T), the mover's chance once it ends its turn with T brains (a bust: S(0)), is 1 - the chance of the player
    who moves next (the module docstring's equations), read from the solution's phases; a seat 2 that reaches the goal
    in the normal game has won, and one beating a lead wins above it and goes to a tie-break round at it."""
    levels = 30
    s = stop_values(game.values, seat, mover, other, levels)
    for t in range(levels):
        if phase(GOAL, seat, mover, other) == "beat":
            lead = other - mover
            expected = 1.0 if t > lead else 1 - game.win_probability(1, other, other) if t == lead else 0.0
        elif seat == 1:
            expected = 1 - game.win_probability(2, other, mover + t)
        else:
            expected = 1 - game.win_probability(1, other, mover + t) if mover + t < GOAL else 1.0
        assert s[t] == pytest.approx(expected, abs=1e-15), t
