"""Grading a played match: every checker play and cube action, error rates as gnubg and XG report them.

:func:`analyse_match` takes a replayed :class:`~bgbot.formats.records.MatchRecord`
(it knows nothing of the file it came from) and an :class:`~bgbot.engine.api.Engine`,
and grades each decision at the chosen ply (XG convention: 1-ply = the
network alone, 2-ply = gnubg's 1-ply):

* **checker play**: the equity of the play made against the best play, both
  valued as :meth:`Engine.best_move <bgbot.engine.api.Engine.best_move>` ranks
  plays - cubeful money equity in a money game, match winning chances shown
  in gnubg's EMG normalisation in a match.  A played move the move filters
  left at a shallower ply is valued again at the full ply, as gnubg does.
* **cube actions**: before every roll where the side on roll may double,
  :meth:`Engine.cube_action <bgbot.engine.api.Engine.cube_action>` gives the
  no double / double-take / double-pass equities (from the doubler, normalised
  to the cube); doubling or not is graded against the better of no double and
  the opponent's best answer, the answer (take / pass) against the better
  answer.

Errors are equity lost (>= 0), in EMG normalised to the cube value like
gnubg's.  Marks follow gnubg 1.07.001's default analysis thresholds
(``show analysis``: doubtful 0.030, bad 0.060, very bad 0.120), named here
doubtful / error / blunder.

Rates (per player):

* gnubg's error rate in mEMG: ``1000 * total error / decisions``, where the
  checker rate divides by the *unforced* moves (more than one legal play),
  the cube rate by the *close or actual* cube decisions (every double, take
  and pass, and the no-doubles whose no-double and double equities are
  within 0.25 of each other or where the position is too good to double -
  gnubg manual, "Cube statistics"), and the overall rate by both counts
  together.
* Snowie's rate: total error over the moves of *both* players (x 1000).
* XG's PR: ``500 * total error / non-obvious decisions``; bgbot counts the
  same decisions as gnubg's overall rate, so PR = overall mEMG / 2.

Luck (per roll, at 1-ply whatever the analysis ply, as gnubg's default luck
analysis uses its 0-ply): the value of the best play of the roll rolled minus
the average value of the best play over all 36 rolls (the 30 non-doubles for
the opening roll), positive = lucky.  Unlike gnubg's, the values are
cubeless (dead cube: the match equity table after each outcome, in EMG), so
that the rolls of a whole game cost one batched network call (split across the
engine's threads) rather than 21 cubeful searches a roll.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from bgbot.engine.search import check_ply
from bgbot.errors import ConfigError
from bgbot.eval.evaluate import evaluate_distinct, flip_probs, segment_argmax
from bgbot.formats.ids import format_xgid
from bgbot.formats.records import GameRecord, MatchRecord, RecordEntry
from bgbot.rules.dice import ROLLS, Dice
from bgbot.rules.matchstate import CubeState, MatchState
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position

if TYPE_CHECKING:
    from pathlib import Path

    from numpy.typing import NDArray

    from bgbot.engine.cube import CubeDecision
    from bgbot.engine.met import MatchEquityTable
    from bgbot.engine.search import Analysis, MoveFilter
    from bgbot.eval.evaluate import Evaluator


class Engine(Protocol):
    """What the analysis uses of an engine; :class:`bgbot.engine.api.Engine` is one.

    A protocol, so that this module (which the engine API's ``analyse`` calls) does not import the API back.
    """

    evaluator: Evaluator
    filters: tuple[MoveFilter, ...]
    checkpoint: Path | None
    _met: MatchEquityTable | str | None
    _exact_cube: bool

    @property
    def met(self) -> MatchEquityTable: ...

    @classmethod
    def load(cls, path: str | None = None, **kwargs: Any) -> Engine: ...

    def evaluate(self, pos: Position | str, ply: int = 1) -> NDArray[np.float64]: ...

    def best_move(self, pos: Position | str, dice: object, ply: int = 1,
                  state: CubeState | MatchState | None = None, *, cubeless: bool = False) -> Analysis: ...

    def cube_action(self, pos: Position | str, state: CubeState | MatchState | None = None, *, ply: int = 1,
                    x: float | None = None, probs: Sequence[float] | None = None,
                    take_point: bool = True) -> CubeDecision: ...

    def _decision(self, p: Position, cs: CubeState, probs: Sequence[float], x: float | None = None, *,
                  take_point: bool = True) -> CubeDecision: ...

__all__ = [
    "CLOSE_CUBE",
    "THRESHOLDS",
    "Decision",
    "MatchAnalysis",
    "PlayerStats",
    "Thresholds",
    "analyse_match",
]

DecisionKind = Literal["move", "double", "no_double", "take", "drop"]
Skill = Literal["", "doubtful", "error", "blunder"]


@dataclass(frozen=True)
class Thresholds:
    """Equity losses (EMG, normalised to the cube) from which a decision is marked."""

    doubtful: float = 0.030
    error: float = 0.060
    blunder: float = 0.120

    def __post_init__(self) -> None:
        vals = (self.doubtful, self.error, self.blunder)
        if not all(isinstance(v, int | float) and math.isfinite(v) and v > 0 for v in vals) or not (
            vals[0] <= vals[1] <= vals[2]
        ):
            raise ConfigError(
                f"thresholds must be positive and increasing (doubtful <= error <= blunder), got {vals!r}"
            )

    def mark(self, error: float) -> Skill:
        """``'blunder'``, ``'error'``, ``'doubtful'`` or ``''`` for an equity loss."""
        if error >= self.blunder:
            return "blunder"
        if error >= self.error:
            return "error"
        if error >= self.doubtful:
            return "doubtful"
        return ""


#: gnubg 1.07.001's defaults (``show analysis``: -0.030 doubtful, -0.060 bad, -0.120 very bad).
THRESHOLDS = Thresholds()
#: A no-double counts as a cube decision when no double and double are this close (gnubg manual).
CLOSE_CUBE = 0.25


@dataclass(frozen=True)
class Decision:
    """One graded decision of ``player`` (0/1) in game ``game``, its ``turn``-th turn of that game.

    ``position`` is seen from the side on roll (the mover, or the doubler for
    ``double`` / ``no_double`` / ``take`` / ``drop``); ``state`` the score and
    cube before the decision.  ``equity_played`` / ``equity_best`` are from
    the deciding player's view (the taker's for take / drop), EMG normalised
    to the cube; ``error`` their difference (>= 0) and ``error_mwc`` the same
    loss in match winning chance (None in money play).  ``forced``: a single
    legal play; ``counted``: the decision counts in the error rates (an
    unforced move, a close or actual cube decision).  ``luck`` (moves only) is
    the roll's luck for the mover.  ``line``: the record's line, when known.
    """

    game: int
    turn: int
    player: int
    kind: DecisionKind
    position: Position
    state: MatchState
    dice: Dice | None
    played: str
    best: str
    equity_played: float
    equity_best: float
    error: float
    error_mwc: float | None
    skill: Skill
    forced: bool
    counted: bool
    luck: float | None = None
    line: int | None = None

    @property
    def is_cube(self) -> bool:
        """True for a cube decision (double / no double / take / drop)."""
        return self.kind != "move"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (position as gnubg Position ID and XGID, side on roll's view)."""
        return {
            "game": self.game,
            "turn": self.turn,
            "player": self.player,
            "kind": self.kind,
            "position": self.position.gnubg_id(),
            "xgid": format_xgid(self.position, self.state),
            "dice": list(self.dice) if self.dice else None,
            "played": self.played,
            "best": self.best,
            "equity_played": round(self.equity_played, 6),
            "equity_best": round(self.equity_best, 6),
            "error": round(self.error, 6),
            "error_mwc": None if self.error_mwc is None else round(self.error_mwc, 6),
            "skill": self.skill,
            "forced": self.forced,
            "counted": self.counted,
            "luck": None if self.luck is None else round(self.luck, 6),
            "line": self.line,
        }


