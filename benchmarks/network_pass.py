"""The compiled network pass on a search's batches: row by row, the default pass, and split across threads.

The batches are those a 1-ply match analysis evaluates for its luck (every roll's plays of a position, one batch
a position; ``tests/data/analyse/speed-7pt.mat``, 188 checker plays), the kind of batch every search sends:
a position's plays next to each other.  Each pass is timed on all of them, interleaved with the others, best of
``--repeat``; it prints microseconds a row, the speed-up over the row-by-row pass, and the largest difference of
an answer from the row-by-row one.

Usage::

    python benchmarks/network_pass.py --repeat 7
"""

from __future__ import annotations

import argparse
import copy
import os
import time
from collections.abc import Callable

import numpy as np
from _common import ROOT  # puts the checkout on sys.path

from bgbot.engine.api import Engine
from bgbot.eval.evaluate import NetEvaluator
from bgbot.formats.records import read_match
from bgbot.rules.dice import ROLLS
from bgbot.rules.movegen import successors_batch


def luck_batches(engine: Engine) -> list[np.ndarray]:
    """For each checker play of the speed match, every roll's plays of its position (the opponent's view)."""
    match = read_match(ROOT / "tests" / "data" / "analyse" / "speed-7pt.mat")
    rolls = np.array(ROLLS, dtype=np.int64)
    out = []
    for game in match.games:
        for entry, _ in game.states():
            if entry.kind == "move":
                boards = np.repeat(entry.position.array()[None, :], len(rolls), axis=0)
                out.append(successors_batch(boards, rolls)[0])
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="timings of each pass, the best kept (default 7)")
    args = ap.parse_args(argv)
    engine = Engine.load(threads=1)
    base = engine.base
    assert isinstance(base, NetEvaluator)
    batches = luck_batches(engine)
    rows = sum(len(b) for b in batches)
    alone = copy.copy(base)
    alone.row_by_row = True
    passes: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "row by row (row_by_row=True)": alone,
        "default pass, one thread": base,
        "default pass, one batch of all rows, 2 threads": NetEvaluator(base.net, threads=2),
    }
    every = np.concatenate(batches)
    want = alone(every)
    best = dict.fromkeys(passes, float("inf"))
    for f in passes.values():
        f(batches[0])  # compiled and cached before timing
    for _ in range(args.repeat):
        for name, f in passes.items():
            t0 = time.perf_counter()
            if "one batch" in name:
                f(every)
            else:
                for b in batches:
                    f(b)
            best[name] = min(best[name], time.perf_counter() - t0)
    load = os.getloadavg()
    print(f"{len(batches)} batches, {rows} rows (median batch {int(np.median([len(b) for b in batches]))}); "
          f"best of {args.repeat}; load average {load[0]:.2f}")
    ref = best["row by row (row_by_row=True)"]
    for name, f in passes.items():
        diff = float(np.abs(np.asarray(f(every)) - want).max())
        print(f"{name:48s} {1e6 * best[name] / rows:6.2f} us a row  {ref / best[name]:5.2f}x  "
              f"max difference from row by row {diff:.1e}")


if __name__ == "__main__":
    main()
