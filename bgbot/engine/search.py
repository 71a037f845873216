"""Checker-play search: 1-, 2- and 3-ply expectimax with move filters, all batched.

Plies follow the XG convention (gnubg's numbering is one lower):

* **1-ply**: the evaluator on every candidate position after our move.
* **2-ply**: for every candidate, the average over the opponent's 21 rolls
  (doubles weigh 1/36, the others 2/36) of the opponent's best reply, the
  reply being the one that maximises the opponent's own 1-ply equity; the
  candidate gets that reply's evaluation seen from us.
* **3-ply**: the same one level deeper: for every opponent roll the opponent
  picks its reply by 1-ply (as gnubg does inside its search) and we take that
  reply's 2-ply value.

A position can also be looked at *before* its roll: :func:`lookahead_probs` at
depth 0 is the evaluator, at depth ``d`` the average over the side on roll's
21 rolls of its best move (chosen by 1-ply) valued at depth ``d - 1``.  An
n-ply checker play values each candidate at depth ``n - 1``; the cube decision
"at n ply" looks ``n - 1`` rolls ahead too, with a cube decision at every node
(:mod:`bgbot.engine.cube_lookahead`, built on :func:`best_plays`).

Move filters (:class:`MoveFilter`) keep the cost of deeper plies down, as
gnubg's do: after the candidates are evaluated at ply ``k`` only the best
``keep`` within ``margin`` (cubeless equity) of the best go on to ply ``k + 1``;
the others stay in the analysis with their lower-ply figures, ranked below.

With the cube and the score (a :class:`Valuation`, built by
:meth:`bgbot.engine.api.Engine.best_move`) the filters keep the best by the
cubeful value of the candidates and each side chooses its plays inside the
lookahead by its own cubeful money equity (money) or dead-cube match winning
chance at the score (matches) instead of cubeless equity; the leaves are
still the network's cubeless probabilities, averaged over the rolls.

Every level of the search generates the moves of a whole batch in one
:func:`~bgbot.rules.movegen.successors_batch` call and evaluates them in one
evaluator call: for 2-ply, all replies of all kept candidates times 21 rolls
go through the network together.

Finished games are scored exactly at every depth (a game that is over is
never expanded), and :class:`BearoffEvaluator` replaces the network by the
exact one-sided bear-off database in races where both sides are home.
"""

from __future__ import annotations

import contextlib
import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from bgbot.errors import ConfigError, InvalidPositionError, ascii_int, quote_input
from bgbot.eval.bearoff import get_bearoff_db, home_rows
from bgbot.eval.evaluate import (
    Evaluator,
    equity,
    evaluate_distinct,
    flip_probs,
    in_parts,
    segment_argmax,
    terminal_probs,
)
from bgbot.formats.ids import format_xgid
from bgbot.rules.dice import ROLL_WEIGHTS, ROLLS, parse_dice
from bgbot.rules.matchstate import MatchState
from bgbot.rules.movegen import successors_batch
from bgbot.rules.moves import format_move, legal_steps
from bgbot.rules.position import Position, gnubg_position_ids, positions_of_rows

if TYPE_CHECKING:
    from bgbot.eval.bearoff import BearoffDB

__all__ = [
    "DEFAULT_FILTERS",
    "FILTER_PRESETS",
    "MAX_EXPAND",
    "MAX_PLY",
    "Analysis",
    "BearoffEvaluator",
    "Candidate",
    "MoveFilter",
    "Valuation",
    "Valuer",
    "analyze",
    "best_plays",
    "check_ply",
    "lookahead_probs",
    "parse_filters",
    "rank_successors",
    "search_chooser",
]

MAX_PLY = 3
# (position, roll) pairs expanded by one move generation + evaluator call in lookahead_probs:
# ~20 replies each, so 8k pairs are ~160k positions (about 130 MB of network inputs).
MAX_EXPAND = 8192

# The 21 distinct rolls, gnubg's order, and their probabilities (a non-double can come two ways).
_ROLLS_ARR = np.array(ROLLS, dtype=np.int64)
#: a thread of a split move generation gets this many (position, roll) rows at least (a few microseconds each)
SUCC_MIN_ROWS = 128


def _successors(evaluator: Evaluator, rep: NDArray[np.int8], dice: NDArray[np.int64]
                ) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """:func:`~bgbot.rules.movegen.successors_batch` of ``rep`` with ``dice`` (one roll a row), split across
    ``evaluator.threads`` threads (one where it has none); the same rows in the same order."""
    done = in_parts(rep.shape[0], int(getattr(evaluator, "threads", 1)), SUCC_MIN_ROWS,
                    lambda a, b: (a, successors_batch(rep[a:b], dice[a:b])))
    if len(done) == 1:
        return done[0][1]
    succ = np.concatenate([s for _, (s, _) in done])
    parent = np.concatenate([p + a for a, (_, p) in done])
    return succ, parent