@dataclass
class PlayerStats:
    """One player's figures over the match: counts, error totals (EMG) and rates (mEMG), luck.

    ``checker_rate`` = 1000 x checker error / unforced moves; ``cube_rate`` =
    1000 x cube error / close-or-actual cube decisions; ``overall_rate`` over
    both; ``snowie_rate`` over the moves of both players; ``pr`` = 500 x total
    error / counted decisions (XG's PR).  ``luck_rate`` is mEMG per roll.
    """

    name: str
    moves: int = 0
    unforced: int = 0
    checker_error: float = 0.0
    checker_marks: dict[str, int] = field(default_factory=lambda: {"doubtful": 0, "error": 0, "blunder": 0})
    cube_decisions: int = 0
    close_cube: int = 0
    doubles: int = 0
    takes: int = 0
    drops: int = 0
    cube_error: float = 0.0
    cube_marks: dict[str, int] = field(default_factory=lambda: {"doubtful": 0, "error": 0, "blunder": 0})
    error_mwc: float = 0.0
    luck_total: float = 0.0
    rolls: int = 0
    checker_rate: float = 0.0
    cube_rate: float = 0.0
    overall_rate: float = 0.0
    snowie_rate: float = 0.0
    pr: float = 0.0
    luck_rate: float = 0.0

    @property
    def total_error(self) -> float:
        """Checker and cube error together (EMG)."""
        return self.checker_error + self.cube_error


