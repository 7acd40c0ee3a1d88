"""Charts of solved games, as image bytes: pure functions of a solution (no file, no screen).

Matplotlib draws with its Agg backend on a `Figure` of its own (not pyplot's global state), so
charts can be drawn from any thread. The bytes are reproducible (no date or random ids in the
SVG), so a server may give them a strong ETag derived from the solution they were drawn from.
"""

from __future__ import annotations

import io

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure

from .game.seats import Normal, SeatsSolution
from .game.solution import GameSolution

__all__ = ["win_heatmap", "seats_heatmap", "roll_stop_regions", "FORMATS"]

FORMATS = ("png", "svg")
# SVG ids are random unless salted; the date is left out: the same solution, the same bytes
_REPRODUCIBLE = {"svg.hashsalt": "zombie-odds", "svg.fonttype": "none"}
_METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None}}


def win_heatmap(solution: GameSolution, fmt: str = "png") -> bytes:
    """P(the player to move wins) at the start of a turn, over both scores below the goal.

    Two panels, seat 1 to move (the first player of a round) and seat 2 to move; rows are the
    mover's score, columns the opponent's; each cell shows the percentage, the black line is the
    0.5 contour (even chances). `fmt` is ``png`` or ``svg``.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    g = solution.goal
    panels = (("Seat 1 to move (first player)", np.array(solution.seat1)),
              ("Seat 2 to move (second player)", np.array(solution.seat2)))
    with matplotlib.rc_context(_REPRODUCIBLE):
        fig = Figure(figsize=(13, 6.4), dpi=100)  # a fixed layout: a constrained one doubles the drawing time
        FigureCanvasAgg(fig)
        fig.subplots_adjust(left=0.05, right=0.88, bottom=0.09, top=0.87, wspace=0.18)
        axes = fig.subplots(1, 2)
        for ax, (title, w) in zip(axes, panels):
            image = ax.imshow(w, origin="lower", cmap="RdBu", vmin=0, vmax=1, interpolation="nearest")
            ax.contour(np.arange(g), np.arange(g), w, levels=[0.5], colors="black", linewidths=1.5)
            for a in range(g):
                for b in range(g):
                    ax.text(b, a, f"{100 * w[a, b]:.0f}", ha="center", va="center", fontsize=7,
                            color="white" if abs(w[a, b] - 0.5) > 0.3 else "black")
            ax.set_title(title)
            ax.set_xlabel("Opponent's score")
            ax.set_ylabel("Score of the player to move")
            ax.set_xticks(range(g))
            ax.set_yticks(range(g))
        bar = fig.colorbar(image, cax=fig.add_axes((0.9, 0.12, 0.015, 0.72)), label="P(the player to move wins)")
        bar.ax.axhline(0.5, color="black", linewidth=1.5)
        fig.suptitle(f"Zombie Dice, two players ({solution.mode}, recycle {solution.recycle}): win probability "
                     f"at the start of a turn, in %. First player wins {solution.p_first_player_wins:.2%} from 0-0.")
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, metadata=_METADATA[fmt])
    return buffer.getvalue()


def seats_heatmap(solution: SeatsSolution, fmt: str = "png") -> bytes:
    """P(the player to move wins) at the start of a turn of the normal game, for more than two players: small
    multiples, one panel per seat to move; rows are the mover's score, columns the best score of the others, and a
    cell is the mean over the starts of a turn with those two (the other players' scores below the best, uniformly).
    Each cell shows the percentage; white and the black line are the fair share (1 / players). `fmt` is ``png`` or
    ``svg``."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    n, g = solution.game.n, solution.game.goal
    total, count = np.zeros((n, g, g)), np.zeros((n, g, g))
    for spot, p in solution.values.items():
        if isinstance(spot, Normal):
            m, scores = spot.mover, spot.scores
            best = max(s for q, s in enumerate(scores) if q != m)
            total[m, scores[m], best] += p[m]
            count[m, scores[m], best] += 1
    mean = total / count
    fair = TwoSlopeNorm(1 / n, 0, 1)  # white at the fair share: red below it, blue above
    with matplotlib.rc_context(_REPRODUCIBLE):
        fig = Figure(figsize=(6.5 * n, 6.4), dpi=100)
        FigureCanvasAgg(fig)
        fig.subplots_adjust(left=0.04, right=0.9, bottom=0.09, top=0.87, wspace=0.18)
        for seat, ax in enumerate(fig.subplots(1, n)):
            w = mean[seat]
            image = ax.imshow(w, origin="lower", cmap="RdBu", norm=fair, interpolation="nearest")
            ax.contour(np.arange(g), np.arange(g), w, levels=[1 / n], colors="black", linewidths=1.5)
            for a in range(g):
                for b in range(g):
                    ax.text(b, a, f"{100 * w[a, b]:.0f}", ha="center", va="center", fontsize=6,
                            color="white" if w[a, b] > 0.8 or w[a, b] < 0.08 else "black")
            ax.set_title(f"Seat {seat + 1} to move")
            ax.set_xlabel("Best score of the others")
            ax.set_ylabel("Score of the player to move")
            ax.set_xticks(range(g))
            ax.set_yticks(range(g))
        bar = fig.colorbar(image, cax=fig.add_axes((0.92, 0.12, 0.01, 0.72)), label="P(the player to move wins)")
        bar.ax.axhline(1 / n, color="black", linewidth=1.5)
        wins = ", ".join(f"{p:.1%}" for p in solution.p_seat_wins)
        fig.suptitle(f"Zombie Dice, {n} players ({solution.mode}, recycle {solution.recycle}): win probability at the "
                     f"start of a turn, in %, the others below the best averaged. From 0-0-0 the seats win {wins}.")
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, metadata=_METADATA[fmt])
    return buffer.getvalue()


def roll_stop_regions(panels: list[tuple[str, np.ndarray]], rows: list[str], totals: list[int], fmt: str = "png",
                      title: str = "") -> bytes:
    """Where a turn's optimal player rolls and where it stops: one panel per number of shotguns.

    Each panel is ``(title, share)`` with ``share[r, t]`` the share of the visits to positions with the
    footprint dice `rows[r]` in hand and turn total `totals[t]` at which the player rolls (NaN where
    nobody goes: drawn blank); green rolls, red stops, yellow is a mix (the dice left in the cup
    decide). Panels are stacked, so the chart stays narrow enough for a phone. `fmt`: png or svg.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="#eeeeee")
    height = 1.0 + len(panels) * (0.9 + 0.24 * len(rows))
    with matplotlib.rc_context(_REPRODUCIBLE):
        fig = Figure(figsize=(8, height), dpi=100, layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(len(panels), 1, squeeze=False, sharex=True)[:, 0]
        image = None
        for ax, (name, share) in zip(axes, panels):
            image = ax.imshow(np.ma.masked_invalid(share), cmap=cmap, vmin=0, vmax=1, aspect="auto",
                              interpolation="nearest")
            ax.set_title(name, loc="left", fontsize=10)
            ax.set_yticks(range(len(rows)), rows, fontsize=7)
            ax.set_ylabel("Footprints in hand", fontsize=8)
        axes[-1].set_xticks(range(len(totals)), [str(t) for t in totals], fontsize=7)
        axes[-1].set_xlabel("Brains this turn (turn total)")
        if image is not None:
            fig.colorbar(image, ax=list(axes), shrink=0.6, label="Share of visits where the optimal player rolls")
        if title:
            fig.suptitle(title, fontsize=10)
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, metadata=_METADATA[fmt])
    return buffer.getvalue()
