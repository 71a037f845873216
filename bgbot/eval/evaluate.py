"""Evaluators: batches of positions ``(N, 26)`` -> five probabilities ``(N, 5)``.

Every evaluator answers for each row from the view of **that row's side on
roll** (before it rolls), in gnubg's order ``[win, win gammon, win backgammon,
lose gammon, lose backgammon]`` (gammons include backgammons).

Finished games are never sent to a network: :func:`terminal_probs` scores
them exactly, and every evaluator here applies it.

A :class:`NetEvaluator` on a numpy network answers a batch in one compiled
call (:func:`_net_probs`): finished games, encoding, forward pass and the
consistency clipping row block by row block, with nothing allocated per row.
"""

from __future__ import annotations

import copy
import itertools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from bgbot import jit
from bgbot.errors import ConfigError, quote_input
from bgbot.eval.encoding import encode, fill_inputs
from bgbot.eval.inference import CLASS_NETS, Compiled, NumpyNet, forward_tail, hidden_width
from bgbot.jit import board_dtype, njit
from bgbot.rules.classes import class_of, classify_rows
from bgbot.rules.movegen import same_rows

if TYPE_CHECKING:  # torch loads only with the first network: pubeval and the rules stay light
    from bgbot.eval.nets import ValueNet

Probs = NDArray[np.float32]  # (N, 5)
T = TypeVar("T")


class Evaluator(Protocol):
    """Anything that maps ``(N, 26)`` int8 positions to ``(N, 5)`` probabilities (side on roll's view)."""

    def __call__(self, boards: NDArray[np.int8]) -> Probs: ...


def equity(probs: NDArray[np.floating]) -> NDArray[np.float64]:
    """Cubeless money equity ``2w - 1 + (wg - lg) + (wbg - lbg)`` of ``(..., 5)`` probabilities."""
    p = np.asarray(probs, dtype=np.float64)
    return 2.0 * p[..., 0] - 1.0 + p[..., 1] - p[..., 3] + p[..., 2] - p[..., 4]


def flip_probs(probs: NDArray[np.floating]) -> NDArray[np.floating]:
    """The same probabilities seen from the other side: ``[1-w, lg, lbg, wg, wbg]``."""
    p = np.asarray(probs)
    out = np.empty_like(p)
    out[..., 0] = 1.0 - p[..., 0]
    out[..., 1] = p[..., 3]
    out[..., 2] = p[..., 4]
    out[..., 3] = p[..., 1]
    out[..., 4] = p[..., 2]
    return out


_BOARD = board_dtype()  # int8 compiled, int64 interpreted (bgbot.jit)

@njit(cache=True)
def _terminal(boards: NDArray[np.int8], out: NDArray[np.float32], done: NDArray[np.bool_]) -> None:
    for r in range(boards.shape[0]):
        b = boards[r]
        mine = 0
        theirs = 0
        for i in range(26):
            if b[i] > 0:
                mine += b[i]
            elif b[i] < 0:
                theirs -= b[i]
        done[r] = mine == 0 or theirs == 0
        if not done[r]:
            continue
        for k in range(5):
            out[r, k] = 0.0
        if theirs == 0:
            # the opponent (who just moved) is off: the side on roll lost
            if mine == 15:
                out[r, 3] = 1.0
                for i in range(19, 26):
                    if b[i] > 0:
                        out[r, 4] = 1.0
        else:
            out[r, 0] = 1.0
            if theirs == 15:
                out[r, 1] = 1.0
                for i in range(0, 7):
                    if b[i] < 0:
                        out[r, 2] = 1.0


def terminal_probs(boards: NDArray[np.int8]) -> tuple[NDArray[np.bool_], Probs]:
    """Which rows are finished games, and their exact probabilities (side on roll's view)."""
    boards = np.ascontiguousarray(boards, dtype=_BOARD)
    out = np.zeros((boards.shape[0], 5), dtype=np.float32)
    done = np.zeros(boards.shape[0], dtype=np.bool_)
    _terminal(boards, out, done)
    return done, out


