"""Positions shared by the analysis test modules: the roots whose turns are solved over the states (nodes, with the
School Bus) they reach, one per Double Feature mode (`ROOTS`) and one per mode with the bus (`BUS_ROOTS`)."""

from __future__ import annotations

from analysis import Position

ORIGINAL, BSAM, SANTA, DTV = "original", "big-summer-action-movie", "santa-claus-meets-the-zombies", \
    "direct-to-video-sequel"


def bus(**fields) -> Position:
    return Position(school_bus=True, **fields)


ROOTS = {
    BSAM: Position(mode=BSAM, footprints=["hottie"], brains=["hunk", "green"], double_brains=["hunk"],
                   shotguns=["red"]),
    SANTA: Position(mode=SANTA, footprints=["santa", "green"], brains=["yellow"], shotguns=["red"]),
    DTV: Position(mode=DTV, footprints=["hottie"], brains=["santa", "yellow"], shotguns=["red", "red"]),
}

BUS_ROOTS = {
    ORIGINAL: bus(footprints=["green"], brains=["yellow", "red"], shotguns=["red", "yellow"]),
    BSAM: bus(mode=BSAM, footprints=["hottie"], brains=["hunk", "green", "green"], double_brains=["hunk"],
              shotguns=["red", "red"], riding=True),
    SANTA: bus(mode=SANTA, footprints=["green"], brains=["yellow", "green"], shotguns=["red", "red"]),
    DTV: bus(mode=DTV, footprints=["hottie"], brains=["hunk", "yellow"], double_brains=["hunk"],
             shotguns=["santa", "red"], riding=True),  # (Santa shot: the sequel's table from here is small)
}