NO_MOVE = "cannot move"
_new = object.__new__
_setattr = object.__setattr__
_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")


def _pack_boards(n: int, *counts: int) -> bytes:
    """``n`` boards' 26 counts each, flattened, as int8 bytes."""
    return _board_struct(n).pack(*counts)


@cache
def _board_struct(n: int) -> struct.Struct:
    return struct.Struct(f"{26 * n}b")


@dataclass(frozen=True)
class MoveFilter:
    """Keep at most ``keep`` candidates whose equity is within ``margin`` of the best (best always kept)."""

    keep: int
    margin: float

    def __post_init__(self) -> None:
        if isinstance(self.keep, bool) or not isinstance(self.keep, int) or self.keep < 1:
            raise ConfigError(f"a move filter keeps at least 1 candidate, got keep={self.keep!r}")
        if (
            isinstance(self.margin, bool)
            or not isinstance(self.margin, int | float)
            or not math.isfinite(self.margin)
            or self.margin < 0
        ):
            raise ConfigError(f"a move filter margin is a finite equity >= 0, got margin={self.margin!r}")


#: The first filter (after 1-ply) by the names gnubg gives its predefined move filters; the
#: deeper one stays :data:`DEFAULT_FILTERS`' second.  "normal" is the default.
FILTER_PRESETS: dict[str, MoveFilter] = {
    "tiny": MoveFilter(5, 0.08),
    "narrow": MoveFilter(8, 0.12),
    "normal": MoveFilter(8, 0.16),
    "large": MoveFilter(16, 0.32),
    "huge": MoveFilter(20, 0.44),
}

# gnubg's defaults keep up to 8 moves within 0.16 from its 0-ply (our 1-ply): its "normal"; its deeper
# filter keeps 2 within 0.04.  The second filter here (before 3-ply) is a little wider because our
# 2-ply figures come from a weaker network than gnubg's.
DEFAULT_FILTERS: tuple[MoveFilter, ...] = (FILTER_PRESETS["normal"], MoveFilter(3, 0.06))


def parse_filters(text: object) -> tuple[MoveFilter, ...]:
    """Move filters from a preset name (:data:`FILTER_PRESETS`) or ``KEEP:MARGIN`` (e.g. ``5:0.08``).

    The text sets the filter applied after 1-ply (which candidates a 2- or 3-ply
    search looks at deeper); the filter before 3-ply stays the default's.
    Raises :class:`~bgbot.errors.ConfigError` quoting the text.
    """
    raw = str(text).strip().lower()
    first = FILTER_PRESETS.get(raw)
    if first is None:
        keep, sep, margin = raw.partition(":")
        try:
            if not sep or not margin.isascii() or "_" in margin:
                raise ValueError  # float() would read other scripts' digits and underscores
            first = MoveFilter(ascii_int(keep.strip()), float(margin))
        except (ValueError, ConfigError):
            names = ", ".join(FILTER_PRESETS)
            raise ConfigError(
                f"bad move filter {quote_input(str(text))}: expected one of {names} or KEEP:MARGIN "
                "(a whole number >= 1 and an equity >= 0, e.g. 5:0.08)"
            ) from None
    return (first, *DEFAULT_FILTERS[1:])


def check_ply(ply: object) -> int:
    """``ply`` as an int from 1 to :data:`MAX_PLY` (``ConfigError`` otherwise; text like ``"2"`` is read)."""
    value: object = ply
    if isinstance(ply, str):
        with contextlib.suppress(ValueError):
            value = ascii_int(ply)
    elif isinstance(ply, np.integer):
        value = int(ply)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PLY:
        raise ConfigError(f"ply must be 1, 2 or 3 (XG numbering: 1-ply = the network alone), got {ply!r}")
    return value


def _check_filters(filters: Sequence[MoveFilter]) -> tuple[MoveFilter, ...]:
    out = tuple(filters)
    if not out or not all(isinstance(f, MoveFilter) for f in out):
        raise ConfigError(f"filters must be a non-empty sequence of MoveFilter, got {filters!r}")
    return out


# ---------------------------------------------------------------------------
# exact races
# ---------------------------------------------------------------------------