def make_consistent(probs: Probs) -> Probs:
    """Clip in place so that ``wbg <= wg <= w`` and ``lbg <= lg <= 1 - w``."""
    np.clip(probs, 0.0, 1.0, out=probs)
    np.minimum(probs[:, 1], probs[:, 0], out=probs[:, 1])
    np.minimum(probs[:, 2], probs[:, 1], out=probs[:, 2])
    np.minimum(probs[:, 3], 1.0 - probs[:, 0], out=probs[:, 3])
    np.minimum(probs[:, 4], probs[:, 3], out=probs[:, 4])
    return probs


_BLOCK = 64  # rows encoded at a time by _net_probs (64 x 255 float32: 64 KB, stays in cache)
# Every encoding starts with the 198 units of version 1 (bgbot.eval.encoding): for each side 24 points of four
# units (n >= 1, n >= 2, n >= 3, (n - 3) / 2), bar, off; then two on-roll units.  The first units of a point
# are 0/1 steps, so their weight rows are summed once per point (_point_rows) and a point costs one row.
_POINT_BASES = np.array([4 * g for g in range(24)] + [98 + 4 * g for g in range(24)], dtype=np.int64)
_OTHER_UNITS = np.array([96, 97, 194, 195, 196, 197], dtype=np.int64)
_TESAURO_UNITS = 198


def _point_rows(w0: NDArray[np.float32]) -> NDArray[np.float32]:
    """``(48, 3, hidden)``: for each point the first layer's rows of its units ``n >= 1 .. n >= c + 1`` summed."""
    rows = np.stack([w0[_POINT_BASES + u] for u in range(3)], axis=1)  # (48, 3, hidden)
    return np.ascontiguousarray(np.cumsum(rows, axis=1, dtype=np.float32))


@njit(cache=True, fastmath={"reassoc", "contract", "nsz"})
def _first_layer(
    x: NDArray[np.float32], point_rows: NDArray[np.float32], net: Compiled, h_a: NDArray[np.float32]
) -> None:
    """The first hidden layer's sums (before activation) of one encoded row into ``h_a``: ``b0 + x @ w0``.

    Points come from ``point_rows`` (one row per occupied point, plus the
    ``(n - 3) / 2`` unit when it is not zero), the other version 1 units only
    when not zero, the rest of the inputs (hand-made features, mostly not zero)
    without a test.
    """
    w0 = net[0][0]
    b0 = net[1][0]
    n = w0.shape[1]
    dst = h_a[:n]
    for j in range(n):
        dst[j] = b0[j]
    for g in range(_POINT_BASES.shape[0]):
        k = _POINT_BASES[g]
        if x[k] != 0.0:
            c = 0
            if x[k + 1] != 0.0:
                c = 2 if x[k + 2] != 0.0 else 1
            row = point_rows[g, c]
            for j in range(n):
                dst[j] += row[j]
            v = x[k + 3]
            if v != 0.0:
                wi = w0[k + 3]
                for j in range(n):
                    dst[j] += v * wi[j]
    for t in range(_OTHER_UNITS.shape[0]):
        i = _OTHER_UNITS[t]
        v = x[i]
        if v != 0.0:
            wi = w0[i]
            for j in range(n):
                dst[j] += v * wi[j]
    for i in range(_TESAURO_UNITS, w0.shape[0]):
        v = x[i]
        wi = w0[i]
        for j in range(n):
            dst[j] += v * wi[j]