@dataclass(frozen=True)
class MatchAnalysis:
    """The graded match: every :class:`Decision` in order, each player's :class:`PlayerStats`, and the
    ``timeline`` of player 0's prospects before each turn (``(game, value)``: match winning chance in a
    match, cubeful equity in cube units plus the points won so far in a money session)."""

    match: MatchRecord
    ply: int
    decisions: tuple[Decision, ...]
    players: tuple[PlayerStats, PlayerStats]
    timeline: tuple[tuple[int, float], ...]
    thresholds: Thresholds = THRESHOLDS
    seconds: float = 0.0

    def mistakes(self, player: int, n: int = 5) -> list[Decision]:
        """``player``'s ``n`` costliest marked decisions, biggest first."""
        marked = [d for d in self.decisions if d.player == player and d.skill]
        return sorted(marked, key=lambda d: -d.error)[:n]

    def to_dict(self, mistakes: int = 5) -> dict[str, Any]:
        """Everything as JSON-ready data: match, ply, players' figures, decisions, the timeline."""
        m = self.match
        return {
            "match": {
                "names": list(m.names),
                "length": m.length,
                "games": len(m.games),
                "score": list(m.score),
                "source": m.source,
            },
            "ply": self.ply,
            "thresholds": asdict(self.thresholds),
            "seconds": round(self.seconds, 2),
            "players": [
                {
                    **asdict(p),
                    "total_error": p.total_error,
                    "mistakes": [d.to_dict() for d in self.mistakes(i, mistakes)],
                }
                for i, p in enumerate(self.players)
            ],
            "decisions": [d.to_dict() for d in self.decisions],
            "timeline": [{"game": g, "value": round(v, 6)} for g, v in self.timeline],
        }

    def text(self, mistakes: int = 5) -> str:
        """The statistics as text, laid out like gnubg's ``show statistics match`` (errors as equity lost).

        Each player's ``mistakes`` costliest marked decisions follow (errors from that player's view);
        ``mistakes=0`` leaves the lists out altogether.
        """
        m = self.match
        p0, p1 = self.players
        what = f"{m.length}-point match" if m.length else "money session"
        unit = "MWC" if m.length else "ppg"
        lines = [
            f"{m.names[0]} vs {m.names[1]}: {what}, {len(m.games)} game(s), final score {m.score[0]}-{m.score[1]}",
            f"Analysed at {self.ply}-ply (XG convention; gnubg's {self.ply - 1}-ply), marks: doubtful >= "
            f"{self.thresholds.doubtful:.3f}, error >= {self.thresholds.error:.3f}, blunder >= "
            f"{self.thresholds.blunder:.3f} (EMG lost)",
            "",
            f"{'Player':<40} {p0.name:<22} {p1.name:<22}",
        ]

        def row(label: str, a: object, b: object) -> None:
            lines.append(f"{label:<40} {a!s:<22} {b!s:<22}")

        lines += ["", "Chequerplay statistics", ""]
        row("Total moves", p0.moves, p1.moves)
        row("Unforced moves", p0.unforced, p1.unforced)
        for k, label in (
            ("doubtful", "doubtful"),
            ("error", "error (gnubg: bad)"),
            ("blunder", "blunder (gnubg: very bad)"),
        ):
            row(f"Moves marked {label}", p0.checker_marks[k], p1.checker_marks[k])
        row("Error total EMG", f"{p0.checker_error:.3f}", f"{p1.checker_error:.3f}")
        row("Error rate mEMG", f"{p0.checker_rate:.1f}", f"{p1.checker_rate:.1f}")
        lines += ["", "Luck statistics", ""]
        row("Rolls", p0.rolls, p1.rolls)
        row("Luck total EMG", f"{p0.luck_total:+.3f}", f"{p1.luck_total:+.3f}")
        row("Luck rate mEMG (per roll)", f"{p0.luck_rate:+.1f}", f"{p1.luck_rate:+.1f}")
        lines += ["", "Cube statistics", ""]
        row("Total cube decisions", p0.cube_decisions, p1.cube_decisions)
        row("Close or actual cube decisions", p0.close_cube, p1.close_cube)
        row("Doubles", p0.doubles, p1.doubles)
        row("Takes", p0.takes, p1.takes)
        row("Passes", p0.drops, p1.drops)
        for k in ("doubtful", "error", "blunder"):
            row(f"Cube decisions marked {k}", p0.cube_marks[k], p1.cube_marks[k])
        row("Error total EMG", f"{p0.cube_error:.3f}", f"{p1.cube_error:.3f}")
        row("Error rate mEMG", f"{p0.cube_rate:.1f}", f"{p1.cube_rate:.1f}")
        lines += ["", "Overall statistics", ""]
        row("Error total EMG", f"{p0.total_error:.3f}", f"{p1.total_error:.3f}")
        if m.length:
            row(f"Error total {unit} (%)", f"{100 * p0.error_mwc:.2f}", f"{100 * p1.error_mwc:.2f}")
        row("Error rate mEMG", f"{p0.overall_rate:.1f}", f"{p1.overall_rate:.1f}")
        row("Snowie error rate", f"{p0.snowie_rate:.1f}", f"{p1.snowie_rate:.1f}")
        row("PR (XG)", f"{p0.pr:.2f}", f"{p1.pr:.2f}")
        for i, p in enumerate(self.players):
            if mistakes <= 0:  # no list asked for (the HTML report lists them in its own table)
                break
            worst = self.mistakes(i, mistakes)
            lines += ["", f"Biggest mistakes of {p.name}", ""]
            if not worst:
                lines.append(f"  none marked (no decision lost {self.thresholds.doubtful:.3f} EMG or more)")
            for d in worst:
                dice = f" {d.dice[0]}{d.dice[1]}" if d.dice else ""
                lines.append(
                    f"  game {d.game}, turn {d.turn}{dice}: played {d.played!r}, better {d.best!r}: "
                    f"-{d.error:.3f} ({d.skill})  {d.position.gnubg_id()}"
                )
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# the analysis
# ---------------------------------------------------------------------------


