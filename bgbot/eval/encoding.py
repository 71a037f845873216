"""Network inputs: positions ``(N, 26)`` (side on roll's view) -> ``(N, NUM_INPUTS)`` float32.

Version 1 is Tesauro's 198-unit encoding, made relative: for each side (the
side on roll first, then the opponent, each over its own points 1..24) four
units per point - ``n >= 1``, ``n >= 2``, ``n >= 3`` and ``(n - 3) / 2`` when
``n > 3`` - then ``bar / 2`` and ``off / 15``, and the two "who is on roll"
units (always 1, 0 here, since a position is always from the side on roll).

Version 2 appends hand-made race and structure features that a small network
learns slowly on its own: both pip counts / 100, a contact flag, home-board
points made / 6 for each side, and checkers back (in the opponent's home or on
the bar) / 15 for each side.

Version 3 appends to version 2 the 25 expert features of each side of
:mod:`bgbot.eval.features` (gnubg-style: break-contact pips, anchors, shots and
pip loss to hits, escapes and containment, primes, entering, timing, ...), the
side on roll's first.  A version 2 network extends to version 3 exactly by
zero weights on the new inputs (:func:`bgbot.eval.nets.widen_inputs`).

Version 4 appends to version 3 the five features of each side of
``bgbot.eval.features.EXTRA_FEATURE_NAMES`` (mobility, the largest gap in my
army, the chance not to enter two checkers, the escapes of every back checker,
back-game weight), the side on roll's first; it extends version 3 the same way.

The encoder fills a preallocated array and writes every unit of every row.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from bgbot.errors import CheckpointError
from bgbot.eval.features import NUM_EXTRA_FEATURES, NUM_FEATURES, fill_extra_features, fill_features
from bgbot.jit import board_dtype, njit

ENCODING_VERSIONS = {1: 198, 2: 205, 3: 205 + 2 * NUM_FEATURES, 4: 205 + 2 * (NUM_FEATURES + NUM_EXTRA_FEATURES)}
DEFAULT_VERSION = 2

_BOARD = board_dtype()  # int8 compiled, int64 interpreted (bgbot.jit)


def num_inputs(version: int) -> int:
    """Input width of an encoding version (``CheckpointError`` for an unknown one)."""
    if version not in ENCODING_VERSIONS:
        raise CheckpointError(
            f"unknown encoding version {version!r}; this bgbot knows {sorted(ENCODING_VERSIONS)}"
        )
    return ENCODING_VERSIONS[version]


@njit(cache=True)
def _encode(boards: NDArray[np.int8], out: NDArray[np.float32], extra: bool) -> None:
    n_rows = boards.shape[0]
    for r in range(n_rows):
        b = boards[r]
        o = out[r]
        my_total = 0
        opp_total = 0
        my_pips = 0
        opp_pips = 0
        my_back = 0
        opp_back_ = 25
        for side in range(2):
            base = side * 98
            for p in range(1, 25):
                # side 0 reads its own point p at slot p; side 1 (opponent) at slot 25 - p, negated
                n = b[p] if side == 0 else -b[25 - p]
                if n < 0:
                    n = 0
                k = base + (p - 1) * 4
                o[k] = 1.0 if n >= 1 else 0.0
                o[k + 1] = 1.0 if n >= 2 else 0.0
                o[k + 2] = 1.0 if n >= 3 else 0.0
                o[k + 3] = (n - 3) * 0.5 if n > 3 else 0.0
        for p in range(1, 25):
            v = b[p]
            if v > 0:
                my_total += v
                my_pips += v * p
                if p > my_back:
                    my_back = p
            elif v < 0:
                opp_total -= v
                opp_pips -= v * (25 - p)
                if p < opp_back_:
                    opp_back_ = p
        my_bar = b[25]
        opp_bar = -b[0]
        my_total += my_bar
        opp_total += opp_bar
        my_pips += 25 * my_bar
        opp_pips += 25 * opp_bar
        if my_bar > 0:
            my_back = 25
        if opp_bar > 0:
            opp_back_ = 0
        o[96] = my_bar * 0.5
        o[97] = (15 - my_total) / 15.0
        o[194] = opp_bar * 0.5
        o[195] = (15 - opp_total) / 15.0
        o[196] = 1.0
        o[197] = 0.0
        if extra:
            o[198] = my_pips / 100.0
            o[199] = opp_pips / 100.0
            o[200] = 1.0 if my_back > opp_back_ else 0.0
            my_home = 0
            opp_home = 0
            my_backc = my_bar
            opp_backc = opp_bar
            for p in range(1, 7):
                if b[p] >= 2:
                    my_home += 1
                if b[25 - p] <= -2:
                    opp_home += 1
            for p in range(19, 25):
                if b[p] > 0:
                    my_backc += b[p]
                if b[25 - p] < 0:
                    opp_backc -= b[25 - p]
            o[201] = my_home / 6.0
            o[202] = opp_home / 6.0
            o[203] = my_backc / 15.0
            o[204] = opp_backc / 15.0


def encode(boards: NDArray[np.int8], version: int = DEFAULT_VERSION, out: NDArray[np.float32] | None = None
           ) -> NDArray[np.float32]:
    """Encode ``(N, 26)`` positions (each from its side on roll's view) into ``(N, num_inputs(version))``."""
    width = num_inputs(version)
    boards = np.ascontiguousarray(boards, dtype=_BOARD)
    if out is None:
        out = np.empty((boards.shape[0], width), dtype=np.float32)
    elif out.shape != (boards.shape[0], width) or out.dtype != np.float32:
        raise ValueError(f"out must be float32 of shape {(boards.shape[0], width)}, got {out.shape}")
    fill_inputs(boards, out, version)
    return out


@njit(cache=True)
def fill_inputs(boards: NDArray[np.int8], out: NDArray[np.float32], version: int) -> None:
    """Write every input unit of ``version`` for each board into ``out`` (compiled, no checks; see :func:`encode`)."""
    _encode(boards, out, version >= 2)
    if version >= 3:
        fill_features(boards, out, 205)
    if version >= 4:
        fill_extra_features(boards, out, 205 + 2 * NUM_FEATURES)