# numba's on-disk cache keys a function to its own file only: after changing a compiled function this one
# calls in encoding.py, features.py or inference.py (or movegen.same_rows, which unique_rows inlines) during
# development, touch this file (or delete its __pycache__) so that the cached kernels are rebuilt.  (An install
# or upgrade replaces every file.)
@njit(cache=True, nogil=True, fastmath={"reassoc", "contract", "nsz"})  # the flags of the inlined delta update
def _net_probs(
    boards: NDArray[np.int8],
    version: int,
    route: NDArray[np.int8] | None,
    rows0: NDArray[np.float32], net0: Compiled,
    rows1: NDArray[np.float32] | None, net1: Compiled | None,
    rows2: NDArray[np.float32] | None, net2: Compiled | None,
    out: NDArray[np.float32],
    full: bool,
) -> None:
    """:meth:`NetEvaluator.__call__` for numpy networks, compiled: ``out`` ``(N, 5)``, each row's side on roll.

    Up to three networks sharing one encoding (``rows*``: each one's :func:`_point_rows`): each row is answered
    by network ``route[class_of(row)]`` (0 main, 1 and 2 the class networks; an absent one is given as the
    main).  ``route=None`` answers every row with ``net0`` without classifying the rows (the others may be
    None then): numba compiles that case on its own, without the branches of the other networks.

    The first hidden layer of a row is its network's previous row's, updated by the inputs that differ
    (:func:`_first_layer_delta`; a batch's rows are mostly plays of one position, about 21 of 255 inputs
    apart), and taken in full for the first row of each block and network.  Each answer is then within
    float32 rounding (a few millionths) of the row alone, but depends on its neighbours in that last place.
    ``full=True`` takes every row's first layer in full: each answer is then the row's alone, bit for bit,
    whatever the batch (the label bank's reproducible labels need that).
    """
    n = boards.shape[0]
    if route is None:
        width = hidden_width(net0[0])
    else:
        width = max(hidden_width(net0[0]), hidden_width(net1[0]), hidden_width(net2[0]))
    n_in = net0[0][0].shape[0]
    h_a = np.empty(width, dtype=np.float32)
    h_b = np.empty(width, dtype=np.float32)
    x = np.empty((_BLOCK, n_in), dtype=np.float32)
    done = np.empty(_BLOCK, dtype=np.bool_)
    # per network: the last row's board, inputs and first-layer sums, and whether this block has one yet
    last = _LastRows(
        np.empty((3, 26), dtype=boards.dtype),
        np.empty((3, n_in), dtype=np.float32),
        np.empty((3, width), dtype=np.float32),
        np.zeros(3, dtype=np.bool_),
        np.empty(n_in, dtype=np.int64),
        np.empty(n_in, dtype=np.float32),
    )
    for start in range(0, n, _BLOCK):
        stop = min(n, start + _BLOCK)
        blk = boards[start:stop]
        xb = x[: stop - start]
        _terminal(blk, out[start:stop], done)  # finished games: their exact scores
        fill_inputs(blk, xb, version)
        last.have[:] = False  # a fresh start each block: the rounding of the updates never piles up
        for r in range(stop - start):
            if done[r]:
                continue
            o = out[start + r]
            if route is None:
                _forward(blk[r], xb[r], rows0, net0, 0, full, last, h_a, h_b, o)
            else:
                k = route[class_of(blk[r])]
                if k == 0:
                    _forward(blk[r], xb[r], rows0, net0, 0, full, last, h_a, h_b, o)
                elif k == 1:
                    _forward(blk[r], xb[r], rows1, net1, 1, full, last, h_a, h_b, o)
                else:
                    _forward(blk[r], xb[r], rows2, net2, 2, full, last, h_a, h_b, o)
            _consistent(o)


class _LastRows(NamedTuple):
    """:func:`_net_probs`' memory of the last row each network answered (index 0-2), and scratch."""

    board: NDArray[np.int8]  # (3, 26)
    x: NDArray[np.float32]  # (3, inputs)
    h: NDArray[np.float32]  # (3, hidden): the first layer's sums before activation
    have: NDArray[np.bool_]  # (3,)
    units: NDArray[np.int64]  # scratch: the inputs that may differ
    deltas: NDArray[np.float32]  # scratch: their changes


