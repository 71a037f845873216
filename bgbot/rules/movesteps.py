"""The legal plays of one position with their checker steps, compiled: what ``legal_moves`` lists.

:func:`~bgbot.rules.moves.legal_moves` states the search in plain Python (a
recursive walk over the dice, sources from the bar down); naming a play
(``24/18 13/11``) needs the steps of the sequence that walk finds first for
each result, since another sequence reaching the same result can be written
differently (``10/7 7/4`` against ``10/4``).  :func:`play_steps` is the same
walk, in the same order, compiled: the engine names the ~20 plays of a roll
from it instead of walking the tree in Python a second time after the move
generator (:mod:`bgbot.rules.movegen`) has found the results.

The walk is the recursion of ``legal_moves`` unrolled into an explicit stack
(numba compiles loops over typed arrays, not closures): at each level the
next source point that can move with that level's die, from the bar (or, with
doubles, from the previous step's source) down to the 1-point; a sequence
that cannot go on is a leaf.  Leaves are kept in the order found, the first
of each distinct board; then, as there, only the sequences that use the most
dice, and with one die of a non-double the higher one where it can be used.
Positions are from the mover's view (25 its bar, 0 the opponent's bar).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bgbot.jit import njit

if TYPE_CHECKING:
    from numpy.typing import NDArray

# Room for the leaves of one walk: a double in an open position has a few hundred.
_LEAVES = 4096
# Random weights of the per-board key that finds equal leaves (equal keys are confirmed slot by slot).
_KEY_WEIGHTS = np.random.default_rng(46).integers(1, 2**62, size=(26, 32), dtype=np.int64)


@njit(cache=True)
def _walk(
    b0: NDArray[np.int8],
    d1: int,
    d2: int,
    weights: NDArray[np.int64],
    boards: NDArray[np.int8],
    steps: NDArray[np.int8],
    nsteps: NDArray[np.int8],
    first: NDArray[np.int8],
    keys: NDArray[np.int64],
) -> int:  # pragma: no cover - compiled; the interpreted mode runs legal_moves' own walk
    """Every leaf of ``legal_moves``' walk of ``b0`` (mover's view) with dice ``d1, d2``, in its order.

    Leaf ``k``: the final board ``boards[k]``, its ``nsteps[k]`` steps ``steps[k, i] = (from, to, hit)``,
    the die of its first step ``first[k]`` and the board's key ``keys[k]``.  Returns the number of leaves.
    """
    b = b0.copy()
    double = d1 == d2
    nd = 4 if double else 2
    dice = np.empty(4, dtype=np.int64)
    cur = np.empty(5, dtype=np.int64)  # next source to try at each level
    moved = np.zeros(5, dtype=np.bool_)
    src = np.empty(4, dtype=np.int64)
    dst = np.empty(4, dtype=np.int64)
    hit = np.zeros(4, dtype=np.bool_)
    n = 0
    for order in range(1 if double else 2):
        for i in range(nd):
            dice[i] = d1 if double else (d1 if (i == 0) == (order == 0) else d2)
        level = 0
        cur[0] = 25
        moved[0] = False
        while level >= 0:
            emit = level == nd
            if not emit:
                d = dice[level]
                s = cur[level]
                found = -1
                while s >= 1:
                    if b[s] > 0 and (s == 25 or b[25] <= 0):
                        e = s - d
                        if e >= 1:
                            if b[e] >= -1:
                                found = s
                                break
                        else:
                            ok = True
                            for i in range(7, 26):
                                if b[i] > 0:
                                    ok = False
                                    break
                            if ok and e < 0:
                                for i in range(s + 1, 7):
                                    if b[i] > 0:
                                        ok = False
                                        break
                            if ok:
                                found = s
                                break
                    s -= 1
                if found >= 0:
                    cur[level] = found - 1
                    moved[level] = True
                    e = found - d
                    b[found] -= 1
                    h = False
                    if e >= 1:
                        if b[e] == -1:
                            b[e] = 1
                            b[0] -= 1
                            h = True
                        else:
                            b[e] += 1
                    else:
                        e = 0
                    src[level] = found
                    dst[level] = e
                    hit[level] = h
                    level += 1
                    cur[level] = found if double else 25
                    moved[level] = False
                    continue
                emit = not moved[level]
            if emit and n < boards.shape[0]:
                key = np.int64(0)
                for i in range(26):
                    boards[n, i] = b[i]
                    key += weights[i, b[i] + 15]
                keys[n] = key
                nsteps[n] = level
                first[n] = dice[0] if level > 0 else 0
                for i in range(level):
                    steps[n, i, 0] = src[i]
                    steps[n, i, 1] = dst[i]
                    steps[n, i, 2] = 1 if hit[i] else 0
                n += 1
            # back up one level, taking its step back
            level -= 1
            if level >= 0:
                s, e = src[level], dst[level]
                b[s] += 1
                if e >= 1:
                    if hit[level]:
                        b[e] = -1
                        b[0] += 1
                    else:
                        b[e] -= 1
    return n


@njit(cache=True)
def _kept(
    n: int, d1: int, d2: int, boards: NDArray[np.int8], nsteps: NDArray[np.int8], first: NDArray[np.int8],
    keys: NDArray[np.int64],
) -> NDArray[np.int64]:  # pragma: no cover - compiled
    """The leaves ``legal_moves`` keeps, in the order found: the first of each board, then the forced-play rules."""
    order = np.argsort(keys[:n], kind="mergesort")  # stable: within equal keys, the order found
    dup = np.zeros(n, dtype=np.bool_)
    for t in range(1, n):
        j = order[t]
        q = t - 1
        while q >= 0 and keys[order[q]] == keys[j]:
            i = order[q]
            if not dup[i]:
                same = True
                for k in range(26):
                    if boards[i, k] != boards[j, k]:
                        same = False
                        break
                if same:
                    dup[j] = True
                    break
            q -= 1
    best = 0
    for j in range(n):
        if not dup[j] and nsteps[j] > best:
            best = nsteps[j]
    high = max(d1, d2)
    need_high = False
    if best == 1 and d1 != d2:
        for j in range(n):
            if not dup[j] and nsteps[j] == 1 and first[j] == high:
                need_high = True
                break
    out = np.empty(n, dtype=np.int64)
    m = 0
    for j in range(n):
        if dup[j] or nsteps[j] != best or (need_high and first[j] != high):
            continue
        out[m] = j
        m += 1
    return out[:m]


def play_steps(
    board: NDArray[np.int8], d1: int, d2: int
) -> tuple[NDArray[np.int8], NDArray[np.int8], NDArray[np.int8]]:
    """The plays ``legal_moves`` lists for ``board`` (26 int8, mover's view) and dice ``d1, d2``, in its walk's order.

    Returns the final boards ``(K, 26)`` **from the mover's view** (not swapped), the steps ``(K, 4, 3)``
    as ``(from, to, hit)`` (25 = bar, 0 = off) and the number of steps of each ``(K,)``; no play at all
    is one row with no steps and the board unchanged.  Not sorted (``legal_moves`` sorts by source points).
    """
    boards = np.empty((_LEAVES, 26), dtype=np.int8)
    steps = np.zeros((_LEAVES, 4, 3), dtype=np.int8)
    nsteps = np.empty(_LEAVES, dtype=np.int8)
    first = np.empty(_LEAVES, dtype=np.int8)
    keys = np.empty(_LEAVES, dtype=np.int64)
    n = _walk(board, d1, d2, _KEY_WEIGHTS, boards, steps, nsteps, first, keys)
    sel = _kept(n, d1, d2, boards, nsteps, first, keys)
    return boards[sel], steps[sel], nsteps[sel]
