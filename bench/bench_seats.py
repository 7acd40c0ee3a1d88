"""Exact play for any number of players (analysis/game/seats.py): the solve's cost, the effect of its cap, and games
with physical dice against its values.

    PYTHONPATH=. .venv/bin/python bench/bench_seats.py [--players 3] [--mode original] [--recycle before-draw]
        [--cap 48] [--cap-check 60] [--games 0] [--seed 1] [--rule SEAT=stop-at:N,S ...] [--table STORE]
        [--answers STORE N]

Prints the solve's CPU and wall seconds, peak memory, the starts of a turn solved and P(each seat
wins) from 0-0-...; with ``--cap-check C``, solves again with cap ``C`` and prints the largest difference of any
value of any start of a turn both solved; with ``--games N``, plays N games with physical dice (analysis.game.many's
`play_rotated`): the players change seats game by game (game k: player k mod n opens), the simulator keeping scores
by player, and at each start of a turn the mover's question is put as a /v1/odds request puts it (``scores``: the
mover's, then the others' in the order they play after it; ``seat``; ``final_round``) and read by the API's code
(analysis.game.advice's `AskedPolicy`: `check_scores`, `table_spot`), the turn played by the solution's decisions at
the start of a turn it names. Prints each seat's frequency of wins against the solution's P(seat wins), and each
player's against the mean over the seats it sat in, with standard errors and the distance in them, and how many
questions were refused (beyond the cap) (with ``--table STORE``, of the table stored there by `zombie-odds tables
build`, not solved again); with ``--rule``, solves once more with each given seat following its rule
(the others maximising against it) and prints that game's P(each seat wins): the optimal seat's edge over the rule
is the difference from the first row, exactly (policy evaluation).

With ``--answers STORE N``, no solve: N `/v1/odds` requests through Flask's test client, each a random position of
`--mode` and `--recycle` reached by play with random scores of the normal game (every seat below the goal, a random
mover), decided from the `--players` table stored in STORE (`zombie-odds tables build --mode MODE --players N`);
prints the first answer's time (it reads the table) and the others' p50, p99 and max.
"""

from __future__ import annotations

import argparse
import random
import resource
import time

import numpy as np

from analysis.game.advice import AskedPolicy
from analysis.game.many import play_rotated
from analysis.game.seats import SeatsSolution, solve_seats


def timed(players: int, mode: str, recycle: str, cap: int, rules: tuple[tuple[int, str], ...] = ()) -> SeatsSolution:
    cpu, wall = time.process_time(), time.perf_counter()
    solution = solve_seats(players, mode, recycle, cap=cap, rules=rules)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    wins = ", ".join(f"{p:.6f}" for p in solution.p_seat_wins)
    who = ", ".join(f"seat {seat}: {rule}" for seat, rule in rules) or "all optimal"
    print(f"| {mode} | {recycle} | {players} | {who} | {cap} | {cpu:.1f} | {wall:.1f} | {peak:.0f} |"
          f" {len(solution.values):,} | {wins} |", flush=True)
    return solution


def stored(store: str, players: int, mode: str, recycle: str) -> SeatsSolution:
    """The table of `players` players stored in `store`."""
    import os

    os.environ["ZOMBIE_ODDS_STORE"] = store
    from workers.tables import load, table_key

    found = load(table_key(mode, recycle, players))
    if found is None:
        raise SystemExit(f"no {players}-player table of {mode} ({recycle}) in {store}")
    return found[0]