@njit(cache=True, inline="always")
def _forward(
    board: NDArray[np.int8],
    x: NDArray[np.float32],
    point_rows: NDArray[np.float32],
    net: Compiled,
    k: int,
    full: bool,
    last: _LastRows,
    h_a: NDArray[np.float32],
    h_b: NDArray[np.float32],
    out: NDArray[np.float32],
) -> None:
    """One encoded row (``board``, inputs ``x``) through network ``k`` (``net``) into ``out``
    (:func:`~bgbot.eval.inference.forward_row`, the first layer in full or from the network's last row)."""
    width = net[0][0].shape[1]
    h = last.h[k, :width]
    if full or not last.have[k]:
        _first_layer(x, point_rows, net, h_a)
        if not full:
            h[:] = h_a[:width]
            last.x[k, :] = x
            last.board[k, :] = board
            last.have[k] = True
    else:
        _first_layer_delta(board, x, last.board[k], last.x[k], h, net[0][0], last.units, last.deltas)
        h_a[:width] = h
    forward_tail(net, h_a, h_b, out)


@njit(cache=True, fastmath={"reassoc", "contract", "nsz"}, inline="always")
def _first_layer_delta(
    board: NDArray[np.int8],
    x: NDArray[np.float32],
    last_board: NDArray[np.int8],
    last_x: NDArray[np.float32],
    h: NDArray[np.float32],
    w0: NDArray[np.float32],
    units: NDArray[np.int64],
    deltas: NDArray[np.float32],
) -> None:
    """Move ``h`` (the first layer's sums of ``last_x``) to those of ``x``: ``h += (x - last_x) @ w0`` over the
    inputs that differ; ``last_board``/``last_x`` become ``board``/``x``.

    A point's four version 1 units change only where the board's count on that slot does, so those are
    looked for through the 26 slots; the other units (bars, checkers off, every hand-made feature) are
    compared one by one.  The weight rows are added four at a time (one pass over ``h`` for four inputs).
    """
    m = 0
    for s in range(1, 25):
        if board[s] != last_board[s]:
            mine = (s - 1) * 4  # my point s, then the opponent's point 25 - s (its own numbering)
            theirs = 98 + (24 - s) * 4
            for u in range(4):
                units[m] = mine + u
                units[m + 1] = theirs + u
                m += 2
            last_board[s] = board[s]
    if board[25] != last_board[25]:
        units[m] = 96  # my bar
        m += 1
        last_board[25] = board[25]
    if board[0] != last_board[0]:
        units[m] = 194  # the opponent's bar
        m += 1
        last_board[0] = board[0]
    units[m] = 97  # checkers off, mine and the opponent's
    units[m + 1] = 195
    m += 2
    for i in range(_TESAURO_UNITS, x.shape[0]):
        if x[i] != last_x[i]:
            units[m] = i
            m += 1
    q = 0
    for t in range(m):
        i = units[t]
        d = x[i] - last_x[i]
        if d != 0.0:
            units[q] = i
            deltas[q] = d
            q += 1
            last_x[i] = x[i]
    n = h.shape[0]
    t = 0
    while t + 4 <= q:
        w1 = w0[units[t]]
        w2 = w0[units[t + 1]]
        w3 = w0[units[t + 2]]
        w4 = w0[units[t + 3]]
        d1 = deltas[t]
        d2 = deltas[t + 1]
        d3 = deltas[t + 2]
        d4 = deltas[t + 3]
        for j in range(n):
            h[j] += (d1 * w1[j] + d2 * w2[j]) + (d3 * w3[j] + d4 * w4[j])
        t += 4
    while t < q:
        wi = w0[units[t]]
        d1 = deltas[t]
        for j in range(n):
            h[j] += d1 * wi[j]
        t += 1


@njit(cache=True, inline="always")
def _consistent(o: NDArray[np.float32]) -> None:
    """:func:`make_consistent` of one row of five probabilities, in place."""
    for k in range(5):
        o[k] = min(max(o[k], 0.0), 1.0)
    o[1] = min(o[1], o[0])
    o[2] = min(o[2], o[1])
    o[3] = min(o[3], 1.0 - o[0])
    o[4] = min(o[4], o[3])