def _opponent_state(state: MatchState) -> CubeState:
    """The cube state of the opponent of ``state.on_roll`` (on roll after the move, same cube)."""
    return CubeState.of(state.at_decision(1 - state.on_roll))


def _value(engine: Engine, result: Position, opp: CubeState, opp_probs: Sequence[float]) -> tuple[float, float | None]:
    """The mover's cubeful value of a play's ``result`` (opponent's view) from the opponent's probabilities.

    Minus the opponent's best cube action, exactly as :meth:`Engine.best_move` values its candidates (a
    finished game included: the engine's decision for it is a dead cube).
    """
    d = engine._decision(result, opp, opp_probs)
    return -d.equity_optimal, None if d.mwc_optimal is None else 1.0 - d.mwc_optimal


def _regrade(engine: Engine, result: Position, state: MatchState, ply: int) -> tuple[float, float | None]:
    """The chosen play's cubeful value at the full ``ply`` (the move filters may have left it shallower)."""
    return _value(engine, result, _opponent_state(state), engine.evaluate(result, ply))


def _dead_coefficients(engine: Engine, state: MatchState) -> tuple[float, ...] | None:
    """The mover's (``state.on_roll``) MWC after winning 1-3 and losing 1-3 times the cube, and the span that
    maps MWC to EMG (gnubg's ``mwc2eq``); None in money play, where the dead-cube value is the cubeless
    equity."""
    if not state.match_length:
        return None
    me, opp = state.on_roll, 1 - state.on_roll
    a, b = state.match_length - state.score[me], state.match_length - state.score[opp]
    post = not state.crawford and 1 in (a, b)
    c = state.cube_value

    def after(points: int) -> float:
        return engine.met.mwc_after(a, b, points, crawford=state.crawford, post_crawford=post)

    win1, win2, win3, lose1, lose2, lose3 = (after(c), after(2 * c), after(3 * c), after(-c), after(-2 * c),
                                             after(-3 * c))
    return win1, win2, win3, lose1, lose2, lose3, win1 - lose1


