"""One-sided bear-off database: exact race probabilities once both sides are home.

What is stored
--------------
For every distribution of 0..15 checkers over the six home points (one side
only; ``C(21, 6) = 54,264`` positions) the database holds two distributions of a
whole number of **turns** (rolls of the side that owns the checkers):

* ``rolls[i, n]``: probability of needing exactly ``n`` turns to bear off all
  checkers, when the side plays every roll to **minimise its expected number of
  turns** (gnubg's criterion for its one-sided database).
* ``first_off[i, n]``: probability of needing exactly ``n`` turns to bear off
  the **first** of its checkers, when the side plays every roll to minimise the
  expected number of turns until a checker is off (a different policy: it is
  what a side with 15 checkers on the board plays to save the gammon).  For a
  position with 15 checkers this is the "save the gammon" distribution and
  equals gnubg's; with fewer checkers it counts the turns to take the first of
  those on the board off (gnubg stores 0 turns there, as one is already off;
  :meth:`BearoffDB.evaluate` uses it only for 15 checkers).  The empty
  position has ``first_off = rolls = [1, 0, ...]`` (0 turns).

Both agree with gnubg 1.07's ``gnubg_os0.bd`` to its 16-bit precision (the
tests compare every position): gnubg also decides between nearly equal moves
from its rounded numbers, so a few of its ``rolls`` rows differ by up to 3e-3
in one bin while their means agree to 2e-4.

Both are truncated at :data:`MAX_TURNS` columns (turns ``0 .. MAX_TURNS - 1``).
The build computes ``2 * MAX_TURNS`` columns in float64 and checks that the
mass it cuts off is below :data:`TAIL_TOLERANCE`.  In fact nothing is cut: the
longest bear-off has a nonzero chance of 30 turns (4e-34), every probability
beyond 19 turns is below 1e-6 and beyond 24 below 1e-15; the first checker is
always off within 10 turns.  The arrays are stored as float32.

Ties between moves with the same expected value (to 1e-10) are broken by the
smallest database index of the resulting position, so the policy, and thus
every distribution, is deterministic.

Index (ranking)
---------------
The index is gnubg's one-sided bear-off ranking, so an index here is gnubg's
``PositionBearoff`` number (``gnubg_nn.bearoff_id_2_pos`` inverts it).  With
``c = (c1, .., c6)`` the checkers on points 1..6 and ``n = sum(c)``:

* positions are grouped by ``n``; the ``C(n + 5, 6)`` positions with fewer
  checkers come first (index 0 is the empty position);
* within a group, positions are in lexicographic order of the checkers' points
  sorted ascending (``(1, 1) < (1, 2) < ... < (1, 6) < (2, 2) < ...``), which is
  descending lexicographic order of ``c``; the rank there is
  ``sum_{k=1..5} C(r_k - c_k - 1 + 6 - k, 6 - k)`` with ``r_k = n - c_1 - .. - c_{k-1}``.

Because smaller checker counts come first, a database built for at most ``m``
checkers is exactly the first ``C(m + 6, 6)`` rows of the full one.

Two-sided probabilities
-----------------------
:meth:`BearoffDB.evaluate` combines the two sides' one-sided distributions as
gnubg does, assuming each side follows its one-sided policy.  The side on roll
takes the first turn, so with ``A``/``B`` the "all off" distributions of the side
on roll/the opponent and ``GA``/``GB`` their "first off" distributions::

    P(win)         = sum_n A[n] * P(B >= n)        (I finish on my n-th turn, after their n-1)
    P(win gammon)  = sum_n A[n] * P(GB >= n)       (only if they have 15 checkers on the board)
    P(lose gammon) = sum_m B[m] * P(GA >= m + 1)   (only if I have 15 checkers on the board)

Backgammons are impossible (every checker is home).  The gammon distributions
come from another policy than the win distributions, so the gammon figures are
capped at P(win) and P(lose); in the full database ``P(first off >= n) <=
P(all off >= n)`` holds for every position and ``n`` (checked by the tests), so
the cap only removes float32 rounding.

File
----
A compressed ``.npz`` (2.4 MB for the full database): ``version``,
``max_checkers``, ``rolls`` and ``first_off``.  The default location is
``$BGBOT_BEAROFF`` if set, else a copy shipped as ``bgbot/data/bearoff-v1.npz``
if present, else ``$XDG_CACHE_HOME/bgbot/bearoff-v1.npz``
(``~/.cache/bgbot/bearoff-v1.npz``).  A missing file is built on first use (a few seconds, with a progress bar); a file
that cannot be read or has another version raises
:class:`~bgbot.errors.CheckpointError`.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
import zipfile
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bgbot import jit
from bgbot.errors import CheckpointError, ConfigError, InvalidPositionError
from bgbot.fileio import atomic_open
from bgbot.jit import njit
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import HOME, NUM_SLOTS, all_home

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray
    from tqdm import tqdm

BEAROFF_VERSION = 1
NUM_POINTS = 6
MAX_CHECKERS = 15
MAX_TURNS = 32
TAIL_TOLERANCE = 1e-12
ENV_VAR = "BGBOT_BEAROFF"
FILE_NAME = f"bearoff-v{BEAROFF_VERSION}.npz"
# A copy shipped with the package (2.4 MB), used when present and $BGBOT_BEAROFF is unset.
_PACKAGED = Path(__file__).resolve().parents[1] / "data" / FILE_NAME

# Two policies' values are treated as equal below this difference (expected turns are O(10)).
_TIE = 1e-10

# _BINOM[x, m] = C(x, m) for the ranking; x never exceeds MAX_CHECKERS + NUM_POINTS.
_BINOM = np.array(
    [[math.comb(x, m) for m in range(NUM_POINTS + 1)] for x in range(MAX_CHECKERS + NUM_POINTS + 2)],
    dtype=np.int64,
)

# The 21 distinct rolls and their probabilities (non-doubles twice as likely).
_ROLLS = [(d1, d2) for d1 in range(1, 7) for d2 in range(1, d1 + 1)]
_ROLL_WEIGHTS = np.array([1.0 if d1 == d2 else 2.0 for d1, d2 in _ROLLS]) / 36.0


def num_positions(max_checkers: int = MAX_CHECKERS) -> int:
    """Number of one-sided positions with at most ``max_checkers`` checkers on 6 points."""
    return math.comb(max_checkers + NUM_POINTS, NUM_POINTS)


def rank_counts(counts: ArrayLike) -> NDArray[np.int64]:
    """gnubg's bear-off index of checker counts on points 1..6 (see the module docstring).

    ``counts`` is ``(6,)`` or ``(N, 6)`` non-negative counts of one side's checkers
    on its own points 1..6 (index 0 = its 1-point), at most 15 in all.  Returns
    an int64 array of shape ``()`` or ``(N,)``.  Raises
    :class:`~bgbot.errors.InvalidPositionError` for anything else.
    """
    return _rank(_as_counts(counts))


def _rank(c: NDArray[np.int64]) -> NDArray[np.int64]:
    """:func:`rank_counts` without the input checks (the build's hot path)."""
    n = c.sum(axis=-1)
    rank = _BINOM[n + NUM_POINTS - 1, NUM_POINTS].copy()
    rest = n.copy()
    for k in range(NUM_POINTS - 1):
        m = NUM_POINTS - 1 - k
        rank += _BINOM[rest - c[..., k] - 1 + m, m]
        rest -= c[..., k]
    return rank


def unrank_all(max_checkers: int = MAX_CHECKERS) -> NDArray[np.int8]:
    """Counts on points 1..6 of every position, row ``i`` = the position with index ``i``.

    Shape ``(num_positions(max_checkers), 6)``.  Built by walking the groups in
    index order, so it needs no search.
    """
    rows: list[tuple[int, ...]] = []

    def fill(prefix: tuple[int, ...], rest: int) -> None:
        if len(prefix) == NUM_POINTS - 1:
            rows.append((*prefix, rest))
            return
        for v in range(rest, -1, -1):  # more checkers on the lower point first
            fill((*prefix, v), rest - v)

    for n in range(max_checkers + 1):
        fill((), n)
    return np.array(rows, dtype=np.int8).reshape(-1, NUM_POINTS)


def _as_counts(counts: ArrayLike) -> NDArray[np.int64]:
    try:
        c = np.asarray(counts)
        ok = (
            c.ndim in (1, 2)
            and c.shape[-1] == NUM_POINTS
            and (c.size == 0 or np.issubdtype(c.dtype, np.integer) or bool(np.all(c == np.round(c))))
        )
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InvalidPositionError(f"expected (6,) or (N, 6) whole checker counts on points 1..6, got {counts!r}")
    c = c.astype(np.int64)
    if c.size and (c.min() < 0 or c.sum(axis=-1).max() > MAX_CHECKERS):
        raise InvalidPositionError(f"checker counts on points 1..6 must be >= 0 and total at most 15, got {counts!r}")
    return c


# ---------------------------------------------------------------------------
# build
# ---------------------------------------------------------------------------


def compute_tables(
    max_checkers: int = MAX_CHECKERS, *, progress: bool = False, turns: int = MAX_TURNS
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Compute ``(rolls, first_off)`` in float64, each ``(num_positions(max_checkers), turns)``.

    One side's view; see the module docstring for the policies and the index.
    Positions are solved in increasing pip count (every move lowers the pip
    count, so successors are always solved first), a whole pip level and one
    roll at a time with numpy over the successor lists that
    :func:`bgbot.rules.movegen.successors_batch` produced for all positions at once.
    Raises :class:`~bgbot.errors.ConfigError` for a bad ``max_checkers`` and
    :class:`RuntimeError` if more than :data:`TAIL_TOLERANCE` of any
    distribution falls beyond ``turns`` columns (it cannot with 32).
    """
    if not isinstance(max_checkers, int) or not 0 <= max_checkers <= MAX_CHECKERS:
        raise ConfigError(f"max_checkers must be a whole number 0..15, got {max_checkers!r}")
    width = 2 * turns  # computed wider, then truncated after checking the tail
    counts = unrank_all(max_checkers).astype(np.int64)  # (P, 6), row = index
    n_pos = counts.shape[0]
    n_checkers = counts.sum(axis=1)
    pips = counts @ np.arange(1, NUM_POINTS + 1)
    order = np.argsort(pips, kind="stable")  # solve order: index of the k-th position solved
    level_bounds = np.searchsorted(pips[order], np.arange(pips.max() + 2))
    boards = np.zeros((n_pos, 26), dtype=np.int8)
    boards[:, 1 : NUM_POINTS + 1] = counts[order]

    bar = _progress_bar(progress, len(_ROLLS) + len(level_bounds) - 2)
    # Per roll: successor index, whether the move bore a checker off, and each parent's first row.
    succ_ids: list[NDArray[np.int32]] = []
    succ_bore: list[NDArray[np.bool_]] = []
    succ_starts: list[NDArray[np.int64]] = []
    for dice in _ROLLS:
        succ, parent = successors_batch(boards, dice)
        # successors are from the opponent's view: our point j sits, negated, in slot 25 - j
        own = -succ[:, 24 : 24 - NUM_POINTS : -1].astype(np.int64)
        ids = _rank(own).astype(np.int32)  # ~9M rows over the 21 rolls: keep them small
        succ_ids.append(ids)
        succ_bore.append(n_checkers[ids] < n_checkers[order[parent]])
        succ_starts.append(np.searchsorted(parent, np.arange(n_pos + 1)))
        if bar is not None:
            bar.update(1)

    mean = np.zeros(n_pos)
    dist = np.zeros((n_pos, width))
    mean_g = np.zeros(n_pos)
    dist_g = np.zeros((n_pos, width))
    dist[0, 0] = dist_g[0, 0] = 1.0  # nothing left: done in 0 turns
    for level in range(1, len(level_bounds) - 1):
        lo, hi = level_bounds[level], level_bounds[level + 1]
        if hi > lo:
            ids_here = order[lo:hi]
            acc = np.zeros(hi - lo)
            acc_d = np.zeros((hi - lo, width))
            acc_g = np.zeros(hi - lo)
            acc_gd = np.zeros((hi - lo, width))
            for r, w in enumerate(_ROLL_WEIGHTS):
                a, b = succ_starts[r][lo], succ_starts[r][hi]
                seg = succ_starts[r][lo:hi] - a
                sizes = np.diff(succ_starts[r][lo : hi + 1])
                s = succ_ids[r][a:b]
                best = _best_per_segment(mean[s], s, seg, sizes)
                acc += w * mean[best]
                acc_d[:, 1:] += w * dist[best, :-1]
                # first-off policy: a move that bears a checker off ends the count (value 0)
                value_g = np.where(succ_bore[r][a:b], 0.0, mean_g[s])
                best_g = _best_per_segment(value_g, s, seg, sizes)
                done = n_checkers[best_g] < n_checkers[ids_here]
                acc_g += w * np.where(done, 0.0, mean_g[best_g])
                acc_gd[done, 1] += w
                acc_gd[~done, 1:] += w * dist_g[best_g[~done], :-1]
            mean[ids_here] = 1.0 + acc
            dist[ids_here] = acc_d
            mean_g[ids_here] = 1.0 + acc_g
            dist_g[ids_here] = acc_gd
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()

    tail = max(dist[:, turns:].sum(axis=1).max(), dist_g[:, turns:].sum(axis=1).max())
    if tail > TAIL_TOLERANCE:
        raise RuntimeError(f"bear-off distributions lose {tail:.3g} of their mass beyond {turns} turns")
    return dist[:, :turns], dist_g[:, :turns]


def _best_per_segment(
    values: NDArray[np.float64], ids: NDArray[np.int32], seg: NDArray[np.int64], sizes: NDArray[np.int64]
) -> NDArray[np.int32]:
    """Per segment of ``values`` (one parent's successors), the smallest id among the minimal values."""
    low = np.minimum.reduceat(values, seg)
    tied = values <= np.repeat(low, sizes) + _TIE
    return np.minimum.reduceat(np.where(tied, ids, np.iinfo(ids.dtype).max), seg)


def _progress_bar(progress: bool, total: int) -> tqdm[None] | None:
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="bear-off database", unit="step", file=sys.stderr)


def default_path() -> Path:
    """Where the database lives unless a path is given.

    ``$BGBOT_BEAROFF`` if set; else ``bgbot/data/bearoff-v1.npz`` if the package
    ships one; else ``$XDG_CACHE_HOME/bgbot/bearoff-v1.npz`` (``~/.cache/...``).
    """
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    if _PACKAGED.is_file():
        return _PACKAGED
    return user_cache_dir() / FILE_NAME


def user_cache_dir() -> Path:
    """bgbot's folder in the user's cache: ``$XDG_CACHE_HOME/bgbot`` (default ``~/.cache/bgbot``)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "bgbot"


def build_bearoff(
    path: str | os.PathLike[str] | None = None, progress: bool = True, *, max_checkers: int = MAX_CHECKERS
) -> Path:
    """Build the database and write it atomically to ``path`` (default: :func:`default_path`).

    The hook behind ``bgbot build-bearoff``.  Overwrites an existing file.  With
    ``progress`` a tqdm bar and a one-line summary (time, size) go to stderr.
    ``max_checkers`` < 15 builds only the positions with that many checkers or
    fewer (the same indices as the full database; for tests).  Returns the path.
    """
    target = Path(path).expanduser() if path is not None else default_path()
    start = time.perf_counter()
    rolls, first_off = compute_tables(max_checkers, progress=progress)
    _save(target, rolls.astype(np.float32), first_off.astype(np.float32), max_checkers)
    if progress:
        print(
            f"bear-off database: {rolls.shape[0]} positions in {time.perf_counter() - start:.1f} s, "
            f"{target.stat().st_size / 1e6:.2f} MB -> {target}",
            file=sys.stderr,
        )
    return target


def _save(path: Path, rolls: NDArray[np.float32], first_off: NDArray[np.float32], max_checkers: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # a unique name opened with "xb" (not mkstemp, whose 0600 mode would stick to a shared file)
    with atomic_open(path) as fh:
        np.savez_compressed(
            fh,
            version=np.int64(BEAROFF_VERSION),
            max_checkers=np.int64(max_checkers),
            rolls=rolls,
            first_off=first_off,
        )


# ---------------------------------------------------------------------------
# the database
# ---------------------------------------------------------------------------


class BearoffDB:
    """The one-sided tables in memory; every method takes or returns one side's view.

    ``rolls`` and ``first_off`` are ``(num_positions(max_checkers), MAX_TURNS)``
    float32 arrays indexed by :func:`rank_counts`.
    """

    def __init__(self, rolls: NDArray[np.float32], first_off: NDArray[np.float32], max_checkers: int) -> None:
        self.rolls = rolls
        self.first_off = first_off
        self.max_checkers = max_checkers
        turns = np.arange(rolls.shape[1])
        self._mean = rolls.astype(np.float64) @ turns
        self._mean_first = first_off.astype(np.float64) @ turns
        # P(X >= n) for n = 0 .. MAX_TURNS (one extra zero column), float64 for the sums
        self._surv = _survival(rolls)
        self._surv_first = _survival(first_off)

    # ---- construction --------------------------------------------------
    @classmethod
    def build(cls, max_checkers: int = MAX_CHECKERS, *, progress: bool = False) -> BearoffDB:
        """Compute a database in memory without writing a file."""
        rolls, first_off = compute_tables(max_checkers, progress=progress)
        return cls(rolls.astype(np.float32), first_off.astype(np.float32), max_checkers)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        build_if_missing: bool = True,
        progress: bool = True,
    ) -> BearoffDB:
        """Read the database from ``path`` (default: :func:`default_path`).

        A missing file is built there first (unless ``build_if_missing`` is
        False).  A file that is not a readable database of version
        :data:`BEAROFF_VERSION` raises :class:`~bgbot.errors.CheckpointError`.
        """
        target = Path(path).expanduser() if path is not None else default_path()
        if not target.exists():
            if not build_if_missing:
                raise CheckpointError(f"no bear-off database at {str(target)!r}; run `bgbot build-bearoff`")
            build_bearoff(target, progress=progress)
        return cls._read(target)

    @classmethod
    def _read(cls, path: Path) -> BearoffDB:
        hint = "delete it or run `bgbot build-bearoff` to rebuild it"
        try:
            with np.load(path, allow_pickle=False) as data:
                version = int(data["version"])
                if version != BEAROFF_VERSION:
                    raise CheckpointError(
                        f"bear-off database {str(path)!r} has version {version}, "
                        f"this bgbot reads version {BEAROFF_VERSION}: {hint}"
                    )
                max_checkers = int(data["max_checkers"])
                rolls = np.asarray(data["rolls"])
                first_off = np.asarray(data["first_off"])
        except CheckpointError:
            raise
        except (
            OSError,
            ValueError,
            KeyError,
            EOFError,
            TypeError,
            AttributeError,
            zipfile.BadZipFile,
            zlib.error,
        ) as exc:  # the many ways np.load fails on a damaged or foreign file
            raise CheckpointError(f"bear-off database {str(path)!r} is unreadable ({exc}): {hint}") from exc
        shape = (num_positions(max_checkers), MAX_TURNS) if 0 <= max_checkers <= MAX_CHECKERS else None
        shape_ok = all(a.dtype == np.float32 and a.shape == shape for a in (rolls, first_off))
        if not shape_ok or not all(
            np.isfinite(a).all() and (a >= 0).all() and np.allclose(a.sum(axis=1), 1.0, atol=1e-4)
            for a in (rolls, first_off)
        ):
            raise CheckpointError(f"bear-off database {str(path)!r} has bad contents: {hint}")
        return cls(rolls, first_off, max_checkers)

    # ---- one-sided queries ----------------------------------------------
    def index(self, my_home_counts: ArrayLike) -> NDArray[np.int64]:
        """The index of ``(6,)`` or ``(N, 6)`` checker counts on one side's points 1..6.

        Raises :class:`~bgbot.errors.InvalidPositionError` when a row has more
        than ``max_checkers`` checkers (the database does not hold it).
        """
        idx = rank_counts(my_home_counts)
        if idx.size and idx.max() >= self.rolls.shape[0]:
            raise InvalidPositionError(
                f"this bear-off database holds at most {self.max_checkers} checkers, got {my_home_counts!r}"
            )
        return idx

    def rolls_distribution(self, my_home_counts: ArrayLike) -> NDArray[np.float32]:
        """P(exactly n turns to bear off all checkers), n = 0..31, for counts on one side's points 1..6."""
        return self.rolls[self.index(my_home_counts)]

    def first_off_distribution(self, my_home_counts: ArrayLike) -> NDArray[np.float32]:
        """P(exactly n turns to bear off the first checker), n = 0..31, for one side's counts on 1..6."""
        return self.first_off[self.index(my_home_counts)]

    def expected_rolls(self, my_home_counts: ArrayLike) -> NDArray[np.float64]:
        """Expected turns to bear off all checkers (one side's counts on points 1..6)."""
        return self._mean[self.index(my_home_counts)]

    def expected_rolls_first_off(self, my_home_counts: ArrayLike) -> NDArray[np.float64]:
        """Expected turns to bear off the first checker (one side's counts on points 1..6)."""
        return self._mean_first[self.index(my_home_counts)]

    # ---- two-sided queries ----------------------------------------------
    def is_bearoff(self, boards: ArrayLike) -> NDArray[np.bool_]:
        """Whether each ``(26,)``/``(N, 26)`` board (side on roll's view) is in this database's range.

        True when both sides have all their checkers in their own home boards
        (nobody on the bar, no contact) and at most ``max_checkers`` each.
        """
        b = _as_boards(boards)
        mine_n = np.clip(b, 0, None).sum(axis=1)
        theirs_n = np.clip(-b, 0, None).sum(axis=1)
        ok = all_home(b) & (mine_n <= self.max_checkers) & (theirs_n <= self.max_checkers)
        return ok.reshape(np.shape(boards)[:-1])

    def evaluate(self, boards: ArrayLike) -> NDArray[np.float32]:
        """``(N, 5)`` probabilities for the side on roll of ``(N, 26)`` bear-off boards.

        Each board is from the view of the side on roll, which is about to roll.
        Columns: win, win gammon, win backgammon (0), lose gammon, lose
        backgammon (0); a ``(26,)`` board gives ``(1, 5)``.  A side with no
        checkers left counts as having finished in 0 turns (so a finished game
        reads as won by that side).  Raises
        :class:`~bgbot.errors.InvalidPositionError` for a board where
        :meth:`is_bearoff` is false.
        """
        b = _as_boards(boards)
        ok = self.is_bearoff(b)
        if not ok.all():
            bad = b[int(np.argmin(ok))].tolist()
            raise InvalidPositionError(f"not a bear-off position (both sides home, no bar): {bad!r}")
        return self.evaluate_home(b)

    def holds_every_home_board(self) -> bool:
        """Whether every position with both sides home is in this database (it holds 15 checkers a side)."""
        return self.max_checkers >= MAX_CHECKERS

    def evaluate_home(self, boards: NDArray[np.integer]) -> NDArray[np.float32]:
        """:meth:`evaluate` of ``(N, 26)`` integer boards already known to be in range, without the checks.

        For a caller that has tested :meth:`is_bearoff` itself (or
        :func:`home_rows` on a database that :meth:`holds_every_home_board`):
        the search's evaluator, on thousands of rows per call.
        """
        if jit.COMPILED:
            out = np.empty((boards.shape[0], 5), dtype=np.float32)
            _home_probs(np.ascontiguousarray(boards, dtype=np.int8), self.rolls, self._surv, self._surv_first,
                        _BINOM, out)
            return out
        return self._evaluate_home_numpy(boards)

    def _evaluate_home_numpy(self, boards: NDArray[np.integer]) -> NDArray[np.float32]:
        """:meth:`evaluate_home` in numpy (the interpreted kernels' way, and the compiled one's reference)."""
        b = boards
        mine = b[:, 1 : NUM_POINTS + 1].astype(np.int64)
        theirs = -b[:, 24 : 24 - NUM_POINTS : -1].astype(np.int64)  # their point j is slot 25 - j
        ia, ib = _rank(mine), _rank(theirs)
        t = self.rolls.shape[1]
        a = self.rolls[ia].astype(np.float64)  # (N, T): P(I need n turns)
        # I roll first: my n-th turn comes after the opponent's (n-1)-th
        win = np.clip(np.einsum("nt,nt->n", a, self._surv[ib, :t]), 0.0, 1.0)
        out = np.zeros((b.shape[0], 5), dtype=np.float32)
        out[:, 0] = win
        # gammons only where the loser still has all 15 checkers on the board
        g = np.flatnonzero(theirs.sum(axis=1) == MAX_CHECKERS)
        win_g = np.einsum("nt,nt->n", a[g], self._surv_first[ib[g], :t])
        out[g, 1] = np.clip(win_g, 0.0, win[g])
        g = np.flatnonzero(mine.sum(axis=1) == MAX_CHECKERS)
        lose_g = np.einsum("nt,nt->n", self.rolls[ib[g]].astype(np.float64), self._surv_first[ia[g], 1:])
        out[g, 3] = np.clip(lose_g, 0.0, 1.0 - win[g])
        return out


# ---------------------------------------------------------------------------
# compiled kernels
#
# Kept flat on purpose, as those of bgbot.rules.movegen: numba compiles plain loops over typed arrays,
# so each kernel takes its tables one by one and their signatures share a shape.
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _rank_side(board: NDArray[np.int8], sign: int, binom: NDArray[np.int64]) -> tuple[int, int]:
    """:func:`_rank` of one side's home board in one board (``sign`` 1: the side on roll, -1: the
    opponent, whose point j is slot 25 - j), and its number of checkers."""
    n = 0
    for j in range(1, NUM_POINTS + 1):
        n += board[j] if sign > 0 else -board[25 - j]
    rank = binom[n + NUM_POINTS - 1, NUM_POINTS]
    rest = n
    for k in range(NUM_POINTS - 1):
        m = NUM_POINTS - 1 - k
        c = board[k + 1] if sign > 0 else -board[24 - k]
        rank += binom[rest - c - 1 + m, m]
        rest -= c
    return rank, n


@njit(cache=True)
def _home_probs(
    boards: NDArray[np.int8],
    rolls: NDArray[np.float32],
    surv: NDArray[np.float64],
    surv_first: NDArray[np.float64],
    binom: NDArray[np.int64],
    out: NDArray[np.float32],
) -> None:
    """:meth:`BearoffDB.evaluate_home` compiled, row by row: the same sums in float64, in turn order."""
    t = rolls.shape[1]
    for r in range(boards.shape[0]):
        b = boards[r]
        ia, na = _rank_side(b, 1, binom)
        ib, nb = _rank_side(b, -1, binom)
        win = 0.0
        for k in range(t):
            win += np.float64(rolls[ia, k]) * surv[ib, k]
        win = min(max(win, 0.0), 1.0)
        wg = 0.0
        if nb == MAX_CHECKERS:
            for k in range(t):
                wg += np.float64(rolls[ia, k]) * surv_first[ib, k]
            wg = min(max(wg, 0.0), win)
        lg = 0.0
        if na == MAX_CHECKERS:
            for k in range(t):
                lg += np.float64(rolls[ib, k]) * surv_first[ia, k + 1]
            lg = min(max(lg, 0.0), 1.0 - win)
        out[r, 0] = win
        out[r, 1] = wg
        out[r, 2] = 0.0
        out[r, 3] = lg
        out[r, 4] = 0.0


@njit(cache=True)
def _mark_home(boards: NDArray[np.int8], mask: NDArray[np.bool_]) -> int:
    """``mask[r] = all_home(boards[r])`` for each row; returns how many rows are home (compiled)."""
    count = 0
    for r in range(boards.shape[0]):
        home = True
        for i in range(HOME + 1, NUM_SLOTS):
            if boards[r, i] > 0:
                home = False
                break
        if home:
            for i in range(NUM_SLOTS - 1 - HOME):
                if boards[r, i] < 0:
                    home = False
                    break
        mask[r] = home
        count += home
    return count


def home_rows(boards: NDArray[np.int8]) -> tuple[NDArray[np.bool_], int]:
    """Which rows of ``(N, 26)`` int8 boards have both sides all home, and how many do.

    :func:`bgbot.rules.position.all_home` per row (either side's view gives the
    same answer): the cheap first test of whether the database can answer a
    row.  Compiled, it costs about a microsecond for one position's candidates,
    where numpy's masks cost ten or more; interpreted (:mod:`bgbot.jit`) it is
    :func:`all_home` itself.
    """
    if not jit.COMPILED:
        mask = all_home(boards)
        return mask, int(np.count_nonzero(mask))
    mask = np.empty(boards.shape[0], dtype=np.bool_)
    return mask, _mark_home(boards, mask)


def _survival(dist: NDArray[np.float32]) -> NDArray[np.float64]:
    """``S[i, n] = P(X_i >= n)`` for n = 0 .. T (the last column is 0)."""
    d = dist.astype(np.float64)
    surv = np.zeros((d.shape[0], d.shape[1] + 1))
    surv[:, :-1] = np.cumsum(d[:, ::-1], axis=1)[:, ::-1]
    return surv


def _as_boards(boards: ArrayLike) -> NDArray[np.int64]:
    try:
        b = np.asarray(boards)
        ok = b.ndim in (1, 2) and b.shape[-1] == 26 and (b.size == 0 or np.issubdtype(b.dtype, np.integer))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InvalidPositionError(f"expected (26,) or (N, 26) integer boards, got {boards!r}")
    return b.reshape(-1, 26).astype(np.int64)


_DBS: dict[Path, BearoffDB] = {}
_LOCK = threading.Lock()


def get_bearoff_db(path: str | os.PathLike[str] | None = None) -> BearoffDB:
    """The shared database for ``path`` (default: :func:`default_path`), loaded once per path.

    Built on first use if the file is missing (see :meth:`BearoffDB.load`).
    """
    target = (Path(path).expanduser() if path is not None else default_path()).resolve()
    with _LOCK:
        db = _DBS.get(target)
        if db is None:
            db = _DBS[target] = BearoffDB.load(target)
        return db
