"""Two networks' checker errors on the same benchmark positions, paired: is the difference above the noise?

The gate (``python -m training.gate``) asks a candidate to lower the mean checker error against gnubg
2-ply on ``tests/data/benchmark/checker.jsonl`` (400 positions).  Both networks answer the same
positions, so the difference of their mean errors has a paired standard error: the spread of the
per-position differences over the square root of the count.  This prints, per ply, each network's
mean error (millipoints), the mean difference (first minus second: negative means the first errs
less) with that standard error, and how many positions the two choose differently; the difference
comes only from those.  Losses are the gate's (``training.gate.checker_losses``)::

    python benchmarks/checker_pairs.py runs/fit-pit-a2/refined.pt checkpoints/bgbot-default.pt
    python benchmarks/checker_pairs.py A B --plies 1 --limit 100 --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import REFDATA  # puts the checkout on sys.path

from bgbot.engine.api import Engine
from bgbot.errors import BgbotError
from training.gate import checker_losses


def paired(first: Sequence[float], second: Sequence[float]) -> dict[str, float]:
    """Mean of ``first - second`` (paired rows) and its standard error; ``differ``: rows not equal."""
    if len(first) != len(second) or not first:
        raise ValueError(f"paired lists must be equal and non-empty, got {len(first)} and {len(second)} rows")
    d = [a - b for a, b in zip(first, second, strict=True)]
    se = statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else math.inf
    return {"diff": statistics.fmean(d), "se": se, "differ": sum(x != 0 for x in d), "positions": len(d)}


def compare(a: Engine, b: Engine, rows: list[dict[str, Any]], plies: Sequence[int]) -> dict[str, dict[str, Any]]:
    """Per ply: both engines' mean errors and the paired difference (first minus second), millipoints."""
    out: dict[str, dict[str, Any]] = {}
    for ply in plies:
        la = [1000 * x for *_, x in checker_losses(a, rows, ply)]
        lb = [1000 * x for *_, x in checker_losses(b, rows, ply)]
        out[str(ply)] = {"first": statistics.fmean(la), "second": statistics.fmean(lb), **paired(la, lb)}
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("first", help="a checkpoint (.pt or .npz)")
    ap.add_argument("second", help="the checkpoint it is compared with (e.g. its parent)")
    ap.add_argument("--plies", default="1,2", help="plies to compare (default 1,2)")
    ap.add_argument("--data", type=Path, default=REFDATA / "checker.jsonl",
                    help="checker benchmark file (default tests/data/benchmark/checker.jsonl; the held-out"
                         " tests/data/benchmark/checker-3000.jsonl is 7.5 times bigger)")
    ap.add_argument("--limit", type=int, help="only the first LIMIT positions")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    try:
        plies = [int(p) for p in args.plies.split(",") if p.strip()]
    except ValueError:
        raise SystemExit(f"--plies is a comma-separated list of 1, 2, 3, got {args.plies!r}") from None
    if not plies or any(p not in (1, 2, 3) for p in plies):
        raise SystemExit(f"--plies is a comma-separated list of 1, 2, 3, got {args.plies!r}")
    if args.limit is not None and args.limit < 2:
        raise SystemExit(f"--limit must be at least 2 (a paired standard error), got {args.limit!r}")
    try:
        rows = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()][: args.limit]
    except (OSError, ValueError) as e:
        raise SystemExit(f"cannot read the checker benchmark {str(args.data)!r}: {e}") from None
    try:
        a, b = Engine.load(args.first), Engine.load(args.second)
    except BgbotError as e:
        raise SystemExit(str(e)) from None
    t0 = time.perf_counter()
    try:
        res = compare(a, b, rows, plies)
    except (KeyError, TypeError, ValueError) as e:  # ValueError: bgbot's errors for a bad ID or dice
        raise SystemExit(f"{str(args.data)!r} is not a checker benchmark (tests/data/README.md): {e!r}") from None
    print(f"{len(rows)} positions of {args.data}, errors against gnubg 2-ply, mp")
    print(f"first:  {args.first}\nsecond: {args.second}")
    for ply, r in res.items():
        print(f"  {ply}-ply: {r['first']:.2f} vs {r['second']:.2f}, difference {r['diff']:+.2f} +- {r['se']:.2f}"
              f" (1 se, paired), {r['differ']} positions chosen differently")
    print(f"({time.perf_counter() - t0:.0f} s)")
    if args.json:
        from bgbot.fileio import write_text_atomic

        write_text_atomic(args.json, json.dumps({"first": args.first, "second": args.second, "data": str(args.data),
                                                  "positions": len(rows), "plies": res}, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