def _dead_values(mover_probs: NDArray[np.float64], coefficients: NDArray[np.float64] | None) -> NDArray[np.float64]:
    """Dead-cube (cubeless) value of ``(N, 5)`` probabilities of the mover, in EMG normalised to the cube:
    cubeless equity in money play; in a match the MWC over the six outcomes (``coefficients``, ``(N, 7)``:
    :func:`_dead_coefficients` of each row's match state) mapped to EMG as gnubg's ``mwc2eq``."""
    w, wg, wbg, lg, lbg = (mover_probs[:, k] for k in range(5))
    if coefficients is None:
        return 2.0 * w - 1.0 + wg - lg + wbg - lbg
    win1, win2, win3, lose1, lose2, lose3, span = (coefficients[:, k] for k in range(7))
    mwc = (w - wg) * win1 + (wg - wbg) * win2 + wbg * win3 + (1.0 - w - lg) * lose1 + (lg - lbg) * lose2 + lbg * lose3
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(span > 0, (2.0 * mwc - (win1 + lose1)) / span, 0.0)


#: the rolls a luck step weighs (all 21; the opening roll cannot be a double), and their weights out of 36
_LUCK_ROLLS = {opening: np.array([r for r in ROLLS if not (opening and r[0] == r[1])], dtype=np.int64)
               for opening in (False, True)}
_LUCK_WEIGHTS = {k: np.where(r[:, 0] == r[:, 1], 1.0, 2.0) for k, r in _LUCK_ROLLS.items()}


def _lucks(engine: Engine, moves: Sequence[tuple[Position, Dice, MatchState, bool]]) -> list[float]:
    """Luck of each ``(position, dice, state, opening)`` for its mover: the best play's value with the dice
    rolled minus the average over the rolls.

    At 1-ply and cubeless (dead cube) to keep it cheap: every roll's plays of
    every move (a game's, in analysis) are evaluated in one network call, each
    distinct position once, the best of each roll by its dead-cube value
    (:func:`_dead_values`).
    """
    if not moves:
        return []
    rolls = [_LUCK_ROLLS[opening] for _, _, _, opening in moves]
    boards = np.concatenate([np.repeat(pos.array()[None, :], len(r), axis=0)
                             for (pos, *_), r in zip(moves, rolls, strict=True)])
    succ, parent = successors_batch(boards, np.concatenate(rolls))  # (M, 26) opponent's view
    mover = flip_probs(np.asarray(evaluate_distinct(engine.evaluator, succ), dtype=np.float64))
    coefficients = [_dead_coefficients(engine, state) for _, _, state, _ in moves]
    if coefficients[0] is None:  # money play: every move of a record is
        values = _dead_values(mover, None)
    else:
        per_board = np.repeat(np.array(coefficients, dtype=np.float64), [len(r) for r in rolls], axis=0)
        values = _dead_values(mover, per_board[parent])
    best = values[segment_argmax(values, parent, len(boards))]
    out: list[float] = []
    start = 0
    for (_, dice, _, opening), r in zip(moves, rolls, strict=True):
        mine = best[start : start + len(r)]
        k = int(np.flatnonzero((r[:, 0] == max(dice)) & (r[:, 1] == min(dice)))[0])
        weights = _LUCK_WEIGHTS[opening]
        out.append(float(mine[k] - np.dot(weights, mine) / weights.sum()))
        start += len(r)
    return out


def _cube_values(d: CubeDecision) -> tuple[float, float, float]:
    """(no double, double/take, double/pass) from the doubler, normalised; a double that is not legal counts as
    no double."""
    nd = d.equity_no_double
    dt = d.equity_double_take if d.equity_double_take is not None else nd
    dp = d.equity_double_pass if d.equity_double_pass is not None else nd
    return nd, dt, dp


