"""Time per checker-play (and cube) decision of bgbot at each ply.

Times :meth:`bgbot.engine.Engine.best_move` (the full ranked analysis, move
texts excluded: they are worked out only when read) over a fixed set of
positions from ``shared/data/benchmark/checker.jsonl`` and prints the median,
the 90th percentile and the mean per decision.  As a reference measured in
the same run it also times one network call on a batch of 21 positions (one
position's candidates) and prints each median as a multiple of it, so runs on
a loaded machine can be compared.  With ``--cube`` it times the cube
decision at each ply too.

The machines this project runs on have 2 cores shared with training runs:
the default is one torch thread (a second thread only adds waiting when the
other core is busy); the load average is printed with the figures.

Usage::

    python benchmarks/decision_time.py --checkpoint runs/full/checkpoint.pt
    python benchmarks/decision_time.py --positions 200 --three-ply 10 --cube
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bgbot.engine import Engine  # noqa: E402
from bgbot.position import Position  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "benchmark" / "checker.jsonl"


def timings(fn: Callable[[], object], repeat: int = 1) -> float:
    """Best of ``repeat`` wall-clock seconds for one call of ``fn``."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def summary(seconds: Sequence[float]) -> tuple[float, float, float]:
    """Median, 90th percentile and mean, in milliseconds."""
    ms = np.asarray(seconds) * 1000.0
    return float(np.median(ms)), float(np.percentile(ms, 90)), float(ms.mean())


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", help="network (default: $BGBOT_CHECKPOINT or checkpoints/bgbot-default.pt)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="checker.jsonl to take positions from")
    ap.add_argument("--positions", type=int, default=100, help="positions timed at 1- and 2-ply (default 100)")
    ap.add_argument("--three-ply", type=int, default=10, metavar="N", help="positions timed at 3-ply (0: skip)")
    ap.add_argument("--repeat", type=int, default=3, help="time each decision this often, keep the best")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    ap.add_argument("--cube", action="store_true", help="also time cube decisions at 1, 2 (and 3) ply")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    rows = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    # a fixed, spread-out set: every k-th position of the file
    step = max(1, len(rows) // args.positions)
    chosen = rows[::step][: args.positions]
    items = [(Position.from_id(r["position"]), tuple(r["dice"])) for r in chosen]
    engine = Engine.load(args.checkpoint)

    # warm up: numba compilation, torch's first calls, the bear-off database
    for pos, dice in items[:5]:
        for ply in (1, 2):
            engine.best_move(pos, dice, ply)
    engine.evaluate(Position.from_points({6: 2, 1: 1}, {2: 2}))

    batch = np.stack([p.array() for p, _ in items[:21]])
    ref = statistics.median(timings(lambda: engine.base(batch), 1) for _ in range(200)) * 1000.0

    load = os.getloadavg()
    print(f"engine: {engine.describe()}")
    print(
        f"torch threads {torch.get_num_threads()}, {os.cpu_count()} CPUs, load average "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(f"reference: one network call on 21 positions, median {ref:.3f} ms")
    print(f"{'decision':<16} {'positions':>9} {'median ms':>10} {'p90 ms':>8} {'mean ms':>8} {'x ref':>7}")

    def line(name: str, seconds: Sequence[float]) -> None:
        med, p90, mean = summary(seconds)
        print(f"{name:<16} {len(seconds):>9} {med:>10.2f} {p90:>8.2f} {mean:>8.2f} {med / ref:>7.1f}")

    for ply in (1, 2, 3):
        subset = items if ply < 3 else items[:: max(1, len(items) // max(args.three_ply, 1))][: args.three_ply]
        if not subset:
            continue
        secs = [timings(lambda p=p, d=d, k=ply: engine.best_move(p, d, k), args.repeat) for p, d in subset]
        line(f"move {ply}-ply", secs)
        if ply == 1:
            # the same with every candidate's notation read, as the CLI table does
            secs = [
                timings(lambda p=p, d=d: [c.move for c in engine.best_move(p, d, 1).candidates], args.repeat)
                for p, d in subset
            ]
            line("move 1-ply+text", secs)
    if args.cube:
        for ply in (1, 2, 3):
            subset = items if ply < 3 else items[: args.three_ply]
            if not subset:
                continue
            secs = [timings(lambda p=p, k=ply: engine.cube_action(p, ply=k), args.repeat) for p, _ in subset]
            line(f"cube {ply}-ply", secs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
