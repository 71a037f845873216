"""Legal moves: the compiled batched successor generator.

Three entry points share one rule set:

* :func:`successors_batch` takes an ``(N, 26)`` array of positions (each from the
  view of its side on roll) and the dice, and returns every distinct legal
  resulting position **from the opponent's view** (the opponent now on roll)
  with the index of its parent row.  It is compiled with numba and runs the
  whole batch in one call: this is the hot path of self-play and search.
* :func:`successors` answers one :class:`~bgbot.rules.position.Position` from the
  same compiled core (:func:`_distinct`), its results handed back as tuples of
  ints, without a numpy round trip; the compiled kernel is called through its
  entry point, not numba's dispatcher.  Of the ~10 us a mid-game call with 20
  results took on the shared 2-core machine, the move search was ~2 us; numba
  boxing the 20 tuples took ~4 us and making the 20 ``Position`` objects ~3 us.
* :func:`bgbot.rules.moves.legal_moves` lists, for one position, each distinct
  result with one sequence of checker steps that reaches it (for notation and
  user input), from the plain-Python statement of the same rule.

Why numba and not numpy alone: a legal move is a short tree search per
position (up to four dependent steps, forced-play and higher-die rules decided
only after the whole tree is known, duplicates collapsed).  Masked numpy over the
batch pays for every slot of every branch and for the de-duplication sort at
each level; compiled loops do the same work per position without temporaries
and reach gnubg's C speed (see benchmarks/movegen.py and BENCHMARKS.md).

The rules implemented (docs/rules.md): bar checkers first (and the
rest of the roll is lost if they cannot all enter), landing only on open points
(at most one opposing checker, which is hit), intermediate points of a checker
using several dice must be open too (each die is a separate step), doubles play
up to four steps, as many dice as possible must be used, if only one die of a
non-double can be used the higher must be used when it can, bearing off only
with all 15 checkers home, exact or from the highest point when the die is
larger than it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from bgbot import jit
from bgbot.errors import InvalidDiceError, InvalidPositionError, quote_input
from bgbot.jit import njit
from bgbot.rules.dice import parse_dice
from bgbot.rules.position import Position, positions_of_boards

if TYPE_CHECKING:
    from numpy.typing import NDArray

# Random 64-bit weights for a per-row key used to collapse duplicate results.
_KEY_WEIGHTS = np.random.default_rng(20261129).integers(1, 2**62, size=(26, 32), dtype=np.int64)


# ---------------------------------------------------------------------------
# compiled core
#
# Kept flat on purpose: numba compiles plain loops over typed arrays, not recursion, closures or
# objects, so the four steps of a double are written out level by level and every kernel takes its
# working arrays one by one.  The repeated shapes are the price of the compiled speed.
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _can_move(b: NDArray[np.int8], src: int, d: int) -> bool:
    """Whether the mover may move one checker from ``src`` (25 = bar) with die ``d``."""
    if b[src] <= 0:
        return False
    if src != 25 and b[25] > 0:
        return False
    dst = src - d
    if dst >= 1:
        return b[dst] >= -1
    # bearing off: every checker home
    for i in range(7, 26):
        if b[i] > 0:
            return False
    if dst == 0:
        return True
    # die larger than the point: only from the highest occupied point
    for i in range(src + 1, 7):
        if b[i] > 0:
            return False
    return True


@njit(cache=True, inline="always")
def _do(b: NDArray[np.int8], src: int, dst: int, w: NDArray[np.int64], key: int) -> int:
    """Move one checker of ``b`` in place from ``src`` to ``dst`` (< 1: borne off; legal, a blot there is hit).

    Returns the duplicate key (see :func:`_distinct`) of the new board given ``key``, that of the
    board before: only the slots the move changes are re-weighted.
    """
    v = b[src]
    b[src] = v - 1
    key += w[src, v + 14] - w[src, v + 15]
    if dst >= 1:
        x = b[dst]
        if x == -1:  # a hit: the opposing checker goes to its bar (slot 0, stored negative)
            b[dst] = 1
            o = b[0]
            b[0] = o - 1
            key += w[dst, 16] - w[dst, 14] + w[0, o + 14] - w[0, o + 15]
        else:
            b[dst] = x + 1
            key += w[dst, x + 16] - w[dst, x + 15]
    return key


@njit(cache=True, inline="always")
def _undo(b: NDArray[np.int8], src: int, dst: int, hit: bool) -> None:
    """Take back :func:`_do`'s move from ``src`` to ``dst``; ``hit``: whether it hit a blot."""
    b[src] += 1
    if dst >= 1:
        if hit:
            b[dst] = -1
            b[0] += 1
        else:
            b[dst] -= 1