def _close(d: CubeDecision) -> bool:
    nd, dt, dp = _cube_values(d)
    return abs(nd - min(dt, dp)) <= CLOSE_CUBE or d.action.startswith("too_good")


def _mwc_loss(d: CubeDecision, error: float) -> float | None:
    """An EMG loss in match winning chance: EMG is linear in MWC at a given score and cube (gnubg's
    ``mwc2eq``), so the slope comes from two of the decision's own (EMG, MWC) pairs.  None in money play."""
    pairs = [
        (e, m)
        for e, m in (
            (d.equity_no_double, d.mwc_no_double),
            (d.equity_double_pass, d.mwc_double_pass),
            (d.equity_double_take, d.mwc_double_take),
        )
        if e is not None and m is not None
    ]
    for (e0, m0), (e1, m1) in itertools.combinations(pairs, 2):
        if abs(e1 - e0) > 1e-9:
            return error * (m1 - m0) / (e1 - e0)
    return None


def analyse_match(
    engine: Engine,
    match: MatchRecord,
    ply: int = 2,
    *,
    thresholds: Thresholds = THRESHOLDS,
    luck: bool = True,
    progress: Callable[[int], None] | None = None,
    workers: int = 1,
) -> MatchAnalysis:
    """Grade every checker play and cube action of ``match`` at ``ply`` (see the module docstring).

    ``progress(n)`` is called after each action with the number done (for a
    progress bar; the total is the number of actions of all games; with
    workers, after each game).  ``luck=False`` skips the luck analysis (21
    extra 1-ply searches a roll).  ``workers`` > 1 grades the games in that
    many spawned processes (each loads the engine's model file once: an
    engine without one, built on an in-memory network, grades in this
    process); the result is the same as in one process.
    """
    ply = check_ply(ply)
    t0 = time.perf_counter()
    spec = _engine_spec(engine)
    if workers > 1 and len(match.games) > 1 and spec is not None:
        per_game = _games_in_processes(spec, match, ply, thresholds, luck, progress, workers)
    else:
        per_game = []
        done = 0
        for game in match.games:
            decisions_g, tl, done = _analyse_game(engine, game, ply, thresholds, luck, progress, done)
            per_game.append((decisions_g, tl))
    decisions: list[Decision] = []
    timeline: list[tuple[int, float]] = []
    banked = 0.0  # money: player 0's points won in earlier games
    for game, (decisions_g, tl) in zip(match.games, per_game, strict=True):
        decisions += decisions_g
        timeline += [(game.number, v + banked if not match.length else v) for v in tl]
        if not match.length and game.winner is not None:
            banked += game.points if game.winner == 0 else -game.points
    stats = _stats(match, decisions)
    return MatchAnalysis(match, ply, tuple(decisions), stats, tuple(timeline), thresholds, time.perf_counter() - t0)


#: what a worker process needs to rebuild an engine: (its class, model file, move filters, match equity table,
#: bear-off on); the class travels by name, as pickle sends classes
_EngineSpec = tuple[type, str, tuple[Any, ...], Any, bool]
_worker_engines: dict[_EngineSpec, Engine] = {}


def _engine_spec(engine: Engine) -> _EngineSpec | None:
    """How a worker process rebuilds ``engine`` (None when it has no model file to load)."""
    if engine.checkpoint is None:
        return None
    return type(engine), str(engine.checkpoint), tuple(engine.filters), engine._met, engine._exact_cube


def _grade_game_task(
    spec: _EngineSpec, game: GameRecord, ply: int, thresholds: Thresholds, luck: bool
) -> tuple[list[Decision], list[float]]:
    """One game graded in a worker process, by the engine ``spec`` names (loaded once per process)."""
    engine = _worker_engines.get(spec)
    if engine is None:
        cls, path, filters, met, bearoff = spec
        # one thread: the games are spread over the cores already
        engine = _worker_engines[spec] = cls.load(path, filters=filters, met=met, bearoff=bearoff, threads=1)
    decisions, timeline, _ = _analyse_game(engine, game, ply, thresholds, luck, None, 0)
    return decisions, timeline


