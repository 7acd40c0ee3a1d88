"""What one request may solve: per mode, how far from a bust a position is answered in full, exactly, in floats,
or not at all, for the questions no stored solution holds (objectives other than expected brains, exact values
asked for, the sequel with the School Bus near a bust: `odds.stored_solution`). The measure is `room`, the shotguns
a turn can still take: the states a turn can reach grow with it. Each limit is the measured cost of the next room up
(the comments); the API refuses a position past them with the field and the reason (`too_large`), never minutes of
solving. Whatever answers it, stored or solved, a turn whose solvers cap it is answered up to the score they certify
(`MAX_SCORE`, `above_certified`).
"""

from __future__ import annotations

from .dice import EFFECTS
from .objectives import ExpectedBrains, Objective
from .position import FieldError, Position

__all__ = ["room", "max_room", "approximate", "left_out", "too_large", "above_certified", "MAX_ROOM", "BUS_MAX_ROOM",
           "BUS_VALUES_ROOM", "BUS_FLOAT_ROOM", "MAX_TARGET", "FAR_TARGET_ROOM", "REVIEW_MAX_ROOM", "MAX_SCORE"]

# Modes answered only near the end of a turn: the most shotguns a position may be from a bust, less one (`room`).
# analysis solves a Double Feature position over the states its turn can reach from there; in the sequel, with one
# shotgun set aside and Santa in the cup (room 2) that is ~114,000 states (up to 16 s of CPU and 0.9 GB), with none
# (room 3) ~300,000 states whose exact values pass 5.7 GB: there the answer is the float solution of the whole turn
# (`approximate`, for objectives the stored solution does not hold). With the School Bus (phases and tokens besides the
# dice) every Double Feature mode is answered only nearer the end. With rescues (Big Summer, the sequel) YIELD makes
# cycles through lower scores, each a small linear system solved in residues: room 1 (seconds; the sequel's reach:12
# with two shotguns set aside 35 s); at room 2 Big Summer's bus table is the whole turn's, 50 s to exact values of
# 31,000-bit denominators and 99 s and 15 GB more for the distribution (the sequel's room 2: 1,043,126 nodes, 26 s for
# the table, 37 s for the policy, 19 s for exact values, 49 s and 9.4 GB more for the distribution). Santa has no
# rescue: room 2 (one shotgun set aside, his helmet still possible) takes 6-30 s of CPU and up to 2.1 GB; room 3 is his
# whole turn (6.6 million decision pairs to value).
MAX_ROOM = {"direct-to-video-sequel": 2}
BUS_MAX_ROOM = {"big-summer-action-movie": 1, "santa-claus-meets-the-zombies": 2, "direct-to-video-sequel": 1}
# One shotgun further from a bust than `BUS_MAX_ROOM`, the modes with rescues are answered with the bus without the
# turn's score distribution (`left_out`) and for the expected-brains objective only: the next roll, every action's
# exact value and the decision take ~50 s of CPU and 2.6 GB in Big Summer (its whole turn), ~80 s and 4.4 GB in the
# sequel; the distribution through YIELD's cycles 99 s and 15 GB more, 49 s and 9.4 GB.
BUS_VALUES_ROOM = {"big-summer-action-movie": 2, "direct-to-video-sequel": 2}
# Further from a bust (up to this room), a School Bus position is answered from the float solution of the bus table
# it reaches (`approximate`): Santa's whole bus turn, 676,271 nodes, 30-32 s of CPU and 2 GB (bench/bench_floats.py;
# its exact values need 8.2 million (node, score) pairs: unfinished after 12.5 minutes and 3.4 GB).
BUS_FLOAT_ROOM = {"santa-claus-meets-the-zombies": 3}
# A reach:K or rule:N,S target this far above the score is the most a request solves with the School Bus, and in
# the sequel more than `FAR_TARGET_ROOM` from a bust: its policy rolls on through many more (state, score) pairs,
# each an exact fraction. From the base game's bus turn start reach:20 takes 94 s of CPU and 2.9 GB, reach:40 over
# 7 minutes; in the sequel three shotguns from a bust (room 2), reach:20 45 s, reach:40 186 s; Santa with the bus
# three from a bust, reach:21 from a score of 1 170 s and 5.7 GB, reach:14 60 s and 2.5 GB.
MAX_TARGET = 20
FAR_TARGET_ROOM = {"direct-to-video-sequel": 1}
# A turn some of whose rolls cannot bust (Santa's helmet, no shotgun yet) has no score above which every decision
# stops: its solvers cap it `policy.CAP_MARGIN` brains above the bound of every other roll (`policy.stop_bound`; with
# the School Bus, of every other block: `policy.bus_block_bounds`), which moves no value up to that bound by 1e-12 or
# more (tests/analysis/test_policy.py), and stop every decision above the cap. Past the bound the values are not
# certified: with the bus, some of Santa's rolls that can bust are worth rolling up to 789 brains (m/q), and his
# stored bus solution's values read 1.4e-10 off at a score of 350 and 0.11 brains off at 380 (against a solve capped
# at 849). Per (mode, School Bus), the highest turn score answered: the bound (the solution's top less the margin; the
# sequel's School Bus top, 393, adds 2 |min_delta| = 8 levels for its blocks with cycles too).
MAX_SCORE = {("santa-claus-meets-the-zombies", False): 540, ("direct-to-video-sequel", False): 2844,
             ("santa-claus-meets-the-zombies", True): 325, ("direct-to-video-sequel", True): 325}