@njit(cache=True, inline="always")
def same_rows(boards: NDArray[np.int8], i: int, j: int) -> bool:
    """Whether rows ``i`` and ``j`` of ``boards`` ``(N, 26)`` hold the same position (compiled kernels' use)."""
    for k in range(26):
        if boards[i, k] != boards[j, k]:
            return False
    return True


@njit(cache=True, inline="always")
def _emit(
    b: NDArray[np.int8],
    key: int,
    buf: NDArray[np.int8],
    used: NDArray[np.int8],
    keys: NDArray[np.int64],
    n: int,
    u: int,
) -> int:
    """Append board ``b`` with its key and dice used ``u`` as row ``n``; returns the new count."""
    if n >= buf.shape[0]:  # cannot happen with the buffer sizes below; keep memory safe anyway
        return n
    for i in range(26):
        buf[n, i] = b[i]
    used[n] = u
    keys[n] = key
    return n + 1


@njit(cache=True)
def _gen_one(
    b0: NDArray[np.int8],
    d1: int,
    d2: int,
    w: NDArray[np.int64],
    key0: int,
    buf: NDArray[np.int8],
    used: NDArray[np.int8],
    keys: NDArray[np.int64],
    b: NDArray[np.int8],
    cand: NDArray[np.int64],
) -> int:
    """Every move sequence of one position into ``buf``; returns the number written.

    ``used[k]`` is the number of dice used by row k, negated when the single die
    used was the smaller one (so the higher-die rule can be applied afterwards);
    ``keys[k]`` is row k's duplicate key, kept up to date move by move from
    ``key0``, the key of ``b0``.  The moves are made and taken back on one
    working board ``b`` (26 slots); the checkers that can move are looked for only on the
    points the mover holds (those of ``b0``, then those each move newly occupies: ``cand``,
    room for 32).
    """
    n = 0
    for i in range(26):
        b[i] = b0[i]
    # the points the mover may move from, the bar first; each move may add its landing point
    c0 = 0
    for s in range(25, 0, -1):
        if b[s] > 0:
            cand[c0] = s
            c0 += 1
    if d1 == d2:
        d = d1
        for t1 in range(c0):
            s1 = cand[t1]
            if not _can_move(b, s1, d):
                continue
            e1 = s1 - d
            h1 = e1 >= 1 and b[e1] == -1
            c1 = c0
            if e1 >= 1 and b[e1] <= 0:
                cand[c1] = e1
                c1 += 1
            k1 = _do(b, s1, e1, w, key0)
            m1 = False
            for t2 in range(c1):
                s2 = cand[t2]
                if s2 > s1 or not _can_move(b, s2, d):
                    continue
                m1 = True
                e2 = s2 - d
                h2 = e2 >= 1 and b[e2] == -1
                c2 = c1
                if e2 >= 1 and b[e2] <= 0:
                    cand[c2] = e2
                    c2 += 1
                k2 = _do(b, s2, e2, w, k1)
                m2 = False
                for t3 in range(c2):
                    s3 = cand[t3]
                    if s3 > s2 or not _can_move(b, s3, d):
                        continue
                    m2 = True
                    e3 = s3 - d
                    h3 = e3 >= 1 and b[e3] == -1
                    c3 = c2
                    if e3 >= 1 and b[e3] <= 0:
                        cand[c3] = e3
                        c3 += 1
                    k3 = _do(b, s3, e3, w, k2)
                    m3 = False
                    for t4 in range(c3):
                        s4 = cand[t4]
                        if s4 > s3 or not _can_move(b, s4, d):
                            continue
                        m3 = True
                        e4 = s4 - d
                        h4 = e4 >= 1 and b[e4] == -1
                        k4 = _do(b, s4, e4, w, k3)
                        n = _emit(b, k4, buf, used, keys, n, 4)
                        _undo(b, s4, e4, h4)
                    if not m3:
                        n = _emit(b, k3, buf, used, keys, n, 3)
                    _undo(b, s3, e3, h3)
                if not m2:
                    n = _emit(b, k2, buf, used, keys, n, 2)
                _undo(b, s2, e2, h2)
            if not m1:
                n = _emit(b, k1, buf, used, keys, n, 1)
            _undo(b, s1, e1, h1)
        return n
    # The second order (d2, then d1) skips each play whose moves, made in the first order, are legal and
    # give the same board (so the first order has listed it): two moves of different checkers (or one
    # moved on from a point that already held the mover's checkers), neither bearing off, no checker on the
    # bar.  Then the first order's moves land on points at least as open as the second's did, and a blot
    # hit by either move is hit all the same: the same result, already listed, not made twice.
    bar_free = b0[25] == 0
    for order in range(2):
        da = d1 if order == 0 else d2
        db = d2 if order == 0 else d1
        twins = order == 1 and bar_free
        for t1 in range(c0):
            s1 = cand[t1]
            if not _can_move(b, s1, da):
                continue
            e1 = s1 - da
            h1 = e1 >= 1 and b[e1] == -1
            c1 = c0
            if e1 >= 1 and b[e1] <= 0:
                cand[c1] = e1
                c1 += 1
            k1 = _do(b, s1, e1, w, key0)
            moved = False
            for t2 in range(c1):
                s2 = cand[t2]
                if not _can_move(b, s2, db):
                    continue
                moved = True
                e2 = s2 - db
                if twins and e1 >= 1 and e2 >= 1 and (s2 != e1 or b0[e1] > 0):
                    continue
                h2 = e2 >= 1 and b[e2] == -1
                k2 = _do(b, s2, e2, w, k1)
                n = _emit(b, k2, buf, used, keys, n, 2)
                _undo(b, s2, e2, h2)
            if not moved:
                n = _emit(b, k1, buf, used, keys, n, 1 if da > db else -1)
            _undo(b, s1, e1, h1)
    return n