class BearoffEvaluator:
    """An :class:`~bgbot.eval.evaluate.Evaluator` that answers bear-off positions from the database.

    Rows where both sides have every checker home (no contact, nobody on the
    bar) and the database holds both sides get the database's exact
    probabilities; finished games get their exact result; every other row
    goes to ``base``.  All from each row's side on roll, before its roll.

    The database is fetched with :func:`bgbot.eval.bearoff.get_bearoff_db` the
    first time a batch holds a bear-off position (``path`` as there; it is
    built on first use if the file is missing), unless ``db`` is given.
    """

    def __init__(self, base: Evaluator, db: BearoffDB | None = None, *, path: str | Path | None = None) -> None:
        self.base = base
        self._db = db
        self._path = path

    @property
    def threads(self) -> int:
        """The threads ``base`` splits a big batch across (1 where it has no such setting)."""
        return int(getattr(self.base, "threads", 1))

    @property
    def db(self) -> BearoffDB:
        """The bear-off database (loaded, or built, on first access)."""
        if self._db is None:
            self._db = get_bearoff_db(self._path)
        return self._db

    def __call__(self, boards: NDArray[np.int8]) -> NDArray[np.float32]:
        boards = np.ascontiguousarray(boards, dtype=np.int8)
        n = boards.shape[0]
        if n == 0:
            return np.zeros((0, 5), dtype=np.float32)
        if boards.ndim != 2 or boards.shape[1] != 26:
            return np.asarray(self.base(boards), dtype=np.float32)  # the base evaluator's error
        # cheap test before touching the database: nobody outside its own home board or on a bar
        home, n_home = home_rows(boards)
        if n_home == 0:
            return np.asarray(self.base(boards), dtype=np.float32)
        done, exact = terminal_probs(boards)
        bear = home & ~done
        if bear.any() and not self.db.holds_every_home_board():
            bear &= self.db.is_bearoff(boards)  # a smaller database: some home boards have too many checkers
        out = np.empty((n, 5), dtype=np.float32)
        rest = ~bear & ~done
        if rest.any():
            out[rest] = self.base(boards[rest])
        if bear.any():
            out[bear] = self.db.evaluate_home(boards[bear])  # in range: tested just above
        out[done] = exact[done]
        return out


# ---------------------------------------------------------------------------
# the search core
# ---------------------------------------------------------------------------


Valuer = Callable[[NDArray[np.float64], NDArray[np.int8]], NDArray[np.float64]]
"""``value(probs (M, 5), results (M, 26)) -> (M,)``: the mover's value of each of its plays.

``probs`` are each result's probabilities **from the mover's view** (the side
that just moved), ``results`` the positions after the move (the opponent's
view, on roll).  Higher is better for the mover; only the order within one
roll matters.  The cubeless default is the mover's cubeless money equity.
"""


@dataclass(frozen=True)
class Valuation:
    """How the search values plays when the cube and the score matter (see :meth:`Engine.best_move`).

    ``rank`` values the root's candidates for the move filters (it may be
    slow: it sees tens of rows); ``mine`` and ``theirs`` are the batched
    values by which the root's mover and its opponent choose their plays
    inside the lookahead (hundreds of thousands of rows at 3-ply).

    ``deep``, when given, replaces the cubeless lookahead of the candidates
    that go deeper: ``deep(results, depth, choose)`` looks the results
    ``(K, 26)`` (the opponent's view, on roll) ``depth`` rolls ahead with the
    plays chosen by ``choose`` (:func:`lookahead_probs`' argument) and returns
    their cubeless probabilities **from the opponent's view** and the root
    mover's value of each (minus the opponent's best cubeful action there,
    as gnubg values a play), so that a candidate's value at ply ``k + 1`` is
    its cubeful lookahead, not ``rank`` applied to averaged probabilities.
    """

    rank: Valuer
    mine: Valuer
    theirs: Valuer
    deep: Callable[
        [NDArray[np.int8], int, tuple[Valuer, Valuer]], tuple[NDArray[np.float64], NDArray[np.float64]]
    ] | None = None