# The most `room` at which the review solves a Double Feature decision in expected brains (api/review.py's docstring).
REVIEW_MAX_ROOM = {"big-summer-action-movie": 0, "santa-claus-meets-the-zombies": 1, "direct-to-video-sequel": 0}


def room(position: Position) -> int:
    """Shotguns the turn can still take and go on: the bust threshold, raised by every effect a die still in
    play (not in the shotgun pile, not set aside) may yet put in force, less the shotguns set aside (and the
    bus's shotgun tokens), less one. Shotguns never come back, so the states a turn can reach from a
    position grow with its room."""
    mode, state = position.game_mode, position.state
    aside = state.aside or (0,) * len(mode.dice)
    possible = {f.effect for die, n, s, a in zip(mode.dice, mode.counts, state.shotguns, aside) if n > s + a
                for f in die.faces if f.effect in EFFECTS} - set(state.effects)
    taken = state.shotgun_count + position.bus_shotguns
    return state.bust_at(mode) + sum(EFFECTS[e].bust_bonus for e in possible) - taken - 1


def max_room(position: Position) -> int | None:
    """The most `room` at which the server answers a position of this kind in full (None: any)."""
    if position.school_bus and not position.game_mode.plain:
        return BUS_MAX_ROOM.get(position.mode, 0)  # (a mode not measured: only where the next shotgun busts)
    return MAX_ROOM.get(position.mode)


def approximate(position: Position) -> str | None:
    """Why the answer to this position has float values and no score distribution (None: it is exact): a
    mode answered exactly only near the end of a turn (`MAX_ROOM`), without the School Bus, further from a
    bust; with it, further than its exact values reach (`BUS_VALUES_ROOM`, `BUS_MAX_ROOM`) and up to
    `BUS_FLOAT_ROOM`. Its values are the float solution of the turn (`analysis.odds.odds(..., exact=False)`)."""
    mode, here = position.mode, room(position)
    where = "the start of a turn" if position.turn_start else f"{here + 1} shotguns from a bust"
    floats = ("so the values of its actions are floats, solved over the exact transition table and within 1e-9 "
              "(relative above 1) of the exact ones, the decision certain, and the exact score distribution is "
              "given from")
    if position.school_bus:
        exact_room = BUS_VALUES_ROOM.get(mode, BUS_MAX_ROOM.get(mode))
        if exact_room is None or not exact_room < here <= BUS_FLOAT_ROOM.get(mode, -1):
            return None
        return (f"{where} (counting shotgun tokens and a helmet Santa may still show), mode {mode} with the School "
                "Bus has most of its turn ahead: its whole bus turn, whose exact values need 8.2 million (node, "
                f"score) pairs (unfinished after 12.5 minutes); {floats} {BUS_MAX_ROOM.get(mode, 0) + 1} shotguns "
                "from a bust")
    limit = MAX_ROOM.get(mode)
    if limit is None or here <= limit:
        return None
    return (f"{where} (counting a helmet Santa may still show), mode {mode} has most of its turn ahead: "
            "about 6 million (state, score) pairs up to its cap of 2,904 brains, whose exact fractions did not fit "
            f"in 21 GB; {floats} {limit + 1} shotguns from a bust")