def _kernel_nets(route: NDArray[np.int8], nets: list[tuple[Compiled, NDArray[np.float32]]]) -> tuple[object, ...]:
    """:func:`_net_probs`' arguments after ``version`` for 1 to 3 ``(network, point rows)`` routed by ``route``:
    one network is answered without a route; missing class networks are given as the first (``route`` never
    sends a row to them)."""
    if len(nets) == 1:
        (net, rows), = nets
        return (None, rows, net, None, None, None, None)
    three = [*nets, *[nets[0]] * (3 - len(nets))]
    return (route, *(a for net, rows in three for a in (rows, net)))


#: a thread of a split batch gets this many rows at least (about 0.3 ms of work: a thread's hand-over costs
#: tens of microseconds)
THREAD_MIN_ROWS = 192
_THREAD_POOLS: dict[int, ThreadPoolExecutor] = {}


def check_threads(threads: object) -> int:
    """``threads`` as a whole number from 1 to 256, else a ``ConfigError`` quoting it."""
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 256:
        raise ConfigError(f"threads must be a whole number from 1 to 256, got {quote_input(threads)}")
    return threads


def default_threads() -> int:
    """Threads an engine's network uses by default: ``BGBOT_THREADS`` when set (a process pool's workers are
    given 1), else the cores this process may run on, at most 4."""
    env = os.environ.get("BGBOT_THREADS")
    if env is not None:
        value = int(env) if env.strip().isdigit() else 0
        if not 1 <= value <= 256:
            raise ConfigError(f"BGBOT_THREADS must be a whole number from 1 to 256, got {quote_input(env)}")
        return value
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


def _thread_pool(n: int) -> ThreadPoolExecutor:
    """A process-wide pool of ``n - 1`` threads (the calling thread takes the first part itself)."""
    pool = _THREAD_POOLS.get(n)
    if pool is None:
        pool = _THREAD_POOLS[n] = ThreadPoolExecutor(n - 1, thread_name_prefix="bgbot-net")
    return pool