def lookahead_probs(
    evaluator: Evaluator,
    boards: NDArray[np.int8],
    depth: int,
    choose: tuple[Valuer, Valuer] | None = None,
) -> NDArray[np.float64]:
    """``(N, 5)`` probabilities of ``(N, 26)`` positions looked at ``depth`` rolls ahead.

    Each board is from the view of its side on roll, **before** it rolls, and
    so is each output row.  Depth 0 is ``evaluator``.  Depth ``d`` averages,
    over the 21 rolls, the side on roll's best move for that roll (the one
    with the best 1-ply value for the mover) valued at depth ``d - 1``.  The
    value is the mover's cubeless equity, or with ``choose = (value of the
    side on roll, value of its opponent)`` (:data:`Valuer`) each side's own
    (the pair swaps at every level).  Finished games are exact and never
    expanded.  One move generation and one evaluator call per depth level
    for the whole batch, as long as it expands at most :data:`MAX_EXPAND`
    (position, roll) pairs; bigger batches go in chunks of that size.
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    if depth <= 0:
        return np.asarray(evaluator(boards), dtype=np.float64)
    done, exact = terminal_probs(boards)
    out = exact.astype(np.float64)
    live = np.flatnonzero(~done)
    if live.size == 0:
        return out
    nr = len(ROLLS)
    chunk = max(1, MAX_EXPAND // nr)
    if live.size > chunk:
        # a big batch (many games at 3-ply) would need gigabytes of encoded replies at once
        for k in range(0, live.size, chunk):
            rows = live[k : k + chunk]
            out[rows] = lookahead_probs(evaluator, boards[rows], depth, choose)
        return out
    rep = np.repeat(boards[live], nr, axis=0)  # (L*21, 26): row k*21 + r is board k with roll r
    dice = np.tile(_ROLLS_ARR, (live.size, 1))
    succ, parent = _successors(evaluator, rep, dice)  # (M, 26) from the opponent's view; passes included
    v = np.asarray(evaluate_distinct(evaluator, succ), dtype=np.float64)  # (M, 5) the opponent's view
    # the mover maximises its own value
    value = -equity(v) if choose is None else choose[0](flip_probs(v), succ)
    best = segment_argmax(value, parent, rep.shape[0])
    if depth == 1:
        chosen = v[best]
    else:
        chosen = lookahead_probs(evaluator, succ[best], depth - 1, None if choose is None else (choose[1], choose[0]))
    mover = flip_probs(chosen).reshape(live.size, nr, 5)
    out[live] = np.einsum("lrk,r->lk", mover, ROLL_WEIGHTS)
    return out


def best_plays(
    evaluator: Evaluator, boards: NDArray[np.int8], choose: tuple[Valuer, Valuer] | None = None
) -> tuple[NDArray[np.int8], NDArray[np.float64]]:
    """Each board's best play for each of the 21 rolls, as :func:`lookahead_probs` chooses it.

    ``boards`` ``(L, 26)``: positions before their roll (side on roll's view), none finished.
    Returns the positions after the plays and their evaluator probabilities, both from the
    opponent's view (on roll): ``(L * 21, 26)`` and ``(L * 21, 5)``, row ``k * 21 + r`` for board
    ``k`` and roll ``r`` (:data:`~bgbot.rules.dice.ROLLS`' order).  ``choose[0]`` values the plays
    for the mover (default: its cubeless equity).  One move generation and one evaluator call.
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    rep = np.repeat(boards, len(ROLLS), axis=0)
    dice = np.tile(_ROLLS_ARR, (boards.shape[0], 1))
    succ, parent = _successors(evaluator, rep, dice)  # passes included
    v = np.asarray(evaluate_distinct(evaluator, succ), dtype=np.float64)
    value = -equity(v) if choose is None else choose[0](flip_probs(v), succ)
    best = segment_argmax(value, parent, rep.shape[0])
    return succ[best], v[best]


def _filter_rows(
    eq: NDArray[np.float64], parent: NDArray[np.int64], alive: NDArray[np.bool_], f: MoveFilter
) -> NDArray[np.int64]:
    """Indices of the rows among ``alive`` that pass ``f`` within their parent (ties: earlier row first)."""
    idx = np.flatnonzero(alive)
    if idx.size == 0:
        return idx
    e, p = eq[idx], parent[idx]
    if p[0] == p[-1] and (p == p[0]).all():
        # one parent (a single position's analysis): the same selection on ~20 Python floats
        el = e.tolist()
        top = sorted(range(len(el)), key=el.__getitem__, reverse=True)[: f.keep]  # stable, as the lexsort
        floor = el[top[0]] - f.margin
        return np.sort(idx[[j for j in top if el[j] >= floor]])
    order = np.lexsort((-e, p))  # stable: equal equities keep their order
    idx, e, p = idx[order], e[order], p[order]
    pos = np.arange(idx.size)
    first = np.ones(idx.size, dtype=bool)
    first[1:] = p[1:] != p[:-1]
    group_start = np.maximum.accumulate(np.where(first, pos, 0))
    keep = (pos - group_start < f.keep) & (e >= e[group_start] - f.margin)
    return np.sort(idx[keep])


def rank_successors(
    evaluator: Evaluator,
    succ: NDArray[np.int8],
    parent: NDArray[np.int64],
    ply: int,
    filters: Sequence[MoveFilter] = DEFAULT_FILTERS,
    *,
    skip_forced: bool = False,
    valuation: Valuation | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Evaluate candidate moves of a batch of positions at ``ply``, with move filters.

    ``succ``/``parent`` as :func:`~bgbot.rules.movegen.successors_batch` returns
    them (candidates from the opponent's view, rows of one parent
    contiguous).  Returns ``(probs, plies)``: ``probs`` ``(M, 5)`` **from the
    mover's view** (the side that chose the move) and the ply each row was
    evaluated at.  After evaluating at ply ``k`` (``k < ply``) the filter
    ``filters[k - 1]`` (the last one for deeper plies) picks, per parent, the
    rows that go on to ply ``k + 1``.  With ``skip_forced`` a parent with a
    single candidate is not searched deeper (a chooser needs no figure).
    With ``valuation`` the filters keep the best by ``valuation.rank`` and
    the lookahead chooses each side's plays by ``valuation.mine`` /
    ``valuation.theirs`` (cubeful money or match values) instead of cubeless
    equity, and ``valuation.deep`` (when set) does the deeper plies' lookahead;
    the probabilities returned are the cubeless ones either way.
    """
    probs, plies, _ = _ranked(evaluator, succ, parent, ply, filters, skip_forced, valuation)
    return probs, plies


def _ranked(
    evaluator: Evaluator,
    succ: NDArray[np.int8],
    parent: NDArray[np.int64],
    ply: int,
    filters: Sequence[MoveFilter],
    skip_forced: bool,
    valuation: Valuation | None,
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]:
    """:func:`rank_successors` and each row's value at its ply, by which the filters chose: the mover's
    cubeless equity, or with ``valuation`` ``valuation.rank`` at 1-ply and ``valuation.deep``'s value deeper
    (``valuation.rank`` of the deeper probabilities without ``deep``)."""
    ply = check_ply(ply)
    filt = _check_filters(filters)
    succ = np.ascontiguousarray(succ, dtype=np.int8)
    parent = np.asarray(parent, dtype=np.int64)
    probs = flip_probs(np.asarray(evaluator(succ), dtype=np.float64))
    plies = np.ones(succ.shape[0], dtype=np.int64)
    score = equity(probs) if valuation is None else np.asarray(valuation.rank(probs, succ), dtype=np.float64)
    if ply == 1:
        return probs, plies, score
    if skip_forced and succ.shape[0]:
        counts = np.bincount(parent)
        searchable = counts[parent] > 1
    else:
        searchable = np.ones(succ.shape[0], dtype=bool)
    for k in range(1, ply):
        f = filt[min(k - 1, len(filt) - 1)]
        kept = _filter_rows(score, parent, (plies == k) & searchable, f)
        if kept.size == 0:
            break
        if valuation is None:
            probs[kept] = flip_probs(lookahead_probs(evaluator, succ[kept], k))
            score[kept] = equity(probs[kept])
        else:
            choose = (valuation.theirs, valuation.mine)  # the opponent is on roll
            if valuation.deep is None:
                probs[kept] = flip_probs(lookahead_probs(evaluator, succ[kept], k, choose))
                score[kept] = valuation.rank(probs[kept], succ[kept])
            else:
                theirs, value = valuation.deep(succ[kept], k, choose)
                probs[kept] = flip_probs(theirs)
                score[kept] = value
        plies[kept] = k + 1
    return probs, plies, score


Chooser = Callable[[NDArray[np.int8], NDArray[np.int8], NDArray[np.int64]], NDArray[np.int64]]
"""``chooser(before (G, 26), succ (M, 26), parent (M,)) -> (G,)`` indices into ``succ``: one move per game.

``before`` are the positions before the move (mover on roll), ``succ`` every
legal result from the opponent's view and ``parent`` the row of ``before`` each
came from (the output of :func:`bgbot.rules.movegen.successors_batch`).
"""


def move_values(evaluator: Evaluator, succ: NDArray[np.int8]) -> NDArray[np.float64]:
    """1-ply value of each result ``succ`` (opponent's view) for the side that moved: minus its cubeless equity."""
    return -equity(evaluator(succ))


def greedy_chooser(evaluator: Evaluator) -> Chooser:
    """1-ply: play the result whose evaluation (from the opponent's view) is worst for the opponent."""

    def choose(before: NDArray[np.int8], succ: NDArray[np.int8], parent: NDArray[np.int64]) -> NDArray[np.int64]:
        return segment_argmax(move_values(evaluator, succ), parent, len(before))

    return choose


def random_chooser(seed: int) -> Chooser:
    """A uniformly random legal move (seeded)."""
    rng = np.random.default_rng(seed)

    def choose(before: NDArray[np.int8], succ: NDArray[np.int8], parent: NDArray[np.int64]) -> NDArray[np.int64]:
        return segment_argmax(rng.random(len(succ)), parent, len(before))

    return choose


def search_chooser(evaluator: Evaluator, ply: int = 2, filters: Sequence[MoveFilter] = DEFAULT_FILTERS) -> Chooser:
    """A :mod:`bgbot.play.duel` chooser that plays the best move at ``ply`` for a whole batch of games at once."""
    ply = check_ply(ply)
    filt = _check_filters(filters)

    def choose(before: NDArray[np.int8], succ: NDArray[np.int8], parent: NDArray[np.int64]) -> NDArray[np.int64]:
        probs, plies = rank_successors(evaluator, succ, parent, ply, filt, skip_forced=True)
        # deeper figures outrank shallower ones: equities lie in [-3, 3]
        return segment_argmax(equity(probs) + 10.0 * plies, parent, len(before))

    return choose


# ---------------------------------------------------------------------------
# one position: the ranked analysis
# ---------------------------------------------------------------------------


class _MoveTexts:
    """The notation and steps of every result of one roll, worked out on first use.

    Searching needs only the resulting positions; naming the plays costs more
    than a 1-ply decision, so the steps come from one compiled walk of the roll
    (:func:`~bgbot.rules.moves.legal_steps`) only when someone reads a text, and
    a play is written out when its text is read (an analysis reads two of ~20).
    """

    def __init__(self, pos: Position, dice: tuple[int, int]) -> None:
        self.pos = pos
        self.dice = dice
        self._found: dict[Position, Sequence[Sequence[int]]] | None = None
        self._texts: dict[Position, str] = {}

    def _all(self) -> dict[Position, Sequence[Sequence[int]]]:
        if self._found is None:
            self._found = legal_steps(self.pos, self.dice)
        return self._found

    def steps(self, result: Position) -> tuple[tuple[int, int, bool], ...]:
        return tuple((int(a), int(b), bool(h)) for a, b, h in self._all()[result])

    def text(self, result: Position) -> str:
        """``result``'s play in standard notation, ``"cannot move"`` for the empty play."""
        text = self._texts.get(result)
        if text is None:
            steps = self._all()[result]
            text = self._texts[result] = format_move(steps) if steps else NO_MOVE
        return text


@dataclass(frozen=True)
class Candidate:
    """One legal play and its evaluation.

    ``result`` is the position after the move **from the opponent's view**
    (opponent on roll); ``probs`` are ``[win, wg, wbg, lg, lbg]`` **from the
    mover's view**, ``equity`` the equity the analysis ranks by (see
    :attr:`Analysis.kind`: cubeless money equity, or cubeful equity for the
    mover normalised to the cube value), ``ply`` the ply they were computed at
    and ``diff`` the equity minus the best candidate's.  ``cubeless_equity`` is
    the cubeless money equity of ``probs``; ``mwc`` the mover's match winning
    chance in a match (None otherwise).
    ``move`` (standard notation, ``"cannot move"`` for the empty play) and
    ``steps`` (``(from, to, hit)`` in the mover's numbering) are worked out
    on first access.
    """

    result: Position
    probs: tuple[float, float, float, float, float]
    equity: float
    ply: int
    diff: float
    _texts: _MoveTexts = field(repr=False, compare=False)
    cubeless_equity: float = 0.0
    mwc: float | None = None

    @classmethod
    def _make(
        cls,
        result: Position,
        probs: tuple[float, ...],
        equity: float,
        ply: int,
        diff: float,
        texts: _MoveTexts,
        cubeless_equity: float,
        mwc: float | None = None,
    ) -> Candidate:
        """A candidate built by filling its ``__dict__`` at once: what the frozen ``__init__`` does
        field by field, without its cost (:func:`analyze` and :func:`rerank` build one per legal play)."""
        c = _new(cls)
        fields = {"result": result, "probs": probs, "equity": equity, "ply": ply, "diff": diff, "_texts": texts,
                  "cubeless_equity": cubeless_equity, "mwc": mwc}  # fmt: skip
        _setattr(c, "__dict__", fields)
        return c

    @cached_property
    def steps(self) -> tuple[tuple[int, int, bool], ...]:
        """The checker steps of this play, ``(from, to, hit)``, 25 = bar, 0 = off (mover's numbering)."""
        return self._texts.steps(self.result)

    @cached_property
    def move(self) -> str:
        """The play in standard notation (``24/18 13/11``), or ``"cannot move"``."""
        return self._texts.text(self.result)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (probabilities by name, result as a gnubg Position ID)."""
        return {
            "move": self.move,
            "result": self.result.gnubg_id(),
            "equity": self.equity,
            "cubeless_equity": self.cubeless_equity,
            "mwc": self.mwc,
            "diff": self.diff,
            "ply": self.ply,
            "probs": dict(zip(_NAMES, self.probs, strict=True)),
        }


def rounded_floats(values: Any, digits: int) -> list[Any]:
    """The floats of an array (any shape) rounded as ``round(x, digits)`` rounds each, as nested lists of floats.

    The same values to the bit as ``round(x, digits)`` (a float that is not finite becomes None), in one
    numpy pass: ``rint(x * 10**digits) / 10**digits`` is Python's correctly rounded result unless the
    scaled value lies within a hair of a half (or is huge), and those few are rounded by Python.
    """
    a = np.asarray(values, dtype=np.float64)
    scale = 10.0**digits
    finite = np.isfinite(a)
    z = (a if finite.all() else np.where(finite, a, 0.0)) * scale
    out = np.rint(z) / scale
    # near a half, huge, or not finite: rounded by Python below
    doubtful = (np.abs(z - np.floor(z) - 0.5) <= 1e-6) | (np.abs(z) >= 2.0**50) | ~finite
    if not doubtful.any():
        return out.tolist()  # type: ignore[no-any-return]
    flat, src = out.ravel().tolist(), a.ravel().tolist()
    for i in np.flatnonzero(doubtful.ravel()).tolist():
        flat[i] = round(src[i], digits) if math.isfinite(src[i]) else None
    return np.array(flat, dtype=object).reshape(a.shape).tolist()  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Analysis:
    """Every legal play of ``dice`` in ``position`` (side on roll's view), best first.

    Candidates evaluated at a deeper ply rank above those the filters left
    at a shallower one; within a ply the higher equity comes first (ties keep
    the move generator's order).  ``ply`` is the ply asked for; ``kind`` says
    which equity ranks the moves (:data:`CUBELESS`, :data:`CUBEFUL_MONEY` or
    :data:`CUBEFUL_MATCH`).
    """

    position: Position
    dice: tuple[int, int]
    ply: int
    candidates: tuple[Candidate, ...]
    filters: tuple[MoveFilter, ...] = field(default=DEFAULT_FILTERS, repr=False)
    kind: str = "cubeless money equity"
    #: the cube and score the plays were ranked at (the side on roll is player 0), for the XGID; None: money, centred
    state: MatchState | None = field(default=None, repr=False, compare=False)

    @property
    def best(self) -> Candidate:
        """The top-ranked candidate."""
        return self.candidates[0]

    def __len__(self) -> int:
        return len(self.candidates)

    def to_dict(self, digits: int | None = None) -> dict[str, Any]:
        """A JSON-ready dict: the position's IDs, dice, ply and the ranked moves (mover's view).

        With ``digits`` every float is rounded to that many decimals and a float that is not finite
        is None, as :func:`bgbot.engine.answers.rounded` does to the whole dict (lists for tuples).
        The move texts and the results' Position IDs of all candidates are worked out together.
        """
        cands = self.candidates
        texts = [c.__dict__.get("move") or c._texts.text(c.result) for c in cands]
        n = len(cands)
        boards = np.frombuffer(_pack_boards(n, *chain.from_iterable([c.result.board for c in cands])), dtype=np.int8)
        ids = gnubg_position_ids(boards.reshape(n, 26))
        nan = math.nan
        rows = [(c.equity, c.cubeless_equity, nan if c.mwc is None else c.mwc, c.diff, *c.probs) for c in cands]
        if digits is None:
            figures = [list(row) for row in rows]
            for row, c in zip(figures, cands, strict=True):
                row[2] = c.mwc
        else:

            table = np.fromiter(chain.from_iterable(rows), dtype=np.float64, count=9 * n).reshape(n, 9)
            figures = rounded_floats(table, digits)  # mwc None was nan: None after rounding, as rounded() leaves it
        moves = []
        for i, (c, (eq, cubeless, mwc, diff, w, wg, wbg, lg, lbg)) in enumerate(zip(cands, figures, strict=True)):
            moves.append({
                "rank": i + 1,
                "move": texts[i],
                "result": ids[i],
                "equity": eq,
                "cubeless_equity": cubeless,
                "mwc": mwc,
                "diff": diff,
                "ply": c.ply,
                "probs": {"win": w, "win_gammon": wg, "win_backgammon": wbg, "lose_gammon": lg,
                          "lose_backgammon": lbg},
            })  # fmt: skip
        return {
            "position": self.position.gnubg_id(),
            "xgid": format_xgid(self.position, self.state, dice=self.dice),
            "dice": list(self.dice),
            "ply": self.ply,
            "equity_kind": self.kind,
            "moves": moves,
        }

    def table(self, limit: int | None = None) -> str:
        """The ranked moves as a text table (probabilities from the mover's view), like gnubg's hint."""
        rows = self.candidates if limit is None else self.candidates[:limit]
        width = max([len("move"), *(len(c.move) for c in rows)])
        match = any(c.mwc is not None for c in rows)
        mwc_head = "    mwc" if match else ""
        head = f"{'#':>3}  {'move':<{width}}  ply   equity     diff{mwc_head}    win    w-g   w-bg   lose    l-g   l-bg"
        lines = [head]
        for i, c in enumerate(rows, 1):
            w, wg, wbg, lg, lbg = c.probs
            diff = "" if i == 1 else f"{c.diff:+.3f}"
            mwc = f"  {100 * c.mwc:5.1f}" if match and c.mwc is not None else ""
            lines.append(
                f"{i:>3}  {c.move:<{width}}  {c.ply:>3}  {c.equity:+7.3f}  {diff:>7}{mwc}  "
                f"{w:5.3f}  {wg:5.3f}  {wbg:5.3f}  {1.0 - w:5.3f}  {lg:5.3f}  {lbg:5.3f}"
            )
        return "\n".join(lines)


def analyze(
    evaluator: Evaluator,
    pos: Position,
    dice: object,
    ply: int = 1,
    filters: Sequence[MoveFilter] = DEFAULT_FILTERS,
    valuation: Valuation | None = None,
) -> Analysis:
    """Rank every legal play of ``dice`` in ``pos`` (side on roll's view) at ``ply``.

    Returns an :class:`Analysis` whose candidates hold the move text, the
    result (opponent's view), the probabilities and equity from the mover's
    view, the ply used and the difference to the best (cubeless; with
    ``valuation`` the filters and the lookahead use its values, see
    :func:`rank_successors`, and :func:`rerank` then ranks by the cubeful
    value).  When no play is
    legal there is one candidate, ``"cannot move"``.  Raises
    :class:`~bgbot.errors.InvalidDiceError` for bad dice,
    :class:`~bgbot.errors.ConfigError` for a bad ply and
    :class:`~bgbot.errors.InvalidPositionError` when the game is already over.
    """
    return _analyze(evaluator, pos, dice, ply, filters, valuation, with_rows=False)[0]


def _analyze(
    evaluator: Evaluator,
    pos: Position,
    dice: object,
    ply: int,
    filters: Sequence[MoveFilter],
    valuation: Valuation | None,
    *,
    with_rows: bool = True,
) -> tuple[Analysis, NDArray[np.int8], NDArray[np.float64] | None]:
    """:func:`analyze`, its candidates' results as ``(K, 26)`` int8 rows in the candidates' order
    (the opponent's view): what a caller that goes on to value the results in a batch needs, and
    above 1-ply with ``valuation`` each candidate's value at its ply (:func:`_ranked`; else None).
    ``with_rows=False`` leaves the rows out (an empty array; gathering them costs a tenth of a 1-ply call)."""
    d = parse_dice(dice)
    ply = check_ply(ply)
    filt = _check_filters(filters)
    if pos.is_game_over():
        raise InvalidPositionError(f"the game is over in {pos.gnubg_id()!r}: there is no move to choose")
    succ, _ = successors_batch(np.array([pos.board], dtype=np.int8), d)  # (K, 26) opponent's view; the pass included
    if ply == 1:
        # rank_successors at 1-ply, row by row in Python floats (the same float64 operations as
        # flip_probs and equity, so the same figures to the bit): no filters, no valuation at this ply
        probs_l: list[tuple[float, ...]] = []
        eq_l: list[float] = []
        for w, wg, wbg, lg, lbg in np.asarray(evaluator(succ), dtype=np.float64).tolist():  # opponent's view
            p0 = 1.0 - w
            probs_l.append((p0, lg, lbg, wg, wbg))
            eq_l.append(2.0 * p0 - 1.0 + lg - wg + lbg - wbg)
        # best first, ties in the generator's order (a stable sort, as the lexsort below)
        order = sorted(range(len(eq_l)), key=eq_l.__getitem__, reverse=True)
        plies_l = [1] * len(eq_l)
        values = None
    else:
        probs, plies, score = _ranked(
            evaluator, succ, np.zeros(succ.shape[0], dtype=np.int64), ply, filt, False, valuation
        )
        eq_l, plies_l = equity(probs).tolist(), plies.tolist()
        probs_l = list(map(tuple, probs.tolist()))
        # deeper plies first, then the higher equity; ties in the generator's order (stable)
        order = sorted(range(len(eq_l)), key=lambda i: (plies_l[i], eq_l[i]), reverse=True)
        values = None if valuation is None else score[order]
    best = eq_l[order[0]]
    texts = _MoveTexts(pos, d)
    results = positions_of_rows(succ)
    make = Candidate._make
    cands = tuple([make(results[i], probs_l[i], eq_l[i], plies_l[i], eq_l[i] - best, texts, eq_l[i]) for i in order])
    return Analysis(pos, d, ply, cands, filt, CUBELESS), succ[order] if with_rows else succ[:0], values


CUBELESS = "cubeless money equity"
CUBEFUL_MONEY = "cubeful money equity (Janowski)"
CUBEFUL_MATCH = "cubeful match equity (gnubg's EMG normalisation) and match winning chance"


def rerank(analysis: Analysis, values: Sequence[tuple[float, float | None]], kind: str,
           state: MatchState | None = None) -> Analysis:
    """``analysis`` with each candidate's equity replaced by ``values[i] = (equity, mwc)`` and re-ranked.

    ``state``: the cube and score they were valued at (default: ``analysis.state``).

    Deeper-ply candidates still rank first; within a ply the higher equity.
    """
    cands = analysis.candidates
    order = sorted(range(len(cands)), key=lambda i: (-cands[i].ply, -values[i][0], i))
    best = values[order[0]][0]
    make = Candidate._make
    new = []
    for i in order:
        c = cands[i]
        e, mwc = values[i]
        new.append(make(c.result, c.probs, e, c.ply, e - best, c._texts, c.cubeless_equity, mwc))
    return Analysis(analysis.position, analysis.dice, analysis.ply, tuple(new), analysis.filters, kind,
                    state if state is not None else analysis.state)
