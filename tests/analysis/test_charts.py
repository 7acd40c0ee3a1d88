"""analysis/charts.py: charts of solved games as image bytes: every cell's value drawn (its percentage written, its
share's colour), the title's figures, PNG or SVG, and the same bytes for the same solution."""

from __future__ import annotations

import base64
import io
import itertools
import xml.etree.ElementTree as ET
from collections import Counter

import matplotlib
import matplotlib.image
import numpy as np
import pytest

from analysis.charts import roll_stop_regions, seats_heatmap, win_heatmap
from analysis.game import GameSolution, SeatsSolution
from analysis.game.seats import Final, Game, Normal

SVG = "{http://www.w3.org/2000/svg}"


def texts(svg: bytes) -> list[str]:
    return [t.text for t in ET.fromstring(svg).iter(SVG + "text")]


def images(svg: bytes) -> list[np.ndarray]:
    """The raster images an SVG embeds (as RGBA bytes)."""
    out = []
    for image in ET.fromstring(svg).iter(SVG + "image"):
        href = next(v for k, v in image.attrib.items() if k.endswith("href"))
        out.append((matplotlib.image.imread(io.BytesIO(base64.b64decode(href.split(",", 1)[1]))) * 255).round())
    return out


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def test_the_win_heatmap_writes_every_cell_of_both_seats(game: GameSolution) -> None:
    svg = win_heatmap(game, "svg")
    written = Counter(texts(svg))
    cells = Counter(f"{100 * w:.0f}" for seat in (game.seat1, game.seat2) for row in seat for w in row)
    assert not cells - written  # each cell's percentage (beside the ticks' numbers)
    title = next(t for t in written if t.startswith("Zombie Dice, two players"))
    assert f"{game.p_first_player_wins:.2%}" in title and "original" in title
    assert win_heatmap(game, "svg") == svg  # reproducible: no date, no random ids
    assert png_size(win_heatmap(game)) == (1300, 640)
    with pytest.raises(ValueError, match="format"):
        win_heatmap(game, "gif")


def test_the_seats_heatmap_averages_the_others_below_the_best() -> None:
    """Three players to 3 brains, made-up values: a cell is the mover's mean chance over the starts of a turn of the
    normal game with its score and the others' best (the final round's spots left out)."""
    rng = np.random.default_rng(5)
    game = Game(3, goal=3)
    values = {Normal(scores, m): rng.dirichlet(np.ones(3)) for scores in itertools.product(range(3), repeat=3)
              for m in range(3)}
    values[Final(1, (2,), (0,))] = np.array([1.0, 0.0, 0.0])
    solution = SeatsSolution("original", "before-draw", game, values)
    expected = []
    for m, own, best in itertools.product(range(3), repeat=3):
        chances = [v[m] for spot, v in values.items() if isinstance(spot, Normal) and spot.mover == m
                   and spot.scores[m] == own and max(s for q, s in enumerate(spot.scores) if q != m) == best]
        expected.append(f"{100 * np.mean(chances):.0f}")
    svg = seats_heatmap(solution, "svg")
    assert not Counter(expected) - Counter(texts(svg))
    title = next(t for t in texts(svg) if t.startswith("Zombie Dice, 3 players"))
    assert ", ".join(f"{p:.1%}" for p in values[Normal((0, 0, 0), 0)]) in title
    assert png_size(seats_heatmap(solution)) == (1950, 640)
    with pytest.raises(ValueError):
        seats_heatmap(solution, "jpeg")


def test_the_roll_stop_regions_colour_each_share_and_leave_blank_where_nobody_goes() -> None:
    first = np.array([[0.0, 0.5, np.nan], [1.0, 0.25, 0.75]])
    second = np.array([[np.nan, 1.0, 1.0], [0.0, 0.0, np.nan]])
    svg = roll_stop_regions([("0 shotguns", first), ("1 shotgun", second)], ["none", "green"], [0, 1, 2], "svg",
                            "The title")
    assert {"0 shotguns", "1 shotgun", "none", "green", "The title"} <= set(texts(svg))
    cmap = matplotlib.colormaps["RdYlGn"]
    panels = images(svg)[:2]  # (then the colour bar's)
    for share, drawn in zip((first, second), panels):
        colours = {tuple(c) for c in drawn.reshape(-1, 4).tolist()}
        expected = {tuple(float(x) for x in cmap(v, bytes=True)) for v in share[~np.isnan(share)].tolist()}
        assert colours == expected | {(238.0, 238.0, 238.0, 255.0)}  # NaN: #eeeeee
    png = roll_stop_regions([("0 shotguns", first)], ["none", "green"], [0, 1, 2])
    assert png == roll_stop_regions([("0 shotguns", first)], ["none", "green"], [0, 1, 2])
    assert png_size(png)[0] == 800
