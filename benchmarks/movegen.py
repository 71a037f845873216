"""Move generation speed: bgbot's batched generator against gnubg's C generator (gnubg_nn.moves).

Run from the repository root::

    NUMBA_NUM_THREADS=1 .venv/bin/python benchmarks/movegen.py [--repeat 7]

Cases (all from tests/data/movegen/oracle.jsonl, a fixed realistic mix of
self-play, random-play and edge-case positions):

* ``oracle``: each oracle position with its own roll (2869 rows);
* ``x21``: each distinct oracle position with all 21 rolls;
* single-position calls: the start with 3-1 and a fixed mid-game position.

bgbot is timed as one :func:`successors_batch` call over the whole set
(``include_pass=False``, so both sides count the same rows), gnubg as one
``gnubg_nn.moves`` call per row from a Python loop (its only API).  Every
figure is the median of ``--repeat`` timed runs after an untimed warm-up that
also pays for numba's compilation.  Single-threaded: numba is pinned to one
thread, and gnubg_nn is single-threaded.  When gnubg_nn is installed the
results of both generators are compared position by position (not timed).
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _common import ROOT  # noqa: F401  (puts the checkout on sys.path)

from bgbot.rules.movegen import successors, successors_batch
from bgbot.rules.position import Position, parse_gnubg_position_id

try:
    import gnubg_nn
except ImportError:  # GPL reference, optional (pyproject's "ref" extra)
    gnubg_nn = None

ORACLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "movegen" / "oracle.jsonl"
ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]  # the 21 distinct rolls
MID_GAME = ("m+0MAAzO3QYDAA", (2, 1))  # an oracle self-play position, 20 legal results

GnubgBoard = list[list[int]]


def to_gnubg(b: np.ndarray) -> GnubgBoard:
    """bgbot row (side on roll's view) -> gnubg's board ``[opponent, side on roll]``.

    Each side is 25 counts in its own numbering: points 1..24, then its bar.
    """
    opp = [max(-int(b[25 - q]), 0) for q in range(1, 25)] + [-int(b[0])]
    me = [max(int(b[q]), 0) for q in range(1, 25)] + [int(b[25])]
    return [opp, me]


def from_gnubg_result(key: str) -> tuple[int, ...]:
    """A gnubg move key (board after the move, mover second) -> bgbot row from the opponent's view."""
    mover_side, mover = gnubg_nn.board_from_position_key(key)  # type: ignore[union-attr]
    # the opponent is now on roll: its checkers (gnubg's side 0) are positive
    board = [0] * 26
    for q in range(24):
        board[q + 1] += mover_side[q]
        board[24 - q] -= mover[q]
    board[25], board[0] = mover_side[24], -mover[24]
    return tuple(board)


def gnubg_version() -> str:
    if gnubg_nn is None:
        return "not installed"
    v = getattr(gnubg_nn, "__version__", "?")
    return str(getattr(v, "__version__", v))


def clock() -> float:
    """CPU seconds of this process: both generators run on this one thread, and CPU time is far
    less disturbed than wall time by other jobs on a shared 2-core machine."""
    return time.process_time()


def loop_of(fn: Callable[[], object], budget: float) -> tuple[Callable[[], object], int]:
    """``fn`` repeated often enough to take about ``budget`` seconds, and the repeat count."""
    fn()
    n = 1
    while True:
        t0 = clock()
        for _ in range(n):
            fn()
        took = clock() - t0
        if took > budget / 4:
            break
        n *= 4
    count = max(1, int(n * budget / max(took, 1e-9)))

    def run() -> None:
        for _ in range(count):
            fn()

    return run, count


def race(contenders: dict[str, tuple[Callable[[], object], int]], repeat: int) -> dict[str, list[float]]:
    """Rates (work units per CPU second) of each contender over ``repeat`` rounds.

    Each contender is ``(fn, work)``.  Every contender is warmed up first (numba
    compilation and caches are not timed); then the rounds interleave them, so
    a burst of load on the machine hits all of them alike.
    """
    for fn, _ in contenders.values():
        fn()
    rates: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, (fn, work) in contenders.items():
            t0 = clock()
            fn()
            rates[name].append(work / max(clock() - t0, 1e-9))
    return rates


def summary(rates: dict[str, list[float]], name: str, scale: float, unit: str) -> tuple[str, str, str]:
    """bgbot's median rate, gnubg's median rate and the median of the per-round ratios, as text."""
    mine = f"{statistics.median(rates[name]) / scale:.2f}{unit}"
    if "gnubg" not in rates:
        return mine, "-", "-"
    theirs = f"{statistics.median(rates['gnubg']) / scale:.2f}{unit}"
    ratio = statistics.median(a / b for a, b in zip(rates[name], rates["gnubg"], strict=True))
    return mine, theirs, f"{ratio:.2f}"


def load_cases() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    boards, dice, seen = [], [], {}
    with ORACLE.open() as f:
        for line in f:
            r = json.loads(line)
            pos = seen.setdefault(r["position"], parse_gnubg_position_id(r["position"]))
            boards.append(pos.array())
            dice.append(r["dice"])
    distinct = np.stack([p.array() for p in seen.values()])  # (P, 26)
    x21_boards = np.repeat(distinct, len(ROLLS), axis=0)
    x21_dice = np.tile(np.array(ROLLS, dtype=np.int64), (len(distinct), 1))
    return {
        "oracle": (np.stack(boards), np.array(dice, dtype=np.int64)),
        "x21": (x21_boards, x21_dice),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per figure (median reported)")
    args = ap.parse_args()
    repeat = max(5, args.repeat)

    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"NUMBA_NUM_THREADS={os.environ['NUMBA_NUM_THREADS']}, "
          f"gnubg_nn {gnubg_version()}, median of {repeat} interleaved rounds, CPU time, "
          f"load average {os.getloadavg()[0]:.1f}")
    cases = load_cases()
    rows: list[tuple[str, str, str, str, str]] = []
    notes: list[str] = []

    for name, (boards, dice) in cases.items():
        succ, parent = successors_batch(boards, dice, include_pass=False)
        n_succ = len(succ)
        contenders: dict[str, tuple[Callable[[], object], int]] = {
            "bgbot": (lambda b=boards, d=dice: successors_batch(b, d, include_pass=False), n_succ)
        }
        if gnubg_nn is not None:
            gboards = [to_gnubg(b) for b in boards]
            gdice = [(int(a), int(b)) for a, b in dice]
            moves = gnubg_nn.moves

            def run_gnubg(
                gb: list[GnubgBoard] = gboards, gd: list[tuple[int, int]] = gdice, moves: Callable = moves
            ) -> int:
                total = 0
                for board, (d1, d2) in zip(gb, gd, strict=True):
                    total += len(moves(board, d1, d2))
                return total

            g_total = run_gnubg()
            contenders["gnubg"] = (run_gnubg, g_total)
            # cross-check, not timed: the same distinct results for every row
            counts = np.bincount(parent, minlength=len(boards))
            by_row: list[set[tuple[int, ...]]] = [set() for _ in boards]
            for row, p in zip(succ, parent, strict=True):
                by_row[p].add(tuple(int(x) for x in row))
            n_count_diff = n_set_diff = 0
            for i, (board, (d1, d2)) in enumerate(zip(gboards, gdice, strict=True)):
                keys = moves(board, d1, d2)
                if len(set(keys)) != counts[i]:
                    n_count_diff += 1
                if {from_gnubg_result(k) for k in keys} != by_row[i]:
                    n_set_diff += 1
            notes.append(
                f"{name}: {len(boards)} cases, {n_succ} successors (gnubg {g_total}); "
                f"cases whose count of distinct results differs: {n_count_diff}, "
                f"whose result sets differ: {n_set_diff}"
            )
        rates = race(contenders, repeat)
        rows.append((f"batch, {name} ({len(boards)} cases, {n_succ} succ.)", "successors/s",
                     *summary(rates, "bgbot", 1e6, "M")))

    mid = parse_gnubg_position_id(MID_GAME[0])
    singles = [("start, 3-1", Position.start(), (3, 1)), (f"{MID_GAME[0]}, 2-1", mid, MID_GAME[1])]
    for label, pos, roll in singles:
        arr = pos.array()[None, :]
        contenders = {
            "successors(Position)": loop_of(lambda p=pos, d=roll: successors(p, d), 0.2),
            "successors_batch(1 row)": loop_of(
                lambda a=arr, d=roll: successors_batch(a, d, include_pass=False), 0.2
            ),
        }
        if gnubg_nn is not None:
            gb = to_gnubg(pos.array())
            contenders["gnubg"] = loop_of(lambda b=gb, d=roll: gnubg_nn.moves(b, *d), 0.2)
        rates = race(contenders, repeat)
        for fn_name in ("successors(Position)", "successors_batch(1 row)"):
            rows.append((f"{fn_name}, {label}", "calls/s", *summary(rates, fn_name, 1e3, "k")))

    header = ("case", "unit", "bgbot", "gnubg_nn", "bgbot/gnubg")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    for r in [header, tuple("-" * w for w in widths), *rows]:
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        print("  ".join(cells))
    for note in notes:
        print("cross-check", note)


if __name__ == "__main__":
    main()