# Up to this many kept plays are put in key order by insertion sort (no allocation); more by argsort.
_INSERTION_MAX = 64


@njit(cache=True)
def _distinct(
    b: NDArray[np.int8],
    d1: int,
    d2: int,
    include_pass: bool,
    weights: NDArray[np.int64],
    buf: NDArray[np.int8],
    used: NDArray[np.int8],
    keys: NDArray[np.int64],
    sel: NDArray[np.int64],
    work: NDArray[np.int8],
    cand: NDArray[np.int64],
) -> int:
    """The distinct legal results of one position ``b`` (mover's view) with dice ``d1, d2``.

    Writes them into ``buf`` (mover's view, before the swap) and their row
    numbers in output order into ``sel``; returns how many.  ``buf``, ``used``,
    ``keys``, ``sel``, ``work`` and ``cand`` are working memory (:func:`_scratch`).  With no legal
    play and ``include_pass`` the one result is ``b`` itself.

    The output order is ascending duplicate key: a row's key is the int64 sum,
    wrapping around, of ``weights[i, row[i] + 15]`` over its 26 slots (random
    weights, so the order is a fixed function of the set of results, however
    they were generated); equal keys are confirmed slot by slot.
    """
    key0 = np.int64(0)
    for i in range(26):
        key0 += weights[i, b[i] + 15]
    k = _gen_one(b, d1, d2, weights, key0, buf, used, keys, work, cand)
    best = 0
    for j in range(k):
        u = used[j] if used[j] > 0 else -used[j]
        if u > best:
            best = u
    if best == 0:
        if not include_pass:
            return 0
        for i in range(26):
            buf[0, i] = b[i]
        sel[0] = 0
        return 1
    # forced play: keep only sequences using the most dice; with one die of a
    # non-double, the higher one if it can be used at all
    need_high = False
    if best == 1 and d1 != d2:
        for j in range(k):
            if used[j] == 1:
                need_high = True
                break
    kept = 0
    for j in range(k):
        u = used[j]
        ok = (u if u > 0 else -u) == best
        if ok and need_high and u != 1:
            ok = False
        if ok:
            sel[kept] = j
            kept += 1
    # in key order
    if kept <= _INSERTION_MAX:
        for t in range(1, kept):
            j = sel[t]
            kj = keys[j]
            q = t - 1
            while q >= 0 and keys[sel[q]] > kj:
                sel[q + 1] = sel[q]
                q -= 1
            sel[q + 1] = j
    else:
        rows = sel[:kept].copy()
        order = np.argsort(keys[rows])
        for t in range(kept):
            sel[t] = rows[order[t]]
    # collapse duplicates: a row equal to one already kept has its key, so it follows that one's run
    n = 0
    for t in range(kept):
        j = sel[t]
        kj = keys[j]
        dup = False
        q = n - 1
        while q >= 0 and keys[sel[q]] == kj:
            if same_rows(buf, sel[q], j):
                dup = True
                break
            q -= 1
        if not dup:
            sel[n] = j
            n += 1
    return n


