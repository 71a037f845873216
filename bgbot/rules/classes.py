"""gnubg's position classes of a batch of boards, as a compiled kernel.

:func:`bgbot.rules.position.classify_boards` answers through :func:`classify_rows`;
the evaluator (:class:`bgbot.eval.evaluate.NetEvaluator`) calls it on every
batch of a model with class networks, so it is one pass over each board with
nothing allocated but the answer.  The rule (:func:`bgbot.rules.position.classify`):

- ``OVER``: a side has no checker left;
- no contact (every checker of the side on roll is past every opposing one):
  ``BEAROFF`` when both sides have every checker in their home boards, else ``RACE``;
- ``CRASHED``: contact, and one side has at most 6 checkers on the board, or
  at most 6 besides those stacked beyond two on its 1- and 2-points;
- ``CONTACT``: everything else.

Boards are ``(N, 26)`` from the side on roll's view (slot 25 its bar, slot 0
the opponent's); the class is the same from either side's view.  This module
is a kernel module of :mod:`bgbot.jit` (compiled by numba or run as Python).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from bgbot.jit import board_dtype, njit

# bgbot.rules.position.PositionClass's codes, as plain ints (numba reads them as constants; this module does
# not import position.py, whose classify_boards imports this one on first use); a test holds them equal
OVER, BEAROFF, RACE, CRASHED, CONTACT = 0, 1, 2, 3, 4
CRASHED_CHECKERS = 6  # a side with at most this many checkers in play is crashed
_BOARD = board_dtype()


@njit(cache=True, inline="always")
def class_of(b: NDArray[np.int8]) -> int:
    """The class code of one board ``(26,)`` (side on roll's view); kernels call it row by row."""
    mine = 0
    theirs = 0
    my_back = 0  # the side on roll's rearmost checker (0: none)
    opp_back = 25  # the opponent's rearmost checker, in the side on roll's numbering (25: none)
    for i in range(26):
        v = b[i]
        if v > 0:
            mine += v
            my_back = i
        elif v < 0:
            theirs -= v
            if i < opp_back:
                opp_back = i
    if mine == 0 or theirs == 0:
        return OVER
    if my_back <= opp_back:  # no contact
        return BEAROFF if my_back <= 6 and opp_back >= 19 else RACE
    my_buried = max(b[1] - 2, 0) + max(b[2] - 2, 0)
    opp_buried = max(-b[24] - 2, 0) + max(-b[23] - 2, 0)
    crashed = (
        mine <= CRASHED_CHECKERS
        or mine - my_buried <= CRASHED_CHECKERS
        or theirs <= CRASHED_CHECKERS
        or theirs - opp_buried <= CRASHED_CHECKERS
    )
    return CRASHED if crashed else CONTACT


@njit(cache=True)
def _classify(boards: NDArray[np.int8], out: NDArray[np.int8]) -> None:
    for r in range(boards.shape[0]):
        out[r] = class_of(boards[r])


def classify_rows(boards: NDArray[np.integer]) -> NDArray[np.int8]:
    """The class code (:class:`~bgbot.rules.position.PositionClass`) of every row of ``(N, 26)`` boards."""
    b = np.ascontiguousarray(boards, dtype=_BOARD)
    if b.ndim != 2 or b.shape[1] != 26:
        raise ValueError(f"boards must have shape (N, 26), got {b.shape}")
    out = np.empty(b.shape[0], dtype=np.int8)
    _classify(b, out)
    return out
