"""The content of a scheduled report for one mode, as plain data (JSON-ready; no I/O, no rendering).

`build` gathers, for one mode and rules variant, what issue #5 asks a nightly report to say:

* ``turn``: the optimal expected score of one turn from its start and the distribution of the turn's
  score under that policy, in exact fractions (exact.py; for Santa Claus, whose turn is capped at 600
  brains, about 3 minutes of CPU: fractions of 1,500 digits);
* ``bust``: the probability that the next roll busts, for common positions: 0-2 shotguns set aside
  by the footprint dice in hand (roll.py);
* ``game``: P(the first player wins) with two optimal players (a `GameSolution`, usually the stored
  table) and P(win) at the start of every turn (the heatmap's data);
* ``rules``: each simple fixed rule's probability of winning against the optimal player, by exact
  policy evaluation (game/rules.py), in either seat;
* ``policy``: a compact human summary of the single-turn optimal policy (one sentence per number of
  shotguns: a threshold on the turn's brains and at most two exceptions by the footprint dice in
  hand), with how often each sentence takes the optimal decision, and the roll/stop regions.

Agreement is weighted by *visits*: the expected number of times per turn a player following the
optimal policy faces each position (a forward pass of probability mass, `decision_visits`), so a
position nobody reaches counts for nothing and a common one counts for a lot. The start of a turn
(its roll is compulsory) is no decision and is left out.

A section that cannot be computed is listed as missing, with the reason, never guessed: the game
sections without a table, the single-turn sections (and the rules, which play the turn's dice) of a mode
whose turn start is too large to answer exactly (odds.NO_WHOLE_TURN) or is not built by the caller (a
worker's memory budget: `build`'s ``solve_missing``).

Every table is ``{"name", "title", "columns", "rows", "note"}`` with plain cells (str, int, float,
None), so a renderer writes any of them as HTML or CSV alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations_with_replacement
from typing import Any

import numpy as np

from .dice import MODES, Mode
from .exact import MARGIN, ExactTurn, exact_turn, fraction_text
from .game.rules import Rule, parse_rule, rule_game
from .game.solution import GameSolution
from .objectives import ExpectedBrains
from .odds import NO_WHOLE_TURN, TOO_LARGE
from .policy import Solution, solve, sweep
from .position import Position
from .roll import next_roll

__all__ = ["REPORT_FORMAT", "DEFAULT_RULES", "build", "bust_positions", "decision_visits", "optimal_decisions",
           "summarise_policy", "hand_tests", "PolicySummary", "ShotgunRule", "region_grid", "table"]

REPORT_FORMAT = "zombie-odds/report/1"
# Classic rules of thumb: hold at N brains (stop-at:N[,S] also stops at S shotguns), roll until ahead by D.
DEFAULT_RULES = ("stop-at:2", "stop-at:3", "stop-at:4", "stop-at:5", "stop-at:6,2", "ahead-by:1", "ahead-by:3")
BASE_COLOURS = ("green", "yellow", "red")  # the dice of every mode; shotguns are set aside reddest first
REGION_TOTALS = 20  # the roll/stop regions cover turn totals 0..20
MAX_EXCEPTIONS = 2  # per sentence of the policy summary
MIN_GAIN = 0.005  # an exception must add this much agreement (share of the sentence's visits)
NEVER = None  # a threshold that never stops


# -- plain data helpers ---------------------------------------------------------------------------
def table(name: str, title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], note: str = "",
          **extra: Any) -> dict[str, Any]:
    """One table of the report (plain data); `extra` carries rendering hints: ``pivot`` (show it as a
    matrix of one value by two columns), ``fold`` (its rows say what the section's text says)."""
    return {"name": name, "title": title, "columns": list(columns), "rows": [list(r) for r in rows], "note": note,
            **extra}


def _fact(label: str, value: float, exact: str | None = None, kind: str = "probability") -> dict[str, Any]:
    """A headline number: `kind` is ``probability`` or ``brains`` (how to show it); `exact` if known."""
    return {"label": label, "value": float(value), "kind": kind, **({"exact": exact} if exact else {})}


def _missing(section: str, title: str, reason: str) -> dict[str, Any]:
    return {"id": section, "title": title, "status": "missing", "reason": reason, "facts": [], "text": [],
            "tables": [], "charts": []}


def _section(section: str, title: str, *, facts=(), text=(), tables=(), charts=()) -> dict[str, Any]:
    return {"id": section, "title": title, "status": "ok", "reason": "", "facts": list(facts), "text": list(text),
            "tables": list(tables), "charts": list(charts)}


def _pile(dice: Sequence[str]) -> str:
    return ", ".join(dice) if dice else "none"


# -- bust odds --------------------------------------------------------------------------------------
def bust_positions(mode: str, variant: str = "before-draw") -> list[tuple[tuple[str, ...], int, Position]]:
    """The common positions of the bust table: every hand of 0-3 footprint dice of the base colours by
    0-2 shotguns set aside.

    Each is completed into a position the game can reach: the shotguns are the reddest dice left (red,
    then yellow, then green: the likeliest to show a shotgun), and as many green dice as needed (the
    likeliest brains) are in the brain pile for the first roll's dice to be out of the cup; nothing is
    noted. The hand of no footprint with no shotgun is the start of a turn.
    """
    m = MODES[mode]
    colours = [c for c in BASE_COLOURS if c in m.die_names]
    out = []
    for size in range(m.dice_per_roll + 1):
        for hand in combinations_with_replacement(colours, size):
            left = {c: dict(m.cup)[c] - hand.count(c) for c in colours}
            if min(left.values()) < 0:
                continue  # more dice of a colour than the mode has (Double Feature has 2 yellow)
            for shotguns in range(3):
                rest = dict(left)
                shot = _take(rest, reversed(colours), shotguns)
                brains = _take(rest, colours, max(0, m.dice_per_roll - size - shotguns)) if size + shotguns else []
                out.append((hand, shotguns, Position(mode=mode, footprints=hand, brains=tuple(brains),
                                                     shotguns=tuple(shot), recycle=variant)))
    return out


def _take(left: dict[str, int], order, n: int) -> list[str]:
    taken = []
    for colour in order:
        k = min(n - len(taken), left[colour])
        taken += [colour] * k
        left[colour] -= k
    return taken


def _bust_section(mode: str, variant: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows = []
    for hand, shotguns, position in bust_positions(mode, variant):
        q = next_roll(position).bust
        rows.append([_pile(hand), shotguns, _pile(position.brains), _pile(position.shotguns), fraction_text(q),
                     float(q)])
    t = table("bust_odds", "Bust odds of the next roll", ["footprints", "shotguns", "brain_pile", "shotgun_pile",
                                                           "bust_exact", "bust"], rows,
              "Footprint dice in hand by shotguns set aside. The shotgun pile holds the reddest dice left, the "
              "brain pile green dice until the first roll's dice are out of the cup; nothing noted.",
              pivot={"row": "footprints", "column": "shotguns", "value": "bust"})
    text = ["P(the next roll busts) for common positions. Footprint dice in hand are rerolled; the rest of "
            "the roll is drawn from the cup."]
    return _section("bust", "Bust odds of the next roll", text=text, tables=["bust_odds"]), [t]


# -- one turn ----------------------------------------------------------------------------------------
def _turn_section(solution: Solution, exact: ExactTurn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Exact values from the start of the turn (state 0 at score 0).

    The exact distribution is one forward pass of exact probability mass (exact.py) and the expected
    score is ``sum k P(k)`` over it: the value of rolling at the start (a tie, which the pass stops, is
    worth as much either way)."""
    dist = exact.score_distribution(solution.table.start, 0)
    value = sum((k * p for k, p in dist.items()), Fraction(0))
    rows = [[k, fraction_text(p), float(p)] for k, p in dist.items()]
    facts = [_fact("Expected score of a turn (optimal play)", float(value), fraction_text(value), "brains"),
             _fact("P(the turn scores 0)", float(dist[0]), fraction_text(dist[0]))]
    for k in (5, 10, 13):
        at_least = sum((p for s, p in dist.items() if s >= k), Fraction(0))
        facts.append(_fact(f"P(the turn scores at least {k})", float(at_least), fraction_text(at_least)))
    how = "exact values"
    if solution.capped:
        how += (f"; a state that cannot bust (a helmet and no shotgun) would roll on for ever, so the turn stops at "
                f"{solution.top} brains")
    t = table("score_distribution", "Score of one turn under the optimal policy", ["score", "exact", "probability"],
              rows, f"Probabilities of every final score of a turn, played to maximise the expected score ({how}).")
    text = [f"One turn from its start, the player maximising the expected number of brains ({how})."]
    return _section("turn", "One turn, optimal play", facts=facts, text=text, tables=["score_distribution"]), [t]


# -- the optimal policy: visits and a summary ------------------------------------------------------------
def optimal_decisions(solution: Solution, exact: ExactTurn | None) -> np.ndarray:
    """rolls[T, i] for T <= top: the optimal action (ties stop, as exact.py plays them).

    Near-ties (values less than 1e-9 apart) are settled exactly when `exact` is given and the table is not
    capped, else stopped: a capped table's near-ties lie by the hundred at scores nobody reaches, where
    exact values cost minutes (Santa) and change no visit-weighted figure."""
    table_ = solution.table
    stop = np.array([float(solution.objective.stop_value(s)) for s in range(solution.top + 1)])[:, None]
    margin = MARGIN * np.maximum(1.0, np.abs(stop))
    roll = np.asarray(solution.roll)  # dense (top + 1) x states: built once (policy.Solution holds it ragged)
    rolls = roll > stop + margin
    if exact is not None and not solution.capped:
        for score, i in zip(*np.nonzero(~rolls & (roll >= stop - margin))):
            rolls[score, i] = exact.decision(int(i), int(score)) == "roll"
    if table_.compulsory:
        rolls[:, table_.start] = True
    return rolls


def decision_visits(solution: Solution, rolls: np.ndarray,
                    visit: Callable[[int, np.ndarray, np.ndarray, np.ndarray], None]) -> None:
    """The expected number of times per turn the player following `rolls` decides at each position.

    Probability mass flows forward from the start, in the reverse of the solvers' sweep: blocks from
    the fewest shotguns to the most, score levels upwards, layers from last to first; so a position's
    mass is complete when it is reached. A rolling state is decided at ``mass / (1 - p)`` times (its
    self-loop ``p`` brings it back), a stopping one once. For each (score, layer) with mass,
    ``visit(score, states, visits, rolled)`` is called (the start of the turn included).
    """
    t = solution.table
    levels = solution.top + 1 + t.max_delta
    mass = np.zeros((levels, len(t)))
    mass[0, t.start] = 1.0
    for b in reversed(range(len(t.blocks))):
        block, mats = t.blocks[b], t.layer_matrices[b]
        for score in range(levels):
            for layer, layer_mats in reversed(list(zip(block, mats))):
                m = mass[score, layer]
                if not m.any():
                    continue
                r = rolls[score, layer] if score <= solution.top else np.zeros(len(layer), dtype=bool)
                flow = np.where(r, m / (1.0 - t.self_loop_f[layer]), 0.0)
                visit(score, layer, np.where(r, flow, m), r)
                if r.any():
                    for d, matrix in layer_mats:
                        if 0 <= score + d < levels:
                            mass[score + d] += matrix.T @ flow


@dataclass(frozen=True)
class HandTest:
    """A condition on the footprint dice in hand that a player sees at a glance."""

    text: str
    test: Callable[[tuple[int, ...]], bool]


def hand_tests(mode: Mode) -> tuple[HandTest, ...]:
    """The conditions an exception of the summary may use: no footprint, a footprint (or two) of a die, only
    green footprints."""
    names = mode.die_names
    tests = [HandTest("no footprint in hand", lambda h: sum(h) == 0)]
    for k, name in enumerate(names):
        tests.append(HandTest(f"a {name} footprint in hand", lambda h, k=k: h[k] >= 1))
        tests.append(HandTest(f"2+ {name} footprints in hand", lambda h, k=k: h[k] >= 2))
    green = names.index("green")
    tests.append(HandTest("only green footprints in hand", lambda h: sum(h) >= 1 and h[green] == sum(h)))
    return tuple(tests)


@dataclass(frozen=True)
class ShotgunRule:
    """One sentence of the summary: with k shotguns, stop once the turn has `threshold` brains, unless
    the hand passes one of the `exceptions` (condition, threshold: the first that matches decides).

    A threshold of None never stops. `agreement` is the visit-weighted share of the optimal decisions
    it takes among positions with k shotguns, `weight` the share of all decisions made with k shotguns.
    """

    shotguns: int
    threshold: int | None
    exceptions: tuple[tuple[str, int | None], ...]
    agreement: float
    weight: float

    @property
    def text(self) -> str:
        head = "no shotgun" if self.shotguns == 0 else f"{self.shotguns} shotgun{'s' * (self.shotguns > 1)}"
        words = f"With {head}: {_stop_words(self.threshold)}"
        for i, (condition, t) in enumerate(self.exceptions):
            words += f"; {'but ' if i == 0 else 'else '}with {condition}, {_stop_words(t)}"
        return words + "."

    def threshold_for(self, hand: tuple[int, ...], tests: dict[str, HandTest]) -> int | None:
        for condition, t in self.exceptions:
            if tests[condition].test(hand):
                return t
        return self.threshold


def _stop_words(t: int | None) -> str:
    if t is None:
        return "keep rolling"
    return f"stop once you have {t} brain{'s' * (t != 1)}"


@dataclass(frozen=True)
class PolicySummary:
    rules: tuple[ShotgunRule, ...]
    agreement: float  # over every decision, visit-weighted
    optimal_value: float  # expected score of a turn, optimal policy
    summary_value: float  # expected score of a turn when playing the summary
    regions: dict[tuple[int, tuple[int, ...]], tuple[np.ndarray, np.ndarray]]  # (k, hand) -> (rolled, visits)


def summarise_policy(solution: Solution, exact: ExactTurn | None = None) -> PolicySummary:
    """Derive one sentence per number of shotguns from the optimal policy, greedily (see the module doc)."""
    t = solution.table
    mode = t.mode
    levels = solution.top + 1 + t.max_delta
    hands = sorted({s.hand for s in t.states})
    hand_id = np.array([hands.index(s.hand) for s in t.states])
    ks = sorted(set(t.shotguns.tolist()))
    groups = len(ks) * len(hands)
    group = np.array([ks.index(k) for k in t.shotguns]) * len(hands) + hand_id
    rolled, visits = np.zeros((levels, groups)), np.zeros((levels, groups))
    rolls = optimal_decisions(solution, exact)

    def visit(score: int, layer: np.ndarray, v: np.ndarray, r: np.ndarray) -> None:
        keep = layer != t.start  # the compulsory first roll is no decision
        g = group[layer[keep]]
        visits[score] += np.bincount(g, v[keep], groups)
        rolled[score] += np.bincount(g, v[keep] * r[keep], groups)

    decision_visits(solution, rolls, visit)
    total = visits.sum()
    tests = hand_tests(mode)
    # agree[x, g]: visits of group g whose optimal decision the threshold thresholds[x] takes (roll below it)
    thresholds: list[int | None] = list(range(1, min(levels, 41))) + [NEVER]
    cuts = [levels if x is None else x for x in thresholds]
    zero = np.zeros((1, groups))
    cum_roll = np.vstack([zero, np.cumsum(rolled, axis=0)])
    cum_stop = np.vstack([zero, np.cumsum(visits - rolled, axis=0)])
    agree = cum_roll[cuts] + cum_stop[levels] - cum_stop[cuts]
    by_test = {h.text: h for h in tests}
    rules = []
    for n, k in enumerate(ks):
        gs = np.arange(n * len(hands), (n + 1) * len(hands))
        weight = float(visits[:, gs].sum())
        if weight == 0:
            continue

        def score(base: int, exceptions: list[tuple[str, int]], gs: np.ndarray = gs) -> float:
            """Agreement (in visits) of a sentence: threshold indexes, the first matching exception wins."""
            picks = [next((x for c, x in exceptions if by_test[c].test(hand)), base) for hand in hands]
            return float(agree[picks, gs].sum())

        base = max(range(len(thresholds)), key=lambda x: score(x, []))  # max keeps the first (lowest) of ties
        chosen: list[tuple[str, int]] = []
        best = score(base, chosen)
        for _ in range(MAX_EXCEPTIONS):
            used = {c for c, _ in chosen}
            options = [(score(base, chosen + [(h.text, x)]), h.text, x) for h in tests if h.text not in used
                       for x in range(len(thresholds)) if x != base]
            gain, text, x = max(options, key=lambda o: o[0])
            if gain - best < MIN_GAIN * weight:
                break
            chosen.append((text, x))
            best = gain
        rules.append(ShotgunRule(k, thresholds[base], tuple((c, thresholds[x]) for c, x in chosen), best / weight,
                                 weight / total))
    agreement = sum(r.agreement * r.weight for r in rules)
    by_k = {r.shotguns: r for r in rules}
    forced = np.zeros((solution.top + 1, len(t)), dtype=bool)
    scores = np.arange(solution.top + 1)
    for i, state in enumerate(t.states):
        rule = by_k.get(int(t.shotguns[i]))
        if rule is None or (i == t.start and t.compulsory):
            continue
        th = rule.threshold_for(state.hand, by_test)
        if th is not None:
            forced[:, i] = scores >= th
    stop = np.array([float(solution.objective.stop_value(s)) for s in range(solution.top + 1 + t.max_delta)])
    played, _ = sweep(t, stop, solution.top, forced)
    regions = {}
    for n, k in enumerate(ks):
        for h_index, hand in enumerate(hands):
            g = n * len(hands) + h_index
            if visits[:, g].any():
                regions[(k, hand)] = (rolled[:, g] / total, visits[:, g] / total)
    return PolicySummary(tuple(rules), agreement, float(solution.roll[0, t.start]), float(played[0, t.start]),
                         regions)


def _hand_label(mode: Mode, hand: tuple[int, ...]) -> str:
    return _pile([name for name, n in zip(mode.die_names, hand) for _ in range(n)])


def _policy_section(mode: str, solution: Solution, exact: ExactTurn | None) -> tuple[dict[str, Any],
                                                                                      list[dict[str, Any]]]:
    s = summarise_policy(solution, exact)
    m = MODES[mode]
    rows = [[r.shotguns, r.text, float(r.agreement), float(r.weight)] for r in s.rules]
    summary = table("policy_summary", "The optimal policy in a few sentences", ["shotguns", "rule", "agreement",
                                                                                 "share_of_decisions"], rows,
                    "agreement: share of the optimal decisions the sentence takes, weighted by how often a player "
                    "following the optimal policy faces each position (expected visits per turn).", fold=True)
    region_rows = []
    for (k, hand), (rolled, visits) in sorted(s.regions.items()):
        for score in range(min(REGION_TOTALS + 1, len(visits))):
            if visits[score] > 0:
                region_rows.append([k, _hand_label(m, hand), score, float(rolled[score] / visits[score]),
                                    float(visits[score])])
    regions = table("roll_regions", "Where the optimal player rolls", ["shotguns", "footprints", "turn_total",
                                                                        "roll_share", "visit_share"], region_rows,
                    "roll_share: share of the visits to positions with these shotguns, footprint dice in hand and "
                    "turn total at which the optimal player rolls (positions differ by the dice left in the cup); "
                    f"visit_share: share of all decisions of a turn (turn totals 0..{REGION_TOTALS}).")
    facts = [_fact("Agreement of the summary with the optimal decisions (visit-weighted)", s.agreement),
             _fact("Expected score of a turn playing the summary", s.summary_value, kind="brains"),
             _fact("Expected score of a turn playing optimally", s.optimal_value, kind="brains")]
    text = [r.text + f" (agrees {r.agreement:.1%} of the time)" for r in s.rules]
    text.append("Agreement is weighted by visits: the expected number of times per turn a player following the "
                "optimal policy (maximising expected brains) faces each position; the compulsory first roll is "
                "not counted.")
    return (_section("policy", "The optimal policy, summarised", facts=facts, text=text,
                     tables=["policy_summary", "roll_regions"],
                     charts=[{"name": "roll_stop_regions", "table": "roll_regions",
                              "title": "Roll/stop regions of the optimal policy"}]),
            [summary, regions])


def region_grid(regions: dict[str, Any], max_rows: int = 20) -> tuple[list[tuple[str, np.ndarray]], list[str],
                                                                         list[int]]:
    """The `roll_regions` table as chart panels: one (title, share[row, total]) per number of shotguns,
    rows the `max_rows` most visited hands (most visited first), NaN where nobody goes."""
    cols = regions["columns"]
    k_at, h_at, t_at, r_at, w_at = (cols.index(c) for c in ("shotguns", "footprints", "turn_total", "roll_share",
                                                          "visit_share"))
    weight: dict[str, float] = {}
    for row in regions["rows"]:
        weight[row[h_at]] = weight.get(row[h_at], 0.0) + row[w_at]
    hands = sorted(weight, key=lambda h: -weight[h])[:max_rows]
    totals = list(range(REGION_TOTALS + 1))
    ks = sorted({row[k_at] for row in regions["rows"]})
    panels = []
    for k in ks:
        grid = np.full((len(hands), len(totals)), np.nan)
        for row in regions["rows"]:
            if row[k_at] == k and row[h_at] in hands:
                grid[hands.index(row[h_at]), row[t_at]] = row[r_at]
        panels.append((f"{k} shotgun{'s' * (k != 1)}", grid))
    return panels, hands, totals


# -- the game ------------------------------------------------------------------------------------------
def _game_section(game: GameSolution) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    g = game.goal
    rows = [[a, *game.seat1[a]] for a in range(g)]
    heat = table("p_win", "P(first player wins) at the start of its turn", ["score", *(f"vs_{b}" for b in range(g))],
                 rows, "Row: the first player's score, column: the second player's; the first player to move.")
    facts = [_fact("P(the first player wins), two optimal players", game.p_first_player_wins),
             _fact("P(the second player wins)", 1 - game.p_first_player_wins),
             _fact("Bound on the error of the table (its cap)", game.cap_error)]
    text = [f"Two players, both maximising their probability of winning, race to {g} brains (RULES.md section 1)."]
    return (_section("game", "Two players", facts=facts, text=text, tables=["p_win"],
                     charts=[{"name": "win_heatmap", "table": "p_win", "title": "P(win) at the start of a turn"}]),
            [heat])


def _rule_words(rule: Rule) -> str:
    extra = f" or {rule.shotguns} shotguns" if rule.shotguns < 3 else ""
    if rule.kind == "stop-at":
        return f"stop at {rule.target} brains{extra}"
    return f"roll until ahead by {rule.target}{extra}"


def _rules_section(mode: str, variant: str, game: GameSolution, rules: Sequence[str]) -> tuple[dict[str, Any],
                                                                                               list[dict[str, Any]]]:
    rows = [["optimal", "the optimal policy", game.p_first_player_wins, 1 - game.p_first_player_wins, 0.5]]
    for text in rules:
        rule = parse_rule(text)
        p = []
        for seat in (1, 2):
            v = rule_game(rule, seat, mode, variant, "optimal", game.cap, solution=game)
            p.append(float(v.w1[0, 0] if seat == 1 else 1 - v.w1[0, 0]))
        rows.append([rule.name, _rule_words(rule), p[0], p[1], (p[0] + p[1]) / 2])
    t = table("rules", "Simple rules against the optimal player", ["rule", "description", "p_win_first",
                                                                    "p_win_second", "p_win_either"], rows,
              "P(the rule's player wins) against a player maximising its probability of winning, moving first or "
              "second; either: the seat drawn at random. Exact policy evaluation (no simulation).")
    text = ["A fixed rule of thumb against the optimal player (who does not know it faces a rule)."]
    return _section("rules", "Rules of thumb against optimal play", text=text, tables=["rules"]), [t]


# -- the whole report --------------------------------------------------------------------------------------
def build(mode: str, variant: str = "before-draw", game: GameSolution | None = None, *,
          rules: Sequence[str] = DEFAULT_RULES, game_missing: str = "", solve_missing: str = "") -> dict[str, Any]:
    """The report's content for `mode` and `variant` (plain data, see the module doc).

    `game` is the two-player table (None: the game sections are missing, `game_missing` says why).
    `solve_missing`, when given, says why the whole-turn table is not built here (a memory budget): the
    sections that need it (one turn, the policy, the rules, which play the turn's dice) are then listed
    as missing with that reason, and only the bust odds and a stored two-player table are shown.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    for text in rules:
        parse_rule(text)  # a bad rule fails before any work
    sections, tables = [], []

    def add(part: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
        sections.append(part[0])
        tables.extend(part[1])

    why = solve_missing
    if mode in NO_WHOLE_TURN:
        why = f"the start of a turn of mode {mode} is not solved exactly here: {TOO_LARGE}"
    if why:
        sections.append(_missing("turn", "One turn, optimal play", why))
        add(_bust_section(mode, variant))
        sections.append(_missing("policy", "The optimal policy, summarised", why))
    else:
        objective = ExpectedBrains()
        solution = solve(mode, variant, objective)
        exact = exact_turn(mode, variant, objective)
        add(_turn_section(solution, exact))
        add(_bust_section(mode, variant))
        add(_policy_section(mode, solution, exact))
    if game is None:
        why = game_missing or f"the two-player table of mode {mode} ({variant}) is not available"
        sections.append(_missing("game", "Two players", why))
        sections.append(_missing("rules", "Rules of thumb against optimal play", why))
    else:
        if (game.mode, game.recycle) != (mode, variant):
            raise ValueError(f"the table is for {game.mode} ({game.recycle}), not {mode} ({variant})")
        add(_game_section(game))
        if why:
            sections.append(_missing("rules", "Rules of thumb against optimal play", why))
        else:
            add(_rules_section(mode, variant, game, rules))
    return {"format": REPORT_FORMAT, "mode": mode, "title": MODES[mode].title, "variant": variant,
            "rules": list(rules), "sections": sections, "tables": tables}