def _games_in_processes(
    spec: _EngineSpec,
    match: MatchRecord,
    ply: int,
    thresholds: Thresholds,
    luck: bool,
    progress: Callable[[int], None] | None,
    workers: int,
) -> list[tuple[list[Decision], list[float]]]:
    """Every game of ``match`` graded in ``workers`` spawned processes, the longest games first; in game order."""
    import concurrent.futures as cf
    import multiprocessing as mp

    games = match.games
    order = sorted(range(len(games)), key=lambda i: -len(games[i].actions))
    out: list[tuple[list[Decision], list[float]] | None] = [None] * len(games)
    done = 0
    with cf.ProcessPoolExecutor(min(workers, len(games)), mp_context=mp.get_context("spawn")) as pool:
        futures = {pool.submit(_grade_game_task, spec, games[i], ply, thresholds, luck): i for i in order}
        for fut in cf.as_completed(futures):
            i = futures[fut]
            out[i] = fut.result()
            done += len(games[i].actions)
            if progress is not None:
                progress(done)
    return [r for r in out if r is not None]


def _analyse_game(
    engine: Engine,
    game: GameRecord,
    ply: int,
    thresholds: Thresholds,
    luck: bool,
    progress: Callable[[int], None] | None,
    done: int,
) -> tuple[list[Decision], list[float], int]:
    out: list[Decision] = []
    timeline: list[float] = []
    items = list(game.states())
    lines = list(game.lines) + [None] * (len(items) - len(game.lines))
    turns = [0, 0]
    doubled_this_turn = False
    first_move = True
    pending: CubeDecision | None = None
    rolled: list[tuple[int, tuple[Position, Dice, MatchState, bool]]] = []  # (index in out, what luck needs)
    for k, (entry, state) in enumerate(items):
        line = lines[k]
        if entry.kind == "move":
            turns[entry.player] += 1
            if not first_move and not doubled_this_turn:
                d = _turn_decision(engine, entry, state, ply)
                timeline.append(_p0_value(d, state))
                if d.equity_double_take is not None and d.can_double:
                    nd, dt, dp = _cube_values(d)
                    best = max(nd, min(dt, dp))
                    err = max(0.0, best - nd)
                    out.append(
                        Decision(
                            game.number,
                            turns[entry.player],
                            entry.player,
                            "no_double",
                            entry.position,
                            state.at_decision(),
                            None,
                            "no double",
                            "double" if best > nd else "no double",
                            nd,
                            best,
                            err,
                            _mwc_loss(d, err),
                            thresholds.mark(err),
                            False,
                            _close(d),
                            None,
                            line,
                        )
                    )
            doubled_this_turn = False
            out.append(_grade_move(engine, game, entry, state, ply, thresholds, turns[entry.player], line))
            if luck:
                assert entry.dice is not None  # a move entry
                rolled.append((len(out) - 1, (entry.position, entry.dice, state, first_move)))
            first_move = False
        elif entry.kind == "double":
            turns[entry.player] += 1
            d = _turn_decision(engine, entry, state, ply)
            timeline.append(_p0_value(d, state))
            nd, dt, dp = _cube_values(d)
            best = max(nd, min(dt, dp))
            chosen = min(dt, dp)
            err = max(0.0, best - chosen)
            out.append(
                Decision(
                    game.number,
                    turns[entry.player],
                    entry.player,
                    "double",
                    entry.position,
                    state.at_decision(),
                    None,
                    "double",
                    "double" if best == chosen else "no double",
                    chosen,
                    best,
                    err,
                    _mwc_loss(d, err),
                    thresholds.mark(err),
                    False,
                    True,
                    None,
                    line,
                )
            )
            pending = d
            doubled_this_turn = True
            turns[entry.player] -= 1  # the move that follows a take is the same turn
        else:
            assert pending is not None  # the replay guarantees a double before an answer
            nd, dt, dp = _cube_values(pending)
            take_v, pass_v = -dt, -dp  # the taker's view
            chosen = take_v if entry.kind == "take" else pass_v
            best = max(take_v, pass_v)
            err = max(0.0, best - chosen)
            out.append(
                Decision(
                    game.number,
                    turns[entry.player] + 1,
                    entry.player,
                    entry.kind,
                    entry.position,
                    state,
                    None,
                    "take" if entry.kind == "take" else "pass",
                    "take" if take_v >= pass_v else "pass",
                    chosen,
                    best,
                    err,
                    _mwc_loss(pending, err),
                    thresholds.mark(err),
                    False,
                    True,
                    None,
                    line,
                )
            )
            pending = None
        done += 1
        if progress is not None:
            progress(done)
    # the luck of every roll of the game in one batch (one network call, split across the engine's threads)
    for (i, _), value in zip(rolled, _lucks(engine, [m for _, m in rolled]), strict=True):
        out[i] = dataclasses.replace(out[i], luck=value)
    return out, timeline, done