def in_parts(n: int, threads: int, min_rows: int, work: Callable[[int, int], T], *, align: int = 1) -> list[T]:
    """``work(a, b)`` for consecutive parts ``[a, b)`` of ``range(n)``, their results in order.

    At most ``threads`` parts of ``min_rows`` rows or more, cut at multiples of ``align``; the first runs in the
    calling thread, the others on a process-wide pool (``work`` releases the GIL to gain from it).  One part,
    ``work(0, n)``, where ``n`` is too small to split.
    """
    parts = min(threads, n // min_rows)
    if parts <= 1:
        return [work(0, n)]
    step = -(-n // parts // align) * align
    cuts = [*range(0, n, step), n]
    rest = [_thread_pool(parts).submit(work, a, b) for a, b in itertools.pairwise(cuts[1:])]
    return [work(0, cuts[1]), *(f.result() for f in rest)]


class NetEvaluator:
    """A network as an :class:`Evaluator` (no gradients, finished games exact, probabilities consistent).

    ``net`` is a :class:`~bgbot.eval.inference.NumpyNet` (play: no torch) or a
    :class:`~bgbot.eval.nets.ValueNet` (self-play on the live weights); both
    answer ``net.probs(x)``.  A numpy network with class networks
    (``net.by_class``, gnubg's class nets) answers each row with the network of
    its class (:func:`bgbot.rules.classes.classify_rows`): ``race`` for races
    and bear-offs, ``crashed`` for crashed positions, the main network for the
    rest and for every class without a network of its own.
    """

    def __init__(self, net: NumpyNet | ValueNet, *, row_by_row: bool = False, threads: int = 1) -> None:
        if hasattr(net, "eval"):
            net.eval()  # a torch module: inference mode for its layers
        self.net = net
        self.version = net.spec.encoding_version
        #: every row's first layer in full, so that each answer is that row's alone, bit for bit, whatever else
        #: the batch holds (:func:`_net_probs`; the label bank's older labels were made so); else 1.4 times faster
        self.row_by_row = row_by_row
        #: threads a big batch is split across (:data:`THREAD_MIN_ROWS` rows a thread at least; the compiled pass
        #: releases the GIL); the answers are the same with any number (the split falls between row blocks)
        self.threads = check_threads(threads)
        by_class = getattr(net, "by_class", {})  # a torch network (self-play) has none
        #: the networks by index (0: the main one) and, per PositionClass code, the index that answers it
        self._nets: list[NumpyNet | ValueNet] = [net, *by_class.values()]
        self._route = np.zeros(5, dtype=np.int8)
        for i, name in enumerate(by_class, start=1):
            self._route[list(CLASS_NETS[name])] = i
        # a numpy network answers through one compiled call; a torch one (self-play on live weights), or any
        # network when the kernels are interpreted (bgbot.jit), through encode + net.probs
        self._compiled = (
            [(n.compiled, _point_rows(n.compiled[0][0])) for n in self._nets]  # type: ignore[union-attr]
            if isinstance(net, NumpyNet) and jit.COMPILED
            else None
        )
        # up to three networks of one encoding: one compiled call routes every row (_net_probs)
        self._fused: tuple[object, ...] | None = None
        if self._compiled is not None and len(self._nets) <= 3 and all(
            n.spec.encoding_version == self.version for n in self._nets
        ):
            self._fused = _kernel_nets(self._route, self._compiled)

    @classmethod
    def from_checkpoint(cls, path: str | Path) -> NetEvaluator:
        """Load a checkpoint file (``CheckpointError`` for a bad one)."""
        from bgbot.eval.models import load_model

        return cls(load_model(path).net)

    def raw(self, boards: NDArray[np.int8]) -> Probs:
        """Network outputs for ``(N, 26)`` boards, without terminal overrides (each row's class network)."""
        if len(self._nets) == 1:
            return self.net.probs(encode(boards, self.version))
        out = np.empty((len(boards), 5), dtype=np.float32)
        for i, rows in self._groups(boards):
            net = self._nets[i]
            out[rows] = net.probs(encode(boards[rows], net.spec.encoding_version))
        return out

    def _groups(self, boards: NDArray[np.int8]) -> list[tuple[int, NDArray[np.int64] | slice]]:
        """``(network index, rows)`` for each network a batch needs (one slice when it needs one network)."""
        which = self._route[classify_rows(boards)]
        first = which[0]
        if (which == first).all():
            return [(int(first), slice(None))]
        return [(int(i), np.flatnonzero(which == i)) for i in np.unique(which)]

    def __call__(self, boards: NDArray[np.int8]) -> Probs:
        boards = np.ascontiguousarray(boards, dtype=np.int8)
        if boards.shape[0] == 0:
            return np.zeros((0, 5), dtype=np.float32)
        if self._compiled is not None:
            if boards.ndim != 2 or boards.shape[1] != 26:
                raise ValueError(f"boards must have shape (N, 26), got {boards.shape}")
            out = np.empty((boards.shape[0], 5), dtype=np.float32)
            if self._fused is not None:
                fused = self._fused

                def part(a: int, b: int) -> None:
                    _net_probs(boards[a:b], self.version, *fused, out[a:b], self.row_by_row)

                # cut at whole blocks (each starts afresh), so that the answers are those of one call
                in_parts(boards.shape[0], self.threads, THREAD_MIN_ROWS, part, align=_BLOCK)
                return out
            for i, sel in self._groups(boards):
                one = _kernel_nets(self._route, self._compiled[i : i + 1])
                version = self._nets[i].spec.encoding_version
                if isinstance(sel, slice):
                    _net_probs(boards, version, *one, out, self.row_by_row)
                else:
                    part = np.empty((len(sel), 5), dtype=np.float32)
                    _net_probs(boards[sel], version, *one, part, self.row_by_row)
                    out[sel] = part
            return out
        done, exact = terminal_probs(boards)
        probs = make_consistent(self.raw(boards).copy())
        if done.any():
            probs[done] = exact[done]
        return probs


def row_by_row(evaluator: Evaluator) -> Evaluator:
    """A copy of ``evaluator`` whose every answer is its row's alone, bit for bit, whatever else the batch
    holds: a :class:`NetEvaluator` with :attr:`~NetEvaluator.row_by_row` set, or a wrapper of one in its
    ``base`` (as :class:`bgbot.engine.search.BearoffEvaluator`) with its base so copied.  Anything else is
    returned as it is.  Each answer is from its row's side on roll, as ``evaluator``'s."""
    if isinstance(evaluator, NetEvaluator):
        if evaluator.row_by_row:
            return evaluator
        twin = copy.copy(evaluator)
        twin.row_by_row = True
        return twin
    base = getattr(evaluator, "base", None)
    if isinstance(base, NetEvaluator) and not base.row_by_row:
        wrapper = copy.copy(evaluator)
        wrapper.base = row_by_row(base)  # type: ignore[attr-defined]
        return wrapper
    return evaluator


@njit(cache=True)
def segment_argmax(values: NDArray[np.float64], parent: NDArray[np.int64], n_parents: int) -> NDArray[np.int64]:
    """Index of the first maximum of ``values`` within each parent's contiguous rows (-1 if none)."""
    best = np.full(n_parents, -1, dtype=np.int64)
    for i in range(values.shape[0]):
        p = parent[i]
        j = best[p]
        if j < 0 or values[i] > values[j]:
            best[p] = i
    return best


@njit(cache=True)
def unique_rows(boards: NDArray[np.int8]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``(first, inverse)`` of the distinct rows of ``(N, 26)`` int8 ``boards``.

    ``first`` holds the index of each distinct row's first occurrence, in order
    of first occurrence; ``boards[first][inverse] == boards``.  An open-addressing
    hash table over the rows' bytes, every candidate match compared in full, so
    the result is exact whatever the hashes do.
    """
    n = boards.shape[0]
    size = 1
    while size < 2 * n:
        size <<= 1
    mask = size - 1
    table = np.full(size, -1, dtype=np.int64)  # slot -> index into first
    first = np.empty(n, dtype=np.int64)
    inverse = np.empty(n, dtype=np.int64)
    u = 0
    for i in range(n):
        h = np.uint64(1469598103934665603)  # FNV-1a over the 26 counts (each -15..15, shifted to 1..31)
        for k in range(26):
            h = (h ^ np.uint64(np.int64(boards[i, k]) + 16)) * np.uint64(1099511628211)
        s = np.int64(h & np.uint64(mask))
        while True:
            t = table[s]
            if t < 0:
                table[s] = u
                first[u] = i
                inverse[i] = u
                u += 1
                break
            if same_rows(boards, i, first[t]):
                inverse[i] = t
                break
            s = (s + 1) & mask
    return first[:u], inverse


if not jit.COMPILED:
    # the FNV hash multiplies uint64s that wrap around: numba wraps silently, numpy's scalars wrap and warn
    unique_rows = jit.wrapping(unique_rows)

# a batch this big or bigger is evaluated once per distinct row (evaluate_distinct)
DEDUP_MIN_ROWS = 256


def evaluate_distinct(evaluator: Evaluator, boards: NDArray[np.int8]) -> Probs:
    """``evaluator(boards)``, with each distinct row evaluated once when the batch is big.

    The lookahead's batches repeat about one row in nine (different plays meeting
    the same reply); the hash pass costs a fraction of an evaluation, so rows
    from :data:`DEDUP_MIN_ROWS` up are evaluated once and the answers copied.
    Each row's answer is from its own side on roll's view, as ``evaluator``'s.
    """
    if boards.shape[0] < DEDUP_MIN_ROWS:
        return evaluator(boards)
    first, inverse = unique_rows(np.ascontiguousarray(boards, dtype=np.int8))
    if first.shape[0] == boards.shape[0]:
        return evaluator(boards)
    return np.asarray(evaluator(boards[first]))[inverse]
