"""Speed of the expert input features (bgbot.eval.features): positions per second, single-threaded.

Run from the repository root::

    NUMBA_NUM_THREADS=1 .venv/bin/python benchmarks/features_speed.py [--positions 20000] [--repeat 5]

The positions are realistic: random games played in lock step with
:func:`bgbot.rules.movegen.successors_batch` from the starting position (one
random legal successor per game and ply, a finished game restarting), every
position of every ply collected and ``--positions`` of them drawn at random.
One :func:`features` call over the whole set is timed; the figure is the
median of ``--repeat`` runs after an untimed warm-up that also pays for numba's
compilation.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported

import argparse
import statistics
import time

import numpy as np
from _common import ROOT  # noqa: F401  (puts the checkout on sys.path)

from bgbot.eval.features import NUM_FEATURES, features
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position


def random_game_positions(n: int, seed: int = 1, games: int = 500) -> np.ndarray:
    """``n`` positions (side on roll's view) drawn from random games played in lock step."""
    rng = np.random.default_rng(seed)
    start = Position.start().array()
    boards = np.tile(start, (games, 1))
    seen: list[np.ndarray] = []
    total = 0
    while total < 3 * n:
        seen.append(boards.copy())
        total += boards.shape[0]
        dice = rng.integers(1, 7, size=(games, 2))
        succ, parent = successors_batch(boards, dice)
        counts = np.bincount(parent, minlength=games)
        first = np.concatenate(([0], np.cumsum(counts)[:-1]))
        pick = first + (rng.random(games) * counts).astype(np.int64)
        boards = succ[pick]
        # the side that just moved is now the opponent (negative): a game is over when it has nothing left
        done = ~(boards < 0).any(axis=1)
        boards[done] = start
    pool = np.concatenate(seen)
    return pool[rng.choice(pool.shape[0], size=n, replace=False)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--positions", type=int, default=20000, help="positions per timed call (default 20000)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs, the median is shown (default 5)")
    args = ap.parse_args(argv)

    boards = random_game_positions(args.positions)
    out = np.empty((boards.shape[0], 2 * NUM_FEATURES), dtype=np.float32)
    features(boards, out=out)  # warm-up and compilation
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        features(boards, out=out)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    print(f"features: {boards.shape[0]} positions, {2 * NUM_FEATURES} features each, "
          f"median of {args.repeat}: {med * 1e3:.2f} ms = {boards.shape[0] / med:,.0f} positions/s (1 thread)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
