"""Whole games of Zombie Dice for the review tests (analysis/review.py, api/review.py): played with physical dice
(analysis.simulate's cup, hand and two piles) and written down as a scorekeeper would; the log openapi.yaml gives as
its Double Feature example."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import yaml

from analysis.game import GameSolution, policy_table
from analysis.game.play import dice_state_index, fresh_turn
from analysis.simulate import Turn, roll_once

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


def optimal(solution: GameSolution) -> Chooser:
    """The optimal two-player policy, from the batched decisions of analysis.game.play (not from
    `GameSolution.decision`, which the review uses)."""
    table = policy_table(solution)

    def choose(seat: int, scores: tuple[int, ...], state: int, total: int) -> bool:
        return table(seat + 1, scores[seat], scores[1 - seat], state, total)

    return choose


def optimal_game(solution: GameSolution) -> dict:
    """A game of two optimal players (the review's fixture: it costs them nothing)."""
    return play_log(optimal(solution), random.Random(5))


def timid_game(solution: GameSolution) -> dict:
    """Ann plays optimally; Bob always stops after the first roll of his turn."""
    best = optimal(solution)
    return play_log(lambda seat, scores, state, total: seat == 0 and best(seat, scores, state, total),
                    random.Random(11))


SPEC_LOG = yaml.safe_load(Path(__file__).resolve().parents[2].joinpath("openapi.yaml").read_text())["paths"][
    "/v1/review"]["post"]["requestBody"]["content"]["application/json"]["examples"]["direct-to-video-sequel"]["value"]


def die(colour: str, face: str) -> dict[str, str]:
    return {"colour": colour, "face": face}
