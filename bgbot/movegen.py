"""Legal moves: a compiled batched successor generator and a move lister with steps.

Two entry points share one rule set:

* :func:`successors_batch` takes an ``(N, 26)`` array of positions (each from the
  view of its side on roll) and the dice, and returns every distinct legal
  resulting position **from the opponent's view** (the opponent now on roll)
  with the index of its parent row.  It is compiled with numba and runs the
  whole batch in one call: this is the hot path of self-play and search.
* :func:`legal_moves` lists, for one position, each distinct result with one
  sequence of checker steps that reaches it (for notation and user input).

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

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numba as nb
import numpy as np

from bgbot.errors import InvalidDiceError, InvalidPositionError
from bgbot.position import Position

if TYPE_CHECKING:
    from numpy.typing import NDArray

Step = tuple[int, int, bool]  # (from, to, hit) in the mover's numbering; 25 = bar, 0 = off

# Random 64-bit weights for a per-row key used to collapse duplicate results.
_KEY_WEIGHTS = np.random.default_rng(20261129).integers(
    1, 2**62, size=(26, 32), dtype=np.int64
)


def parse_dice(dice: object) -> tuple[int, int]:
    """Validate dice given as ``(d1, d2)``, ``[d1, d2]`` or text like ``"31"``, ``"3-1"``, ``"3 1"``."""
    if isinstance(dice, str):
        digits = [c for c in dice if not c.isspace() and c not in "-,/"]
        if len(digits) != 2 or not all(c in "123456" for c in digits):
            raise InvalidDiceError(f"dice must be two digits 1-6 like '31' or '3-1', got {dice!r}")
        return int(digits[0]), int(digits[1])
    try:
        values = [int(x) for x in dice]  # type: ignore[attr-defined]
        ok = len(values) == 2 and all(1 <= v <= 6 for v in values) and all(
            float(x) == int(x) for x in dice  # type: ignore[attr-defined]
        )
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InvalidDiceError(f"dice must be two values 1-6, got {dice!r}")
    return values[0], values[1]


# ---------------------------------------------------------------------------
# compiled core
# ---------------------------------------------------------------------------


@nb.njit(cache=True, inline="always")
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


@nb.njit(cache=True, inline="always")
def _apply(src_b: NDArray[np.int8], dst_b: NDArray[np.int8], src: int, d: int) -> None:
    """Copy ``src_b`` into ``dst_b`` and move one checker from ``src`` with die ``d`` (legal)."""
    for i in range(26):
        dst_b[i] = src_b[i]
    dst_b[src] -= 1
    dst = src - d
    if dst >= 1:
        if dst_b[dst] == -1:
            dst_b[dst] = 1
            dst_b[0] -= 1
        else:
            dst_b[dst] += 1


@nb.njit(cache=True)
def _gen_one(
    b0: NDArray[np.int8], d1: int, d2: int, buf: NDArray[np.int8], used: NDArray[np.int8]
) -> int:
    """Every move sequence of one position into ``buf``; returns the number written.

    ``used[k]`` is the number of dice used by row k, negated when the single die
    used was the smaller one (so the higher-die rule can be applied afterwards).
    """
    n = 0
    stack = np.empty((5, 26), dtype=np.int8)
    for i in range(26):
        stack[0, i] = b0[i]
    if d1 == d2:
        d = d1
        for s1 in range(25, 0, -1):
            if not _can_move(stack[0], s1, d):
                continue
            _apply(stack[0], stack[1], s1, d)
            m1 = False
            for s2 in range(s1, 0, -1):
                if not _can_move(stack[1], s2, d):
                    continue
                m1 = True
                _apply(stack[1], stack[2], s2, d)
                m2 = False
                for s3 in range(s2, 0, -1):
                    if not _can_move(stack[2], s3, d):
                        continue
                    m2 = True
                    _apply(stack[2], stack[3], s3, d)
                    m3 = False
                    for s4 in range(s3, 0, -1):
                        if not _can_move(stack[3], s4, d):
                            continue
                        m3 = True
                        _apply(stack[3], stack[4], s4, d)
                        n = _emit(stack[4], buf, used, n, 4)
                    if not m3:
                        n = _emit(stack[3], buf, used, n, 3)
                if not m2:
                    n = _emit(stack[2], buf, used, n, 2)
            if not m1:
                n = _emit(stack[1], buf, used, n, 1)
        return n
    for order in range(2):
        da = d1 if order == 0 else d2
        db = d2 if order == 0 else d1
        for s1 in range(25, 0, -1):
            if not _can_move(stack[0], s1, da):
                continue
            _apply(stack[0], stack[1], s1, da)
            moved = False
            for s2 in range(25, 0, -1):
                if not _can_move(stack[1], s2, db):
                    continue
                moved = True
                _apply(stack[1], stack[2], s2, db)
                n = _emit(stack[2], buf, used, n, 2)
            if not moved:
                n = _emit(stack[1], buf, used, n, 1 if da > db else -1)
    return n


@nb.njit(cache=True, inline="always")
def _emit(b: NDArray[np.int8], buf: NDArray[np.int8], used: NDArray[np.int8], n: int, u: int) -> int:
    if n >= buf.shape[0]:  # cannot happen with the buffer sizes below; keep memory safe anyway
        return n
    for i in range(26):
        buf[n, i] = b[i]
    used[n] = u
    return n + 1


@nb.njit(cache=True)
def _batch(
    boards: NDArray[np.int8], dice: NDArray[np.int64], include_pass: bool, weights: NDArray[np.int64]
) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    n_pos = boards.shape[0]
    cap = max(64, n_pos * 24)
    out = np.empty((cap, 26), dtype=np.int8)
    parent = np.empty(cap, dtype=np.int64)
    m = 0
    buf = np.empty((4096, 26), dtype=np.int8)
    used = np.empty(4096, dtype=np.int8)
    keys = np.empty(4096, dtype=np.int64)
    for p in range(n_pos):
        d1 = dice[p, 0]
        d2 = dice[p, 1]
        k = _gen_one(boards[p], d1, d2, buf, used)
        best = 0
        for j in range(k):
            u = used[j] if used[j] > 0 else -used[j]
            if u > best:
                best = u
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
                if kept != j:
                    for i in range(26):
                        buf[kept, i] = buf[j, i]
                kept += 1
        if best == 0:
            if not include_pass:
                continue
            kept = 1
            for i in range(26):
                buf[0, i] = boards[p, i]
        # collapse duplicates by a random-projection key, then confirm equality
        for j in range(kept):
            h = np.int64(0)
            for i in range(26):
                h += weights[i, buf[j, i] + 15]
            keys[j] = h
        order = np.argsort(keys[:kept])
        if m + kept > cap:
            new_cap = max(cap * 2, m + kept)
            out2 = np.empty((new_cap, 26), dtype=np.int8)
            out2[:m] = out[:m]
            par2 = np.empty(new_cap, dtype=np.int64)
            par2[:m] = parent[:m]
            out = out2
            parent = par2
            cap = new_cap
        start_m = m
        for t in range(kept):
            j = order[t]
            dup = False
            q = t - 1
            while q >= 0 and keys[order[q]] == keys[j]:
                same = True
                jq = order[q]
                for i in range(26):
                    if buf[jq, i] != buf[j, i]:
                        same = False
                        break
                if same:
                    dup = True
                    break
                q -= 1
            if dup:
                continue
            # store from the opponent's view
            for i in range(26):
                out[m, i] = -buf[j, 25 - i]
            parent[m] = p
            m += 1
        _ = start_m
    return out[:m], parent[:m]


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
    if isinstance(dice, tuple) and len(dice) == 2 and all(type(x) is int and 1 <= x <= 6 for x in dice):
        # one roll for every row: the common case of search, checked without numpy overhead
        d = np.empty((boards.shape[0], 2), dtype=np.int64)
        d[:, 0] = dice[0]
        d[:, 1] = dice[1]
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
    d = parse_dice(dice)
    succ, _ = successors_batch(pos.array()[None, :], d, include_pass=False)
    return [Position._trusted(tuple(row)) for row in succ.tolist()]


# ---------------------------------------------------------------------------
# move lists with steps (one position, plain Python: not a hot path)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    """One legal play: the checker steps (mover's numbering) and the result.

    ``steps`` are ``(from, to, hit)`` single-die steps in play order, from 25 =
    the bar, to 0 = borne off.  ``result`` is the position after the move **from
    the opponent's view** (opponent on roll).  The empty move (no legal play)
    has no steps.
    """

    steps: tuple[Step, ...]
    result: Position

    @property
    def text(self) -> str:
        """The move in standard notation, e.g. ``24/18 13/11`` or ``8/5(2)``."""
        from bgbot.notation import format_move

        return format_move(self.steps)

    def __str__(self) -> str:
        return self.text


def _py_can_move(b: list[int], src: int, d: int) -> bool:
    if b[src] <= 0 or (src != 25 and b[25] > 0):
        return False
    dst = src - d
    if dst >= 1:
        return b[dst] >= -1
    if any(b[i] > 0 for i in range(7, 26)):
        return False
    return dst == 0 or not any(b[i] > 0 for i in range(src + 1, 7))


def _py_apply(b: list[int], src: int, d: int) -> tuple[list[int], Step]:
    nb_ = list(b)
    nb_[src] -= 1
    dst = src - d
    hit = False
    if dst >= 1:
        if nb_[dst] == -1:
            nb_[dst] = 1
            nb_[0] -= 1
            hit = True
        else:
            nb_[dst] += 1
    return nb_, (src, max(dst, 0), hit)


def legal_moves(pos: Position, dice: object) -> list[Move]:
    """Every legal play of ``dice`` in ``pos``, one :class:`Move` per distinct result.

    ``pos`` is from the side on roll's view; each ``Move.result`` is from the
    opponent's view.  When nothing can be played the list holds one empty
    move whose result is ``pos.swap()``.  The order is that of the steps'
    source points, highest first.
    """
    d1, d2 = parse_dice(dice)
    orders = [[d1] * 4] if d1 == d2 else [[d1, d2], [d2, d1]]
    # result -> (steps, dice used); the first sequence found for a result is kept
    found: dict[tuple[int, ...], tuple[tuple[Step, ...], tuple[int, ...]]] = {}

    def walk(b: list[int], rest: list[int], steps: tuple[Step, ...], used: tuple[int, ...], lo: int) -> None:
        moved = False
        if rest:
            d = rest[0]
            # with doubles, sources in non-increasing order reach every result once
            top = lo if d1 == d2 else 25
            for src in range(top, 0, -1):
                if _py_can_move(b, src, d):
                    moved = True
                    nb_, step = _py_apply(b, src, d)
                    walk(nb_, rest[1:], (*steps, step), (*used, d), src)
        if not moved:
            found.setdefault(tuple(b), (steps, used))

    base = list(pos.board)
    for order in orders:
        walk(base, order, (), (), 25)
    best = max(len(u) for _, u in found.values())
    keep = {k: v for k, v in found.items() if len(v[1]) == best}
    if best == 1 and d1 != d2 and any(u == (max(d1, d2),) for _, u in keep.values()):
        keep = {k: v for k, v in keep.items() if v[1] == (max(d1, d2),)}
    if best == 0:
        return [Move((), pos.swap())]
    moves = [
        Move(steps, Position._trusted(tuple(-k[25 - i] for i in range(26))))
        for k, (steps, _) in keep.items()
    ]
    moves.sort(key=lambda m: [-s[0] for s in m.steps])
    return moves