# Room for the move sequences of one position (as the four 4096-row buffers before; _emit guards the end).
_ROWS = 4096


@njit(cache=True, inline="always")
def _scratch() -> tuple[
    NDArray[np.int8], NDArray[np.int8], NDArray[np.int64], NDArray[np.int64], NDArray[np.int8], NDArray[np.int64]
]:
    """Working memory for :func:`_distinct` in three allocations: ``buf`` (``_ROWS`` boards), ``used``,
    ``keys``, ``sel`` (one entry a row), ``work`` (one board) and ``cand`` (32 points)."""
    buf = np.empty((_ROWS, 26), dtype=np.int8)
    small = np.empty(_ROWS + 26, dtype=np.int8)
    large = np.empty(2 * _ROWS + 32, dtype=np.int64)
    return buf, small[:_ROWS], large[:_ROWS], large[_ROWS : 2 * _ROWS], small[_ROWS:], large[2 * _ROWS :]


@njit(cache=True, nogil=True)  # threads may generate parts of one batch at once (bgbot.engine.search)
def _batch(
    boards: NDArray[np.int8], dice: NDArray[np.int64], include_pass: bool, weights: NDArray[np.int64]
) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    n_pos = boards.shape[0]
    cap = max(64, n_pos * 24)
    out = np.empty((cap, 26), dtype=np.int8)
    parent = np.empty(cap, dtype=np.int64)
    m = 0
    buf, used, keys, sel, work, cand = _scratch()
    for p in range(n_pos):
        n = _distinct(boards[p], dice[p, 0], dice[p, 1], include_pass, weights, buf, used, keys, sel, work, cand)
        if m + n > cap:
            new_cap = max(cap * 2, m + n)
            out2 = np.empty((new_cap, 26), dtype=np.int8)
            out2[:m] = out[:m]
            par2 = np.empty(new_cap, dtype=np.int64)
            par2[:m] = parent[:m]
            out = out2
            parent = par2
            cap = new_cap
        for t in range(n):
            j = sel[t]
            # store from the opponent's view
            for i in range(26):
                out[m, i] = -buf[j, 25 - i]
            parent[m] = p
            m += 1
    return out[:m], parent[:m]


@njit(cache=True)
def _one(board: tuple[int, ...], d1: int, d2: int, include_pass: bool) -> list[tuple[int, ...]]:
    """The distinct legal results of one position (a tuple of 26 counts, mover's view) as tuples,
    each from the opponent's view: :func:`successors` without the numpy round trip."""
    b = np.empty(26, dtype=np.int8)
    for i in range(26):
        b[i] = board[i]
    buf, used, keys, sel, work, cand = _scratch()
    n = _distinct(b, d1, d2, include_pass, _KEY_WEIGHTS, buf, used, keys, sel, work, cand)
    res = []
    for t in range(n):
        r = buf[sel[t]]
        # from the opponent's view: slot i is minus the mover's slot 25 - i
        res.append((
            -int(r[25]), -int(r[24]), -int(r[23]), -int(r[22]), -int(r[21]), -int(r[20]), -int(r[19]),
            -int(r[18]), -int(r[17]), -int(r[16]), -int(r[15]), -int(r[14]), -int(r[13]), -int(r[12]),
            -int(r[11]), -int(r[10]), -int(r[9]), -int(r[8]), -int(r[7]), -int(r[6]), -int(r[5]),
            -int(r[4]), -int(r[3]), -int(r[2]), -int(r[1]), -int(r[0]),
        ))  # fmt: skip
    return res