def answers(store: str, count: int, seed: int, mode: str, recycle: str, players: int) -> None:
    import os
    import statistics
    import tempfile

    os.environ.update(ZOMBIE_ODDS_STORE=store, ZOMBIE_ODDS_RATELIMIT_ENABLED="false",
                      ZOMBIE_ODDS_SOLUTIONS=tempfile.mkdtemp(prefix="solutions-"))
    from analysis.position import DOUBLE_FEATURE_FIELDS
    from analysis.simulate import random_position
    from api import create_app

    client, rng = create_app().test_client(), random.Random(seed)
    times = []
    for _ in range(count + 1):
        position = random_position(mode, rng, recycle)
        dice = "&".join(f"{field}={','.join(getattr(position, field))}" for field in ("footprints", "brains",
                                                                                       "shotguns"))
        dice += "".join(f"&{field}={','.join(getattr(position, field))}" for field in DOUBLE_FEATURE_FIELDS
                        if getattr(position, field))
        scores = ",".join(str(rng.randrange(13)) for _ in range(players))
        start = time.perf_counter()
        answer = client.get(f"/v1/odds?mode={mode}&recycle={recycle}&{dice}&scores={scores}"
                            f"&seat={rng.randint(1, players)}")
        times.append((time.perf_counter() - start) * 1e3)
        assert answer.status_code == 200 and answer.get_json()["game"]["model"] == "exact", answer.get_json()
    rest = sorted(times[1:])
    print(f"{count} /v1/odds answers of {players} players of {mode}: first {times[0]:.0f} ms; then p50 "
          f"{statistics.median(rest):.1f} ms, p99 {rest[int(0.99 * len(rest))]:.1f} ms, max {rest[-1]:.1f} ms")


def games(solution: SeatsSolution, count: int, seed: int) -> None:
    """`count` games with physical dice, the players changing seats, every decision asked as /v1/odds asks it."""
    policy, n = AskedPolicy(solution), solution.game.n
    start = time.process_time()
    played = play_rotated(n, policy, count, random.Random(seed), solution.p_seat_wins, solution.mode,
                          solution.recycle, solution.game.goal, on_turn=policy.on_turn)
    print(f"\n{count:,} games with physical dice, seats rotated, decisions asked as /v1/odds asks them "
          f"({time.process_time() - start:.0f} s of CPU; {len(policy.spots):,} distinct questions, "
          f"{policy.refused} refused):")
    for name, tally in (("seat", played.seats), ("player", played.identities)):
        for k, f in enumerate(tally):
            print(f"{name} {k}: won {f.won:.5f}, expected {f.expected:.5f} (standard error {f.standard_error:.5f}),"
                  f" {f.sigmas:+.2f} standard errors")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--mode", default="original")
    parser.add_argument("--recycle", default="before-draw")
    parser.add_argument("--cap", type=int, default=48)
    parser.add_argument("--cap-check", type=int)
    parser.add_argument("--games", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rule", action="append", default=[], help="SEAT=stop-at:N,S (seats from 0)")
    parser.add_argument("--table", metavar="STORE", help="no solve: the table stored in STORE")
    parser.add_argument("--answers", nargs=2, metavar=("STORE", "N"))
    args = parser.parse_args()
    if args.answers:
        return answers(args.answers[0], int(args.answers[1]), args.seed, args.mode, args.recycle, args.players)
    if args.table:
        solution = stored(args.table, args.players, args.mode, args.recycle)
        print("P(each seat wins):", ", ".join(f"{p:.6f}" for p in solution.p_seat_wins))
    else:
        print("| mode | recycle | players | seats | cap | CPU s | wall s | peak MiB | turn starts |"
              " P(each seat wins) |\n|---|---|---|---|---|---|---|---|---|---|")
        solution = timed(args.players, args.mode, args.recycle, args.cap)
    for rule in args.rule:
        seat, name = rule.split("=", 1)
        timed(args.players, args.mode, args.recycle, args.cap, ((int(seat), name),))
    if args.cap_check:
        other = timed(args.players, args.mode, args.recycle, args.cap_check)
        common = [s for s in solution.values if s in other.values]
        diff = max(float(np.abs(solution.values[s] - other.values[s]).max()) for s in common)
        print(f"\ncap {args.cap} against {args.cap_check}: largest difference {diff:.1e} over {len(common):,} starts")
    if args.games:
        games(solution, args.games, args.seed)

if __name__ == "__main__":
    main()