def _turn_decision(engine: Engine, entry: RecordEntry, state: MatchState, ply: int) -> CubeDecision:
    # the take point is not graded: its search (about 40 cube-model evaluations in a match) is skipped
    return engine.cube_action(entry.position, state.at_decision(), ply=ply, take_point=False)


def _p0_value(d: CubeDecision, state: MatchState) -> float:
    """Player 0's prospects before this turn: MWC in a match, cubeful equity in points in money play."""
    if d.mwc_optimal is not None:
        return d.mwc_optimal if state.on_roll == 0 else 1.0 - d.mwc_optimal
    eq = d.equity_optimal * state.cube_value
    return eq if state.on_roll == 0 else -eq


def _grade_move(
    engine: Engine,
    game: GameRecord,
    entry: RecordEntry,
    state: MatchState,
    ply: int,
    thresholds: Thresholds,
    turn: int,
    line: int | None,
) -> Decision:
    """The checker play of ``entry`` graded at ``ply`` (its luck is filled in later, for a whole game)."""
    assert entry.dice is not None and entry.result is not None  # a move entry
    a = engine.best_move(entry.position, entry.dice, ply, state.at_decision(dice=entry.dice))
    best = a.best
    chosen = next((c for c in a.candidates if c.result == entry.result), None)
    assert chosen is not None  # the replay checked the move is legal
    forced = len(a.candidates) == 1
    eq_c, mwc_c = chosen.equity, chosen.mwc
    if chosen.ply < best.ply:
        eq_c, mwc_c = _regrade(engine, chosen.result, state, best.ply)
    err = 0.0 if forced else max(0.0, best.equity - eq_c)
    err_mwc = None if best.mwc is None or mwc_c is None else max(0.0, best.mwc - mwc_c)
    return Decision(
        game.number,
        turn,
        entry.player,
        "move",
        entry.position,
        state,
        entry.dice,
        chosen.move,
        best.move,
        eq_c,
        best.equity,
        err,
        err_mwc,
        thresholds.mark(err) if not forced else "",
        forced,
        not forced,
        None,
        line,
    )


def _stats(match: MatchRecord, decisions: Sequence[Decision]) -> tuple[PlayerStats, PlayerStats]:
    ps = (PlayerStats(match.names[0]), PlayerStats(match.names[1]))
    for d in decisions:
        p = ps[d.player]
        if d.kind == "move":
            p.moves += 1
            if not d.forced:
                p.unforced += 1
            p.checker_error += d.error
            if d.skill:
                p.checker_marks[d.skill] += 1
            if d.luck is not None:
                p.luck_total += d.luck
                p.rolls += 1
        else:
            p.cube_decisions += 1
            if d.counted:
                p.close_cube += 1
            p.doubles += d.kind == "double"
            p.takes += d.kind == "take"
            p.drops += d.kind == "drop"
            p.cube_error += d.error
            if d.skill:
                p.cube_marks[d.skill] += 1
        if d.error_mwc is not None:
            p.error_mwc += d.error_mwc
    all_moves = ps[0].moves + ps[1].moves
    for p in ps:
        p.checker_rate = 1000 * p.checker_error / p.unforced if p.unforced else 0.0
        p.cube_rate = 1000 * p.cube_error / p.close_cube if p.close_cube else 0.0
        n = p.unforced + p.close_cube
        p.overall_rate = 1000 * p.total_error / n if n else 0.0
        p.pr = 500 * p.total_error / n if n else 0.0
        p.snowie_rate = 1000 * p.total_error / all_moves if all_moves else 0.0
        p.luck_rate = 1000 * p.luck_total / p.rolls if p.rolls else 0.0
    return ps