if not jit.COMPILED:
    # the duplicate keys are int64 sums that wrap around: numba wraps silently, numpy's scalars wrap and warn
    _one = jit.wrapping(_one)
    _batch = jit.wrapping(_batch)


# One roll for one row, as the compiled core takes it: made once, never written to (analyze and the
# one-position questions ask for a single row's successors, and building the array was a tenth of such a call).
_ONE_ROW_DICE = {(a, b): np.array([[a, b]], dtype=np.int64) for a in range(1, 7) for b in range(1, 7)}
# The compiled `_one` called without numba's dispatcher (which types the 26-tuple argument on every
# call, about 0.7 us): its entry point for the one signature successors uses, set on first use.
_ONE_SIGNATURE = "(UniTuple(int64, 26), int64, int64, boolean)"
_one_entry: Callable[[tuple[int, ...], int, int, bool], list[tuple[int, ...]]] | None = None


def _one_kernel() -> Callable[[tuple[int, ...], int, int, bool], list[tuple[int, ...]]]:
    """``_one`` as successors calls it: the compiled entry point (compiled or loaded from the cache
    now), or the plain function when the kernels are interpreted."""
    global _one_entry
    if _one_entry is None:
        _one_entry = _one.compile(_ONE_SIGNATURE) if jit.COMPILED else _one  # type: ignore[attr-defined]
    return _one_entry


def successors_batch(
    boards: NDArray[np.int8],
    dice: tuple[int, int] | NDArray[np.integer],
    *,
    include_pass: bool = True,
) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """All distinct legal results for a batch of positions.

    ``boards``: ``(N, 26)`` int8, each row from the view of its side on roll.
    ``dice``: one roll ``(d1, d2)`` for every row, or an ``(N, 2)`` array.
    Returns ``(succ, parent)``: ``succ`` is ``(M, 26)`` int8, each row **from the
    opponent's view** (the opponent on roll after the move), ``parent`` is
    ``(M,)`` with the row index in ``boards`` it came from; rows of one parent
    are contiguous and parents appear in order.  A position with no legal move
    yields one row, itself seen from the opponent (the pass), unless
    ``include_pass`` is False.
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    if boards.ndim != 2 or boards.shape[1] != 26:
        raise InvalidPositionError(f"boards must have shape (N, 26), got {boards.shape}")
    if type(dice) is tuple and len(dice) == 2:
        d1, d2 = dice
        if type(d1) is int and type(d2) is int and 1 <= d1 <= 6 and 1 <= d2 <= 6:
            # one roll for every row: the common case of search, checked without numpy overhead
            n = boards.shape[0]
            if n == 1:
                return _batch(boards, _ONE_ROW_DICE[d1, d2], include_pass, _KEY_WEIGHTS)
            d = np.empty((n, 2), dtype=np.int64)
            d[:, 0] = d1
            d[:, 1] = d2
            return _batch(boards, d, include_pass, _KEY_WEIGHTS)
    d = np.asarray(dice, dtype=np.int64)
    if d.ndim == 1:
        d = np.tile(d, (boards.shape[0], 1)) if d.shape == (2,) else d
    if d.shape != (boards.shape[0], 2) or (d.size and (d.min() < 1 or d.max() > 6)):
        shown = d.tolist() if d.size <= 8 else f"array of shape {d.shape}"
        raise InvalidDiceError(f"dice must be (2,) or (N, 2) values 1-6 for {boards.shape[0]} rows, got {shown!r}")
    return _batch(boards, d, include_pass, _KEY_WEIGHTS)


def successors(pos: Position, dice: object) -> list[Position]:
    """The legal resulting positions of ``pos`` after rolling ``dice``.

    ``pos`` is from the side on roll's view; every result is **from the
    opponent's view** (opponent on roll), as gnubg shows the next turn.  The
    list is empty when the roll cannot be played at all.
    """
    d1, d2 = parse_dice(dice)
    if type(pos) is not Position and not isinstance(pos, Position):
        raise InvalidPositionError(f"successors needs a Position, got {quote_input(pos)}")
    run = _one_entry if _one_entry is not None else _one_kernel()
    return positions_of_boards(run(pos.board, d1, d2, False))
