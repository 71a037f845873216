"""Exact money cube equities of small two-sided bear-offs (gnubg's two-sided database, computed here).

Where both sides have all their checkers home and at most :data:`MAX_CHECKERS`
(6) each, no gammon is possible and the game is short enough to solve
exactly: for every pair of one-sided positions (``C(12, 6) = 924`` each, so
853,776 pairs) this module computes, for the side on roll before its roll and
with perfect play by both sides (checkers and cube, money, no beavers):

* ``cubeless``: its cubeless equity ``2 P(win) - 1``, each side playing to win;
* ``no_double[owner]``: its cubeful equity when it does not double now, with the
  cube centred, its own, or the opponent's (:data:`~bgbot.engine.cube.OWNER_COLUMNS`),
  normalised to the current cube.  Its double/take equity is twice the
  "opponent's cube" figure and double/pass is 1.

The recursion is the one of :func:`bgbot.engine.cube_lookahead.lookahead_money_cubeful`
taken to the end of the game: a position's no-double equity averages, over its
21 rolls, the best play's value, minus the opponent's optimal cube action
``max(no double, min(double/take, 1))`` where the opponent may double (the
opponent's own figures after the play), and the side that bears its last
checker off wins one cube.  Every play lowers the mover's pip count, so the
pairs are solved in increasing total pip count, a level at a time with numpy
(no compiled kernel: it runs the same interpreted).  Each cube state picks its
own best play.  The 64 cap of the cube is not modelled (gnubg's database does
not either).

Solving takes about 3 seconds; :func:`get_two_sided` does it once per
machine and keeps the table (14 MB of float32) in the user's cache,
``$XDG_CACHE_HOME/bgbot/bearoff-cube-v1.npy`` (``~/.cache/...``), written
atomically; a cache file that is unreadable or of the wrong shape is solved
again and replaced, and an unwritable cache only costs the solve again in the
next process.  Where the engine meets such a position it uses these figures
instead of Janowski's model: the cube decision on the position itself and the
leaves of the cubeful lookahead.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from bgbot.eval.bearoff import NUM_POINTS, _rank, num_positions, unrank_all, user_cache_dir
from bgbot.fileio import atomic_open
from bgbot.rules.dice import ROLL_WEIGHTS, ROLLS
from bgbot.rules.movegen import successors_batch

__all__ = ["MAX_CHECKERS", "TwoSidedCube", "get_two_sided"]

#: Checkers per side the table covers (all on the six home points).
MAX_CHECKERS = 6


@dataclass(frozen=True)
class TwoSidedCube:
    """The solved table: ``values[i, j]`` = (cubeless, no double centred / own cube / opponent's cube).

    ``i`` is the one-sided bear-off index (:func:`bgbot.eval.bearoff.rank_counts`) of the side on
    roll, ``j`` the opponent's; equities from the side on roll, before its roll, normalised to the
    current cube.  Rows with ``i = 0`` (the side on roll has nothing left: it cannot be on roll)
    hold +1; rows with ``j = 0`` (the opponent has borne off: the side on roll lost) hold -1.
    """

    values: NDArray[np.float32]
    #: the most checkers a side may have for the table to cover it
    max_checkers: int = MAX_CHECKERS

    def lookup(self, boards: NDArray[np.integer]) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
        """Which ``(N, 26)`` boards (side on roll's view) the table covers, and their four figures ``(N, 4)``.

        Covered: both sides all home with at most :attr:`max_checkers` checkers each and the game
        not over.  Rows not covered hold NaN.
        """
        b = np.asarray(boards).reshape(-1, 26).astype(np.int64)
        mine = b[:, 1 : NUM_POINTS + 1]
        theirs = -b[:, 24 : 24 - NUM_POINTS : -1]
        n_mine = np.where(b > 0, b, 0).sum(axis=1)
        n_theirs = np.where(b < 0, -b, 0).sum(axis=1)
        ok = (
            (mine.sum(axis=1) == n_mine) & (theirs.sum(axis=1) == n_theirs)
            & (n_mine >= 1) & (n_theirs >= 1) & (n_mine <= self.max_checkers) & (n_theirs <= self.max_checkers)
        )
        out = np.full((b.shape[0], 4), np.nan)
        if ok.any():
            i = _rank(np.clip(mine[ok], 0, None))
            j = _rank(np.clip(theirs[ok], 0, None))
            out[ok] = self.values[i, j]
        return ok, out


def solve(max_checkers: int | None = None) -> TwoSidedCube:
    """Solve the table for sides of at most ``max_checkers`` (default :data:`MAX_CHECKERS`) checkers."""
    max_checkers = MAX_CHECKERS if max_checkers is None else max_checkers
    counts = unrank_all(max_checkers).astype(np.int64)
    n = counts.shape[0]
    assert n == num_positions(max_checkers)
    pips = counts @ np.arange(1, NUM_POINTS + 1)
    boards = np.zeros((n, 26), dtype=np.int8)
    boards[:, 1 : NUM_POINTS + 1] = counts
    # per roll, every position's plays as one-sided indices (CSR: starts[r][i] .. starts[r][i + 1])
    succ_ids, succ_starts = [], []
    for dice in ROLLS:
        succ, parent = successors_batch(boards, dice)
        own = -succ[:, 24 : 24 - NUM_POINTS : -1].astype(np.int64)  # our points, from the opponent's view
        succ_ids.append(_rank(own))
        succ_starts.append(np.searchsorted(parent, np.arange(n + 1)))
    # v[i * n + j]: cubeless, no double with the cube centred / own / the opponent's (side on roll i).
    # A parent reads its children's optimal cube action, seen from itself: ``mover[j * n + kid]`` is
    # minus the child's figures, its "own" and "opponent's" columns swapped (the same cube).
    v = np.zeros((n * n, 4))
    mover = np.zeros((n * n, 4))
    v[:n] = 1.0  # i = 0: nothing left to bear off, it has won (never on roll; a guard)
    v[::n] = -1.0  # j = 0: the opponent bore off first, it lost one cube
    mover[::n] = 1.0  # a play that bears the last checker off wins one cube
    total = pips[:, None] + pips[None, :]
    pair_i, pair_j = np.nonzero((np.arange(n)[:, None] > 0) & (np.arange(n)[None, :] > 0))
    order = np.argsort(total[pair_i, pair_j], kind="stable")
    pair_i, pair_j = pair_i[order], pair_j[order]
    levels = np.searchsorted(total[pair_i, pair_j], np.arange(total.max() + 2))
    for lvl in range(len(levels) - 1):
        lo, hi = levels[lvl], levels[lvl + 1]
        if hi == lo:
            continue
        pi, pj = pair_i[lo:hi], pair_j[lo:hi]
        acc = np.zeros((hi - lo, 4))
        for r, w in enumerate(ROLL_WEIGHTS):
            starts = succ_starts[r]
            sizes = starts[pi + 1] - starts[pi]
            flat = np.repeat(starts[pi], sizes) + _ranges(sizes)
            # each pair's plays: the child is (j, kid), the opponent on roll; each column its best play
            rows = np.repeat(pj * n, sizes) + succ_ids[r][flat]
            seg = np.concatenate(([0], np.cumsum(sizes)[:-1]))
            acc += w * np.maximum.reduceat(mover[rows], seg, axis=0)
        here = pi * n + pj
        v[here] = acc
        best = acc.copy()  # the optimal action: it may double unless the opponent owns the cube
        best[:, 1:3] = np.maximum(acc[:, 1:3], np.minimum(2.0 * acc[:, 3], 1.0)[:, None])
        mover[here] = -best[:, [0, 1, 3, 2]]
    v = v.reshape(n, n, 4)
    return TwoSidedCube(v.astype(np.float32), max_checkers)


def _ranges(sizes: NDArray[np.int64]) -> NDArray[np.int64]:
    """``[0, 1, .., s0 - 1, 0, 1, .., s1 - 1, ...]`` for segment sizes ``sizes`` (all >= 1)."""
    total = int(sizes.sum())
    ends = np.cumsum(sizes)
    return np.arange(total) - np.repeat(ends - sizes, sizes)


_lock = threading.Lock()
_table: TwoSidedCube | None = None
CACHE_NAME = "bearoff-cube-v1.npy"


def cache_path() -> Path:
    """Where the solved table is cached: :func:`~bgbot.eval.bearoff.user_cache_dir` (``~/.cache/bgbot/``)."""
    return user_cache_dir() / CACHE_NAME


def _read_cache(path: Path) -> TwoSidedCube | None:
    n = num_positions(MAX_CHECKERS)  # read at call time (tests solve smaller tables)
    try:
        values = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if values.shape != (n, n, 4) or values.dtype != np.float32 or not np.isfinite(values).all():
        return None
    return TwoSidedCube(values, MAX_CHECKERS)


def _write_cache(path: Path, table: TwoSidedCube) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path) as fh:
            np.save(fh, table.values, allow_pickle=False)
    except OSError:  # a read-only or full cache: the next process solves again
        pass


def get_two_sided() -> TwoSidedCube:
    """The solved table: from this process's memory, else the cache file, else solved (and cached)."""
    global _table
    with _lock:
        if _table is None:
            path = cache_path()
            table = _read_cache(path) if path.is_file() else None
            if table is None:
                table = solve()
                _write_cache(path, table)
            _table = table
        return _table