def left_out(position: Position) -> str | None:
    """Why the answer to this position leaves out the turn's score distribution (None: it does not; a position
    `too_large` refuses is not answered at all)."""
    limit, floats = max_room(position), approximate(position)
    if not position.school_bus or floats is not None:
        return floats
    if limit is None or room(position) <= limit:
        return None
    return (f"{room(position) + 1} shotguns from a bust (counting shotgun tokens and a helmet Santa may still show), "
            f"mode {position.mode} with the School Bus has most of its turn ahead, where YIELD's rescues make "
            "cycles: the exact score distribution takes minutes and 9-15 GB there; it is given from one shotgun "
            "later")


def above_certified(position: Position) -> FieldError | None:
    """Why no solution of this position's turn answers it, stored or solved (None: they do): a turn score above the
    highest its solvers certify (`MAX_SCORE`)."""
    most = MAX_SCORE.get((position.mode, position.school_bus))
    if most is None or position.score <= most:
        return None
    bus = " with the School Bus" if position.school_bus else ""
    return FieldError("banked", f"a turn score of {position.score} is above {most}, the highest at which mode "
                                f"{position.mode}{bus} is solved: some of its rolls cannot bust (Santa's helmet), "
                                "so its solvers stop every decision some brains above the bound of every other roll, "
                                "and its values past that bound are not certified")


def too_large(position: Position, objective: Objective | None = None) -> FieldError | None:
    """Why the server does not solve this valid position (with this objective) for one request (None: it does)."""
    if (fault := above_certified(position)) is not None:
        return fault
    if objective is not None and objective.above(position.score) > MAX_TARGET:
        above = (f"a target at most {MAX_TARGET} brains above the turn's score ({position.score}) is solved for one "
                 f"request; {objective.name} is {objective.above(position.score)} above it, whose exact values take "
                 "minutes")
        if position.school_bus:
            return FieldError("objective", f"with the School Bus {above}")
        limit = FAR_TARGET_ROOM.get(position.mode)
        if limit is not None and limit < room(position) <= max_room(position):
            return FieldError("objective", f"in mode {position.mode} {room(position) + 1} shotguns from a bust "
                                           f"(at most {limit + 1}: any target) {above}")
    limit = max_room(position)
    if limit is None or room(position) <= limit or approximate(position) is not None:  # further: in floats
        return None
    kind = f"mode {position.mode}{' with the School Bus' if position.school_bus else ''}"
    values = BUS_VALUES_ROOM.get(position.mode) if position.school_bus else None
    if values is not None and room(position) <= values:
        if objective is None or objective == ExpectedBrains():
            return None
        return FieldError("objective", f"{room(position) + 1} shotguns from a bust {kind} is answered for the "
                                       f"objective expected-brains only, without the turn's score distribution; "
                                       f"{objective.name} from {limit + 1} shotguns from a bust")
    answered = (f"{kind} is answered at most {limit + 1} shotguns from a bust, counting shotgun tokens and a "
                "helmet Santa may still show")
    if values is not None:
        answered += f" ({values + 1} for expected-brains, without the turn's score distribution)"
    if position.turn_start:
        return FieldError("mode", f"the start of a turn in {kind}: its whole turn is too large to solve here; "
                                  f"{answered}")
    return FieldError("shotguns", f"{room(position) + 1} shotguns from a bust: too early in the turn, whose dice "
                                  f"states are too many to solve for one request; {answered}")
