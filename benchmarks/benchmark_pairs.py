"""Networks' benchmark figures on the same positions, paired with a reference: is a difference above the noise?

The gate (``python -m training.gate``) asks a candidate to lower the mean checker error against gnubg
2-ply (``tests/data/benchmark/checker.jsonl``, 400 positions) and to keep its money cube agreement
with gnubg 2-ply (``cube.jsonl``, 200 positions).  A candidate and its reference answer the same
positions, so each difference has a paired standard error: the spread of the per-position differences
over the square root of the count.  For each candidate this prints, per ply, both figures, the
difference (candidate minus reference: a negative checker difference and a positive cube difference
favour the candidate) with that standard error, and on how many positions the two answer differently;
the difference comes only from those.  The per-position figures are the gate's
(``training.gate.checker_losses``, ``training.gate.cube_decisions``); the reference is measured once::

    python benchmarks/benchmark_pairs.py runs/fit-pit-a2/refined.pt --against checkpoints/bgbot-default.pt
    python benchmarks/benchmark_pairs.py A B --against P --plies 1 --cube-plies 2,3 \\
        --data tests/data/benchmark/checker-3000.jsonl --cube-data tests/data/benchmark/cube-1000.jsonl --json out.json

``--plies ""`` or ``--cube-plies ""`` leaves that benchmark out.
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
from bgbot.errors import BgbotError, ConfigError
from training.gate import checker_losses, cube_decisions, read_benchmark


def paired(first: Sequence[float], second: Sequence[float]) -> dict[str, float]:
    """Mean of ``first - second`` (paired rows) and its standard error; ``differ``: rows not equal."""
    if len(first) != len(second) or not first:
        raise ValueError(f"paired lists must be equal and non-empty, got {len(first)} and {len(second)} rows")
    d = [a - b for a, b in zip(first, second, strict=True)]
    se = statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else math.inf
    return {"diff": statistics.fmean(d), "se": se, "differ": sum(x != 0 for x in d), "positions": len(d)}


def _checker(engine: Engine, rows: list[dict[str, Any]], ply: int) -> list[float]:
    return [1000 * x for *_, x in checker_losses(engine, rows, ply)]  # millipoints


def _cube(engine: Engine, rows: list[dict[str, Any]], ply: int) -> list[float]:
    return [100.0 * agree for agree, _ in cube_decisions(engine, rows, ply)]  # percent


def compare(
    candidates: Sequence[Engine], reference: Engine, rows: list[dict[str, Any]], plies: Sequence[int],
    cube_rows: list[dict[str, Any]] | None = None, cube_plies: Sequence[int] = (),
) -> list[dict[str, dict[str, dict[str, Any]]]]:
    """For each candidate: ``{"checker": {ply: ...}, "cube": {ply: ...}}``, each entry the candidate's figure
    (``first``: mean checker error in millipoints, or cube agreement in percent), the reference's
    (``second``) and the paired difference (candidate minus reference) with its standard error."""
    out: list[dict[str, dict[str, dict[str, Any]]]] = [{"checker": {}, "cube": {}} for _ in candidates]
    jobs = [("checker", p, rows, _checker) for p in plies] + [("cube", p, cube_rows or [], _cube) for p in cube_plies]
    for kind, ply, data, per_position in jobs:
        ref = per_position(reference, data, ply)
        for res, engine in zip(out, candidates, strict=True):
            mine = per_position(engine, data, ply)
            res[kind][str(ply)] = {"first": statistics.fmean(mine), "second": statistics.fmean(ref),
                                   **paired(mine, ref)}
    return out


def _plies(text: str, flag: str) -> list[int]:
    try:
        plies = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise SystemExit(f"{flag} is a comma-separated list of 1, 2, 3, got {text!r}") from None
    if any(p not in (1, 2, 3) for p in plies):
        raise SystemExit(f"{flag} is a comma-separated list of 1, 2, 3, got {text!r}")
    return plies


def _read(path: Path, what: str, limit: int | None) -> list[dict[str, Any]]:
    try:
        return read_benchmark(path, what)[:limit]  # the gate's reader: the same checks, the same errors
    except ConfigError as e:
        raise SystemExit(str(e)) from None


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("candidates", nargs="+", help="checkpoints (.pt or .npz)")
    ap.add_argument("--against", required=True, help="the checkpoint each is compared with (e.g. their parent)")
    ap.add_argument("--plies", default="1,2", help="checker plies (default 1,2)")
    ap.add_argument("--cube-plies", default="2", help="cube plies (default 2)")
    ap.add_argument("--data", type=Path, default=REFDATA / "checker.jsonl",
                    help="checker benchmark (default tests/data/benchmark/checker.jsonl; the held-out"
                         " checker-3000.jsonl beside it is 7.5 times bigger)")
    ap.add_argument("--cube-data", type=Path, default=REFDATA / "cube.jsonl",
                    help="cube benchmark (default tests/data/benchmark/cube.jsonl; the held-out cube-1000.jsonl"
                         " beside it is 5 times bigger)")
    ap.add_argument("--limit", type=int, help="only the first LIMIT positions of each benchmark")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    plies, cube_plies = _plies(args.plies, "--plies"), _plies(args.cube_plies, "--cube-plies")
    if not plies and not cube_plies:
        raise SystemExit("--plies and --cube-plies are both empty: nothing to compare")
    if args.limit is not None and args.limit < 2:
        raise SystemExit(f"--limit must be at least 2 (a paired standard error), got {args.limit!r}")
    rows = _read(args.data, "checker", args.limit) if plies else []
    cube_rows = _read(args.cube_data, "cube", args.limit) if cube_plies else []
    try:
        engines = [Engine.load(c) for c in args.candidates]
        reference = Engine.load(args.against)
    except BgbotError as e:
        raise SystemExit(str(e)) from None
    t0 = time.perf_counter()
    try:
        res = compare(engines, reference, rows, plies, cube_rows, cube_plies)
    except (KeyError, TypeError, ValueError) as e:  # ValueError: bgbot's errors for a bad ID or dice
        files = f"{str(args.data)!r} or {str(args.cube_data)!r}"
        raise SystemExit(f"{files} is not a benchmark file (tests/data/README.md): {e!r}") from None
    print(f"reference {args.against}; against gnubg 2-ply"
          + (f"; checker: {len(rows)} positions of {args.data}, mean error mp" if plies else "")
          + (f"; cube: {len(cube_rows)} positions of {args.cube_data}, agreement %" if cube_plies else ""))
    for name, figures in zip(args.candidates, res, strict=True):
        print(name)
        for kind, per_ply in figures.items():
            for ply, r in per_ply.items():
                print(f"  {kind} {ply}-ply: {r['first']:.2f} vs {r['second']:.2f}, difference {r['diff']:+.2f}"
                      f" +- {r['se']:.2f} (1 se, paired), {r['differ']} positions answered differently")
    print(f"({time.perf_counter() - t0:.0f} s)")
    if args.json:
        from bgbot.fileio import write_text_atomic

        doc = {"against": args.against, "data": str(args.data), "cube_data": str(args.cube_data),
               "candidates": dict(zip(args.candidates, res, strict=True))}
        write_text_atomic(args.json, json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
